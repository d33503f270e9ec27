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

/// One OTLP/HTTP request as a collector receives it: its request line,
/// headers (lower-case names) and body.
struct Received {
    line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A stand-in OTLP/HTTP collector on loopback: it keeps each request and
/// answers `200` with an empty `ExportTraceServiceResponse` (an empty
/// protobuf message), as the OTLP specification's success response is.
fn collector() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Received>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut stream = stream;
            // Requests on one connection until the client closes it.
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let mut headers = Vec::new();
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    let Some((name, value)) = header.trim_end().split_once(':') else { break };
                    headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                }
                let length = headers.iter().find(|(name, _)| name == "content-length");
                let length: usize = length.map_or(0, |(_, value)| value.parse().unwrap());
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                kept.lock().unwrap().push(Received { line: line.trim_end().to_owned(), headers, body });
                let reply =
                    "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                stream.write_all(reply.as_bytes()).unwrap();
            }
        }
    });
    (address, received)
}

/// Whether `needle` is among `body`'s bytes: protobuf keeps strings as
/// they are.
fn holds(body: &[u8], needle: &str) -> bool {
    body.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn the_otel_example_exports_the_genai_spans_over_otlp() {
    let (endpoint, received) = collector();
    let output = Command::new(support::build_example("otel"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .output()
        .expect("the example starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "otel failed: {}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("answer: Paris is at 17°C; Atlantis has no station."), "{stdout}");
    assert!(stdout.contains(&format!("spans sent to {endpoint}")), "{stdout}");

    let received = received.lock().unwrap();
    assert!(!received.is_empty(), "no export reached the collector");
    for request in received.iter() {
        assert_eq!(request.line, "POST /v1/traces HTTP/1.1");
        let content_type = request.headers.iter().find(|(name, _)| name == "content-type");
        assert_eq!(content_type.map(|(_, value)| value.as_str()), Some("application/x-protobuf"));
    }
    let body: Vec<u8> = received.iter().flat_map(|request| request.body.clone()).collect();
    for needle in [
        "invoke_agent weather",
        "chat scripted",
        "execute_tool get_weather",
        "gen_ai.operation.name",
        "gen_ai.agent.name",
        "gen_ai.provider.name",
        "gen_ai.response.id",
        "resp_2",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.tool.call.id",
        "call_2",
        "error.type",
    ] {
        assert!(holds(&body, needle), "`{needle}` is not in what the collector received");
    }
    // Content is off unless asked for.
    assert!(!holds(&body, "gen_ai.input.messages") && !holds(&body, "Atlantis\"}"));
}
