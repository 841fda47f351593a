//! The session store's file through the real server: what a clean stop
//! leaves in `sessions.sqlite`, and what the store does when that file is
//! deleted, replaced or damaged under it.

use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{
    open_state, server_config, wait_for_exit, ServerOptions, TestBrain, TestServer,
};

/// The session ids in `file` alone, copied without its `-wal` and opened
/// as any SQLite reader would: what a user who backs up the file has.
fn sessions_in_the_file_alone(file: &Path) -> Vec<String> {
    let copy = tempfile::tempdir().expect("a temp dir");
    let alone = copy.path().join("sessions.sqlite");
    std::fs::copy(file, &alone).expect("copy the store's file");
    let conn = rusqlite::Connection::open(&alone).expect("open the copy");
    let mut statement = conn
        .prepare("SELECT id FROM sessions ORDER BY id")
        .expect("the file holds the sessions table");
    let ids = statement
        .query_map([], |row| row.get::<_, String>(0))
        .expect("read the sessions")
        .collect::<Result<Vec<_>, _>>()
        .expect("read the sessions");
    ids
}

/// A clean stop (SIGTERM, Ctrl-C) ends `server::run`; whatever still holds
/// the store then (a thread the process does not wait for) must not keep
/// the sessions out of its file. The store is held here past the stop.
#[tokio::test]
async fn after_a_clean_stop_the_store_file_alone_holds_every_session() {
    let brain = TestBrain::empty();
    let config = server_config(brain.path(), &ServerOptions::default());
    let state = open_state(config).await;
    let still_held = state.sessions.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let base_url = format!("http://{}", listener.local_addr().expect("bound address"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(noggin::server::run(listener, state, async {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client");
    for id in ["first", "second"] {
        let response = http
            .post(format!("{base_url}/v1/sessions/{id}/events"))
            .json(&json!({"type": "goal", "text": "ship it"}))
            .send()
            .await
            .expect("POST events");
        assert_eq!(response.status(), StatusCode::OK);
    }
    stop.send(()).expect("the server is running");
    served
        .await
        .expect("the server task")
        .expect("the server stops cleanly");
    let file = brain.data_dir().join("sessions.sqlite");
    assert_eq!(sessions_in_the_file_alone(&file), ["first", "second"]);
    drop(still_held);
}

/// Overwrites every page of the SQLite file at `file` but the first (its
/// header and schema) with bytes no page holds, as a failing disk or a
/// stray write would; returns the damaged file's bytes.
fn damage_every_page_but_the_first(file: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(file).expect("read the store");
    let page = usize::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    assert!(bytes.len() >= 4 * page, "a store of a few pages to damage");
    let len = bytes.len() - page;
    bytes.splice(page.., noise(0x2545_f491, len));
    std::fs::write(file, &bytes).expect("write the damaged store");
    bytes
}

async fn assert_damaged(server: &TestServer, method: Method, path: &str, body: Option<Value>) {
    let (status, answer) = server
        .request(method, path, body.map(|b| b.to_string().into()))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {answer}");
    assert_eq!(answer["error"]["code"], "session-store-damaged", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("sessions.sqlite")
            && message.contains("move it aside")
            && message.contains("noggin did not change it"),
        "{message}"
    );
}

#[tokio::test]
async fn a_damaged_store_answers_503_and_noggin_writes_nothing_into_it() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let decision = "keep every acknowledged event ".repeat(40);
    for i in 0..20 {
        let body = json!({"type": "decision", "text": decision});
        let (status, answer) = server
            .post_json(&format!("/v1/sessions/run-{i}/events"), &body)
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    server.stop().await;
    let file = brain.data_dir().join("sessions.sqlite");
    let damaged = damage_every_page_but_the_first(&file);

    let server = TestServer::start(&brain).await;
    assert_damaged(&server, Method::GET, "/v1/sessions", None).await;
    assert_store_unhealthy(&server, "move it aside").await;
    assert_damaged(&server, Method::GET, "/v1/sessions/run-1/context", None).await;
    let event = json!({"type": "goal", "text": "write nothing"});
    assert_damaged(
        &server,
        Method::POST,
        "/v1/sessions/run-1/events",
        Some(event),
    )
    .await;
    assert_damaged(&server, Method::DELETE, "/v1/sessions/run-1", None).await;
    server.stop().await;
    assert!(
        std::fs::read(&file).expect("the store is still there") == damaged,
        "noggin changed the damaged store"
    );
}

async fn session_ids(server: &TestServer) -> Vec<String> {
    let (status, list) = server.get("/v1/sessions").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["id"].as_str().expect("an id").to_string())
        .collect()
}

/// Posts a goal to `session` and asserts it was stored.
async fn store_goal(server: &TestServer, session: &str, text: &str) {
    let (status, answer) = server
        .post_json(
            &format!("/v1/sessions/{session}/events"),
            &json!({"type": "goal", "text": text}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[tokio::test]
async fn a_data_folder_deleted_while_serving_is_made_again_and_keeps_what_comes_after() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    store_goal(&server, "before", "forgotten with the folder").await;
    std::fs::remove_dir_all(brain.data_dir()).expect("rm -rf .noggin");

    store_goal(&server, "after", "kept").await;
    assert_eq!(session_ids(&server).await, ["after"]);
    let (status, context) = server.get("/v1/sessions/after/context").await;
    assert_eq!(status, StatusCode::OK, "{context}");
    let status = server.status().await;
    assert!(status["session_store_error"].is_null(), "{status}");
    assert!(
        brain.data_dir().join(".gitignore").is_file(),
        "the folder made again is left out of git, as the index's is"
    );
    server.stop().await;

    let server = TestServer::start(&brain).await;
    assert_eq!(session_ids(&server).await, ["after"]);
    let (status, context) = server.get("/v1/sessions/after/context").await;
    assert_eq!(status, StatusCode::OK, "{context}");
    assert!(
        context["block"]
            .as_str()
            .is_some_and(|b| b.contains("kept")),
        "{context}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_data_folder_replaced_while_serving_is_followed() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    store_goal(&server, "backed-up", "in the backup").await;
    // A backup of the store as it is now, by SQLite, beside the brain.
    let backup = brain.path().join("backup");
    std::fs::create_dir(&backup).expect("make the backup folder");
    rusqlite::Connection::open(brain.data_dir().join("sessions.sqlite"))
        .expect("open the store")
        .execute(
            "VACUUM INTO ?1",
            [backup.join("sessions.sqlite").to_str().expect("UTF-8")],
        )
        .expect("back the store up");
    store_goal(&server, "not-backed-up", "after the backup").await;
    // The backup restored: the folder moved away and the backup in its place.
    std::fs::rename(brain.data_dir(), brain.path().join("moved-away")).expect("move .noggin");
    std::fs::rename(&backup, brain.data_dir()).expect("restore the backup");

    assert_eq!(session_ids(&server).await, ["backed-up"]);
    store_goal(&server, "restored", "into the backup").await;
    server.stop().await;
    let in_file = sessions_in_the_file_alone(&brain.data_dir().join("sessions.sqlite"));
    assert_eq!(in_file, ["backed-up", "restored"]);
}

#[tokio::test]
async fn a_store_that_cannot_be_made_again_answers_503_until_it_can() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    store_goal(&server, "first", "before").await;
    // A file where the data folder was: the store cannot be made there.
    std::fs::remove_dir_all(brain.data_dir()).expect("rm -rf .noggin");
    std::fs::write(brain.data_dir(), "not a folder").expect("a file in its place");

    for (method, path) in [
        (Method::POST, "/v1/sessions/second/events"),
        (Method::GET, "/v1/sessions"),
        (Method::GET, "/v1/sessions/first/context"),
    ] {
        let body = (method == Method::POST).then(|| json!({"type": "goal", "text": "refused"}));
        let (status, answer) = server
            .request(method, path, body.map(|b| b.to_string().into()))
            .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {answer}");
        assert_eq!(
            answer["error"]["code"], "session-store-unavailable",
            "{answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("not a folder") && message.matches("sessions.sqlite").count() == 1,
            "{answer}"
        );
    }
    assert_store_unhealthy(&server, "not a folder").await;

    std::fs::remove_file(brain.data_dir()).expect("remove the file");
    store_goal(&server, "second", "kept").await;
    assert_eq!(session_ids(&server).await, ["second"]);
    let status = server.status().await;
    assert!(status["session_store_error"].is_null(), "{status}");
    server.stop().await;
}

/// `len` bytes that look like nothing, the same for the same `seed`.
fn noise(seed: u32, len: usize) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// 8 KB of bytes that are no SQLite database, at `file`; returns them.
fn write_noise(file: &Path) -> Vec<u8> {
    let bytes = noise(0x9e37_79b9, 8192);
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("make the data folder");
    std::fs::write(file, &bytes).expect("write the noise");
    bytes
}

#[tokio::test]
async fn serve_starts_beside_a_file_that_is_no_store_and_leaves_it_as_it_is() {
    let brain = TestBrain::sample();
    let file = brain.data_dir().join("sessions.sqlite");
    let noise = write_noise(&file);
    let server = TestServer::start(&brain).await;

    assert!(
        !server.search("deploy", &[]).await.is_empty(),
        "search works"
    );
    let (status, research) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "deploy", "questions": ["How do we deploy?"], "session": "run"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "research works: {research}");
    assert_damaged(&server, Method::GET, "/v1/sessions", None).await;
    let event = json!({"type": "goal", "text": "refused"});
    assert_damaged(
        &server,
        Method::POST,
        "/v1/sessions/run/events",
        Some(event),
    )
    .await;
    assert_store_unhealthy(&server, "is not a noggin session store").await;
    assert_eq!(std::fs::read(&file).expect("still there"), noise);

    // Moved aside, the status says so at once (no session request in
    // between), and a new store takes its place without a restart.
    std::fs::rename(&file, brain.data_dir().join("sessions.sqlite.damaged")).expect("move aside");
    let status = server.status().await;
    assert!(status["session_store_error"].is_null(), "{status}");
    assert_eq!(status["healthy"], true, "{status}");
    store_goal(&server, "run", "kept").await;
    assert!(server.status().await["session_store_error"].is_null());
    // A store replaced by another file while serving: the status says so
    // before any session request.
    let other = brain.data_dir().join("other.sqlite");
    write_noise(&other);
    for journal in ["sessions.sqlite-wal", "sessions.sqlite-shm"] {
        let _ = std::fs::remove_file(brain.data_dir().join(journal));
    }
    std::fs::rename(&other, &file).expect("replace the store");
    assert_store_unhealthy(&server, "is not a noggin session store").await;
    server.stop().await;
    let aside = std::fs::read(brain.data_dir().join("sessions.sqlite.damaged"));
    assert_eq!(aside.expect("the file moved aside"), noise);
}

/// A `noggin mcp` of a brain, spoken to in JSON-RPC on its stdin and
/// stdout; killed if a test ends before it.
struct McpChild {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl McpChild {
    /// Starts `noggin mcp` of `brain` and initializes the MCP session.
    fn start(brain: &TestBrain) -> McpChild {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let mut child = Command::new(env!("CARGO_BIN_EXE_noggin"))
            .env("NOGGIN_NO_MODEL", "1")
            .env_remove("NOGGIN_DATA_DIR")
            .env("RUST_LOG", "warn")
            .args(["mcp", "--brain"])
            .arg(brain.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start noggin mcp");
        let stdin = child.stdin.take();
        let (lines_tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        let mut mcp = McpChild {
            child,
            stdin,
            lines,
        };
        mcp.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        );
        let init = mcp.answer_to(1);
        assert!(init["result"].is_object(), "{init}");
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{message}").expect("write to noggin mcp");
    }

    /// Calls a tool and returns the answer.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        self.answer_to(id)
    }

    fn answer_to(&self, id: u64) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("noggin mcp answers");
            let answer: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if answer["id"] == id {
                return answer;
            }
        }
    }

    /// Closes its input and waits for it to end.
    fn end_input(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("noggin mcp ends with its input")
    }

    /// Sends it `signal` and waits for it to end; its input stays open.
    fn end_by(mut self, signal: i32) -> std::process::ExitStatus {
        let pid = self.child.id() as i32;
        // SAFETY: a plain system call on the pid of a child not yet waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal noggin mcp");
        wait_for_exit(&mut self.child, std::time::Duration::from_secs(30))
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `noggin mcp` beside a file that is no store: it starts, its search
/// answers, and `session_events` says what is wrong.
#[test]
fn mcp_starts_beside_a_file_that_is_no_store() {
    let brain = TestBrain::sample();
    let noise = write_noise(&brain.data_dir().join("sessions.sqlite"));
    let mut mcp = McpChild::start(&brain);
    let search = mcp.call(2, "search", json!({"q": "deploy"}));
    assert_ne!(search["result"]["isError"], true, "{search}");
    let found = search["result"]["structuredContent"]["hits"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(found > 0, "{search}");
    let events = mcp.call(
        3,
        "session_events",
        json!({"session": "run", "events": [{"type": "goal", "text": "refused"}]}),
    );
    assert_eq!(events["result"]["isError"], true, "{events}");
    assert!(
        events.to_string().contains("session-store-damaged"),
        "{events}"
    );
    let status = mcp.end_input();
    assert!(status.success(), "{status:?}");
    assert_eq!(
        std::fs::read(brain.data_dir().join("sessions.sqlite")).expect("still there"),
        noise
    );
}

/// An assistant that ends the `noggin mcp` it started with a signal rather
/// than by closing its input: it stops cleanly, and the store's file alone
/// holds the sessions it was told of.
#[test]
fn mcp_ended_by_a_signal_leaves_every_session_in_the_store_file() {
    let signals = [
        (libc::SIGTERM, "terminated"),
        (libc::SIGINT, "interrupted"),
        (libc::SIGHUP, "hung-up"),
    ];
    for (signal, session) in signals {
        let brain = TestBrain::sample();
        let mut mcp = McpChild::start(&brain);
        let events = mcp.call(
            2,
            "session_events",
            json!({"session": session, "events": [{"type": "goal", "text": "ship it"}]}),
        );
        assert_ne!(events["result"]["isError"], true, "{events}");
        let status = mcp.end_by(signal);
        assert!(status.success(), "signal {signal}: {status:?}");
        assert_eq!(
            sessions_in_the_file_alone(&brain.data_dir().join("sessions.sqlite")),
            [session]
        );
    }
}

/// `/v1/status` says noggin is unhealthy, with a session store error that
/// says `says`.
async fn assert_store_unhealthy(server: &TestServer, says: &str) {
    let status = server.status().await;
    assert_eq!(status["healthy"], false, "{status}");
    assert!(
        status["session_store_error"]
            .as_str()
            .is_some_and(|e| e.contains(says)),
        "{status}"
    );
}
