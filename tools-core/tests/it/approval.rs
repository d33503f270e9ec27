//! Calls that wait for a person: which calls need approval, and that a
//! toolset never runs one unapproved, whatever the path.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{FnTool, echo};
use toolcall_core::toolset::{ToolOptions, Toolset};
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolSpec, TypedTool};

/// A tool that counts its runs.
fn counted(name: &str, runs: &Arc<AtomicUsize>) -> FnTool {
    let runs = Arc::clone(runs);
    FnTool::new(name, move |_, input| {
        runs.fetch_add(1, Ordering::SeqCst);
        async move { Ok(input) }
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PathRequest {
    path: String,
}

/// A typed tool that declares it needs approval, as `#[tool(needs_approval)]` does.
struct DeleteFile(Arc<AtomicUsize>);

impl TypedTool for DeleteFile {
    type Request = PathRequest;
    type Output = String;
    type Error = toolcall_core::ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: std::sync::LazyLock<ToolSpec> = std::sync::LazyLock::new(|| {
            ToolSpec::new::<PathRequest>("delete_file", "Delete a file.")
                .with_destructive(true)
                .with_approval_required()
        });
        &SPEC
    }

    async fn run(&self, _: &ToolContext, req: PathRequest) -> Result<String, Self::Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(format!("deleted {}", req.path))
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

#[tokio::test]
async fn a_call_that_needs_approval_is_denied_by_run_and_the_others_run() {
    let deletes = Arc::new(AtomicUsize::new(0));
    let tools = Toolset::builder().add(DeleteFile(Arc::clone(&deletes))).add(echo("echo")).build().unwrap();
    let ctx = ToolContext::new();
    let calls = [call("1", "delete_file", r#"{"path":"a.txt"}"#), call("2", "echo", "hi")];
    assert!(tools.needs_approval(&ctx, &calls[0]) && !tools.needs_approval(&ctx, &calls[1]));

    let results = tools.run_turn(&ctx, &calls).await;
    assert_eq!((results[0].outcome, results[1].outcome), (Outcome::Denied, Outcome::Success));
    assert_eq!(
        results[0].content,
        r#"{"error":"tool `delete_file` needs a person's approval before it runs, and none was given: it did not run"}"#
    );
    // One call alone takes another path through the executor: denied too.
    assert_eq!(tools.call(&ctx, &calls[0]).await.outcome, Outcome::Denied);
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    assert_eq!(tools.counts("delete_file").unwrap().denied, 2);

    let approved = tools.run_turn_approved(&ctx, &calls[..1]).await;
    assert_eq!((approved[0].outcome, approved[0].content.as_str()), (Outcome::Success, "deleted a.txt"));
    assert_eq!(tools.call_approved(&ctx, &calls[0]).await.outcome, Outcome::Success);
    assert_eq!(deletes.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_toolset_rule_holds_every_tool_it_picks_registered_before_or_after() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut tools = Toolset::new();
    tools.add(counted("drop_table", &runs)).unwrap();
    let mut tools = tools.with_approval_rule(|tool| tool.spec().name().starts_with("drop_"));
    tools.add(counted("drop_index", &runs)).unwrap();
    tools.add(counted("select", &runs)).unwrap();
    let ctx = ToolContext::new();
    let calls = [call("1", "drop_table", "{}"), call("2", "DROP_INDEX", "{}"), call("3", "select", "{}")];
    let outcomes: Vec<_> = tools.run_turn(&ctx, &calls).await.into_iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Denied, Outcome::Denied, Outcome::Success]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Unknown tools need no approval: they cannot run.
    assert!(!tools.needs_approval(&ctx, &call("4", "drop_everything", "{}")));
}

#[tokio::test]
async fn a_predicate_sees_the_context_and_arguments_and_holds_what_it_cannot_read() {
    let runs = Arc::new(AtomicUsize::new(0));
    let options = ToolOptions::new().with_approval_when(|ctx, args| {
        ctx.get::<&'static str>() != Some(&"admin")
            && args["amount"].as_u64().is_none_or(|amount| amount > 100)
    });
    let tools = Toolset::builder().add_with(counted("transfer", &runs), options).build().unwrap();
    let user = ToolContext::new();
    let admin = ToolContext::new().with_extension("admin");
    let small = call("1", "transfer", r#"{"amount": 20}"#);
    let large = call("2", "transfer", r#"{"amount": 500}"#);
    let garbled = call("3", "transfer", r#"{"amount": 5"#);
    assert!(!tools.needs_approval(&user, &small));
    assert!(tools.needs_approval(&user, &large));
    assert!(tools.needs_approval(&user, &garbled), "arguments the rule cannot read are held");
    assert!(!tools.needs_approval(&admin, &large));

    let results = tools.run_turn(&user, &[small, large.clone(), garbled]).await;
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Success, Outcome::Denied, Outcome::Denied]);
    assert_eq!(tools.run_turn(&admin, &[large]).await[0].outcome, Outcome::Success);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_held_call_never_reaches_the_layers_and_a_renamed_tool_keeps_its_need() {
    use futures::future::BoxFuture;
    use toolcall_core::toolset::{Before, Layer, LayerCall};

    /// A layer that would answer for the tool: it must not see held calls.
    struct Answers(Arc<AtomicUsize>);
    impl Layer for Answers {
        fn before<'a>(&'a self, _: LayerCall<'a>) -> BoxFuture<'a, Before> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Before::Answer(Ok("answered by a layer".into())) })
        }
    }
    let (deletes, seen) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let renamed = toolcall_core::Renamed::new(DeleteFile(Arc::clone(&deletes))).with_name("rm");
    let tools = Toolset::builder().add(renamed).build().unwrap().with_layer(Answers(Arc::clone(&seen)));
    let result = tools.call(&ToolContext::new(), &call("1", "rm", r#"{"path":"x"}"#)).await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(result.content.contains("`rm`"), "{}", result.content);
    assert_eq!((deletes.load(Ordering::SeqCst), seen.load(Ordering::SeqCst)), (0, 0));
}
