//! The argument path of one call (clean, limits, parse, a trivial `run`,
//! the output) for 100 B, 10 KB and 1 MB arguments, clean, fenced and
//! wrapped in prose: a `#[tool]` against plain `serde_json::from_str` plus
//! `to_string`, and against rmcp's tool router calling the same tool. And
//! `clean_json` alone on 1 MB, in GB/s.
//!
//! `cargo bench --bench args -- --warm-up-time 1 --measurement-time 3`
//! prints criterion's numbers, then the ratios and the cleaner's speed.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ContentBlock, JsonObject, NumberOrString};
use rmcp::service::{Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool_handler, tool_router};
use toolcall::{Tool, ToolContext, ToolOutput, TypedTool, clean_json, tool};

mod support;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// A title.
    title: String,
    /// The text: what makes the argument big.
    text: String,
}

/// The logic both sides run: as trivial as it gets.
fn measure(note: &Note) -> usize {
    note.title.len() + note.text.len()
}

/// Counts the characters of a note.
#[tool]
async fn count(req: Note) -> String {
    measure(&req).to_string()
}

/// The baseline: what a hand-rolled tool does with clean input.
fn direct(arguments: &str) -> String {
    match serde_json::from_str::<Note>(arguments) {
        Ok(note) => measure(&note).to_string(),
        Err(err) => err.to_string(),
    }
}

/// The same tool as rmcp `#[tool]` method, served the way rmcp's macros
/// serve it.
#[derive(Clone)]
struct Plain;

#[tool_router]
impl Plain {
    /// Counts the characters of a note.
    #[rmcp::tool]
    async fn count(&self, Parameters(req): Parameters<Note>) -> String {
        measure(&req).to_string()
    }
}

#[tool_handler]
impl ServerHandler for Plain {}

/// What rmcp does with a `tools/call` once its JSON-RPC layer has read the
/// arguments: `route` is `None` for the default `#[tool_handler]`, which
/// builds `Self::tool_router()` for every call, or a router built once.
async fn rmcp_call(peer: &Peer<RoleServer>, route: Option<&ToolRouter<Plain>>, arguments: &str) -> String {
    // The model's text becomes the request's argument object first.
    let arguments = match serde_json::from_str::<JsonObject>(arguments) {
        Ok(arguments) => arguments,
        Err(err) => return err.to_string(),
    };
    let request = CallToolRequestParams::new("count").with_arguments(arguments);
    let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
    let response = match route {
        None => Plain.call_tool(request, context).await,
        Some(router) => router.call(ToolCallContext::new(&Plain, request, context)).await,
    };
    match response {
        Ok(CallToolResponse::Complete(mut result)) => match result.content.pop() {
            Some(ContentBlock::Text(text)) => text.text,
            _ => String::new(),
        },
        Ok(_) => String::new(),
        Err(err) => err.message.into_owned(),
    }
}

/// A peer for rmcp's request context: the server side of a live session over
/// an in-memory duplex, kept open for the whole bench.
async fn rmcp_peer() -> (Peer<RoleServer>, impl Sized) {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(Plain.serve(server_side), ().serve(client_side));
    let server = server.expect("rmcp server starts");
    (server.peer().clone(), (server, client.expect("rmcp client connects")))
}

/// A clean argument of about `size` bytes, with escapes in the text as a
/// model's would have.
fn clean(size: usize) -> String {
    let line = "A line of the note, with \\\"quotes\\\" and a tab\\t. ";
    let text = line.repeat(size / line.len() + 1);
    let mut json = format!(r#"{{"title":"note","text":"{text}"}}"#);
    while json.len() > size {
        let cut = json.len() - size;
        let text = &text[..text.len().saturating_sub(cut + 8)];
        // Never end the text inside an escape.
        let text = text.trim_end_matches('\\');
        json = format!(r#"{{"title":"note","text":"{text}"}}"#);
    }
    json
}

const SIZES: [(&str, usize); 3] = [("100B", 100), ("10KB", 10_000), ("1MB", 1_000_000)];

fn shapes(json: &str) -> [(&'static str, String); 3] {
    [
        ("clean", json.to_owned()),
        ("fenced", format!("```json\n{json}\n```")),
        ("prose", format!("Sure! Here are the arguments: {json} Let me know if you need more.")),
    ]
}

/// The criterion benches, then the ratios measured in pairs (see
/// [`support::paired_ratio`]), as lines for the summary.
fn bench(c: &mut Criterion) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let ctx = ToolContext::new();
    let (peer, _session) = rt.block_on(rmcp_peer());
    let router = Plain::tool_router();
    let mut summary = Vec::new();
    let mut group = c.benchmark_group("args");
    for (size_name, size) in SIZES {
        let json = clean(size);
        let answer = direct(&json);
        assert_eq!(rt.block_on(Count.call(&ctx, &json)).unwrap().text, answer, "both sides agree");
        assert_eq!(rt.block_on(rmcp_call(&peer, None, &json)), answer, "rmcp agrees");
        assert_eq!(rt.block_on(rmcp_call(&peer, Some(&router), &json)), answer, "rmcp agrees");
        let serde = || async { direct(black_box(&json)) };
        let handler = || rmcp_call(&peer, None, black_box(&json));
        let routed = || rmcp_call(&peer, Some(&router), black_box(&json));
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function(format!("serde_{size_name}"), |b| {
            b.iter_custom(|n| support::timed(&rt, n, serde))
        });
        group.bench_function(format!("rmcp_handler_{size_name}"), |b| {
            b.iter_custom(|n| support::timed(&rt, n, handler))
        });
        group.bench_function(format!("rmcp_router_{size_name}"), |b| {
            b.iter_custom(|n| support::timed(&rt, n, routed))
        });
        // Through `dyn Tool`, as a toolset calls it; and with the type known.
        let unboxed =
            || async { Count.call_typed(&ctx, black_box(&json)).await.and_then(ToolOutput::into_content) };
        group.bench_function(format!("tool_unboxed_clean_{size_name}"), |b| {
            b.iter_custom(|n| support::timed(&rt, n, unboxed))
        });
        summary.push(format!(
            "  {size_name:>4} clean   call_typed / serde_json:     {:.2}x",
            support::paired_ratio(&rt, serde, unboxed)
        ));
        for (shape, input) in shapes(&json) {
            let tool = || Count.call(&ctx, black_box(&input));
            group.bench_function(format!("tool_{shape}_{size_name}"), |b| {
                b.iter_custom(|n| support::timed(&rt, n, tool))
            });
            summary.push(format!(
                "  {size_name:>4} {shape:<6}  tool / serde_json:           {:.2}x",
                support::paired_ratio(&rt, serde, tool)
            ));
            if shape == "clean" {
                summary.push(format!(
                    "  {size_name:>4} {shape:<6}  tool / rmcp (#[tool_handler]): {:.2}x",
                    support::paired_ratio(&rt, handler, tool)
                ));
                summary.push(format!(
                    "  {size_name:>4} {shape:<6}  tool / rmcp (router kept):     {:.2}x",
                    support::paired_ratio(&rt, routed, tool)
                ));
            }
        }
    }
    group.finish();

    let mut group = c.benchmark_group("clean_json");
    let json = clean(1_000_000);
    for (shape, input) in shapes(&json) {
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(format!("{shape}_1MB"), |b| b.iter(|| clean_json(black_box(&input)).len()));
    }
    group.finish();
    summary
}

fn main() {
    let mut summary = Vec::new();
    let dir = support::run(|c| summary = bench(c));

    println!("\nsummary of this run: one call's time over the baseline's, measured in alternating batches");
    println!(
        "(serde_json: from_str + to_string on clean input; rmcp: its tool router calling the same tool)"
    );
    for line in summary {
        println!("{line}");
    }
    let json = clean(1_000_000);
    for (shape, input) in shapes(&json) {
        if let Some(ns) = support::estimate_ns(&dir, "clean_json", &format!("{shape}_1MB")) {
            println!("  clean_json {shape:<6} 1 MB: {:.2} GB/s", input.len() as f64 / ns);
        }
    }
}
