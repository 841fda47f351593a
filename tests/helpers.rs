//! What every integration test needs: a brain of its own and a real server.
//!
//! [`TestBrain`] copies a fixture folder (by default the bundled
//! `brain-sample/`) into a temp dir, so a test may edit, move and delete notes
//! and let noggin write its index beside them. [`TestServer`] runs the real
//! HTTP server on `127.0.0.1:0` over such a brain, with the settings a user
//! gets by default, and waits until the first reconcile is done. Waiting for
//! something to happen is [`wait_until`] with a deadline, never a fixed sleep.

#![allow(dead_code)] // each test module uses its own part of the helpers

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use noggin::brain::watch::WatchMode;
use noggin::config::{Cli, Command, ServerConfig};
use noggin::server::AppState;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The example brain shipped with noggin.
pub fn sample_brain_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("brain-sample")
}

/// A path in the shared evaluation data: `../shared/eval` beside the
/// checkout, else `/work/shared/eval` (where a clone elsewhere finds it).
pub fn shared_eval(relative: &str) -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval");
    let root = if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/eval")
    };
    root.join(relative)
}

/// The Korean Obsidian help vault of the shared evaluation data.
pub fn obsidian_help_ko() -> PathBuf {
    shared_eval("vaults/obsidian-help/ko")
}

/// The Obsidian help vault in English, from the shared evaluation data.
pub fn obsidian_help_en() -> PathBuf {
    shared_eval("vaults/obsidian-help/en")
}

/// How long a test waits for something the spec promises within a second.
pub const CHANGE_DEADLINE: Duration = Duration::from_secs(5);

/// How long starting a server (including its first reconcile) may take.
pub const START_DEADLINE: Duration = Duration::from_secs(30);

/// A brain in a temp dir of its own; removed when dropped.
pub struct TestBrain {
    // Held to keep the folder alive.
    _dir: TempDir,
    root: PathBuf,
}

impl TestBrain {
    /// A copy of the bundled `brain-sample/`.
    pub fn sample() -> TestBrain {
        TestBrain::from_dir(sample_brain_dir())
    }

    /// A brain without any notes.
    pub fn empty() -> TestBrain {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let root = dir.path().join("brain");
        std::fs::create_dir(&root).expect("create the brain folder");
        TestBrain { _dir: dir, root }
    }

    /// A copy of any folder of notes; an index already in it is left behind.
    pub fn from_dir(source: impl AsRef<Path>) -> TestBrain {
        let source = source.as_ref();
        assert!(source.is_dir(), "fixture brain {source:?} is missing");
        let brain = TestBrain::empty();
        let walker = walkdir::WalkDir::new(source)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".noggin");
        for entry in walker {
            let entry = entry.unwrap_or_else(|e| panic!("cannot walk {source:?}: {e}"));
            let rel = entry
                .path()
                .strip_prefix(source)
                .expect("walked below source");
            let to = brain.root.join(rel);
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).expect("create a folder of the copy");
            } else {
                std::fs::copy(entry.path(), &to)
                    .unwrap_or_else(|e| panic!("cannot copy {:?}: {e}", entry.path()));
            }
        }
        brain
    }

    /// The brain folder.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Where noggin keeps the index of this brain by default.
    pub fn data_dir(&self) -> PathBuf {
        self.root.join(".noggin")
    }

    /// Absolute path of a note given relative to the brain.
    pub fn note(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes a note (creating its folders), as an editor saving in place would.
    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.note(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the note's folder");
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
    }

    pub fn read(&self, rel: &str) -> String {
        let path = self.note(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"))
    }

    /// Renames a note or folder, both relative to the brain.
    pub fn rename(&self, from: &str, to: &str) {
        std::fs::rename(self.note(from), self.note(to))
            .unwrap_or_else(|e| panic!("cannot rename {from:?} to {to:?}: {e}"));
    }

    pub fn remove(&self, rel: &str) {
        let path = self.note(rel);
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("cannot remove {path:?}: {e}"));
    }
}

/// Settings of a [`TestServer`] that tests change; the rest are the
/// defaults of `noggin serve`.
pub struct ServerOptions {
    pub watch: WatchMode,
    pub poll_interval: Duration,
    pub token: Option<String>,
    /// More `noggin serve` flags, e.g. `["--project-context-chars", "200"]`.
    pub args: Vec<String>,
    /// How answers are written back (date, `--no-save`, …).
    pub knowledge: noggin::knowledge::Settings,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            watch: WatchMode::Auto,
            poll_interval: Duration::from_millis(2000),
            token: None,
            args: Vec::new(),
            knowledge: noggin::knowledge::Settings::default(),
        }
    }
}

/// The configuration `noggin serve --brain <brain> --addr 127.0.0.1:0` gets,
/// with `options` applied on top.
pub fn server_config(brain: &Path, options: &ServerOptions) -> ServerConfig {
    let mut argv = vec![
        "noggin",
        "serve",
        "--brain",
        brain.to_str().expect("temp paths are UTF-8"),
        "--addr",
        "127.0.0.1:0",
    ];
    argv.extend(options.args.iter().map(String::as_str));
    let Command::Serve(args) = Cli::try_parse_from(argv).expect("valid flags").command else {
        unreachable!("parsed a serve command");
    };
    let mut config = args.server_config().expect("loopback needs no token");
    // What tests rely on is set here, whatever NOGGIN_* variables say.
    config.brain.data_dir = None;
    config.watch = options.watch;
    config.poll_interval = options.poll_interval;
    config.token = options.token.clone();
    config.knowledge = options.knowledge.clone();
    // Servers run without the semantic model unless a test names its folder:
    // loading and embedding in every test would cost the suite minutes.
    if !options.args.iter().any(|a| a == "--model-dir") {
        config.model_dir = None;
    }
    config
}

/// The real server on a free loopback port; stopped when dropped.
pub struct TestServer {
    pub base_url: String,
    client: reqwest::Client,
    token: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Serves `brain` with default settings once its first reconcile is done.
    pub async fn start(brain: &TestBrain) -> TestServer {
        TestServer::start_with(brain, ServerOptions::default()).await
    }

    pub async fn start_with(brain: &TestBrain, options: ServerOptions) -> TestServer {
        let server = TestServer::launch(brain, options).await;
        let s = &server;
        wait_until(
            START_DEADLINE,
            "the first reconcile finishes",
            || async move {
                let (_, status) = s.get("/v1/status").await;
                status["indexing"] == false && status["last_reconcile"].is_object()
            },
        )
        .await;
        server
    }

    /// Serves `brain` at once, while its first reconcile runs.
    pub async fn launch(brain: &TestBrain, options: ServerOptions) -> TestServer {
        let config = server_config(brain.path(), &options);
        let state = open_state(config).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(noggin::server::run(listener, state, async {
            let _ = stopped.await;
        }));
        TestServer {
            base_url: format!("http://{addr}"),
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("build an HTTP client"),
            token: options.token,
            shutdown: Some(shutdown),
            task: Some(task),
        }
    }

    /// Shuts the server down gracefully and waits until it has stopped.
    pub async fn stop(mut self) {
        self.shut_down().await;
    }

    async fn shut_down(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.await
                .expect("server task panicked")
                .expect("server failed");
        }
    }

    /// Sends a POST whose headers announce `length` bytes of JSON body and
    /// ask to be told before sending it (`Expect: 100-continue`), sends
    /// none, and reads the answer: how a test sees a body refused from its
    /// announced length.
    pub async fn announce_body(&self, path: &str, length: usize) -> (StatusCode, Value) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let authority = self.base_url.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(authority)
            .await
            .expect("connect to the server");
        let token = self
            .token
            .as_deref()
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             {token}Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
        );
        stream
            .write_all(head.as_bytes())
            .await
            .expect("send the headers");
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = Instant::now() + Duration::from_secs(10);
        let text = loop {
            let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
                .await
                .expect("the server answers in time")
                .expect("read the answer");
            answer.extend_from_slice(&buf[..read]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            // The answer is whole once its JSON body has closed.
            if read == 0 || (text.contains("\r\n\r\n") && text.trim_end().ends_with('}')) {
                break text;
            }
            assert!(Instant::now() < deadline, "no whole answer: {text}");
        };
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or_else(|| panic!("no status line: {text}"));
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, json_or_text(body))
    }

    /// Sends a request with the configured token (if any).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<reqwest::Body>,
    ) -> (StatusCode, Value) {
        let token = self.token.clone();
        self.request_as(method, path, token.as_deref(), body).await
    }

    /// Sends a request with the given bearer token, or none.
    pub async fn request_as(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<reqwest::Body>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base_url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let response = request.send().await.expect("send a request");
        let status = response.status();
        let text = response.text().await.expect("read the response body");
        (status, json_or_text(&text))
    }

    /// `GET path` (with query string); the body as JSON.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.request(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post_json(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.request(Method::POST, path, Some(body.to_string().into()))
            .await
    }

    /// `GET /v1/search` for `q` (and any extra query parameters); panics
    /// unless it answers 200.
    pub async fn search(&self, q: &str, extra: &[(&str, &str)]) -> Vec<Value> {
        let mut url = reqwest::Url::parse("http://x/v1/search").expect("valid URL");
        url.query_pairs_mut()
            .append_pair("q", q)
            .extend_pairs(extra);
        let path = format!("{}?{}", url.path(), url.query().unwrap_or(""));
        let (status, body) = self.get(&path).await;
        assert_eq!(status, StatusCode::OK, "search {q:?} {extra:?}: {body}");
        body["hits"].as_array().expect("hits is an array").clone()
    }

    /// Paths of the notes found for `q`, best first.
    pub async fn search_paths(&self, q: &str) -> Vec<String> {
        paths(&self.search(q, &[]).await)
    }

    pub async fn status(&self) -> Value {
        let (status, body) = self.get("/v1/status").await;
        assert_eq!(status, StatusCode::OK, "status: {body}");
        body
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test that panicked never called `stop`; let the server go with it.
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Opens the server state; a server stopped a moment ago may still be
/// releasing the index lock of the same brain, so that is retried.
pub async fn open_state(config: ServerConfig) -> AppState {
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        match AppState::open(config.clone()) {
            Ok(state) => return state,
            Err(error)
                if matches!(
                    error.downcast_ref::<noggin::index::Error>(),
                    Some(noggin::index::Error::Locked(_))
                ) && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("cannot open the server state: {error:#}"),
        }
    }
}

fn json_or_text(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
    }
}

/// The `path` of each hit.
pub fn paths(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["path"].as_str().expect("a hit has a path").to_string())
        .collect()
}

/// The questions a research response answered, in its order.
pub fn answered_questions(body: &Value) -> Vec<&str> {
    body["answered"]
        .as_array()
        .expect("answered")
        .iter()
        .map(|a| a["question"].as_str().unwrap_or_default())
        .collect()
}

/// Asserts that `body` is the API's error shape with a code and a message.
pub fn assert_error_shape(body: &Value, context: &str) {
    let code = body["error"]["code"].as_str().unwrap_or_default();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        !code.is_empty() && !message.is_empty(),
        "{context}: expected {{\"error\": {{\"code\", \"message\"}}}}, got {body}"
    );
}

/// Polls `check` until it returns true; panics after `timeout` naming `what`.
pub async fn wait_until<F, Fut>(timeout: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting until {what}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits for `child` to exit; kills it and fails the test after `deadline`.
pub fn wait_for_exit(
    child: &mut std::process::Child,
    deadline: Duration,
) -> std::process::ExitStatus {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            return status;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("noggin did not exit within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
