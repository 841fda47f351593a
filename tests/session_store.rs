//! The session store's file through the real server: what a clean stop
//! leaves in `sessions.sqlite`, and what the store does when that file is
//! deleted, replaced or damaged under it.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{open_state, server_config, ServerOptions, TestBrain};

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
