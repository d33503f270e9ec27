//! One run's loop: ask the model, run the turn's calls, record, stop.

use std::time::Instant;

use futures::channel::mpsc::UnboundedSender;
use tracing::Instrument;

use crate::model::{ModelRequest, ModelResponse, Usage};
use crate::stream::streamed;
use crate::{Agent, AgentEvent, Message, ModelError, RunBudget, StopReason, Transcript};

/// One run's state as the loop goes.
pub(crate) struct Run<'a> {
    pub(crate) agent: &'a Agent,
    pub(crate) transcript: Transcript,
    pub(crate) usage: Vec<Usage>,
    pub(crate) budget: RunBudget,
    pub(crate) events: Option<UnboundedSender<AgentEvent>>,
}

impl Run<'_> {
    pub(crate) async fn go(&mut self) -> Result<(String, StopReason), ModelError> {
        let agent = self.agent;
        let mut turns = 0;
        loop {
            let pending = self.transcript.pending_calls().to_vec();
            if !pending.is_empty() {
                if let Some(stop) = self.run_calls(&pending).await {
                    return Ok(stop);
                }
                continue;
            }
            if agent.context.is_cancelled() {
                return Ok((String::new(), StopReason::Cancelled));
            }
            let last = turns >= agent.max_turns;
            let Some(response) = self.ask(!last).await? else {
                return Ok((String::new(), StopReason::Cancelled));
            };
            turns += 1;
            let answered = response.calls.is_empty();
            let text = response.text.clone();
            self.transcript.push(Message::Assistant { text: response.text, calls: response.calls });
            if last {
                // A model that calls tools anyway on the tool-less request
                // leaves calls no one will answer: dropped, so the
                // transcript stays one a provider accepts.
                if let Some(Message::Assistant { calls, .. }) = self.transcript.messages.last_mut() {
                    calls.clear();
                }
                return Ok((text, StopReason::MaxTurns { turns: agent.max_turns }));
            }
            if answered {
                return Ok((text, StopReason::Answered));
            }
        }
    }

    /// One model request, traced; `None` if the context was cancelled first.
    async fn ask(&mut self, with_tools: bool) -> Result<Option<ModelResponse>, ModelError> {
        let agent = self.agent;
        let request = ModelRequest {
            instructions: self.transcript.instructions.as_deref(),
            messages: &self.transcript.messages,
            tools: with_tools.then_some(&agent.toolset),
            settings: &agent.settings,
        };
        let span = tracing::info_span!(
            "model_request",
            provider = agent.model.provider(),
            model = agent.model.model(),
            input_tokens = tracing::field::Empty,
            output_tokens = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        let events = self.events.clone();
        let exchange = async {
            match &events {
                None => agent.model.request(request).await,
                Some(events) => streamed(agent.model.provider(), agent.model.stream(request), events).await,
            }
        };
        let cancelled = agent.context.cancellation().cancelled();
        let response = tokio::select! {
            biased;
            () = cancelled => return Ok(None),
            response = exchange.instrument(span.clone()) => response?,
        };
        span.record("input_tokens", response.usage.input_tokens);
        span.record("output_tokens", response.usage.output_tokens);
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        self.usage.push(response.usage);
        self.emit(AgentEvent::Usage(response.usage));
        Ok(Some(response))
    }

    /// Run one turn's calls and record their results; `Some` when the run
    /// stops here.
    async fn run_calls(&mut self, calls: &[tools_core::ToolCall]) -> Option<(String, StopReason)> {
        let agent = self.agent;
        if let Err(limit) = self.budget.admit(calls) {
            // The calls stay pending in the transcript: continuing the run
            // (with a larger budget) runs them.
            return Some((String::new(), StopReason::Budget(limit)));
        }
        for call in calls {
            self.emit(AgentEvent::ToolCall(call.clone()));
        }
        let results = agent.toolset.run(&agent.context, calls).await;
        for result in &results {
            self.emit(AgentEvent::ToolResult(result.clone()));
        }
        let recorded = self.budget.record(&results);
        let ended = results.iter().find(|result| {
            result.outcome.is_success()
                && agent.end_tools.iter().any(|end| end.eq_ignore_ascii_case(&result.name))
        });
        let ended =
            ended.map(|result| (result.content.clone(), StopReason::EndTool { tool: result.name.clone() }));
        self.transcript.push(Message::Tool { results });
        if let Some(ended) = ended {
            return Some(ended);
        }
        if agent.context.is_cancelled() {
            return Some((String::new(), StopReason::Cancelled));
        }
        recorded.err().map(|limit| (String::new(), StopReason::Budget(limit)))
    }

    fn emit(&self, event: AgentEvent) {
        if let Some(events) = &self.events {
            // A dropped receiver only means no one listens any more.
            let _ = events.unbounded_send(event);
        }
    }
}
