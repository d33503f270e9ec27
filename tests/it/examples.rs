//! The README's examples run and say what the README promises: the main
//! example answers each argument shape a model sends, and the scripted agent
//! meets every outcome of the contract; the approval example pauses, saves
//! and resumes with each decision.

use crate::support;

use std::process::Command;

fn run(name: &str) -> String {
    let output = Command::new(support::build_example(name))
        .env_remove("TAVILY_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("the example starts");
    assert!(output.status.success(), "{name} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("the example prints UTF-8")
}

/// The line after the one that starts with `label`.
fn answer_to<'a>(output: &'a str, label: &str) -> &'a str {
    let mut lines = output.lines().skip_while(|line| !line.starts_with(label));
    lines.next().unwrap_or_else(|| panic!("no `{label}` in:\n{output}"));
    lines.next().unwrap_or_else(|| panic!("nothing after `{label}` in:\n{output}")).trim()
}

#[test]
fn get_weather_answers_every_shape_a_model_sends() {
    let output = run("get_weather");
    assert!(output.contains(r#""required":["city"]"#), "{output}");
    assert_eq!(answer_to(&output, "clean JSON"), r#"-> ok    {"city":"Paris","celsius":[18.0,18.5]}"#);
    assert_eq!(answer_to(&output, "fenced JSON"), r#"-> ok    {"city":"Oslo","celsius":[18.0]}"#);
    assert_eq!(
        answer_to(&output, "prose around JSON"),
        r#"-> ok    {"city":"Lima","celsius":[18.0,18.5,19.0]}"#
    );
    let wrong = answer_to(&output, "a wrong type");
    assert!(
        wrong.starts_with(
            r#"-> fix   Invalid arguments: at `days`: invalid type: string "three", expected u8."#
        ),
        "{wrong}"
    );
    let range = answer_to(&output, "out of range");
    assert!(range.starts_with("-> fix   Invalid arguments: `days` must be at most 16."), "{range}");
    assert_eq!(
        answer_to(&output, "a failing call"),
        r#"-> error {"error":"no weather station near Atlantis"}"#
    );
}

#[test]
fn agent_turns_meet_every_outcome() {
    let output = run("agent_turns");
    for outcome in ["success", "invalid_arguments", "not_found", "failed", "panicked"] {
        assert!(
            output.lines().any(|line| line.split_whitespace().nth(2) == Some(outcome)),
            "no `{outcome}` result in:\n{output}"
        );
    }
    // The model fixed its wrong type in the next turn.
    assert!(output.contains("t2_1   to_fahrenheit   success"), "{output}");
}

#[test]
fn the_agent_example_runs_offline_and_the_model_fixes_its_call() {
    let output = run("agent");
    assert!(output.starts_with("model: scripted"), "{output}");
    let results: Vec<&str> = output.lines().filter(|line| line.starts_with("result")).collect();
    assert_eq!(results.len(), 3, "{output}");
    assert!(results[0].contains("call_1 success") && results[0].contains(r#""celsius":17"#), "{output}");
    assert!(
        results[1].contains("call_2 invalid_arguments") && results[1].contains("missing field `city`"),
        "{output}"
    );
    assert!(results[2].contains("call_3 success"), "{output}");
    assert!(output.contains("assistant Paris is at 17°C and Oslo at 16°C."), "{output}");
    assert!(output.trim_end().ends_with("stop: Answered; tokens: ? in, ? out"), "{output}");
}

#[test]
fn approval_pauses_and_resumes_with_each_decision() {
    let output = run("approval");
    let lines = |label: &str| -> Vec<&str> {
        output.lines().filter_map(|line| line.strip_prefix(label)).map(str::trim).collect()
    };
    // The run paused on exactly the destructive calls, before any ran.
    assert_eq!(lines("paused:"), ["3 calls wait for approval"], "{output}");
    assert_eq!(
        lines("pending:"),
        [
            r#"call_2 delete_file {"path":"old.log"}"#,
            r#"call_3 delete_file {"path":"report.pdf"}"#,
            r#"call_4 delete_file {"path":"build"}"#,
        ],
        "{output}"
    );
    let files = lines("files:");
    assert_eq!(files.first(), Some(&"notes.txt old.log report.pdf build.tmp"), "{output}");

    // Resumed from the saved JSON: the read-only call's result is kept, the
    // approved and the edited calls ran, the denied one did not and the
    // model read why.
    assert_eq!(lines("resumed:"), ["Answered"], "{output}");
    let results = lines("result:");
    assert_eq!(results.len(), 4, "{output}");
    assert!(results[0].starts_with("call_1 list_files success notes.txt"), "{output}");
    assert_eq!(results[1], "call_2 delete_file success deleted old.log", "{output}");
    assert!(
        results[2].starts_with("call_3 delete_file denied")
            && results[2].contains("so it did not run: report.pdf is the only copy; keep it"),
        "{output}"
    );
    assert_eq!(results[3], "call_4 delete_file success deleted build.tmp", "{output}");
    assert_eq!(lines("deleted:"), ["old.log", "build.tmp"], "{output}");
    assert_eq!(files.last(), Some(&"notes.txt report.pdf"), "{output}");
    assert_eq!(
        lines("answer:"),
        ["Deleted old.log and build.tmp; report.pdf stays, since it is the only copy."],
        "{output}"
    );
}
