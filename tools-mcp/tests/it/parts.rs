//! A tool's parts across MCP: an in-process `McpServer` serving tools that
//! return images, files and URLs, read back by this SDK's `McpClient` into
//! a local toolset (over an in-memory pipe and over HTTP), and by rmcp's
//! own client to see the blocks on the wire.

use std::sync::LazyLock;

use rmcp::model::{CallToolRequestParams, CallToolResult, ResourceContents};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolcall_core::{
    CancellationToken, Media, Outcome, Output, Part, ToolCall, ToolContext, ToolError, ToolSpec, Toolset,
    TypedTool,
};
use toolcall_mcp::{HttpOptions, McpClient, McpServer};

/// Every byte value, after a PNG's signature: nothing may be lost or
/// re-encoded on the way.
fn image_bytes() -> Vec<u8> {
    b"\x89PNG\r\n\x1a\n".iter().copied().chain(0..=255).collect()
}

/// The start of a PDF, with bytes that are not UTF-8.
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n\xff\x00trailer";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Which {
    /// What to return: "image", "file", "url", "all".
    kind: String,
}

/// Answers with the parts asked for.
struct Parts;

impl TypedTool for Parts {
    type Request = Which;
    type Output = Output;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Which>("parts", "Images, files and links."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Which) -> Result<Output, ToolError> {
        let image = Part::Image(Media::bytes(image_bytes(), "image/png"));
        let file = Part::File(Media::bytes(PDF, "application/pdf").with_name("report 2026.pdf"));
        let url =
            Part::File(Media::url("https://example.com/data/rows.csv", "text/csv").with_name("rows.csv"));
        let output = Output::text(format!("here is the {}", req.kind)).with_artifact(json!({"secret": 42}));
        Ok(match req.kind.as_str() {
            "image" => output.with(image),
            "file" => output.with(file),
            "url" => output.with(url),
            "all" => output
                .with(image)
                .with(Part::Text { text: "and more".into() })
                .with(file)
                .with(Part::File(Media::bytes("a,b\n1,2\n", "text/csv").with_name("rows.csv")))
                .with(Part::File(Media::bytes(vec![0x52, 0x49, 0x46, 0x46], "audio/wav")))
                .with(url)
                .with(Part::Json { value: json!({"rows": 2}) }),
            other => return Err(ToolError::invalid_arguments(format!("no kind `{other}`"))),
        })
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Rows {
    rows: u32,
}

/// Declares an output schema, and returns JSON that fits it or not.
struct Counted;

impl TypedTool for Counted {
    type Request = Which;
    type Output = Output;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Which>("counted", "Counts rows.").with_output::<Rows>());
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Which) -> Result<Output, ToolError> {
        let value = match req.kind.as_str() {
            "fits" => json!({"rows": 3}),
            _ => json!({"rows": "three"}),
        };
        Ok(Output::default().with_json(value))
    }
}

fn server() -> McpServer {
    McpServer::new(Toolset::builder().add(Parts).add(Counted).build().unwrap())
}

/// The server's tools in a local toolset, through an in-memory pipe.
async fn local_toolset() -> Toolset {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server().serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect(client_side).await.unwrap();
    let mut tools = Toolset::new();
    client.register(&mut tools).await.unwrap();
    tools
}

async fn call(tools: &Toolset, kind: &str) -> toolcall_core::ToolResult {
    let call = ToolCall::new("1", "parts", json!({ "kind": kind }).to_string());
    let result = tools.call(&ToolContext::new(), &call).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.content);
    assert_eq!(result.content, format!("here is the {kind}"));
    assert_eq!(result.artifact, None, "the artifact stays with the server's application");
    result
}

#[tokio::test]
async fn image_bytes_survive_a_round_trip() {
    let tools = local_toolset().await;
    let result = call(&tools, "image").await;
    let [Part::Image(image)] = result.parts.as_slice() else { panic!("{:?}", result.parts) };
    assert_eq!(image.media_type, "image/png");
    assert_eq!(image.data(), Some(image_bytes().as_slice()));
}

#[tokio::test]
async fn a_pdf_survives_a_round_trip_with_its_name() {
    let tools = local_toolset().await;
    let result = call(&tools, "file").await;
    let [Part::File(file)] = result.parts.as_slice() else { panic!("{:?}", result.parts) };
    assert_eq!((file.media_type.as_str(), file.data()), ("application/pdf", Some(PDF)));
    assert_eq!(file.name.as_deref(), Some("report 2026.pdf"));
}

#[tokio::test]
async fn a_url_survives_a_round_trip() {
    let tools = local_toolset().await;
    let result = call(&tools, "url").await;
    let [Part::File(file)] = result.parts.as_slice() else { panic!("{:?}", result.parts) };
    assert_eq!(file.url_text(), Some("https://example.com/data/rows.csv"));
    assert_eq!((file.media_type.as_str(), file.name.as_deref()), ("text/csv", Some("rows.csv")));
}

#[tokio::test]
async fn every_part_survives_a_round_trip_over_http() {
    let shutdown = CancellationToken::new();
    let options = HttpOptions::new().with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let bound = options.bind(server(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = bound.url();
    tokio::spawn(bound.serve());
    let client = McpClient::http(&url).await.unwrap();
    let mut tools = Toolset::new();
    client.register(&mut tools).await.unwrap();

    let result = call(&tools, "all").await;
    let Output { parts: expected, .. } =
        Parts.run(&ToolContext::new(), Which { kind: "all".into() }).await.unwrap();
    assert_eq!(result.parts, expected);
    shutdown.cancel();
}

/// rmcp's own client on the in-process server: the blocks as sent.
async fn raw_client() -> rmcp::service::RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server().serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_side).await.unwrap()
}

async fn raw_call(
    client: &rmcp::service::RunningService<RoleClient, ()>,
    name: &str,
    kind: &str,
) -> CallToolResult {
    let arguments = json!({ "kind": kind }).as_object().unwrap().clone();
    client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)).await.unwrap()
}

#[tokio::test]
async fn each_part_is_its_own_mcp_block() {
    let client = raw_client().await;
    let result = raw_call(&client, "parts", "all").await;
    let blocks = serde_json::to_value(&result.content).unwrap();
    let types: Vec<&str> = blocks.as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text", "image", "text", "resource", "resource", "audio", "resource_link"]);
    assert_eq!(blocks[1]["mimeType"], "image/png");
    let ResourceContents::BlobResourceContents { uri, mime_type, .. } =
        &result.content[3].as_resource().unwrap().resource
    else {
        panic!("a PDF is a blob: {}", blocks[3]);
    };
    assert_eq!(
        (uri.as_str(), mime_type.as_deref()),
        ("tool://parts/report%202026.pdf", Some("application/pdf"))
    );
    assert_eq!(blocks[4]["resource"]["text"], "a,b\n1,2\n", "a UTF-8 text file is a text resource");
    assert_eq!(blocks[5]["mimeType"], "audio/wav");
    assert_eq!(blocks[6]["uri"], "https://example.com/data/rows.csv");
    // The output has text of its own: its JSON is structured content alone.
    assert_eq!(result.structured_content, Some(json!({"rows": 2})));
    // The artifact is not sent, not even in `_meta`.
    let wire = serde_json::to_string(&result).unwrap();
    assert!(!wire.contains("secret"), "{wire}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn json_is_structured_content_only_where_it_fits_the_output_schema() {
    let client = raw_client().await;
    let fits = raw_call(&client, "counted", "fits").await;
    assert_eq!(fits.structured_content, Some(json!({"rows": 3})));
    assert_eq!(fits.content[0].as_text().unwrap().text, r#"{"rows":3}"#);
    let unfit = raw_call(&client, "counted", "not").await;
    assert_eq!(unfit.structured_content, None);
    let text: Value = serde_json::from_str(&unfit.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(text, json!({"rows": "three"}), "the JSON is still there for the model, as text");
    client.cancel().await.unwrap();
}

/// Text, a JSON part, an image and an artifact: what every wrapper and
/// composition must pass on whole.
struct Four;

impl TypedTool for Four {
    type Request = ();
    type Output = Output;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<()>("four", "Four kinds of output."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, (): ()) -> Result<Output, ToolError> {
        Ok(Output::text("four kinds")
            .with_json(json!({"rows": 2}))
            .with_image(Media::bytes(image_bytes(), "image/png"))
            .with_artifact(json!({"id": 7})))
    }
}

/// The result of calling `name` in `tools`, approved: its text, JSON part,
/// image and, where it has one, artifact.
async fn four_of(tools: &Toolset, name: &str, artifact: bool, case: &str) {
    let call = ToolCall::new("1", name, "{}");
    let result = tools.run_turn_approved(&ToolContext::new(), std::slice::from_ref(&call)).await.remove(0);
    assert_eq!(result.outcome, Outcome::Success, "{case}: {}", result.content);
    assert_eq!(result.content, "four kinds", "{case}");
    assert!(
        result.parts.iter().any(|part| matches!(part, Part::Json { value } if value == &json!({"rows": 2}))),
        "{case}: {:?}",
        result.parts
    );
    assert!(
        result
            .parts
            .iter()
            .any(|part| matches!(part, Part::Image(image) if image.data() == Some(&image_bytes()[..]))),
        "{case}: {:?}",
        result.parts
    );
    let expected = artifact.then(|| json!({"id": 7}));
    assert_eq!(result.artifact, expected, "{case}");
}

#[tokio::test]
async fn every_wrapper_and_composition_passes_on_the_whole_output() {
    let four = || Toolset::builder().add(Four).build().unwrap();
    four_of(&four(), "four", true, "as registered").await;
    let renamed = toolcall_core::Renamed::new(Four).with_name("quattro").with_description("Renamed.");
    four_of(&Toolset::builder().add(renamed).build().unwrap(), "quattro", true, "Renamed").await;
    four_of(&four().prefixed("acme").unwrap(), "acme_four", true, "prefixed").await;
    let mut tools = four();
    tools.rename("four", "vier").unwrap();
    four_of(&tools, "vier", true, "renamed in the toolset").await;
    let mut tools = four();
    tools.redescribe("four", "Re-described.").unwrap();
    four_of(&tools, "four", true, "re-described").await;
    four_of(&four().filtered(|_| true), "four", true, "filtered").await;
    let mut merged = Toolset::new();
    merged.merge(four().prefixed("inner").unwrap()).unwrap();
    four_of(&merged, "inner_four", true, "merged").await;
    let held = four().prefixed("held").unwrap().with_approval_rule(|_| true);
    four_of(&held, "held_four", true, "held for approval").await;
    let search = toolcall_core::toolset::WebSearch::new().with_fallback(Four);
    let mut searched = Toolset::new();
    searched.add_web_search(search).unwrap();
    four_of(&searched, "web_search", true, "the web search fallback").await;

    // A remote tool, imported with a prefix: the artifact stays with the
    // server's application; the text and parts come over.
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = McpServer::new(four()).serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect(client_side).await.unwrap();
    let mut remote = Toolset::new();
    client.register_with(&mut remote, toolcall_mcp::Registration::new().with_prefix("remote")).await.unwrap();
    four_of(&remote, "remote_four", false, "MCP import with a prefix").await;
}
