//! Tool search for toolsets too large to send whole: BM25 (the `bm25`
//! crate) over each tool's name, its description and the names and
//! descriptions of its arguments, in English words: ASCII-folded,
//! lowercased, stop words out, stemmed ([`English`]).

use std::sync::OnceLock;

use std::collections::HashSet;

use bm25::{Document, SearchEngine, SearchEngineBuilder, Tokenizer};
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::{Value, json};
use toolcall_core::toolset::{RESERVED_TOOL_SEARCH, ToolSearch};
use toolcall_core::{Output, OutputFuture, Tool, ToolContext, ToolError, ToolSpec, Toolset};
use toolcall_provider::Dialect;
use toolcall_provider::search::LocalSearch;
use unicode_segmentation::UnicodeSegmentation;

use crate::{Message, Transcript};

/// The words of a text as the index compares them, the steps of `bm25`'s
/// own English tokenizer (which this replaces to build without its cache
/// macro): accents and other scripts folded to ASCII, lowercase, split at
/// word boundaries, NLTK's English stop words out, each word stemmed
/// (Snowball's English stemmer), so "files" finds "file".
struct English {
    stemmer: Stemmer,
    stop_words: HashSet<String>,
}

impl English {
    fn new() -> Self {
        let stop_words = stop_words::get(stop_words::LANGUAGE::English)
            .iter()
            .map(|word| deunicode::deunicode_with_tofu_cow(word, "[?]").into_owned())
            .collect();
        Self { stemmer: Stemmer::create(Algorithm::English), stop_words }
    }
}

impl Tokenizer for English {
    fn tokenize(&self, text: &str) -> Vec<String> {
        let text = deunicode::deunicode_with_tofu_cow(text, "[?]").to_lowercase();
        text.unicode_words()
            .filter(|word| !self.stop_words.contains(*word))
            .map(|word| self.stemmer.stem(word).into_owned())
            .collect()
    }
}

/// A search index over tools, built once; [`ToolIndex::search`] gives the
/// names of the tools that best match a query, best first.
///
/// ```
/// # use toolcall_core::{JsonObject, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Spec(ToolSpec);
/// # impl Tool for Spec {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # #[allow(non_snake_case)]
/// # fn Named(name: &'static str, description: &'static str, schema: JsonObject) -> Spec {
/// #     Spec(ToolSpec::from_parameters(name, description, Parameters::from_schema(schema)))
/// # }
/// # let schema = serde_json::json!({"type": "object"}).as_object().unwrap().clone();
/// use toolcall_agent::ToolIndex;
/// let tools = [
///     Named("github_create_issue", "Open a new issue in a repository.", schema.clone()),
///     Named("slack_post_message", "Post a message to a channel.", schema.clone()),
/// ];
/// let index = ToolIndex::new(tools.iter().map(|tool| tool as &dyn Tool));
/// assert_eq!(index.search("file a bug as a new issue", 1), ["github_create_issue"]);
/// ```
pub struct ToolIndex {
    engine: SearchEngine<u32, u32, English>,
    names: Vec<String>,
}

impl ToolIndex {
    /// Index these tools.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a dyn Tool>) -> Self {
        let mut names = Vec::new();
        let mut documents = Vec::new();
        for (id, tool) in (0u32..).zip(tools) {
            names.push(tool.spec().name().to_owned());
            documents.push(Document::new(id, document(tool)));
        }
        let engine = SearchEngineBuilder::with_tokenizer_and_documents(English::new(), documents).build();
        Self { engine, names }
    }

    /// The names of at most `limit` tools that match `query`, best first;
    /// none when no word of the query is in any tool's text.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&str> {
        let mut found = self.engine.search(query, None);
        // Equal scores come out in hash order: the index order settles them,
        // so the same query always gives the same list.
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.document.id.cmp(&b.document.id)));
        found
            .into_iter()
            .take(limit)
            .filter_map(|hit| self.names.get(hit.document.id as usize).map(String::as_str))
            .collect()
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex").field("tools", &self.names).finish()
    }
}

/// The text a tool is found by: its name as words, its description, and
/// each argument's name and description.
fn document(tool: &dyn Tool) -> String {
    let mut text = tool.spec().name().replace(['_', '-'], " ");
    text.push('\n');
    text.push_str(tool.spec().description());
    if let Some(properties) = tool.spec().parameters().get("properties").and_then(Value::as_object) {
        for (name, schema) in properties {
            text.push('\n');
            text.push_str(&name.replace(['_', '-'], " "));
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
    text
}

/// The function that answers `tool_search` calls, registered in the
/// agent's toolset ([`Toolset::with_search_function`]) so that it runs as
/// every tool does (timeout, layers, observers, counters): the deferred
/// tools that best match the query, as definitions the model can read
/// (MCP's shape: name, description, input schema), at most the setting's
/// number of them, the ones already offered left out. What is offered is
/// the turn's [`ToolSearch`] setting, which the loop puts in the calls'
/// context; without one, the toolset's own.
///
/// A found tool whose MCP definition cannot be built (its examples do not
/// fit its schema: [`Dialect::function`]) is left out with a warning: no
/// dialect could send it, and offering it would fail the next request.
pub(crate) struct SearchFunction {
    /// The toolset as the agent got it, without this function.
    tools: Toolset,
    /// Built on the first search.
    index: OnceLock<ToolIndex>,
    /// The function the dialects send for the search, whose spec this one
    /// answers under.
    local: LocalSearch,
}

impl SearchFunction {
    /// The toolset with its search function, when tool search is on.
    pub(crate) fn register(toolset: Toolset) -> Toolset {
        let Some(setting) = toolset.tool_search() else {
            return toolset;
        };
        let local = LocalSearch::new(setting);
        let function = Self { tools: toolset.clone(), index: OnceLock::new(), local };
        // Refused only for a schema that is not an object, which the
        // search's own is.
        toolset.clone().with_search_function(function).unwrap_or(toolset)
    }

    fn answer(&self, ctx: &ToolContext, arguments: &str) -> Result<Output, ToolError> {
        let query =
            match serde_json::from_str::<SearchArguments>(toolcall_core::clean_json(arguments).as_ref()) {
                Ok(arguments) if !arguments.query.trim().is_empty() => arguments.query,
                Ok(_) => {
                    return Err(ToolError::invalid_arguments(
                        "`query` is empty: say what you want to do, in a few words",
                    ));
                }
                Err(error) => {
                    return Err(ToolError::invalid_arguments(format!(
                        "{error}: send {{\"query\": \"what you want to do\"}}"
                    )));
                }
            };
        let Some(setting) = ctx.get::<ToolSearch>().or(self.tools.tool_search()) else {
            return Err(ToolError::failed("tool search is off"));
        };
        let index = self.index.get_or_init(|| {
            let tools = &self.tools;
            ToolIndex::new(
                tools.iter().map(|tool| tool.as_ref()).filter(|tool| tools.is_deferred(tool.spec().name())),
            )
        });
        let found: Vec<Value> = index
            .search(&query, usize::MAX)
            .into_iter()
            .filter(|name| !setting.is_loaded(name))
            .filter_map(|name| self.tools.get(name))
            .filter_map(|tool| match Dialect::Mcp.function(tool.as_ref()) {
                Ok(definition) => Some(definition),
                Err(error) => {
                    let tool = tool.spec().name();
                    tracing::warn!(tool, %error, "a tool search leaves out a tool it cannot define");
                    None
                }
            })
            .take(setting.max_results())
            .collect();
        let content = if found.is_empty() {
            json!({"tools": [], "note": format!("no tool matches `{query}`: try other words")})
        } else {
            json!({"tools": found, "note": "you can call these tools from your next turn on"})
        };
        Ok(Output::text(content.to_string()))
    }
}

impl Tool for SearchFunction {
    fn spec(&self) -> &ToolSpec {
        self.local.spec()
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move { self.answer(ctx, arguments) })
    }
}

#[derive(serde::Deserialize)]
struct SearchArguments {
    query: String,
}

/// The tools earlier searches of this run found: named in the successful
/// results of its `tool_search` calls. Read from the transcript, so a
/// saved, continued or resumed run offers what it had found.
pub(crate) fn found_in(transcript: &Transcript) -> Vec<String> {
    let mut found = Vec::new();
    for message in &transcript.messages {
        let Message::Tool { results } = message else { continue };
        for result in results {
            if !(result.outcome.is_success() && result.name.eq_ignore_ascii_case(RESERVED_TOOL_SEARCH)) {
                continue;
            }
            let Ok(content) = serde_json::from_str::<Value>(&result.content) else { continue };
            let names = content["tools"].as_array().into_iter().flatten();
            found.extend(names.filter_map(|tool| tool["name"].as_str()).map(str::to_owned));
        }
    }
    found
}
