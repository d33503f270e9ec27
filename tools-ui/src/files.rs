//! How a tool's images and files reach the page: [`FileLinks`], the URL of
//! each part (its own URL, a data URL for bytes up to a size, or a URL of
//! the chat for bigger ones), and how the chat server finds a part again
//! by the id in that URL.
//!
//! **Where the bytes live.** Nowhere new. A tool's result, with its parts,
//! is a message of the conversation (`Message::Tool`), which the session
//! store keeps with the chat (the bytes base64 in a SQL store). A file's id
//! says where it is in the chat: the call's id and the part's index in its
//! result, `{call id}-{index}`. So the route finds a file by reading the
//! chat, under the same owner as every other route; the file lives and
//! dies with the chat (deleted or evicted with it), a restarted server
//! serves it, and no second store has to be kept in step with the first.
//! Two places hold results the stored messages do not have yet: the run
//! going now (a page asks for a file as soon as its chunk arrives, and the
//! run's messages are stored when it ends), whose big files its live run
//! keeps until then, and a paused run's turn (the calls of that turn that
//! ran while others wait for approval).

use toolcall_agent::{Message, PausedTurn};
use toolcall_core::{Media, Part, Source, ToolResult};

/// How a result's image and file parts are linked from the stream.
#[derive(Clone, Debug)]
pub(crate) struct FileLinks {
    /// The most bytes sent as a data URL.
    pub(crate) max_inline: usize,
    /// Where bigger bytes are served (`{base}/{file id}`); none: they are
    /// left out.
    pub(crate) base: Option<String>,
}

impl Default for FileLinks {
    fn default() -> Self {
        Self { max_inline: crate::UiAdapter::MAX_INLINE_BYTES, base: None }
    }
}

impl FileLinks {
    /// The URL of part `index` of the result of call `call_id`, if the
    /// page can have one: its own URL, its bytes as a data URL, or a URL
    /// under [`FileLinks::base`].
    pub(crate) fn url(&self, media: &Media, call_id: &str, index: usize) -> Option<String> {
        match &media.source {
            Source::Url(url) => Some(url.clone()),
            Source::Data(bytes) if bytes.len() <= self.max_inline => {
                Some(format!("data:{};base64,{}", media.media_type, media.base64().unwrap_or_default()))
            }
            Source::Data(_) => {
                let base = self.base.as_deref()?;
                Some(format!("{base}/{}", encode(&file_id(call_id, index))))
            }
        }
    }
}

/// The base of the file URLs of chat `chat_id`, as
/// [`ChatServer::router`](crate::ChatServer::router) mounts its routes.
pub(crate) fn chat_base(chat_id: &str) -> String {
    format!("/api/chat/{}/files", encode(chat_id))
}

/// A file's id: the call's id and the part's index in its result.
fn file_id(call_id: &str, index: usize) -> String {
    format!("{call_id}-{index}")
}

/// A file's id read back: the call's id and the part's index. Call ids
/// may hold `-`; the index, after the last one, does not.
pub(crate) fn parse(file: &str) -> Option<(&str, usize)> {
    let (call_id, index) = file.rsplit_once('-')?;
    Some((call_id, index.parse().ok()?))
}

/// `segment` as one URL path segment: anything but the unreserved
/// characters percent-encoded (ids come from the page and the model).
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The parts of `result` a page gets by URL of the chat (bytes over
/// `max_inline`), by file id: what a live run keeps until its messages are
/// stored.
pub(crate) fn served(result: &ToolResult, max_inline: usize) -> impl Iterator<Item = (String, &Media)> {
    let id = result.id.as_str();
    result.parts.iter().enumerate().filter_map(move |(index, part)| match part {
        Part::Image(media) | Part::File(media)
            if matches!(&media.source, Source::Data(bytes) if bytes.len() > max_inline) =>
        {
            Some((file_id(id, index), media))
        }
        _ => None,
    })
}

/// Part `index` of call `call_id`'s result in `results`, if it is an
/// image or file given as bytes.
fn part_of<'r>(
    results: impl IntoIterator<Item = &'r ToolResult>,
    call_id: &str,
    index: usize,
) -> Option<&'r Media> {
    let result = results.into_iter().filter(|result| result.id == call_id).last()?;
    match result.parts.get(index)? {
        Part::Image(media) | Part::File(media) if matches!(media.source, Source::Data(_)) => Some(media),
        _ => None,
    }
}

/// The file in a stored chat: in its messages, or in the turn its paused
/// run holds.
pub(crate) fn find(
    messages: &[Message],
    paused: Option<&PausedTurn>,
    call_id: &str,
    index: usize,
) -> Option<Media> {
    let results = messages.iter().flat_map(|message| match message {
        Message::Tool { results } => results.as_slice(),
        _ => &[],
    });
    if let Some(media) = part_of(results, call_id, index) {
        return Some(media.clone());
    }
    let done = paused.into_iter().flat_map(PausedTurn::done);
    part_of(done, call_id, index).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_id_reads_back_with_dashes_in_the_call_id() {
        assert_eq!(parse("call-1-2"), Some(("call-1", 2)));
        assert_eq!(parse("c1-0"), Some(("c1", 0)));
        assert_eq!(parse("c1"), None);
        assert_eq!(parse("c1-x"), None);
    }

    #[test]
    fn ids_are_encoded_as_one_path_segment() {
        assert_eq!(encode("chat 1/2?é"), "chat%201%2F2%3F%C3%A9");
        assert_eq!(chat_base("a.b_c~d"), "/api/chat/a.b_c~d/files");
    }
}
