//! What the shared state machine (`track`) needs to show calls as the model streams them: the
//! pieces of each call of the turn under way, held until its id and name
//! are known, and which calls were shown already.

use std::collections::{HashMap, HashSet};

/// A call streamed by the model, by its index in the turn.
#[derive(Default)]
struct Streaming {
    id: Option<String>,
    name: Option<String>,
    /// Argument text that came before the id and name.
    held: String,
}

/// What a streamed piece shows.
pub(crate) struct Piece {
    /// The call's id.
    pub(crate) id: String,
    /// The tool's name.
    pub(crate) name: String,
    /// The call is shown for the first time.
    pub(crate) first: bool,
    /// Argument text to show (empty: none).
    pub(crate) delta: String,
}

/// The calls of a response: those being streamed in the model's turn,
/// and the ids of those shown so far.
#[derive(Default)]
pub(crate) struct Calls {
    streaming: HashMap<usize, Streaming>,
    started: HashSet<String>,
}

impl Calls {
    /// A piece of a streamed call: what to show once its id and name are
    /// known, with the argument text that came before them.
    pub(crate) fn delta(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        arguments: &str,
    ) -> Option<Piece> {
        let call = self.streaming.entry(index).or_default();
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        if call.name.is_none() {
            call.name = name.map(str::to_owned);
        }
        let (Some(id), Some(name)) = (call.id.clone(), call.name.clone()) else {
            call.held.push_str(arguments);
            return None;
        };
        let delta = std::mem::take(&mut call.held) + arguments;
        let first = self.started.insert(id.clone());
        Some(Piece { id, name, first, delta })
    }

    /// Marks the call shown; false if it was already.
    pub(crate) fn start(&mut self, id: &str) -> bool {
        // Looked up first: most calls shown whole were streamed, and the
        // id is then not copied for nothing.
        !self.started.contains(id) && self.started.insert(id.to_owned())
    }

    /// The model's turn is over: the ids of the calls it streamed (the
    /// next turn counts its calls from 0 again).
    pub(crate) fn turn_over(&mut self) -> Vec<String> {
        let mut calls: Vec<(usize, Streaming)> = self.streaming.drain().collect();
        calls.sort_by_key(|(index, _)| *index);
        calls.into_iter().filter_map(|(_, call)| call.id).filter(|id| self.started.contains(id)).collect()
    }
}
