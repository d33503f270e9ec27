use serde_json::{Value, json};
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::ToolCall;

use crate::{REMOVED, message, rpc, serve};

fn remove(path: &str) -> ScriptedModel {
    ScriptedModel::new()
        .then_calls([ToolCall::new("call-1", "remove_dir", format!(r#"{{"path":"{path}"}}"#))])
        .then_text(format!("Removed {path}."))
}

#[tokio::test]
async fn the_card_names_the_agent_its_endpoint_and_its_tools() {
    let url = serve(ScriptedModel::new()).await;
    let card: Value =
        reqwest::get(format!("{url}/.well-known/agent-card.json")).await.unwrap().json().await.unwrap();
    assert_eq!(card["name"], "janitor");
    assert_eq!(card["description"], "Cleans up.");
    assert_eq!(
        card["supportedInterfaces"],
        json!([{"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])
    );
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["skills"][0]["id"], "remove_dir");
    assert_eq!(card["skills"][0]["description"], "Remove a directory.");
}

#[tokio::test]
async fn send_message_runs_the_agent_and_get_task_reads_the_task() {
    let url = serve(ScriptedModel::new().then_text("Hello back.")).await;
    let answer = rpc(&url, "SendMessage", message(json!([{"text": "Hello"}]), None)).await;
    assert_eq!(answer["id"], 7);
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(task["status"]["message"]["parts"], json!([{"text": "Hello back."}]));
    assert_eq!(
        task["artifacts"],
        json!([{"artifactId": "answer", "name": "answer", "parts": [{"text": "Hello back."}]}])
    );
    let id = task["id"].as_str().unwrap();
    assert_eq!(task["history"][0]["taskId"], id);
    assert_eq!(task["history"][0]["contextId"], task["contextId"]);
    assert_eq!(task["history"][1]["role"], "ROLE_AGENT");

    let read = rpc(&url, "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"], *task);
    let short = rpc(&url, "GetTask", json!({"id": id, "historyLength": 1})).await;
    assert_eq!(short["result"]["history"].as_array().unwrap().len(), 1);
    assert_eq!(short["result"]["history"][0]["role"], "ROLE_AGENT");
}

/// The `result`s of an SSE body of JSON-RPC answers.
fn sse_results(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| {
            event.lines().find_map(|line| line.strip_prefix("data: ").or(line.strip_prefix("data:")))
        })
        .map(|data| {
            let answer: Value = serde_json::from_str(data).unwrap();
            assert_eq!(answer["id"], 7, "{answer}");
            answer["result"].clone()
        })
        .collect()
}

#[tokio::test]
async fn send_streaming_message_streams_the_task_its_states_and_the_answer() {
    let url = serve(ScriptedModel::new().then_text("Streamed.")).await;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendStreamingMessage", "params": message(json!([{"text": "Hi"}]), None)});
    let response = reqwest::Client::new().post(format!("{url}/")).json(&body).send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = sse_results(&response.text().await.unwrap());
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(events[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    let id = events[0]["task"]["id"].clone();
    assert_eq!(events[1]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(events[1]["statusUpdate"]["taskId"], id);
    let piece = &events[2]["artifactUpdate"];
    assert_eq!(piece["artifact"]["parts"], json!([{"text": "Streamed."}]));
    assert_eq!((piece["append"].clone(), piece["lastChunk"].clone()), (json!(false), json!(true)));
    assert_eq!(events[3]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(events[3]["statusUpdate"]["status"]["message"]["parts"][0]["text"], "Streamed.");
}

#[tokio::test]
async fn a_held_call_makes_the_task_input_required_and_approve_resumes_it() {
    let url = serve(remove("approved-dir")).await;
    let answer = rpc(&url, "SendMessage", message(json!([{"text": "Clean up"}]), None)).await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{answer}");
    let asked = &task["status"]["message"]["parts"];
    let text = asked[0]["text"].as_str().unwrap();
    assert!(text.contains("`remove_dir`") && text.contains("call-1") && text.contains("approve"), "{text}");
    assert_eq!(asked[1]["data"]["pending"][0]["name"], "remove_dir");
    assert!(!REMOVED.lock().unwrap().contains(&"approved-dir".to_owned()));
    let id = task["id"].as_str().unwrap();

    // Anything but a decision is refused, and the task still waits.
    let unclear = rpc(&url, "SendMessage", message(json!([{"text": "maybe"}]), Some(id))).await;
    assert_eq!(unclear["error"]["code"], -32602, "{unclear}");
    let read = rpc(&url, "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let done = rpc(&url, "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(done["result"]["task"]["id"], id);
    assert_eq!(done["result"]["task"]["artifacts"][0]["parts"][0]["text"], "Removed approved-dir.");
    assert!(REMOVED.lock().unwrap().contains(&"approved-dir".to_owned()));

    // A second answer finds the task over.
    let again = rpc(&url, "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
    assert_eq!(again["error"]["code"], -32004, "{again}");
}

#[tokio::test]
async fn deny_resumes_the_run_without_running_the_call() {
    let url = serve(remove("denied-dir")).await;
    let answer = rpc(&url, "SendMessage", message(json!([{"text": "Clean up"}]), None)).await;
    let id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    let decisions = json!([{"data": {"decisions": {"call-1": {"decision": "deny", "reason": "keep it"}}}}]);
    let done = rpc(&url, "SendMessage", message(decisions, Some(&id))).await;
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert!(!REMOVED.lock().unwrap().contains(&"denied-dir".to_owned()));
}

#[tokio::test]
async fn cancel_ends_a_waiting_task_and_refuses_a_finished_one() {
    let url = serve(remove("canceled-dir")).await;
    let answer = rpc(&url, "SendMessage", message(json!([{"text": "Clean up"}]), None)).await;
    let id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    let canceled = rpc(&url, "CancelTask", json!({"id": id})).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    let again = rpc(&url, "CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002, "{again}");
    let late = rpc(&url, "SendMessage", message(json!([{"text": "approve"}]), Some(&id))).await;
    assert_eq!(late["error"]["code"], -32004, "{late}");
    assert!(!REMOVED.lock().unwrap().contains(&"canceled-dir".to_owned()));
}

#[tokio::test]
async fn bad_requests_get_the_specs_error_codes() {
    let url = serve(ScriptedModel::new()).await;
    let post = |body: String, version: &'static str| {
        let url = url.clone();
        async move {
            let response = reqwest::Client::new()
                .post(format!("{url}/"))
                .header("A2A-Version", version)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            response.json::<Value>().await.unwrap()
        }
    };
    let code = |answer: Value| answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(code(post("{not json".into(), "1.0").await), -32700);
    assert_eq!(code(post(r#"{"id":1,"method":"GetTask"}"#.into(), "1.0").await), -32600);
    assert_eq!(
        code(post(r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}"#.into(), "1.0").await),
        -32601
    );
    assert_eq!(
        code(post(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"nope":1}}"#.into(), "1.0").await),
        -32602
    );
    assert_eq!(
        code(post(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#.into(), "2.0").await),
        -32009
    );
    let unknown = rpc(&url, "GetTask", json!({"id": "no-such-task"})).await;
    assert_eq!(unknown["error"]["code"], -32001);
    assert_eq!(unknown["id"], 7);
    let unknown_answer =
        rpc(&url, "SendMessage", message(json!([{"text": "approve"}]), Some("no-such-task"))).await;
    assert_eq!(unknown_answer["error"]["code"], -32001);
    let empty = rpc(&url, "SendMessage", message(json!([]), None)).await;
    assert_eq!(empty["error"]["code"], -32602);
}
