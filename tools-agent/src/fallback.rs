//! A model that stands for several: each request goes to the first, and on
//! an error another model may not meet, to the next.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{StreamExt, stream};
use toolcall_provider::{Dialect, Finish};

use crate::model::{ModelEvent, ModelRequest, ModelResponse, ModelStream};
use crate::{Model, ModelError, ModelName};

/// Which errors fall over to the next model.
type Predicate = Arc<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// A [`Model`] over several: every request goes to the first model, and
/// when it fails with an error that another model may well not meet, to
/// the next, and so on; the first answer is the request's.
///
/// - **What falls over.** By default what [`ModelError::is_transient`]
///   says: a rate limit or an overloaded provider (429, 503, 529), a server
///   error (500, 502...), a timeout, a connection that failed or a stream
///   that broke. Each client first resends by its own
///   [`ResendPolicy`](crate::ResendPolicy): a model falls over only once
///   that has run out (give the first `ResendPolicy::none()` to fall over
///   at once). A refused request (400, 404...), a refused or missing key,
///   a setting or a tool the provider cannot take do not fall over: they
///   end the request with their error. [`Self::with_fallback_on`] sets
///   another rule; [`Self::with_refusals`] falls over on a refusal too.
/// - **Streams** fall over only before their first event: once a model's
///   text has been passed on, a later error (a stream cut midway) is the
///   request's, as it is.
/// - **Which model answered** is on the response ([`ModelResponse::model`]),
///   so the agent records it for each request ([`RunResult::models`](crate::RunResult::models),
///   [`RunResult::usage_by_model`](crate::RunResult::usage_by_model)) and
///   in the request's span (`response_provider`, `response_model`).
/// - **Each request starts again at the first model**: a model that fell
///   over is asked first again at the next turn.
/// - **The transcript stays valid for the model that continues**: the
///   transcript is provider-neutral, and each provider's writer sends its
///   own reasoning back and leaves out another provider's (Anthropic's
///   signed thinking, Gemini's thought signatures, OpenAI's reasoning
///   items are valid only for the provider that made them). Two provider
///   rules still hold for a turn another model began: Gemini 3 asks for a
///   thought signature on every call of the current turn, and Anthropic,
///   with thinking on, for a thinking block before the last turn's calls
///   (<https://ai.google.dev/gemini-api/docs/thought-signatures>,
///   <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>);
///   a request that breaks them is refused, and a 400 does not fall over.
/// - **Its tools must be valid for every model**: [`Model::dialects`] lists
///   each model's dialect, and [`Agent::new`](crate::Agent::new) refuses a
///   toolset one of them cannot express.
///
/// When more than one error was met, the request's error is
/// [`ModelError::Fallback`], listing each; one error alone is given as it
/// is. Its [`provider`](Model::provider) is `fallback`, its
/// [`model`](Model::model) the models' names (`openai:gpt-4.1,anthropic:claude-sonnet-4-5`).
///
/// ```
/// use toolcall_agent::{Agent, FallbackModel, Model, ModelError, ModelName};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::Toolset;
///
/// # futures::executor::block_on(async {
/// let overloaded = ModelError::Unavailable { provider: "scripted".into(), status: 529, attempts: 4 };
/// let first = ScriptedModel::new().then(Err(overloaded));
/// let second = ScriptedModel::new().then_text("Hello from the second model.");
/// let model = FallbackModel::new(first).or(second);
/// assert_eq!((model.provider(), model.model()), ("fallback", "scripted:scripted,scripted:scripted"));
///
/// let result = Agent::new(model, Toolset::new()).unwrap().run("Hi").await.unwrap();
/// assert_eq!(result.answer, "Hello from the second model.");
/// assert_eq!(result.models, [ModelName::new("scripted", "scripted")]);
/// # });
/// ```
#[derive(Clone)]
pub struct FallbackModel {
    models: Vec<(ModelName, Arc<dyn Model>)>,
    /// The models' names, joined: what [`Model::model`] gives.
    name: String,
    falls_over: Predicate,
    refusals: bool,
}

impl FallbackModel {
    /// A chain of one model, which every request goes to first.
    pub fn new(first: impl Model + 'static) -> Self {
        let mut chain = Self {
            models: Vec::new(),
            name: String::new(),
            falls_over: Arc::new(ModelError::is_transient),
            refusals: false,
        };
        chain.push(Arc::new(first));
        chain
    }

    /// The same chain with `next` after the models before it.
    pub fn or(mut self, next: impl Model + 'static) -> Self {
        self.push(Arc::new(next));
        self
    }

    /// The same chain falling over on the errors `rule` says yes to (it is
    /// asked about each error but the last model's), rather than on
    /// [`ModelError::is_transient`] ones.
    ///
    /// ```
    /// use toolcall_agent::{FallbackModel, ModelError};
    /// use toolcall_agent::testing::{ScriptedModel};
    /// // Also when a model sends an empty answer.
    /// let model = FallbackModel::new(ScriptedModel::new())
    ///     .or(ScriptedModel::new())
    ///     .with_fallback_on(|error| error.is_transient() || matches!(error, ModelError::Empty { .. }));
    /// ```
    pub fn with_fallback_on(mut self, rule: impl Fn(&ModelError) -> bool + Send + Sync + 'static) -> Self {
        self.falls_over = Arc::new(rule);
        self
    }

    /// The same chain falling over when a model refuses, or its safety
    /// filter stops it ([`Finish::Refused`]), too; the last model's refusal
    /// is the answer. A refusal passed over is no error: it is logged
    /// (with its tokens, which the run's usage does not count), not
    /// listed in a [`ModelError::Fallback`]. A stream falls over on a
    /// refusal only if its first event is its end (nothing of it was
    /// passed on).
    pub fn with_refusals(mut self, yes: bool) -> Self {
        self.refusals = yes;
        self
    }

    /// The models, in the order they are tried.
    pub fn models(&self) -> impl Iterator<Item = &ModelName> {
        self.models.iter().map(|(name, _)| name)
    }

    fn push(&mut self, model: Arc<dyn Model>) {
        let name = ModelName::of(model.as_ref());
        if !self.name.is_empty() {
            self.name.push(',');
        }
        self.name.push_str(&name.to_string());
        self.models.push((name, model));
    }

    /// Whether this outcome of a model that is not the last goes on to
    /// the next: logged if it does.
    fn falls_over(&self, model: &ModelName, outcome: Result<&ModelResponse, &ModelError>) -> bool {
        let yes = match outcome {
            Err(error) => (self.falls_over)(error),
            Ok(response) => self.refusals && matches!(response.finish, Finish::Refused { .. }),
        };
        if yes {
            match outcome {
                Err(error) => tracing::warn!(model = %model, %error, "falling over to the next model"),
                Ok(response) => tracing::warn!(
                    model = %model,
                    finish = ?response.finish,
                    input_tokens = response.usage.input_tokens,
                    output_tokens = response.usage.output_tokens,
                    "the model refused: falling over to the next model"
                ),
            }
        }
        yes
    }
}

/// The response, naming the model that gave it (unless a chain inside it
/// already named one of its own).
fn answered(model: &ModelName, mut response: ModelResponse) -> ModelResponse {
    response.model.get_or_insert_with(|| model.clone());
    response
}

/// The request's error: the one met, as it is, or each of them.
fn gave_up(mut failures: Vec<(ModelName, ModelError)>) -> ModelError {
    if failures.len() == 1
        && let Some((_, error)) = failures.pop()
    {
        return error;
    }
    ModelError::Fallback { failures }
}

impl Model for FallbackModel {
    fn provider(&self) -> &str {
        "fallback"
    }

    fn model(&self) -> &str {
        &self.name
    }

    /// The first model's dialect: the one requests are written in when all
    /// is well. [`Self::dialects`] has every model's.
    fn dialect(&self) -> Option<Dialect> {
        self.models.first().and_then(|(_, model)| model.dialect())
    }

    fn dialects(&self) -> Vec<Dialect> {
        let mut dialects: Vec<Dialect> = Vec::new();
        for dialect in self.models.iter().flat_map(|(_, model)| model.dialects()) {
            if !dialects.contains(&dialect) {
                dialects.push(dialect);
            }
        }
        dialects
    }

    /// Only if every model does: the answer's schema is then sent to
    /// whichever answers.
    fn native_answers(&self) -> bool {
        self.models.iter().all(|(_, model)| model.native_answers())
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let mut failures = Vec::new();
            let mut models = self.models.iter().peekable();
            while let Some((name, model)) = models.next() {
                let more = models.peek().is_some();
                let outcome = model.request(request).await;
                if more && self.falls_over(name, outcome.as_ref()) {
                    if let Err(error) = outcome {
                        failures.push((name.clone(), error));
                    }
                    continue;
                }
                match outcome {
                    Ok(response) => return Ok(answered(name, response)),
                    Err(error) => {
                        failures.push((name.clone(), error));
                        break;
                    }
                }
            }
            Err(gave_up(failures))
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opened = async move {
            let mut failures = Vec::new();
            let mut models = self.models.iter().peekable();
            while let Some((name, model)) = models.next() {
                let more = models.peek().is_some();
                let mut events = model.stream(request);
                let first = events.next().await.unwrap_or_else(|| {
                    Err(ModelError::StreamEnded {
                        provider: name.provider.clone(),
                        message: "no event".into(),
                    })
                });
                let falls_over = match &first {
                    Err(error) => more && self.falls_over(name, Err(error)),
                    Ok(ModelEvent::Done(response)) => more && self.falls_over(name, Ok(response)),
                    // Something was passed on: this model's answer it is.
                    Ok(_) => false,
                };
                match first {
                    Err(error) => {
                        failures.push((name.clone(), error));
                        if falls_over {
                            continue;
                        }
                        break;
                    }
                    Ok(_) if falls_over => continue,
                    Ok(first) => {
                        let name = name.clone();
                        let events = stream::iter([Ok(first)]).chain(events).map(move |event| match event {
                            Ok(ModelEvent::Done(response)) => Ok(ModelEvent::Done(answered(&name, response))),
                            other => other,
                        });
                        return events.boxed();
                    }
                }
            }
            stream::iter([Err(gave_up(failures))]).boxed()
        };
        stream::once(opened).flatten().boxed()
    }
}

impl std::fmt::Debug for FallbackModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackModel")
            .field("models", &self.models.iter().map(|(name, _)| name.to_string()).collect::<Vec<_>>())
            .field("refusals", &self.refusals)
            .finish_non_exhaustive()
    }
}
