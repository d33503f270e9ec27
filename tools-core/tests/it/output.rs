//! Outputs with more than text: parts and an artifact reach the call's
//! result; what the model reads is capped (text keeps its head and tail,
//! an oversize image is refused), the artifact never is.

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::json;
use toolcall_core::toolset::{OutputCap, ToolOptions, Toolset, TurnOptions, truncate};
use toolcall_core::{
    Media, Outcome, Output, Part, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, TypedTool,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Request {
    /// How many bytes of image, and of text.
    size: usize,
}

/// A chart: some text, a PNG of `size` bytes, JSON, and the rows it was
/// drawn from as the artifact.
struct Chart;

impl TypedTool for Chart {
    type Request = Request;
    type Output = Output;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Request>("chart", "A chart."));
        &SPEC
    }

    async fn run(&self, _: &ToolContext, req: Request) -> Result<Output, ToolError> {
        Ok(Output::text("x".repeat(req.size))
            .with_image(Media::bytes(vec![7; req.size], "image/png").with_name("chart.png"))
            .with_json(json!({"max": 3}))
            .with_artifact(json!({"rows": vec![1; req.size]})))
    }
}

async fn chart(tools: &Toolset, size: usize) -> ToolResult {
    tools.call(&ToolContext::new(), &ToolCall::new("1", "chart", format!(r#"{{"size":{size}}}"#))).await
}

#[tokio::test]
async fn parts_and_the_artifact_reach_the_result_and_round_trip_as_json() {
    let tools = Toolset::builder().add(Chart).build().unwrap();
    let result = chart(&tools, 3).await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.content, "xxx");
    assert_eq!(result.parts.len(), 2);
    let Part::Image(image) = &result.parts[0] else { panic!("{:?}", result.parts) };
    assert_eq!(
        (image.data(), image.media_type.as_str(), image.name.as_deref()),
        (Some(&[7u8; 3][..]), "image/png", Some("chart.png"))
    );
    assert_eq!(result.artifact, Some(json!({"rows": [1, 1, 1]})));
    assert_eq!(result.text(), "xxx\n{\"max\":3}");
    let saved = serde_json::to_string(&result).unwrap();
    assert!(saved.contains(r#""data":"BwcH""#), "{saved}");
    assert_eq!(serde_json::from_str::<ToolResult>(&saved).unwrap(), result);
}

#[tokio::test]
async fn text_past_the_cap_keeps_its_ends_and_the_artifact_is_whole() {
    let cap = OutputCap::chars(100);
    let tools =
        Toolset::builder().add(Chart).build().unwrap().with_options(TurnOptions::new().with_output_cap(cap));
    let result = chart(&tools, 1_000).await;
    assert_eq!(result.outcome, Outcome::Success);
    assert!(result.text().chars().count() <= 100, "{}", result.text());
    assert!(result.content.contains("characters cut"), "{}", result.content);
    assert_eq!(result.artifact.as_ref().unwrap()["rows"].as_array().unwrap().len(), 1_000);
}

#[tokio::test]
async fn an_image_past_the_cap_is_an_error_the_model_reads_and_a_tool_can_have_its_own_cap() {
    let small = OutputCap::chars(10_000).with_media_bytes(500);
    let tools = Toolset::builder()
        .add(Chart)
        .build()
        .unwrap()
        .with_options(TurnOptions::new().with_output_cap(small));
    let result = chart(&tools, 1_000).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert!(
        result.content.contains("an image (`chart.png`) of 1000 bytes, more than the 500"),
        "{}",
        result.content
    );
    assert!(result.parts.is_empty() && result.artifact.is_none());
    // The tool's own cap wins over the toolset's.
    let tools = Toolset::builder()
        .add_with(Chart, ToolOptions::new().with_output_cap(OutputCap::NONE))
        .build()
        .unwrap()
        .with_options(TurnOptions::new().with_output_cap(small));
    assert_eq!(chart(&tools, 1_000).await.outcome, Outcome::Success);
}

proptest! {
    #[test]
    fn truncation_never_splits_a_character_nor_passes_the_cap_and_keeps_both_ends(
        text in "\\PC{0,400}",
        max in 0usize..300,
    ) {
        let cut = truncate(&text, max);
        let total = text.chars().count();
        // A String cannot hold a split character; the count is the cap's unit.
        prop_assert!(cut.chars().count() <= max.max(total.min(max)));
        if total <= max {
            prop_assert_eq!(cut.as_ref(), text.as_str());
        } else if cut.contains("characters cut") {
            let marker_at = cut.find("\n[… ").unwrap();
            let head = &cut[..marker_at];
            let tail = &cut[cut.find(" characters cut …]\n").unwrap() + " characters cut …]\n".len()..];
            prop_assert!(text.starts_with(head));
            prop_assert!(text.ends_with(tail));
            prop_assert!(head.chars().count() >= tail.chars().count());
            let said: usize = cut[marker_at + "\n[… ".len()..].split(' ').next().unwrap().parse().unwrap();
            prop_assert_eq!(said, total - head.chars().count() - tail.chars().count());
        } else {
            // No room for the marker: the head alone.
            prop_assert!(text.starts_with(cut.as_ref()));
            prop_assert_eq!(cut.chars().count(), max);
        }
    }
}
