//! The README's examples run and say what the README promises: the main
//! example answers each argument shape a model sends, and the scripted agent
//! meets every outcome of the contract.

mod support;

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
        wrong.starts_with(r#"-> fix   Invalid arguments: at `days`: invalid type: string "3", expected u8."#),
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
    assert!(output.trim_end().ends_with("stop: Answered; tokens: 0 in, 0 out"), "{output}");
}
