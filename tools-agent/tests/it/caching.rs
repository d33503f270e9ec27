//! Prompt caching, for every client, plain and streamed: a scripted run of
//! ten turns (a call each turn, the answer on the tenth) against a stand-in
//! that keeps a prompt cache as its provider documents it and reports the
//! cached tokens in its provider's usage fields, computed from the requests
//! it received. The run's cache reads must rise turn by turn, each turn
//! reading everything the turn before sent (or, for Anthropic, marked), and
//! the bytes a cache keys on must be a prefix of the next request's: a
//! client that changed a byte of an earlier part of its request (a tool
//! reordered, a message written another way once it is no longer last)
//! fails here. Also: the cache settings sent as each provider takes them,
//! and refused where it cannot; and a local tool search, whose finds are
//! appended to the tools offered before, the earlier ones unchanged.
//!
//! The caches, as documented:
//! - Anthropic (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>):
//!   the prefix in the order tools, system, messages, cached up to a block
//!   marked `cache_control`; a later request reads an entry written at an
//!   earlier breakpoint, found by looking back up to 20 blocks from each of
//!   its own; a prefix below the model's minimum (1,024 tokens for Claude
//!   Sonnet) is not cached. `cache_creation_input_tokens` counts what is
//!   written, `cache_read_input_tokens` what is read, and `input_tokens` the
//!   rest (after the last breakpoint).
//! - OpenAI (<https://platform.openai.com/docs/guides/prompt-caching>):
//!   automatic for prompts of 1,024 tokens and more, on exact prefix
//!   matches, the cached count in steps of 128 (1,024, 1,152, 1,280...),
//!   reported as `prompt_tokens_details.cached_tokens` (Chat) and
//!   `input_tokens_details.cached_tokens` (Responses); tools and messages
//!   are part of the prefix.
//! - Gemini (<https://ai.google.dev/gemini-api/docs/caching>, implicit
//!   caching): automatic on a shared prefix of at least 1,024 tokens (2.5
//!   Flash), reported as `usageMetadata.cachedContentTokenCount`.
//!
//! A token is four bytes here. The stand-in lays each request out in its
//! provider's cache order from the JSON it received (each part written
//! back as it came: serde_json keeps the order of its keys).

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use serde_json::{Map, Value};
use toolcall_agent::{
    Agent, AgentError, CacheRetention, CacheSettings, CacheTtl, ModelError, ModelSettings, RunLimits, Usage,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::scenarios::{ProviderMock, bodies, client, received};
use crate::support::openai::{Turn, run};

/// Bytes to a token, for the stand-ins.
const BYTES_PER_TOKEN: usize = 4;
/// The smallest prefix each stand-in caches, in tokens.
const MINIMUM: usize = 1024;

/// A chapter of a long book: a long result each turn, so that each turn
/// adds more to the prefix than OpenAI's 128-token step.
#[tool(args, crate = "toolcall_core")]
async fn read_chapter(_ctx: &ToolContext, n: u32) -> Result<String, ToolError> {
    Ok(format!("Chapter {n}. ")
        + &"It was a quiet day on the long road north, and nothing happened. ".repeat(12))
}

fn toolset() -> Toolset {
    Toolset::builder().add(ReadChapter).build().unwrap()
}

/// Long instructions: the first request is above every minimum.
fn instructions() -> String {
    "You summarize books chapter by chapter, reading each with `read_chapter` before you write. ".repeat(60)
}

/// The turns: a call each of the first nine, the answer on the tenth.
fn script() -> Vec<Turn> {
    let mut turns: Vec<Turn> = (1..10)
        .map(|n| Turn::calls(&[(&format!("toolu_{n:02}"), "read_chapter", &format!(r#"{{"n": {n}}}"#))]))
        .collect();
    turns.push(Turn::text("Nothing happened in nine chapters."));
    turns
}

/// One unit of a provider's cache: the bytes of a part of the request, in
/// the cache's order, and whether a breakpoint ends it.
#[derive(Clone, Debug)]
struct Block {
    bytes: String,
    breakpoint: bool,
}

/// The counts a stand-in reports for one request, in tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Counts {
    /// Every input token.
    input: usize,
    read: usize,
    written: usize,
}

/// A provider's prompt cache, and how its mock reports what it did.
trait Cached: ProviderMock {
    /// Whether only the prefix up to a breakpoint is cached (Anthropic),
    /// rather than any prefix (OpenAI, Gemini).
    const EXPLICIT: bool;
    /// The request as its cache reads it.
    fn blocks(body: &Value) -> Vec<Block>;
    /// The edits that make the mock's bodies and streams report `counts`:
    /// its usage fragment (compact JSON, as it writes it) and the new one.
    fn usage(counts: Counts) -> Vec<(&'static str, String)>;
    /// The cached count as the provider reports a prefix of `tokens`.
    fn reported(tokens: usize) -> usize {
        tokens
    }
}

/// A part of a request, as it came.
fn bytes(value: &Value) -> String {
    value.to_string()
}

/// Each element of the array at `name`, one block each.
fn each(body: &Value, name: &str) -> Vec<Block> {
    let items = body.get(name).and_then(Value::as_array).into_iter().flatten();
    items.map(|item| Block { bytes: bytes(item), breakpoint: false }).collect()
}

impl Cached for crate::anthropic::Mock {
    const EXPLICIT: bool = true;

    /// Tools, system, then each message's blocks (the role before its
    /// first), each without its `cache_control`, which marks a breakpoint
    /// and is no part of the prefix (the docs move it each turn).
    fn blocks(body: &Value) -> Vec<Block> {
        fn block(value: &Value, prefix: &str) -> Block {
            let mut value = value.clone();
            let breakpoint =
                value.as_object_mut().and_then(|fields| fields.remove("cache_control")).is_some();
            Block { bytes: format!("{prefix}{}", bytes(&value)), breakpoint }
        }
        let mut out: Vec<Block> = Vec::new();
        let tools = body.get("tools").and_then(Value::as_array).into_iter().flatten();
        out.extend(tools.map(|tool| block(tool, "")));
        match body.get("system") {
            Some(Value::Array(system)) => out.extend(system.iter().map(|text| block(text, "system:"))),
            Some(system) => out.push(block(system, "system:")),
            None => {}
        }
        for message in body["messages"].as_array().into_iter().flatten() {
            let role = message["role"].as_str().unwrap_or("?");
            match &message["content"] {
                Value::Array(blocks) => {
                    for (at, content) in blocks.iter().enumerate() {
                        out.push(block(content, if at == 0 { role } else { "" }));
                    }
                }
                text => out.push(block(text, role)),
            }
        }
        out
    }

    fn usage(counts: Counts) -> Vec<(&'static str, String)> {
        let rest = counts.input - counts.read - counts.written;
        vec![(
            r#""input_tokens":25,"cache_creation_input_tokens":40,"cache_read_input_tokens":1200"#,
            format!(
                r#""input_tokens":{rest},"cache_creation_input_tokens":{},"cache_read_input_tokens":{}"#,
                counts.written, counts.read
            ),
        )]
    }
}

/// OpenAI's steps: 1,024 tokens, then 128 at a time.
fn openai_steps(tokens: usize) -> usize {
    if tokens < MINIMUM { 0 } else { MINIMUM + (tokens - MINIMUM) / 128 * 128 }
}

impl Cached for crate::openai_chat::Mock {
    const EXPLICIT: bool = false;

    /// The tools, then the messages (the instructions first among them).
    fn blocks(body: &Value) -> Vec<Block> {
        [each(body, "tools"), each(body, "messages")].concat()
    }

    fn usage(counts: Counts) -> Vec<(&'static str, String)> {
        vec![(
            r#""prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":16"#,
            format!(
                r#""prompt_tokens":{},"completion_tokens":10,"total_tokens":{},"prompt_tokens_details":{{"cached_tokens":{}"#,
                counts.input,
                counts.input + 10,
                counts.read
            ),
        )]
    }

    fn reported(tokens: usize) -> usize {
        openai_steps(tokens)
    }
}

impl Cached for crate::openai_responses::Mock {
    const EXPLICIT: bool = false;

    /// The tools, the instructions, then the input items.
    fn blocks(body: &Value) -> Vec<Block> {
        let instructions =
            body.get("instructions").map(|text| Block { bytes: bytes(text), breakpoint: false });
        [each(body, "tools"), instructions.into_iter().collect(), each(body, "input")].concat()
    }

    fn usage(counts: Counts) -> Vec<(&'static str, String)> {
        vec![
            (
                r#""input_tokens":36,"input_tokens_details":{"cached_tokens":32}"#,
                format!(
                    r#""input_tokens":{},"input_tokens_details":{{"cached_tokens":{}}}"#,
                    counts.input, counts.read
                ),
            ),
            (r#""total_tokens":123"#, format!(r#""total_tokens":{}"#, counts.input + 87)),
        ]
    }

    fn reported(tokens: usize) -> usize {
        openai_steps(tokens)
    }
}

impl Cached for crate::gemini::Mock {
    const EXPLICIT: bool = false;

    /// The system instruction, the tools, then the contents.
    fn blocks(body: &Value) -> Vec<Block> {
        let system =
            body.get("systemInstruction").map(|text| Block { bytes: bytes(text), breakpoint: false });
        [system.into_iter().collect(), each(body, "tools"), each(body, "contents")].concat()
    }

    fn usage(counts: Counts) -> Vec<(&'static str, String)> {
        vec![(
            r#""promptTokenCount":30,"candidatesTokenCount":5,"thoughtsTokenCount":3,"cachedContentTokenCount":24,"totalTokenCount":38"#,
            format!(
                r#""promptTokenCount":{},"candidatesTokenCount":5,"thoughtsTokenCount":3,"cachedContentTokenCount":{},"totalTokenCount":{}"#,
                counts.input,
                counts.read,
                counts.input + 8
            ),
        )]
    }

    fn reported(tokens: usize) -> usize {
        if tokens < MINIMUM { 0 } else { tokens }
    }
}

/// The bytes of blocks in a row.
fn joined(blocks: &[Block]) -> String {
    blocks.iter().map(|block| block.bytes.as_str()).collect()
}

fn tokens(bytes: usize) -> usize {
    bytes / BYTES_PER_TOKEN
}

/// What the stand-in's cache holds.
#[derive(Default)]
struct Cache {
    /// Anthropic: the prefixes written at breakpoints.
    entries: HashSet<String>,
    /// OpenAI, Gemini: the prompts seen.
    prompts: Vec<String>,
}

impl Cache {
    /// Read what it can of this request, write what it should.
    fn serve(&mut self, blocks: &[Block], explicit: bool) -> Counts {
        let input = tokens(joined(blocks).len());
        if !explicit {
            let prompt = joined(blocks);
            let shared = self
                .prompts
                .iter()
                .map(|earlier| earlier.bytes().zip(prompt.bytes()).take_while(|(a, b)| a == b).count())
                .max()
                .unwrap_or(0);
            self.prompts.push(prompt);
            return Counts { input, read: tokens(shared), written: 0 };
        }
        let prefix = |end: usize| joined(&blocks[..end]);
        let breakpoints: Vec<usize> =
            blocks.iter().enumerate().filter(|(_, block)| block.breakpoint).map(|(at, _)| at + 1).collect();
        // A hit at an earlier entry, looking back up to 20 blocks from each breakpoint.
        let read = breakpoints
            .iter()
            .filter_map(|&end| {
                (end.saturating_sub(20)..=end).rev().find(|&start| self.entries.contains(&prefix(start)))
            })
            .max()
            .map_or(0, |end| tokens(prefix(end).len()));
        let last = breakpoints.last().map_or(0, |&end| tokens(prefix(end).len()));
        let mut written = 0;
        for &end in &breakpoints {
            let cached = prefix(end);
            if tokens(cached.len()) >= MINIMUM {
                self.entries.insert(cached);
                written = last - read;
            }
        }
        Counts { input, read, written }
    }
}

/// The stand-in: the scripted turns, each reply reporting what the cache
/// did with the request it answers.
struct StandIn<P> {
    turns: Mutex<VecDeque<Turn>>,
    cache: Mutex<Cache>,
    streamed: bool,
    _provider: std::marker::PhantomData<fn() -> P>,
}

impl<P: Cached + 'static> Respond for StandIn<P> {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Some(turn) = self.turns.lock().unwrap().pop_front() else {
            return ResponseTemplate::new(418).set_body_string("the script is over");
        };
        let body: Value = serde_json::from_slice(&request.body).expect("a JSON request body");
        let mut counts = self.cache.lock().unwrap().serve(&P::blocks(&body), P::EXPLICIT);
        counts.read = if P::EXPLICIT { counts.read } else { P::reported(counts.read) };
        let (mut text, kind) = if self.streamed {
            (P::stream(&turn, false), "text/event-stream")
        } else {
            (P::body(&turn).to_string(), "application/json")
        };
        for (from, to) in P::usage(counts) {
            assert!(text.contains(from), "the mock's usage changed: no {from} in {text}");
            text = text.replace(from, &to);
        }
        ResponseTemplate::new(200).set_body_raw(text, kind)
    }
}

async fn stand_in<P: Cached + 'static>(streamed: bool) -> MockServer {
    let server = MockServer::start().await;
    let stand_in = StandIn::<P> {
        turns: Mutex::new(script().into()),
        cache: Mutex::default(),
        streamed,
        _provider: std::marker::PhantomData,
    };
    Mock::given(method("POST")).respond_with(stand_in).mount(&server).await;
    server
}

/// Ten turns; the cache read of each turn from the second on is all the
/// turn before sent (Anthropic: all it marked), so it rises turn by turn;
/// and the bytes the cache keys on are a prefix of the next request's.
async fn ten_turns_read_more_from_the_cache_each_turn<P: Cached + 'static>(streamed: bool) {
    let server = stand_in::<P>(streamed).await;
    let agent = Agent::new(client::<P>(&server, 1), toolset())
        .unwrap()
        .with_instructions(instructions())
        .with_limits(RunLimits::default().with_max_turns(20));
    let (result, _) = run(&agent, "Summarize the book.", streamed).await;
    let result = result.unwrap_or_else(|error: AgentError| panic!("{}: {error}", P::NAME));
    assert_eq!(result.answer, "Nothing happened in nine chapters.");
    let usage: Vec<Usage> = result.usage.clone();
    assert_eq!(usage.len(), 10);

    let requests = bodies(&received::<P>(&server, streamed).await);
    let layouts: Vec<Vec<Block>> = requests.iter().map(P::blocks).collect();
    let read =
        |turn: usize| usage[turn].cache_read_tokens.unwrap_or_else(|| panic!("turn {turn}: no cache read"));
    let reads: Vec<Option<u64>> = usage.iter().map(|usage| usage.cache_read_tokens).collect();
    let writes: Vec<Option<u64>> = usage.iter().map(|usage| usage.cache_write_tokens).collect();
    println!("{} (streamed: {streamed}): cache reads {reads:?}, writes {writes:?}", P::NAME);
    assert_eq!(read(0), 0, "{}: the first turn reads nothing", P::NAME);
    for turn in 1..10 {
        let (before, now) = (&layouts[turn - 1], &layouts[turn]);
        if P::EXPLICIT {
            // Everything up to the last breakpoint of the turn before is
            // the start of this request, and was read from the cache.
            let marked = before.iter().rposition(|block| block.breakpoint).expect("a breakpoint") + 1;
            assert!(
                joined(now).starts_with(&joined(&before[..marked])),
                "{}: turn {turn} changed the bytes before the last breakpoint of turn {}",
                P::NAME,
                turn - 1
            );
            let written = usage[turn - 1].cache_write_tokens.unwrap_or(0);
            assert!(written > 0, "{}: turn {} wrote nothing", P::NAME, turn - 1);
            assert_eq!(read(turn), read(turn - 1) + written, "{}: turn {turn}", P::NAME);
            // At most 4 breakpoints, and ours are 3: the tool, the system, the last message.
            assert_eq!(now.iter().filter(|block| block.breakpoint).count(), 3, "{}", P::NAME);
        } else {
            // The whole request before is the start of this one, and the
            // cache read it, in the provider's steps.
            assert!(
                joined(now).starts_with(&joined(before)),
                "{}: turn {turn} changed the bytes of turn {}",
                P::NAME,
                turn - 1
            );
            let before_input = usage[turn - 1].input_tokens.unwrap() as usize;
            assert_eq!(read(turn) as usize, P::reported(before_input), "{}: turn {turn}", P::NAME);
        }
        assert!(read(turn) > read(turn - 1), "{}: turn {turn} read no more than the turn before", P::NAME);
    }
}

/// The settings that each provider takes, sent as it takes them; those
/// it cannot take refused before anything is sent.
async fn the_cache_settings_go_where_the_provider_takes_them<P: Cached + Settings + 'static>(streamed: bool) {
    let server = stand_in::<P>(streamed).await;
    let agent = Agent::new(client::<P>(&server, 1), toolset())
        .unwrap()
        .with_instructions(instructions())
        .with_settings(ModelSettings::default().with_cache(P::taken()));
    let (result, _) = run(&agent, "Summarize the book.", streamed).await;
    result.unwrap_or_else(|error| panic!("{}: {error}", P::NAME));
    let requests = bodies(&received::<P>(&server, streamed).await);
    P::assert_sent(requests[0].as_object().unwrap());

    for refused in P::refused() {
        let server = stand_in::<P>(streamed).await;
        let agent = Agent::new(client::<P>(&server, 1), toolset())
            .unwrap()
            .with_settings(ModelSettings::default().with_cache(refused.clone()));
        let (result, _) = run(&agent, "Summarize the book.", streamed).await;
        let error = result.expect_err("refused");
        assert!(
            matches!(&error.error, ModelError::Setting { setting, .. } if setting.starts_with("cache.")),
            "{}: {refused:?}: {error}",
            P::NAME
        );
        assert!(received::<P>(&server, streamed).await.is_empty(), "{}: sent anyway", P::NAME);
    }
}

/// What one provider takes of the cache settings.
trait Settings {
    /// Settings it takes.
    fn taken() -> CacheSettings;
    /// How its first request carries them.
    fn assert_sent(body: &Map<String, Value>);
    /// Settings it refuses, one each.
    fn refused() -> Vec<CacheSettings>;
}

fn openai_sent(body: &Map<String, Value>) {
    assert_eq!(body["prompt_cache_key"], "book-club");
    assert_eq!(body["prompt_cache_retention"], "24h");
    assert!(!Value::Object(body.clone()).to_string().contains("cache_control"));
}

fn openai_taken() -> CacheSettings {
    CacheSettings::new().with_key("book-club").with_retention(CacheRetention::Day)
}

impl Settings for crate::openai_chat::Mock {
    fn taken() -> CacheSettings {
        openai_taken()
    }
    fn assert_sent(body: &Map<String, Value>) {
        openai_sent(body)
    }
    fn refused() -> Vec<CacheSettings> {
        vec![CacheSettings::new().with_ttl(CacheTtl::OneHour)]
    }
}

impl Settings for crate::openai_responses::Mock {
    fn taken() -> CacheSettings {
        openai_taken()
    }
    fn assert_sent(body: &Map<String, Value>) {
        openai_sent(body)
    }
    fn refused() -> Vec<CacheSettings> {
        vec![CacheSettings::new().with_ttl(CacheTtl::FiveMinutes)]
    }
}

impl Settings for crate::anthropic::Mock {
    fn taken() -> CacheSettings {
        CacheSettings::new().with_ttl(CacheTtl::OneHour)
    }
    /// Three breakpoints, each with the TTL: the last tool, the system
    /// prompt, the last user message's last block.
    fn assert_sent(body: &Map<String, Value>) {
        let mark = serde_json::json!({"type": "ephemeral", "ttl": "1h"});
        assert_eq!(body["tools"][0]["cache_control"], mark);
        assert_eq!(body["system"][0]["cache_control"], mark);
        assert_eq!(body["messages"][0]["content"][0]["cache_control"], mark);
        assert_eq!(body.get("prompt_cache_key"), None);
    }
    fn refused() -> Vec<CacheSettings> {
        vec![
            CacheSettings::new().with_key("book-club"),
            CacheSettings::new().with_retention(CacheRetention::InMemory),
            CacheSettings::off().with_ttl(CacheTtl::OneHour),
        ]
    }
}

impl Settings for crate::gemini::Mock {
    fn taken() -> CacheSettings {
        CacheSettings::new()
    }
    /// Nothing: implicit caching needs no field.
    fn assert_sent(body: &Map<String, Value>) {
        let names: Vec<&str> = body.keys().map(String::as_str).collect();
        assert_eq!(names, ["systemInstruction", "contents", "tools", "toolConfig"]);
    }
    fn refused() -> Vec<CacheSettings> {
        vec![
            CacheSettings::new().with_key("book-club"),
            CacheSettings::new().with_retention(CacheRetention::Day),
            CacheSettings::new().with_ttl(CacheTtl::OneHour),
        ]
    }
}

/// Anthropic with the breakpoints off: no `cache_control` anywhere, and
/// the stand-in caches nothing.
#[tokio::test]
async fn anthropic_without_breakpoints_marks_nothing_and_reads_nothing() {
    type P = crate::anthropic::Mock;
    for streamed in [false, true] {
        let server = stand_in::<P>(streamed).await;
        let agent = Agent::new(client::<P>(&server, 1), toolset())
            .unwrap()
            .with_instructions(instructions())
            .with_limits(RunLimits::default().with_max_turns(20))
            .with_settings(ModelSettings::default().with_cache(CacheSettings::off()));
        let (result, _) = run(&agent, "Summarize the book.", streamed).await;
        let result = result.unwrap();
        assert!(result.usage.iter().all(|usage| usage.cache_read_tokens == Some(0)), "{:?}", result.usage);
        let requests = bodies(&received::<P>(&server, streamed).await);
        assert!(requests.iter().all(|body| !body.to_string().contains("cache_control")));
        assert_eq!(requests[0]["system"], instructions());
    }
}

/// The definitions a request offers, each without its `cache_control`:
/// Gemini's function declarations, the `tools` array elsewhere.
fn definitions(body: &Value) -> Vec<Value> {
    let tools = body.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    let declared = tools.first().and_then(|tool| tool.get("functionDeclarations")).and_then(Value::as_array);
    let mut out = declared.cloned().unwrap_or(tools);
    for definition in &mut out {
        definition.as_object_mut().map(|fields| fields.remove("cache_control"));
    }
    out
}

/// A local tool search (every client but Anthropic, whose provider
/// searches the deferred tools it is sent from the start) finds Jira's
/// tools, then GitHub's, registered before them: each request offers the
/// same definitions as the one before, the same bytes in the same places,
/// and the new ones after them, in the order found.
async fn a_tool_search_appends_to_the_tools_offered_before<P: Cached + 'static>(streamed: bool) {
    use crate::support::many_tools;
    use toolcall_core::toolset::ToolSearch;

    let turns = [
        Turn::calls(&[("call_s1", "tool_search", r#"{"query": "create a new issue in Jira"}"#)]),
        Turn::calls(&[("call_s2", "tool_search", r#"{"query": "create a new pull request in GitHub"}"#)]),
        Turn::calls(&[("call_g1", "github_create_pull_request", r#"{"title": "Fix the login"}"#)]),
        Turn::text("Opened."),
    ];
    let server = crate::scenarios::mock(turns.iter().map(|turn| P::reply(turn, streamed)).collect()).await;
    let mut tools = Toolset::new();
    for tool in many_tools::tools() {
        tools.add(tool).unwrap();
    }
    let tools = tools.with_tool_search(ToolSearch::new().with_loaded(["slack_create_message"]));
    let agent = Agent::new(client::<P>(&server, 1), tools).unwrap();
    let (result, _) = run(&agent, "Open a PR for the Jira ticket.", streamed).await;
    assert_eq!(result.unwrap_or_else(|error| panic!("{}: {error}", P::NAME)).answer, "Opened.");

    let requests: Vec<Vec<Value>> =
        bodies(&received::<P>(&server, streamed).await).iter().map(definitions).collect();
    assert_eq!(requests.len(), 4);
    let names = |definitions: &[Value]| -> Vec<String> {
        let name = |d: &Value| {
            d.get("name").or(d.pointer("/function/name")).and_then(Value::as_str).map(str::to_owned)
        };
        definitions.iter().filter_map(name).collect()
    };
    assert_eq!(names(&requests[0]), ["tool_search", "slack_create_message"], "{}", P::NAME);
    for turn in 1..4 {
        let (before, now) = (&requests[turn - 1], &requests[turn]);
        assert_eq!(now[..before.len()], before[..], "{}: request {turn} changed the tools before", P::NAME);
        let (before, now) = (serde_json::to_string(before).unwrap(), serde_json::to_string(now).unwrap());
        assert!(now.starts_with(before.trim_end_matches(']')), "{}: request {turn}", P::NAME);
    }
    let offered = names(&requests[3]);
    let (jira, github) = (
        offered.iter().position(|name| name.starts_with("jira_")).expect("Jira's tools"),
        offered.iter().position(|name| name.starts_with("github_")).expect("GitHub's tools"),
    );
    assert!(2 == jira && jira < github, "{}: found in the order found: {offered:?}", P::NAME);
}

crate::support::per_client!(
    [ten_turns_read_more_from_the_cache_each_turn, the_cache_settings_go_where_the_provider_takes_them]
    openai_chat: crate::openai_chat::Mock, a_tool_search_appends_to_the_tools_offered_before;
    openai_responses: crate::openai_responses::Mock, a_tool_search_appends_to_the_tools_offered_before;
    anthropic: crate::anthropic::Mock;
    gemini: crate::gemini::Mock, a_tool_search_appends_to_the_tools_offered_before;
);
