//! The session store's file through the real server: what a clean stop
//! leaves in `sessions.sqlite`, and what the store does when that file is
//! deleted, replaced or damaged under it.

use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{open_state, server_config, ServerOptions, TestBrain, TestServer};

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
    let mut noise: u32 = 0x2545_f491;
    for byte in &mut bytes[page..] {
        noise = noise.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        *byte = (noise >> 24) as u8;
    }
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
    let status = server.status().await;
    assert_eq!(status["healthy"], false, "{status}");
    assert!(
        status["session_store_error"]
            .as_str()
            .is_some_and(|e| e.contains("move it aside")),
        "{status}"
    );
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
