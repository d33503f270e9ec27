//! The chat_ui example as the page (and the README's curl) use it: started
//! offline on a free port, it says where it listens, then a question pauses
//! on the weather call, and an approval or a denial finishes the run.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support;

/// The running example, ended when dropped.
struct Example(Child);

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the example offline, its chats in a new file; it, the URL it
/// prints, and the directory of the file.
fn start() -> (Example, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(support::build_example("chat_ui"))
        .env("PORT", "0")
        .env("CHAT_DB", dir.path().join("chats.db"))
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let stdout = child.stdout.take().expect("its stdout");
    let example = Example(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("the example prints");
    let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (example, url.to_owned(), dir)
}

/// POST a useChat body to /api/chat: each chunk's type, and the text deltas joined.
async fn chat(url: &str, body: Value) -> (Vec<String>, String) {
    let response = reqwest::Client::new().post(format!("{url}/api/chat")).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-vercel-ai-ui-message-stream"], "v1");
    let body = response.text().await.unwrap();
    let mut events: Vec<&str> = body.split("\n\n").filter(|event| !event.is_empty()).collect();
    assert_eq!(events.pop(), Some("data: [DONE]"), "{body}");
    let chunks: Vec<Value> = events
        .iter()
        .map(|event| serde_json::from_str(event.trim_start_matches("data: ")).unwrap())
        .collect();
    let types = chunks.iter().map(|chunk| chunk["type"].as_str().unwrap_or("?").to_owned()).collect();
    let text = chunks.iter().filter_map(|chunk| chunk["delta"].as_str()).collect();
    (types, text)
}

fn ask(chat: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is the weather in Paris?"}]}
    ]})
}

fn answer(chat: &str, call: &str, approved: bool) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is the weather in Paris?"}]},
        {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"},
            {"type": "tool-get_weather", "toolCallId": call, "state": "approval-responded",
             "input": {"city": "Paris"}, "approval": {"id": call, "approved": approved}}]}
    ]})
}

#[tokio::test]
async fn the_chat_ui_example_asks_then_answers_an_approval_and_a_denial() {
    let (_example, url, _dir) = start();

    let (types, _) = chat(&url, ask("approved")).await;
    let deltas = types.iter().filter(|kind| *kind == "tool-input-delta").count();
    assert!(deltas >= 2, "the arguments come in several deltas: {types:?}");
    assert!(
        types.ends_with(&["tool-approval-request".into(), "finish-step".into(), "finish".into()]),
        "{types:?}"
    );
    let (types, text) = chat(&url, answer("approved", "call_weather_2", true)).await;
    assert_eq!(types[1], "tool-output-available");
    assert!(text.contains("Paris") && text.contains("18°C"), "{text}");
    // The chart, the hourly forecast, then the typed answer at the end.
    assert_eq!(types[2..4], ["file", "data-get_weather"], "{types:?}");
    assert!(types.ends_with(&["data-answer".into(), "finish-step".into(), "finish".into()]), "{types:?}");

    chat(&url, ask("denied")).await;
    // The offline model numbers its calls by request: the third.
    let (types, text) = chat(&url, answer("denied", "call_weather_2", false)).await;
    assert_eq!(types[1], "tool-output-denied");
    assert!(text.contains("declined"), "{text}");
    // The tool did not run: no chart, no forecast; still a typed answer.
    assert!(!types.iter().any(|kind| kind == "file" || kind == "data-get_weather"), "{types:?}");
    assert!(types.ends_with(&["data-answer".into(), "finish-step".into(), "finish".into()]), "{types:?}");
}
