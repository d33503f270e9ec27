//! Toolsets composed: merged (collisions name both sources, all or
//! nothing), filtered, prefixed, one tool renamed or re-described, and the
//! per-turn prepare step; through all of it, options, counters and every
//! approval stay with their tools.

use crate::common;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{FnTool, echo, sleeper};
use futures::future::BoxFuture;
use toolcall_core::toolset::{
    Before, Layer, LayerCall, NameError, Observer, ToolOptions, Toolset, ToolsetError, TurnOptions, WebSearch,
};
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolError, ToolResult};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn names(tools: &Toolset) -> Vec<&str> {
    tools.names().collect()
}

/// A tool that answers with the name its own context gives it.
fn whoami(name: &str) -> FnTool {
    FnTool::new(name, |ctx, _| async move { Ok(ctx.tool_name().to_owned()) })
}

/// Answers every call itself, saying which layer it is.
struct Answer(&'static str);

impl Layer for Answer {
    fn before<'a>(&'a self, _call: LayerCall<'a>) -> BoxFuture<'a, Before> {
        Box::pin(async move { Before::Answer(Ok(self.0.into())) })
    }
}

/// Counts the calls it hears of.
#[derive(Default)]
struct Heard(AtomicUsize);

impl Observer for Heard {
    fn on_start(&self, _call: &ToolCall) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

async fn run_one(tools: &Toolset, name: &str, arguments: &str) -> ToolResult {
    tools.call(&ToolContext::new(), &call("1", name, arguments)).await
}

#[tokio::test]
async fn a_merge_appends_the_other_toolsets_tools_and_they_answer_by_name() {
    let mut tools = Toolset::builder().add(echo("search")).build().unwrap().with_source("docs");
    let github = Toolset::builder()
        .add(echo("get_issue"))
        .add(echo("list_repos"))
        .build()
        .unwrap()
        .with_source("github");
    tools.merge(github).unwrap();
    assert_eq!(names(&tools), ["search", "get_issue", "list_repos"]);
    assert_eq!(tools.source_of("SEARCH"), Some("docs"));
    assert_eq!(tools.source_of("get_issue"), Some("github"));
    assert_eq!(tools.source(), Some("docs"));
    assert_eq!(run_one(&tools, "Get_Issue", "7").await.content, "7");
    // A tool added after the merge takes the toolset's own label.
    tools.add(echo("fetch")).unwrap();
    assert_eq!(tools.source_of("fetch"), Some("docs"));
}

#[test]
fn a_collision_names_both_tools_and_both_sources() {
    let mut docs = Toolset::builder().add(echo("search")).build().unwrap().with_source("docs");
    let github = Toolset::builder().add(echo("Search")).build().unwrap().with_source("github");
    let err = docs.merge(github).unwrap_err();
    assert_eq!(
        err,
        ToolsetError::Collision {
            new: "Search".into(),
            new_source: Some("github".into()),
            existing: "search".into(),
            existing_source: Some("docs".into()),
        }
    );
    assert_eq!(
        err.to_string(),
        "tool `Search` from `github` collides with `search` from `docs`: names are compared ignoring case; \
         prefix one toolset (Toolset::prefixed) or rename the tool (Toolset::rename)"
    );

    // Unlabeled toolsets are named by their part in the merge.
    let mut plain = Toolset::builder().add(echo("search")).build().unwrap();
    let err = plain.merge(Toolset::builder().add(echo("search")).build().unwrap()).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "tool `search` from the toolset being merged collides with `search` from the toolset merged into"
        ),
        "{err}"
    );

    // A label survives a merge: a second merge names where each tool came from.
    let mut all = Toolset::new().with_source("main");
    all.merge(Toolset::builder().add(echo("fetch")).build().unwrap().with_source("web")).unwrap();
    let err =
        all.merge(Toolset::builder().add(echo("fetch")).build().unwrap().with_source("files")).unwrap_err();
    assert!(
        err.to_string().starts_with("tool `fetch` from `files` collides with `fetch` from `web`"),
        "{err}"
    );
}

#[test]
fn a_merge_is_all_or_nothing() {
    let mut tools = Toolset::builder().add(echo("b")).build().unwrap();
    let other = Toolset::builder()
        .add(echo("a"))
        .add(echo("B"))
        .add(echo("c"))
        .add_web_search(WebSearch::new())
        .build()
        .unwrap();
    assert!(matches!(tools.merge(other), Err(ToolsetError::Collision { .. })));
    assert_eq!(names(&tools), ["b"]);
    assert!(tools.get("a").is_none() && tools.web_search().is_none());

    // The builder form stops at the collision too.
    let built =
        Toolset::builder().add(echo("b")).merge(Toolset::builder().add(echo("b")).build().unwrap()).build();
    assert!(matches!(built, Err(ToolsetError::Collision { .. })));
}

#[test]
fn native_web_search_moves_with_a_merge_and_two_collide() {
    let with_search =
        || Toolset::builder().add_web_search(WebSearch::new().with_max_uses(2)).build().unwrap();
    let tools = Toolset::builder().merge(with_search()).build().unwrap();
    assert_eq!(tools.web_search().and_then(|search| search.max_uses), Some(2));
    let err = Toolset::builder().merge(tools).merge(with_search().with_source("web")).build().unwrap_err();
    assert!(err.to_string().starts_with("tool `web_search` from `web` collides with `web_search`"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_merged_tool_keeps_its_registration_options_and_counters() {
    let other = Toolset::builder()
        .add_with(sleeper("slow"), ToolOptions::new().with_timeout(Duration::from_millis(10)))
        .add_with(echo("layered"), ToolOptions::new().with_layer(Answer("own layer")))
        .add_with(
            echo("guarded"),
            ToolOptions::new().with_approval_when(|_, args| args["amount"].as_u64() > Some(100)),
        )
        .build()
        .unwrap();
    run_one(&other, "layered", "").await;
    let tools = Toolset::builder().merge(other.clone()).build().unwrap();

    assert_eq!(run_one(&tools, "slow", "1000").await.outcome, Outcome::TimedOut);
    assert_eq!(run_one(&tools, "layered", "").await.content, "own layer");
    assert_eq!(run_one(&tools, "guarded", r#"{"amount":500}"#).await.outcome, Outcome::Denied);
    assert_eq!(run_one(&tools, "guarded", r#"{"amount":5}"#).await.outcome, Outcome::Success);
    // The counters are the registration's: both toolsets see both calls.
    assert_eq!(tools.counts("layered").map(|counts| counts.calls), Some(2));
    assert_eq!(other.counts("layered").map(|counts| counts.calls), Some(2));
}

#[tokio::test(start_paused = true)]
async fn the_merged_toolsets_own_settings_hold_for_its_tools_only() {
    let (mine_heard, theirs_heard) = (Arc::new(Heard::default()), Arc::new(Heard::default()));
    let other = Toolset::builder()
        .add(echo("theirs"))
        .build()
        .unwrap()
        .with_layer(Answer("their layer"))
        .with_observer(Arc::clone(&theirs_heard));
    let mut tools =
        Toolset::builder().add(echo("mine")).build().unwrap().with_observer(Arc::clone(&mine_heard));
    tools.merge(other).unwrap();

    assert_eq!(run_one(&tools, "theirs", "x").await.content, "their layer");
    assert_eq!(run_one(&tools, "mine", "x").await.content, "x");
    assert_eq!((mine_heard.0.load(Ordering::SeqCst), theirs_heard.0.load(Ordering::SeqCst)), (2, 1));

    // Their default timeout bounds their tools; mine have none.
    let other = Toolset::builder()
        .add(sleeper("their_nap"))
        .build()
        .unwrap()
        .with_options(TurnOptions::new().with_default_timeout(Duration::from_millis(10)));
    let tools = Toolset::builder().add(sleeper("my_nap")).merge(other).build().unwrap();
    assert_eq!(run_one(&tools, "their_nap", "50").await.outcome, Outcome::TimedOut);
    assert_eq!(run_one(&tools, "their_nap", "5").await.outcome, Outcome::Success);
    assert_eq!(run_one(&tools, "my_nap", "50").await.outcome, Outcome::Success);
}

#[tokio::test]
async fn approval_survives_every_composition() {
    let ctx = ToolContext::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = |name: &str| {
        let runs = Arc::clone(&runs);
        FnTool::new(name, move |_, input| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok(input) }
        })
    };
    // A rule keyed on names the composition changes.
    let github = Toolset::builder()
        .add(counted("delete_repo"))
        .add(counted("get_issue"))
        .build()
        .unwrap()
        .with_approval_rule(|tool| tool.spec().name() == "delete_repo")
        .with_source("github");
    let mut tools = Toolset::builder().merge(github.prefixed("github").unwrap()).build().unwrap();
    tools.rename("github_delete_repo", "remove_repository").unwrap();
    tools.redescribe("remove_repository", "Removes a repository.").unwrap();
    let tools = tools.filtered(|_| true).only(["remove_repository", "github_get_issue"]).unwrap();
    let prepared = tools.prepared(&ctx);

    for tools in [&tools, &*prepared] {
        let held = call("1", "remove_repository", "{}");
        assert!(tools.needs_approval(&ctx, &held));
        assert_eq!(tools.call(&ctx, &held).await.outcome, Outcome::Denied);
        assert!(!tools.needs_approval(&ctx, &call("2", "github_get_issue", "{}")));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Approved, it runs.
    let approved = tools.call_approved(&ctx, &call("3", "remove_repository", "{}")).await;
    assert_eq!(approved.outcome, Outcome::Success);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // The receiving toolset's rules judge merged tools by their new names too.
    let mut strict = Toolset::new().with_approval_rule(|tool| tool.spec().name().starts_with("github_"));
    strict
        .merge(Toolset::builder().add(echo("get_issue")).build().unwrap().prefixed("github").unwrap())
        .unwrap();
    assert!(strict.needs_approval(&ctx, &call("4", "github_get_issue", "{}")));
}

#[tokio::test]
async fn filters_keep_the_remaining_tools_with_their_options_and_counters() {
    let tools = Toolset::builder()
        .add(echo("get_issue"))
        .add_with(echo("delete_repo"), ToolOptions::new().with_layer(Answer("layer")))
        .add(echo("list_repos"))
        .build()
        .unwrap();
    run_one(&tools, "delete_repo", "").await;

    let read_only = tools.clone().filtered(|tool| !tool.spec().name().starts_with("delete_"));
    assert_eq!(names(&read_only), ["get_issue", "list_repos"]);
    assert_eq!(run_one(&read_only, "delete_repo", "").await.outcome, Outcome::NotFound);

    let deleting = tools.clone().only(["DELETE_REPO"]).unwrap();
    assert_eq!(names(&deleting), ["delete_repo"]);
    assert_eq!(run_one(&deleting, "delete_repo", "").await.content, "layer");
    assert_eq!(deleting.counts("delete_repo").map(|counts| counts.calls), Some(2));

    assert_eq!(names(&tools.clone().without(["get_issue", "nothing"])), ["delete_repo", "list_repos"]);
    let err = tools.only(["get_issue", "get_isue"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no tool named `get_isue` (names are compared ignoring case); \
         the tools are: get_issue, delete_repo, list_repos"
    );
}

#[test]
fn filters_and_the_native_web_search() {
    let with_native =
        || Toolset::builder().add(echo("fetch")).add_web_search(WebSearch::new()).build().unwrap();
    // Without a fallback, a predicate has no tool to judge: the native entry stays.
    assert!(with_native().filtered(|_| false).web_search().is_some());
    assert!(with_native().without(["web_search"]).web_search().is_none());
    assert!(with_native().only(["fetch"]).unwrap().web_search().is_none());
    assert!(with_native().only(["web_search"]).unwrap().web_search().is_some());
    // With a fallback, the native entry follows it.
    let with_fallback =
        Toolset::builder().add_web_search(WebSearch::new().with_fallback(echo("search"))).build().unwrap();
    assert!(with_fallback.clone().filtered(|tool| tool.spec().name() != "web_search").web_search().is_none());
    assert!(with_fallback.filtered(|_| true).web_search().is_some());
}

#[tokio::test]
async fn a_prefix_renames_every_tool_and_stays_out_of_its_logic() {
    let tools = Toolset::builder().add(whoami("Search")).add(whoami("get_issue")).build().unwrap();
    let github = tools.clone().prefixed("GitHub").unwrap();
    assert_eq!(names(&github), ["github_search", "github_get_issue"]);
    let result = run_one(&github, "GITHUB_SEARCH", "{}").await;
    assert_eq!(
        (result.outcome, result.content.as_str(), result.name.as_str()),
        (Outcome::Success, "Search", "GITHUB_SEARCH")
    );
    assert_eq!(run_one(&github, "search", "{}").await.outcome, Outcome::NotFound);
    // Schema and description are the tool's own.
    let prefixed = github.get("github_get_issue").unwrap();
    assert_eq!(prefixed.spec().description(), "A test tool.");
    assert_eq!(prefixed.spec().parameters()["type"], "object");

    // Prefixes compose, a trailing separator is not doubled, an empty prefix changes nothing.
    assert_eq!(
        names(&github.clone().prefixed("mcp").unwrap()),
        ["mcp_github_search", "mcp_github_get_issue"]
    );
    assert_eq!(names(&tools.clone().prefixed("gh-").unwrap()), ["gh-search", "gh-get_issue"]);
    assert_eq!(names(&tools.clone().prefixed("").unwrap()), ["Search", "get_issue"]);
}

#[test]
fn a_prefix_that_breaks_a_name_is_an_error_naming_the_tool() {
    let long = "a".repeat(60);
    let tools = Toolset::builder().add(echo("ok")).add(echo(&long)).build().unwrap();
    let err = tools.clone().prefixed("github").unwrap_err();
    let made = format!("github_{long}");
    assert_eq!(
        err,
        ToolsetError::InvalidPrefix {
            prefix: "github".into(),
            tool: long.clone(),
            error: NameError::Length { name: made.clone(), len: 67 },
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the prefix `github` gives tool `{long}` an invalid name: tool name `{made}` is 67 characters long; \
             names must have 1 to 64; choose a shorter prefix of a-z, 0-9, `_` and `-`, or rename the tool first \
             (Toolset::rename)"
        )
    );
    assert!(matches!(
        tools.prefixed("git.hub"),
        Err(ToolsetError::InvalidPrefix { error: NameError::Character { found: '.', .. }, .. })
    ));

    // The native web search keeps its name: not prefixed silently.
    let with_search = Toolset::builder().add(echo("fetch")).add_web_search(WebSearch::new()).build().unwrap();
    let err = with_search.prefixed("web").unwrap_err();
    assert_eq!(err, ToolsetError::WebSearchName { prefix: Some("web".into()) });
    assert!(err.to_string().contains("prefix the toolset before Toolset::add_web_search"), "{err}");
}

#[tokio::test]
async fn rename_and_redescribe_one_tool() {
    let mut tools = Toolset::builder().add(whoami("search")).add(echo("fetch")).build().unwrap();
    run_one(&tools, "search", "").await;
    tools.rename("SEARCH", "Find_Docs").unwrap().redescribe("find_docs", "Find it in the docs.").unwrap();
    assert_eq!(names(&tools), ["find_docs", "fetch"]);
    let tool = tools.get("find_docs").unwrap();
    assert_eq!((tool.spec().name(), tool.spec().description()), ("find_docs", "Find it in the docs."));
    assert_eq!(run_one(&tools, "find_docs", "").await.content, "search");
    assert_eq!(tools.counts("find_docs").map(|counts| counts.calls), Some(2));
    // Renamed again, the description stays; back to its own name, it is the tool itself.
    tools.rename("find_docs", "search").unwrap();
    assert_eq!(tools.get("search").unwrap().spec().description(), "Find it in the docs.");
    tools.redescribe("search", "A test tool.").unwrap();

    let unknown = tools.rename("nope", "other").unwrap_err();
    assert_eq!(
        unknown,
        ToolsetError::Unknown { name: "nope".into(), available: vec!["search".into(), "fetch".into()] }
    );
    assert!(matches!(tools.redescribe("nope", ""), Err(ToolsetError::Unknown { .. })));
    assert!(matches!(tools.rename("fetch", "Search"), Err(ToolsetError::Duplicate { .. })));
    assert!(matches!(tools.rename("fetch", "web_search"), Err(ToolsetError::Reserved { .. })));
    assert!(matches!(tools.rename("fetch", "fe tch"), Err(ToolsetError::InvalidName(_))));
    assert_eq!(names(&tools), ["search", "fetch"], "a refused rename changes nothing");
    // A case-only rename is allowed, and lower-cases.
    tools.add(echo("Upper")).unwrap();
    tools.rename("upper", "UPPER").unwrap();
    assert_eq!(names(&tools), ["search", "fetch", "upper"]);

    let mut with_fallback =
        Toolset::builder().add_web_search(WebSearch::new().with_fallback(echo("s"))).build().unwrap();
    assert_eq!(
        with_fallback.rename("web_search", "search").unwrap_err(),
        ToolsetError::WebSearchName { prefix: None }
    );
}

#[test]
fn names_stay_stable_and_lower_cased_under_every_combination() {
    let build = || {
        let github = Toolset::builder().add(echo("Get_Issue")).add(echo("Search")).build().unwrap();
        let docs = Toolset::builder().add(echo("SEARCH")).build().unwrap();
        let mut tools = Toolset::builder()
            .merge(github.prefixed("GitHub").unwrap())
            .merge(docs.prefixed("Docs").unwrap())
            .build()
            .unwrap();
        tools.rename("docs_search", "Docs_Find").unwrap();
        tools.without(["github_search"])
    };
    let (first, second) = (build(), build());
    assert_eq!(names(&first), ["github_get_issue", "docs_find"]);
    assert_eq!(names(&first), names(&second));
    assert!(first.names().all(|name| name == name.to_ascii_lowercase()));
}

/// Set when the user signed in.
#[derive(Clone)]
struct SignedIn;

#[tokio::test]
async fn the_prepare_step_decides_what_a_turn_shows() {
    let tools =
        Toolset::builder().add(echo("search")).add(echo("account_delete")).build().unwrap().with_prepare(
            |ctx, tool| !tool.spec().name().starts_with("account_") || ctx.get::<SignedIn>().is_some(),
        );
    let guest = ToolContext::new();
    let prepared = tools.prepared(&guest);
    assert!(matches!(prepared, Cow::Owned(_)));
    assert_eq!(names(&prepared), ["search"]);
    // A hidden tool is unknown this turn, and the answer lists the shown ones.
    let hidden = prepared.call(&guest, &call("1", "account_delete", "")).await;
    assert_eq!(hidden.outcome, Outcome::NotFound);
    assert!(hidden.content.contains("the available tools are: search"), "{}", hidden.content);
    assert_eq!(tools.not_found_count(), 1, "the prepared toolset counts into its origin");

    let user = ToolContext::new().with_extension(SignedIn);
    assert!(matches!(tools.prepared(&user), Cow::Borrowed(_)), "all shown: nothing is cloned");
    // Without a step, the toolset itself.
    let plain = Toolset::builder().add(echo("search")).build().unwrap();
    assert!(matches!(plain.prepared(&guest), Cow::Borrowed(_)));
}

#[test]
fn prepare_steps_of_a_merged_toolset_hold_for_its_tools() {
    let shown = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shown);
    let github = Toolset::builder()
        .add(echo("get_issue"))
        .build()
        .unwrap()
        .with_prepare(move |_, _| flag.load(Ordering::SeqCst))
        .prefixed("github")
        .unwrap();
    let mut tools = Toolset::builder().add(echo("search")).build().unwrap();
    tools.merge(github).unwrap();
    let ctx = ToolContext::new();
    assert_eq!(names(&tools.prepared(&ctx)), ["search"]);
    shown.store(true, Ordering::SeqCst);
    assert_eq!(names(&tools.prepared(&ctx)), ["search", "github_get_issue"]);
    // This toolset's own steps judge every tool, the merged ones too.
    let tools = tools.with_prepare(|_, tool| tool.spec().name() != "search");
    assert_eq!(names(&tools.prepared(&ctx)), ["github_get_issue"]);
}

#[tokio::test]
async fn a_failing_tool_stays_a_result_after_composition() {
    let failing = FnTool::new("flaky", |_, _| async { Err(ToolError::failed("down")) });
    let tools = Toolset::builder().add(failing).build().unwrap().prefixed("x").unwrap();
    let result = run_one(&tools, "x_flaky", "").await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(tools.counts("x_flaky").map(|counts| counts.failures), Some(1));
}
