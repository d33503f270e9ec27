//! Newline-delimited JSON-RPC on stdio, with the one answer rmcp does not
//! give: a line that is not JSON (bad syntax, invalid UTF-8) gets a
//! `-32700` parse error with `id: null`, as JSON-RPC 2.0 says, instead of
//! being dropped; the server then reads on.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How much of rmcp's side of the pipes may be buffered.
const PIPE: usize = 64 * 1024;

/// The reader and writer rmcp serves on, fed from `input` and written to
/// `output`, and the task writing `output`: it ends once rmcp has dropped
/// its writer and every line is out.
pub(crate) fn filtered(
    input: impl AsyncRead + Unpin + Send + 'static,
    mut output: impl AsyncWrite + Unpin + Send + 'static,
) -> ((tokio::io::DuplexStream, tokio::io::DuplexStream), tokio::task::JoinHandle<()>) {
    let (for_rmcp, mut feed) = tokio::io::duplex(PIPE);
    let (from_rmcp, drain) = tokio::io::duplex(PIPE);
    let (errors, mut error_lines) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            // UTF-8 first: skipping a string, serde_json does not check it.
            let problem = match std::str::from_utf8(text) {
                Err(error) => Some(format!("the line is not UTF-8 ({error})")),
                Ok(text) => serde_json::from_str::<serde::de::IgnoredAny>(text)
                    .err()
                    .map(|error| format!("the line is not JSON ({error})")),
            };
            if let Some(problem) = problem {
                let _ = errors.send(parse_error(&problem));
                continue;
            }
            if feed.write_all(&line).await.is_err() {
                break;
            }
            if !line.ends_with(b"\n") && feed.write_all(b"\n").await.is_err() {
                break;
            }
        }
        // Dropping `feed` is rmcp's end of input.
    });
    let writer = tokio::spawn(async move {
        // One writer, whole lines: rmcp's answers and the parse errors never
        // interleave mid-line.
        let mut drain = BufReader::new(drain);
        // Kept across loops: a line rmcp is half-way through writing waits
        // here while an error line goes out.
        let mut pending = Vec::new();
        let mut errors_open = true;
        loop {
            let written = tokio::select! {
                read = drain.read_until(b'\n', &mut pending) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let written = write_line(&mut output, &pending).await;
                        pending.clear();
                        written
                    }
                },
                error = error_lines.recv(), if errors_open => match error {
                    Some(error) => write_line(&mut output, &error).await,
                    None => {
                        errors_open = false;
                        Ok(())
                    }
                },
            };
            if written.is_err() {
                break;
            }
        }
    });
    ((for_rmcp, from_rmcp), writer)
}

async fn write_line(output: &mut (impl AsyncWrite + Unpin), line: &[u8]) -> std::io::Result<()> {
    output.write_all(line).await?;
    output.flush().await
}

fn parse_error(problem: &str) -> Vec<u8> {
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("parse error: {problem}")},
    });
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}
