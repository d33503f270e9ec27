//! Chats per second and the first chunk's latency of the chat example
//! (`examples/chat_ui`) on one PostgreSQL: one replica reached directly,
//! against three replicas behind HAProxy (round-robin on loopback, the
//! configuration of tests/replicas/run.mjs), and, to tell the balancer's
//! hop from the replicas, the one replica behind HAProxy too. The same
//! load, in the same run, on each.
//!
//! The load is N clients at once (8, then 32), each making complete chats
//! one after the other over HTTP as useChat does: `POST /api/chat` with the
//! question, whose stream the example's offline model ends paused on
//! `get_weather` (the call needs approval), then `POST /api/chat` with the
//! approval, whose stream runs the tool and gives the answer. A chat is
//! both, each stream read to its end (`[DONE]`); through the balancer the
//! approval usually lands on another replica than the question, which is
//! what the shared store is for. Measured: chats per second (chats over
//! the round's wall time), and the time from sending the question to its
//! response's first SSE data line (`{"type":"start",...}`), p50 and p99.
//! Each setup runs `ROUNDS` rounds of `SECONDS` seconds per load (default
//! 3 rounds of 5 s), the setups taking turns; chats per second is the
//! median of the rounds, the percentiles are over every chat of the
//! rounds, and the ratios are the medians of the rounds' ratios. Nothing
//! is asserted about the times; a chat whose streams do not go as the
//! example's do is counted as failed, and the first failure is printed.
//!
//! What it measures, and what it does not:
//!
//! - every process shares the machine: the replicas (each a tokio runtime
//!   with a worker per core), PostgreSQL, HAProxy and the bench's clients.
//!   On a machine with few cores, three replicas add no CPU; the rows say
//!   what a balancer and more processes cost or give on the same cores;
//! - each replica's model is the example's offline `ScriptedServer`, an
//!   OpenAI-compatible server on loopback in the replica's own process,
//!   answering at once: a real model's seconds are not in these times,
//!   and its work is on the replica's cores;
//! - behind HAProxy every request pays the balancer's hop (two loopback
//!   connections instead of one, and HAProxy's parsing).
//!
//! The example is built for release (`cargo build --release --example
//! chat_ui --features ui,postgres`, which this bench runs), or taken from
//! `CHAT_UI_BIN` (for instance a debug build). PostgreSQL is a throwaway
//! cluster (`scripts/postgres.sh`, stopped and removed at the end) unless
//! `TOOLS_TEST_POSTGRES_URL` names one. HAProxy is `/usr/sbin/haproxy`
//! (Debian's) or `HAPROXY`. Every process started here is killed at the
//! end, and when the bench panics. Run by hand, not in CI:
//!
//! ```sh
//! cargo bench --bench chat_replicas --features ui,postgres          # 3 rounds of 5 s
//! cargo bench --bench chat_replicas --features ui,postgres -- 5 10  # 5 rounds of 10 s
//! ```

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The loads: clients making chats at once.
const LOADS: [usize; 2] = [8, 32];
/// The question the example's offline model answers with a call of
/// `get_weather`, which waits for approval.
const QUESTION: &str = "What is the weather in Paris?";
/// A guard against a hang, not a measure.
const WAIT: Duration = Duration::from_secs(30);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The chat example with PostgreSQL: `CHAT_UI_BIN`, or built for release.
fn example() -> (PathBuf, &'static str) {
    if let Some(path) = std::env::var_os("CHAT_UI_BIN") {
        return (PathBuf::from(path), "CHAT_UI_BIN");
    }
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--features",
            "ui,postgres",
            "--example",
            "chat_ui",
            "--message-format=json",
            "--quiet",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "the example builds: {}", String::from_utf8_lossy(&out.stderr));
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "chat_ui")
        .and_then(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the example's executable");
    (path, "release build")
}

// ---------------------------------------------------------------------------
// The processes, each stopped when its guard is dropped.

/// The PostgreSQL the replicas share: given, or a throwaway cluster.
struct Database {
    url: String,
    /// The cluster's folder, when this bench started it.
    cluster: Option<tempfile::TempDir>,
}

impl Database {
    fn start() -> Database {
        if let Ok(url) = std::env::var("TOOLS_TEST_POSTGRES_URL") {
            return Database { url, cluster: None };
        }
        let dir = tempfile::Builder::new().prefix("chat-replicas-pg-").tempdir().expect("a temporary folder");
        let out = Command::new(root().join("scripts/postgres.sh"))
            .arg("start")
            .arg(dir.path())
            .stderr(Stdio::inherit())
            .output()
            .expect("scripts/postgres.sh runs");
        let url = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").trim().to_owned();
        // Dropped here on failure: the cluster, if any, is stopped.
        let database = Database { url, cluster: Some(dir) };
        assert!(out.status.success() && database.url.starts_with("postgres://"), "PostgreSQL starts");
        database
    }

    fn origin(&self) -> &'static str {
        if self.cluster.is_some() {
            "scripts/postgres.sh's throwaway cluster"
        } else {
            "TOOLS_TEST_POSTGRES_URL"
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Some(dir) = &self.cluster {
            let _ = Command::new(root().join("scripts/postgres.sh"))
                .arg("stop")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A child process, killed (SIGKILL) and reaped when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One replica of the example: its URL, and how many times its tool ran
/// (the `get_weather ran: KEY` lines it prints).
struct Replica {
    name: &'static str,
    url: String,
    runs: Arc<AtomicUsize>,
    _process: Process,
}

impl Replica {
    fn start(binary: &Path, name: &'static str, database: &str) -> Replica {
        let child = Command::new(binary)
            .current_dir(root())
            .env("PORT", "0")
            .env("CHAT_DATABASE_URL", database)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("RESTATE_INGRESS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the example starts");
        let mut process = Process(child);
        let stdout = process.0.stdout.take().expect("its stdout is piped");
        let runs = Arc::new(AtomicUsize::new(0));
        let (listening, url) = std::sync::mpsc::channel();
        // Its stdout read to the end, so that it never blocks on a full pipe.
        let counted = Arc::clone(&runs);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.trim().strip_prefix("listening on ") {
                    let _ = listening.send(url.to_owned());
                } else if line.starts_with("get_weather ran: ") {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let url = url
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("replica {name} printed no `listening on` line in {WAIT:?}"));
        Replica { name, url, runs, _process: process }
    }
}

/// HAProxy in front of `replicas`, as tests/replicas/run.mjs configures
/// it: HTTP mode, round-robin per request, keep-alive on both sides.
struct Balancer {
    url: String,
    _process: Process,
    _dir: tempfile::TempDir,
}

impl Balancer {
    async fn start(replicas: &[&Replica]) -> Balancer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let dir =
            tempfile::Builder::new().prefix("chat-replicas-haproxy-").tempdir().expect("a temporary folder");
        let mut config = format!(
            "global\n    maxconn 1024\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 60s\n    \
             timeout server 60s\n    timeout tunnel 60s\n    timeout http-keep-alive 10s\nfrontend chat\n    \
             bind 127.0.0.1:{port}\n    default_backend replicas\nbackend replicas\n    balance roundrobin\n"
        );
        for replica in replicas {
            let host = replica.url.trim_start_matches("http://");
            config.push_str(&format!("    server {} {host}\n", replica.name));
        }
        std::fs::write(dir.path().join("haproxy.cfg"), config).expect("the configuration is written");
        let log = std::fs::File::create(dir.path().join("haproxy.log")).expect("a log file");
        let haproxy =
            std::env::var_os("HAPROXY").map_or_else(|| PathBuf::from("/usr/sbin/haproxy"), PathBuf::from);
        let child = Command::new(&haproxy)
            .arg("-f")
            .arg(dir.path().join("haproxy.cfg"))
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("{} starts: {error}", haproxy.display()));
        let mut process = Process(child);
        let url = format!("http://127.0.0.1:{port}");
        let client = client();
        let began = Instant::now();
        loop {
            if let Ok(Some(status)) = process.0.try_wait() {
                let mut log = String::new();
                let _ = std::fs::File::open(dir.path().join("haproxy.log"))
                    .map(|mut f| f.read_to_string(&mut log));
                panic!("haproxy exited ({status}):\n{log}");
            }
            if client.get(format!("{url}/")).send().await.is_ok_and(|response| response.status().is_success())
            {
                break;
            }
            assert!(began.elapsed() < WAIT, "haproxy answers within {WAIT:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Balancer { url, _process: process, _dir: dir }
    }
}

// ---------------------------------------------------------------------------
// A chat, as useChat makes it.

/// An HTTP client of the kind a browser tab is: its own connections, kept
/// alive; no proxy from the environment.
fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(60)).build().expect("a client")
}

/// Chat ids, new for every chat of the run.
static CHATS: AtomicUsize = AtomicUsize::new(0);

/// An SSE response read to its end: when its first data line came (from
/// `started`), and its data lines.
async fn read_sse(
    mut response: reqwest::Response,
    started: Instant,
) -> Result<(Duration, Vec<String>), String> {
    let mut pending: Vec<u8> = Vec::new();
    let mut data = Vec::new();
    let mut first = None;
    while let Some(bytes) = response.chunk().await.map_err(|error| format!("reading the stream: {error}"))? {
        pending.extend_from_slice(&bytes);
        while let Some(end) = pending.windows(2).position(|pair| pair == b"\n\n") {
            let event: Vec<u8> = pending.drain(..end + 2).collect();
            for line in String::from_utf8_lossy(&event[..end]).split('\n') {
                if let Some(value) = line.strip_prefix("data:") {
                    first.get_or_insert_with(|| started.elapsed());
                    data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
                }
            }
        }
    }
    let first = first.ok_or("the stream ended without a data line")?;
    Ok((first, data))
}

/// `body` posted to `/api/chat`, its stream read to the end: the first data
/// line's time and the chunks (`[DONE]` aside).
async fn post(client: &reqwest::Client, url: &str, body: &Value) -> Result<(Duration, Vec<Value>), String> {
    let started = Instant::now();
    let response = client
        .post(format!("{url}/api/chat"))
        .json(body)
        .send()
        .await
        .map_err(|error| format!("POST /api/chat: {error}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        return Err(format!("POST /api/chat: {status} {text}"));
    }
    let (first, data) = read_sse(response, started).await?;
    if data.last().map(String::as_str) != Some("[DONE]") {
        return Err(format!("the stream does not end with [DONE]: {:?}", data.last()));
    }
    let chunks = data[..data.len() - 1]
        .iter()
        .map(|line| {
            serde_json::from_str(line).map_err(|error| format!("a chunk is not JSON ({error}): {line}"))
        })
        .collect::<Result<Vec<Value>, String>>()?;
    Ok((first, chunks))
}

fn of_type<'a>(chunks: &'a [Value], kind: &str) -> Option<&'a Value> {
    chunks.iter().find(|chunk| chunk["type"] == kind)
}

/// One chat: the question, paused on the call, then its approval, each
/// stream read to its end. The time to the question's first data line.
async fn chat(client: &reqwest::Client, url: &str) -> Result<Duration, String> {
    let id = format!("bench-{}-{}", std::process::id(), CHATS.fetch_add(1, Ordering::Relaxed));
    let asked = json!({"id": "u1", "role": "user", "parts": [{"type": "text", "text": QUESTION}]});
    let question = json!({"id": id, "trigger": "submit-message", "messages": [asked]});
    let (first, chunks) = post(client, url, &question).await?;
    let request = of_type(&chunks, "tool-approval-request")
        .ok_or_else(|| format!("the question's stream asks for no approval: {chunks:?}"))?;
    let call = request["toolCallId"].clone();
    let input = chunks
        .iter()
        .find(|chunk| chunk["type"] == "tool-input-available" && chunk["toolCallId"] == call)
        .map_or_else(|| json!({"city": "Paris"}), |chunk| chunk["input"].clone());
    // The start chunk's message id, if it has one; the page's own otherwise.
    let message = of_type(&chunks, "start")
        .and_then(|chunk| chunk["messageId"].as_str())
        .map_or_else(|| json!("a1"), |id| json!(id));
    // The page's messages after Approve, as addToolApprovalResponse leaves them.
    let approval = json!({
        "id": id,
        "trigger": "submit-message",
        "messageId": message,
        "messages": [
            asked,
            {"id": message, "role": "assistant", "parts": [
                {"type": "step-start"},
                {"type": "tool-get_weather", "toolCallId": call, "state": "approval-responded", "input": input,
                 "approval": {"id": request["approvalId"], "approved": true}},
            ]},
        ],
    });
    let (_, chunks) = post(client, url, &approval).await?;
    if !chunks.iter().any(|chunk| chunk["type"] == "tool-output-available" && chunk["toolCallId"] == call) {
        return Err(format!("the approval's stream gives no output of the call: {chunks:?}"));
    }
    if chunks.last().is_none_or(|chunk| chunk["type"] != "finish") {
        return Err(format!("the approval's stream does not finish: {:?}", chunks.last()));
    }
    Ok(first)
}

// ---------------------------------------------------------------------------
// Rounds.

/// One round of one setup under one load.
#[derive(Default)]
struct Round {
    /// Chats per second: the chats over the round's wall time.
    rate: f64,
    /// Each chat's time to the question's first data line.
    first: Vec<Duration>,
    failed: usize,
    error: Option<String>,
}

/// `clients` clients making chats at `url` one after the other, starting
/// new ones for `length`; the round ends when the last chat does.
async fn round(url: &str, clients: usize, length: Duration) -> Round {
    let url: Arc<str> = Arc::from(url);
    let clients: Vec<reqwest::Client> = (0..clients).map(|_| client()).collect();
    let started = Instant::now();
    let deadline = started + length;
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|client| {
            let url = Arc::clone(&url);
            tokio::spawn(async move {
                let mut tally = Round::default();
                while Instant::now() < deadline {
                    match chat(&client, &url).await {
                        Ok(first) => tally.first.push(first),
                        Err(error) => {
                            tally.failed += 1;
                            tally.error.get_or_insert(error);
                            // No hot loop of failures taking the cores.
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
                tally
            })
        })
        .collect();
    let mut all = Round::default();
    for task in tasks {
        let tally = task.await.expect("a client panicked");
        all.first.extend(tally.first);
        all.failed += tally.failed;
        all.error = all.error.or(tally.error);
    }
    all.rate = all.first.len() as f64 / started.elapsed().as_secs_f64();
    all
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The `p` quantile of `values` (sorted here), in milliseconds.
fn percentile(values: &mut [Duration], p: f64) -> f64 {
    values.sort();
    let rank = ((values.len() as f64 * p).ceil() as usize).clamp(1, values.len().max(1));
    values.get(rank - 1).map_or(f64::NAN, |value| value.as_secs_f64() * 1e3)
}

/// What a setup gave under one load, over its rounds.
struct Summary {
    rates: Vec<f64>,
    first: Vec<Duration>,
    failed: usize,
    error: Option<String>,
}

async fn run(rounds: usize, length: Duration) {
    let (binary, build) = example();
    let database = Database::start();
    let single = Replica::start(&binary, "S", &database.url);
    let three = [
        Replica::start(&binary, "A", &database.url),
        Replica::start(&binary, "B", &database.url),
        Replica::start(&binary, "C", &database.url),
    ];
    let single_balanced = Balancer::start(&[&single]).await;
    let balanced = Balancer::start(&three.iter().collect::<Vec<_>>()).await;
    let setups: [(&str, &str); 3] = [
        ("1 replica", &single.url),
        ("1 replica behind HAProxy", &single_balanced.url),
        ("3 replicas behind HAProxy", &balanced.url),
    ];
    eprintln!(
        "{} ({build}): S {}, A {}, B {}, C {}; HAProxy {} (S), {} (A, B, C); PostgreSQL {}",
        binary.display(),
        single.url,
        three[0].url,
        three[1].url,
        three[2].url,
        single_balanced.url,
        balanced.url,
        database.url,
    );

    // A warm-up round each: connections, the store's pools and tables.
    for (name, url) in setups {
        let warm = round(url, LOADS[0], Duration::from_secs(2)).await;
        eprintln!("warm-up, {name}: {:.0} chats/s, {} failed", warm.rate, warm.failed);
    }

    // summaries[load][setup]
    let mut summaries: Vec<Vec<Summary>> = Vec::new();
    for clients in LOADS {
        let mut load: Vec<Summary> = (0..setups.len())
            .map(|_| Summary { rates: Vec::new(), first: Vec::new(), failed: 0, error: None })
            .collect();
        for n in 0..rounds {
            // The setups take turns, each going first in its round.
            for k in 0..setups.len() {
                let at = (n + k) % setups.len();
                let (name, url) = setups[at];
                let result = round(url, clients, length).await;
                let mut first = result.first.clone();
                eprintln!(
                    "{clients} clients, round {} of {rounds}, {name}: {:.0} chats/s, first chunk p50 {:.1} ms, \
                     p99 {:.1} ms, {} failed",
                    n + 1,
                    result.rate,
                    percentile(&mut first, 0.5),
                    percentile(&mut first, 0.99),
                    result.failed,
                );
                let summary = &mut load[at];
                summary.rates.push(result.rate);
                summary.first.extend(result.first);
                summary.failed += result.failed;
                summary.error = summary.error.take().or(result.error);
            }
        }
        summaries.push(load);
    }

    println!(
        "\nChats of examples/chat_ui ({build}; a chat: the question, paused on get_weather, and its approval, both \
         streams read to the end) on {}; {rounds} rounds of {} s per setup and load, the setups taking turns:",
        database.origin(),
        length.as_secs_f64(),
    );
    println!(
        "  {:>7}  {:<26} {:>9} {:>9} {:>22} {:>22} {:>7}",
        "clients", "setup", "chats/s", "chats", "first chunk p50 ms", "first chunk p99 ms", "failed"
    );
    for (clients, load) in LOADS.iter().zip(&mut summaries) {
        for ((name, _), summary) in setups.iter().zip(load.iter_mut()) {
            println!(
                "  {clients:>7}  {name:<26} {:>9.1} {:>9} {:>22.1} {:>22.1} {:>7}",
                median(summary.rates.clone()),
                summary.first.len(),
                percentile(&mut summary.first, 0.5),
                percentile(&mut summary.first, 0.99),
                summary.failed,
            );
        }
    }
    println!("  chats/s: the median of the rounds; the percentiles over every chat of the rounds");
    for (clients, load) in LOADS.iter().zip(&mut summaries) {
        let rate = |at: usize| {
            median(load[0].rates.iter().zip(&load[at].rates).map(|(one, other)| other / one).collect())
        };
        let (rate_hop, rate_three) = (rate(1), rate(2));
        let mut quantiles = Vec::new();
        for summary in load.iter_mut() {
            quantiles.push((percentile(&mut summary.first, 0.5), percentile(&mut summary.first, 0.99)));
        }
        println!(
            "  {clients} clients, against 1 replica: 3 behind HAProxy {rate_three:.2}x the chats/s, first chunk p50 \
             {:.2}x, p99 {:.2}x; 1 behind HAProxy {rate_hop:.2}x the chats/s, p50 {:.2}x, p99 {:.2}x",
            quantiles[2].0 / quantiles[0].0,
            quantiles[2].1 / quantiles[0].1,
            quantiles[1].0 / quantiles[0].0,
            quantiles[1].1 / quantiles[0].1,
        );
    }
    println!("  (chats/s ratios: the median of the rounds' ratios)");
    println!(
        "  tool runs: S {}; A {}, B {}, C {}",
        single.runs.load(Ordering::Relaxed),
        three[0].runs.load(Ordering::Relaxed),
        three[1].runs.load(Ordering::Relaxed),
        three[2].runs.load(Ordering::Relaxed),
    );
    for (clients, load) in LOADS.iter().zip(&summaries) {
        for ((name, _), summary) in setups.iter().zip(load) {
            if let Some(error) = &summary.error {
                println!("  first failure, {clients} clients, {name}: {error}");
            }
        }
    }
    // The guards stop HAProxy, the replicas and PostgreSQL, in that order.
    drop((balanced, single_balanced, three, single, database));
}

fn main() {
    // `cargo bench` passes `--bench`; the numbers are the rounds and the
    // seconds of a round.
    let mut numbers = std::env::args().skip(1).filter_map(|arg| arg.parse::<u64>().ok());
    let rounds = numbers.next().unwrap_or(3).max(1) as usize;
    let seconds = numbers.next().unwrap_or(5).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run(rounds, Duration::from_secs(seconds)));
}
