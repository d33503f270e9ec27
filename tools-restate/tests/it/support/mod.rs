//! What the tests share: the Restate server, the worker processes behind
//! one balancer, and the shop (the model's stand-in and the tools'
//! backend, which count what reaches them).
#![allow(dead_code, reason = "each test file uses its own part")]

pub(crate) mod shop;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http2;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

/// How long anything the tests wait for may take before they fail.
pub(crate) const PATIENCE: Duration = Duration::from_secs(120);

/// A free port of loopback (free when asked).
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Wait until something listens on `port`.
pub(crate) async fn listening(port: u16) {
    tokio::time::timeout(PATIENCE, async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("nothing listens on port {port}"));
}

/// The Restate server binary, installed by `npm ci --prefix tests/restate`.
fn server_binary() -> PathBuf {
    let binary = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server"
    ));
    assert!(
        binary.exists(),
        "no Restate server at {}: install it with `npm ci --prefix tests/restate` (scripts/test.sh does)",
        binary.display()
    );
    binary
}

/// A Restate server on loopback: its own base dir and ports, kept across
/// restarts, so a restarted server has its journal back.
pub(crate) struct Restate {
    base_dir: PathBuf,
    ports: [u16; 3],
    process: Option<Child>,
}

impl Restate {
    pub(crate) async fn start() -> Self {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let base_dir = std::env::temp_dir().join(format!(
            "tools-restate-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base_dir);
        std::fs::create_dir_all(&base_dir).unwrap();
        let mut server = Self { base_dir, ports: [free_port(), free_port(), free_port()], process: None };
        server.run().await;
        server
    }

    async fn run(&mut self) {
        let [node, admin, ingress] = self.ports;
        let log = std::fs::File::create(self.base_dir.join("server.log")).unwrap();
        let process = Command::new(server_binary())
            .args(["--bind-ip", "127.0.0.1", "--listen-mode", "tcp", "--no-logo", "--base-dir"])
            .arg(&self.base_dir)
            .env("RESTATE_BIND_PORT", node.to_string())
            .env("RESTATE_ADMIN__BIND_PORT", admin.to_string())
            .env("RESTATE_INGRESS__BIND_PORT", ingress.to_string())
            // A worker killed mid-run is retried soon, and for as long as
            // it takes to come back.
            .env("RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL", "20ms")
            .env("RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL", "300ms")
            .env("RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS", "1000000")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        self.process = Some(process);
        let client = reqwest::Client::new();
        let health = format!("{}/health", self.admin());
        tokio::time::timeout(PATIENCE, async {
            while !client.get(&health).send().await.is_ok_and(|r| r.status().is_success()) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("the Restate server did not start; see {}", self.base_dir.display()));
        listening(ingress).await;
    }

    /// Kill the server (SIGKILL) and start it again on its base dir.
    pub(crate) async fn restart(&mut self) {
        self.kill().await;
        self.run().await;
    }

    pub(crate) async fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill().await.unwrap();
        }
    }

    pub(crate) fn admin(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[1])
    }

    pub(crate) fn ingress(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[2])
    }

    /// Register the workers behind `port` as the deployment of `AgentRun`.
    pub(crate) async fn register(&self, port: u16) {
        self.register_serving(port, &["AgentRun"]).await;
    }

    /// Register the worker behind `port`, which serves these workflows.
    pub(crate) async fn register_serving(&self, port: u16, workflows: &[&str]) {
        let response = reqwest::Client::new()
            .post(format!("{}/deployments", self.admin()))
            .json(&json!({"uri": format!("http://127.0.0.1:{port}"), "force": true}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "registering the workers failed: {status} {body}");
        for workflow in workflows {
            assert!(body.contains(workflow), "{workflow}: {body}");
        }
    }

    /// Start run `id` of `workflow` from `prompt` without waiting for it.
    pub(crate) async fn send_to(&self, workflow: &str, id: &str, prompt: &str) {
        let response = reqwest::Client::new()
            .post(format!("{}/{workflow}/{id}/run/send", self.ingress()))
            .json(&prompt)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.text().await.unwrap());
    }

    /// How run `id` of `workflow` ended: the status and body of its
    /// output, once it has ended.
    pub(crate) async fn ended(&self, workflow: &str, id: &str) -> (u16, String) {
        let url = format!("{}/restate/workflow/{workflow}/{id}/attach", self.ingress());
        let response = tokio::time::timeout(PATIENCE, reqwest::Client::new().get(&url).send())
            .await
            .unwrap_or_else(|_| panic!("run {id} of {workflow} did not end"))
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Start run `id` from `prompt` without waiting for it.
    pub(crate) async fn send(&self, id: &str, prompt: &str) {
        let response = reqwest::Client::new()
            .post(format!("{}/AgentRun/{id}/run/send", self.ingress()))
            .json(&prompt)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.text().await.unwrap());
    }

    /// Run `id`'s output, once it has ended.
    pub(crate) async fn output(&self, id: &str) -> toolcall_agent::RunResult {
        let url = format!("{}/restate/workflow/AgentRun/{id}/attach", self.ingress());
        let response = tokio::time::timeout(PATIENCE, reqwest::Client::new().get(&url).send())
            .await
            .unwrap_or_else(|_| panic!("run {id} did not end"))
            .unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "run {id} failed: {status} {body}");
        serde_json::from_str(&body).unwrap_or_else(|error| panic!("{error}: {body}"))
    }

    /// A shared handler of run `id`, with this body (none for `null`).
    pub(crate) async fn call(&self, id: &str, handler: &str, body: &Value) -> (u16, String) {
        let request = reqwest::Client::new().post(format!("{}/AgentRun/{id}/{handler}", self.ingress()));
        let request = if body.is_null() { request } else { request.json(body) };
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }
}

impl Drop for Restate {
    /// The server stops, and its base dir (a few hundred MB) goes.
    fn drop(&mut self) {
        if let Some(process) = self.process.as_mut() {
            let _ = process.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.base_dir);
    }
}

/// The worker example, built once.
pub(crate) fn worker_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let output = std::process::Command::new(cargo)
            .args([
                "build",
                "-p",
                "toolcall-restate",
                "--example",
                "worker",
                "--message-format=json",
                "--quiet",
            ])
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .args(if cfg!(debug_assertions) { &[][..] } else { &["--release"][..] })
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "worker")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the example's executable")
    })
}

/// The worker example's command, its model and tools at the shop.
pub(crate) fn worker_command(shop: &str) -> Command {
    let mut command = Command::new(worker_binary());
    command
        .env("OPENAI_BASE_URL", format!("{shop}/v1"))
        .env("OPENAI_API_KEY", shop::KEY)
        .env("MODEL", "gpt-4.1-mini")
        .env("BACKEND_URL", shop)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    command
}

/// The run the worker example makes in-process from `prompt`, with the
/// shop at `shop`: the transcript a durable run must have.
pub(crate) async fn local_run(shop: &str, prompt: &str) -> toolcall_agent::RunResult {
    let output = worker_command(shop).args(["local", prompt]).output().await.unwrap();
    assert!(output.status.success(), "the local run failed");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The `notify` calls of a durable run that the model read as unknown (a
/// call cut mid-flight, not run again: `notify` is the worker's one tool
/// with no idempotency key), their ids; each taken into `want`, the
/// in-process run, so that the two compare equal where nothing else
/// differs.
pub(crate) fn unknown_notifies(
    got: &toolcall_agent::RunResult,
    want: &mut toolcall_agent::RunResult,
) -> Vec<String> {
    let mut unknown = Vec::new();
    for (message, wanted) in got.transcript.messages.iter().zip(&mut want.transcript.messages) {
        let (
            toolcall_agent::Message::Tool { results: got },
            toolcall_agent::Message::Tool { results: wanted },
        ) = (message, wanted)
        else {
            continue;
        };
        for (got, wanted) in got.iter().zip(wanted) {
            let call = toolcall_core::ToolCall::new(got.id.clone(), got.name.clone(), "");
            if *got == toolcall_restate::unknown_result(&call) {
                assert_eq!(got.name, "notify", "only the tool with no key is left unknown: {got:?}");
                unknown.push(got.id.to_string());
                *wanted = got.clone();
            }
        }
    }
    unknown
}

/// One worker's place: its process, when it has one, and the port the
/// process said it listens on. A worker listens on a port the system
/// picks (`serve 0`) and prints it: no port chosen in advance that
/// another process could take meanwhile.
struct Slot {
    process: Mutex<Option<Child>>,
    /// The port the worker printed; 0 before the first one did.
    port: AtomicU16,
    /// The process id of the worker that printed `port`.
    announced: AtomicU32,
}

impl Slot {
    /// Whether the worker in this place runs and listens on `port`.
    fn listening(&self) -> bool {
        let mut process = self.process.lock().unwrap();
        process.as_mut().is_some_and(|child| {
            child.try_wait().ok().flatten().is_none()
                && child.id() == Some(self.announced.load(Ordering::SeqCst))
        })
    }
}

/// Start a worker in `slot`: its port, once it prints it, is the slot's.
fn spawn_worker(slot: &Arc<Vec<Slot>>, index: usize, shop: &str) -> Child {
    let mut child = worker_command(shop).args(["serve", "0"]).spawn().unwrap();
    let (pid, stdout) = (child.id().unwrap(), child.stdout.take().unwrap());
    let slots = Arc::clone(slot);
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        if let Ok(Some(line)) = lines.next_line().await
            && let Some(address) = line.strip_prefix("listening on ")
        {
            let address: SocketAddr = address.parse().unwrap();
            slots[index].port.store(address.port(), Ordering::SeqCst);
            slots[index].announced.store(pid, Ordering::SeqCst);
        }
        // Read to the end: the worker never writes to a closed pipe.
        while let Ok(Some(_)) = lines.next_line().await {}
    });
    child
}

/// Worker processes, each started again when it dies, behind one
/// balancer that passes each of Restate's requests (an HTTP/2 stream) to
/// the next worker in turn, as a load balancer in front of one deployment
/// does: Restate pins a run to its deployment, not to a process, so a run
/// cut on one worker goes on in another.
pub(crate) struct Workers {
    /// The balancer's port: the deployment's URI.
    pub(crate) port: u16,
    slots: Arc<Vec<Slot>>,
    /// How many workers were killed.
    pub(crate) killed: Arc<AtomicUsize>,
    /// How many of Restate's requests each worker was given, in slot order.
    pub(crate) served: Arc<Vec<AtomicUsize>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Workers {
    pub(crate) async fn start(count: usize, shop: &str) -> Self {
        let slots: Arc<Vec<Slot>> = Arc::new(
            (0..count)
                .map(|_| Slot {
                    process: Mutex::new(None),
                    port: AtomicU16::new(0),
                    announced: AtomicU32::new(0),
                })
                .collect(),
        );
        let shop = shop.to_owned();
        let keep = Arc::clone(&slots);
        // The keeper: a worker that died is started again.
        let keeper = tokio::spawn(async move {
            loop {
                for (index, slot) in keep.iter().enumerate() {
                    let mut process = slot.process.lock().unwrap();
                    let dead = match process.as_mut() {
                        None => true,
                        Some(child) => child.try_wait().ok().flatten().is_some(),
                    };
                    if dead {
                        *process = Some(spawn_worker(&keep, index, &shop));
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        let served: Arc<Vec<AtomicUsize>> = Arc::new((0..count).map(|_| AtomicUsize::new(0)).collect());
        let (port, balancer) = balance(Arc::clone(&slots), Arc::clone(&served)).await;
        let workers = Self { port, slots, killed: Arc::default(), served, tasks: vec![keeper, balancer] };
        workers.ready().await;
        workers
    }

    /// What kills (SIGKILL) the worker with a process id, if it is one of
    /// these, for the shop's chaos; the keeper starts it again.
    pub(crate) fn killer(&self) -> shop::Killer {
        let (slots, killed) = (Arc::clone(&self.slots), Arc::clone(&self.killed));
        Arc::new(move |pid| {
            for slot in slots.iter() {
                let mut process = slot.process.lock().unwrap();
                if let Some(child) = process.as_mut()
                    && child.id() == Some(pid)
                {
                    child.start_kill().unwrap();
                    killed.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
            }
            false
        })
    }

    /// Kill every worker (SIGKILL); the keeper starts them again.
    pub(crate) fn kill_all(&self) {
        for slot in self.slots.iter() {
            if let Some(child) = slot.process.lock().unwrap().as_mut() {
                let _ = child.start_kill();
            }
        }
    }

    /// The workers' process ids.
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.slots
            .iter()
            .filter_map(|slot| slot.process.lock().unwrap().as_ref().and_then(Child::id))
            .collect()
    }

    /// Wait until every worker runs and listens on the port it printed.
    pub(crate) async fn ready(&self) {
        tokio::time::timeout(PATIENCE, async {
            while !self.slots.iter().all(Slot::listening) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("the workers did not start"));
    }

    /// Stop the keeper and the balancer, and kill the workers.
    pub(crate) fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        self.kill_all();
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The balancer: an HTTP/2 (h2c) proxy on a free port of loopback.
async fn balance(slots: Arc<Vec<Slot>>, served: Arc<Vec<AtomicUsize>>) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let client: Client<_, Incoming> = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let next = Arc::new(AtomicUsize::new(0));
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let (slots, served, client, next) =
                (Arc::clone(&slots), Arc::clone(&served), client.clone(), Arc::clone(&next));
            let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                let index = next.fetch_add(1, Ordering::Relaxed) % slots.len();
                served[index].fetch_add(1, Ordering::Relaxed);
                let address = SocketAddr::from(([127, 0, 0, 1], slots[index].port.load(Ordering::SeqCst)));
                let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
                *request.uri_mut() = format!("http://{address}{path}").parse().unwrap();
                let client = client.clone();
                async move { client.request(request).await }
            });
            tokio::spawn(async move {
                let _ = http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (port, task)
}
