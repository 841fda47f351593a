//! MCP through a real client: the official MCP Python SDK (`mcp` on PyPI,
//! installed by `.ci/run`) drives `noggin mcp` over stdio and `/mcp` of a
//! running server over streamable HTTP. `tests/mcp/client.py` lists and
//! calls every tool and checks the results; here we run it and check what
//! it found, plus the HTTP-only rules (token, Origin) with a plain client.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{ServerOptions, TestBrain, TestServer};

/// The Python that has the MCP SDK: `NOGGIN_MCP_PYTHON`, else the venv that
/// `.ci/run` makes in `target/ci-venv`.
fn python() -> PathBuf {
    if let Ok(python) = std::env::var("NOGGIN_MCP_PYTHON") {
        return PathBuf::from(python);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv/bin/python3");
    assert!(
        venv.exists(),
        "the MCP tests need the official MCP Python SDK: run `bash .ci/run` once \
         (it makes target/ci-venv with `pip install mcp`), or set NOGGIN_MCP_PYTHON"
    );
    venv
}

/// Runs the client script; returns what it found, or panics with its stderr.
fn run_client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .expect("the MCP client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the MCP client failed ({}):\n{stderr}\nstdout: {stdout}",
        output.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn assert_found_everything(found: &Value) {
    let tools: Vec<&str> = found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for tool in [
        "analyze_trajectory",
        "context_pack",
        "context_window",
        "read_note",
        "remember",
        "research",
        "search",
        "session_events",
        "sessions",
        "status",
        "working_context",
    ] {
        assert!(tools.contains(&tool), "{tool} in {tools:?}");
    }
    assert!(found["notes"].as_u64().unwrap_or(0) >= 40, "{found}");
    assert!(
        found["saved"]
            .as_str()
            .is_some_and(|p| p.starts_with("Alignment Knowledge/")),
        "{found}"
    );
    // The tool errors say what the HTTP API's 400s say.
    assert_eq!(
        found["empty_query_error"],
        "empty-query: the search query is empty"
    );
    // Arguments that do not fit the input schema: the API's code too.
    assert!(
        found["wrong_type_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("invalid-json: failed to deserialize parameters")),
        "{found}"
    );
    assert_eq!(
        found["too_many_error"],
        "too-many-questions: at most 20 questions per request (got 21)"
    );
    // The working-context tools: the HTTP API's codes, the same core.
    assert_eq!(found["working_context_goal"], "Ship the refund button");
    assert!(
        found["bad_event_error"].as_str().is_some_and(
            |e| e.starts_with("unknown-event-type: event 1 has the unknown type \"nope\"")
        ),
        "{found}"
    );
    assert_eq!(
        found["unknown_session_error"],
        "unknown-session: no session \"never-seen\"; it is created by its first event"
    );
    // A budget out of range is one code, whether too large or negative.
    assert!(
        found["negative_budget_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("invalid-budget: ")),
        "{found}"
    );
    assert!(
        found["trajectory_patterns"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p == "reread-after-compaction")),
        "{found}"
    );
    assert_eq!(
        found["empty_trajectory_error"],
        "empty-trajectory: the trajectory is empty"
    );
    // A trajectory over the server's body limit is analysed (48 calls a
    // copy); one over the trajectory limit is a tool error.
    assert!(
        found["large_trajectory_calls"].as_u64().unwrap_or(0) > 48 * 10,
        "{found}"
    );
    assert!(
        found["huge_trajectory_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("body-too-large")),
        "{found}"
    );
    assert!(found["pack_chars"].as_u64().unwrap_or(0) > 0, "{found}");
    assert!(found["resources"].as_u64().unwrap_or(0) >= 40, "{found}");
}

#[test]
fn mcp_over_stdio_with_the_official_client() {
    let brain = TestBrain::sample();
    let found = run_client(&[
        "stdio",
        env!("CARGO_BIN_EXE_noggin"),
        brain.path().to_str().expect("UTF-8 temp path"),
    ]);
    assert_found_everything(&found);
    assert!(
        brain
            .note("Alignment Knowledge/2026-11-22 Ship the release train.md")
            .exists(),
        "remember over stdio wrote the dated note"
    );
}

/// What no client library would send, written to `noggin mcp` line by
/// line: each request gets the JSON-RPC error that names its mistake, with
/// its id, and the server goes on serving.
#[test]
fn mcp_over_stdio_answers_bad_lines_as_json_rpc_says() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::time::Duration;

    let brain = TestBrain::sample();
    let mut child = Command::new(env!("CARGO_BIN_EXE_noggin"))
        .args(["mcp", "--brain"])
        .arg(brain.path())
        .env("NOGGIN_NO_MODEL", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin mcp");
    let (lines, answers) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("a line of UTF-8");
            let answer = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC: {e}: {line}"));
            if lines.send(answer).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    };
    let next = || {
        answers
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer in time")
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(next()["result"]["serverInfo"]["name"], "noggin");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // Each bad line, then a ping: two answers, in either order (the bad
    // line's answer is not rmcp's), so a line left unanswered would show.
    let cases = [
        ("this is not json", Value::Null, -32700),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":["deploy"]}}"#,
            Value::from(2),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{}}"#,
            Value::from(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"four"}"#,
            Value::from("four"),
            -32600,
        ),
        (r#"{"id":5,"method":"ping"}"#, Value::from(5), -32600),
        (
            r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#,
            Value::Null,
            -32600,
        ),
    ];
    for (n, (line, id, code)) in cases.into_iter().enumerate() {
        send(line);
        let ping = 100 + n;
        send(&format!(
            r#"{{"jsonrpc":"2.0","id":{ping},"method":"ping"}}"#
        ));
        let (first, second) = (next(), next());
        let (answer, pong) = if first["id"] == ping {
            (second, first)
        } else {
            (first, second)
        };
        assert_eq!(answer["jsonrpc"], "2.0", "{line}: {answer}");
        assert_eq!(answer["id"], id, "{line}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
        assert_eq!(pong["id"], ping, "{line}: {pong}");
        assert!(pong["result"].is_object(), "{pong}");
    }
    // A tool noggin does not have is named in the answer.
    send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"serach","arguments":{"q":"deploy"}}}"#,
    );
    let unknown = next();
    assert_eq!(unknown["id"], 8, "{unknown}");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"serach\"")),
        "{unknown}"
    );
    // A notification of any shape is never answered; the tools still work.
    send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#);
    send(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"deploy"}}}"#,
    );
    let found = next();
    assert_eq!(found["id"], 7, "{found}");
    assert_eq!(found["result"]["isError"], false, "{found}");
    assert!(
        found.to_string().contains("Harbor/Runbooks/Deploy.md"),
        "{found}"
    );

    drop(stdin);
    let status = child.wait().expect("noggin mcp ends");
    assert!(status.success(), "{status:?}");
    reader.join().expect("the reader");
    assert!(answers.try_recv().is_err(), "nothing more was answered");
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_with_the_official_client() {
    let brain = TestBrain::sample();
    let token = "mcp-test-token";
    let server = TestServer::start_with(
        &brain,
        ServerOptions {
            token: Some(token.into()),
            ..ServerOptions::default()
        },
    )
    .await;
    let url = format!("{}/mcp", server.base_url);
    let client_url = url.clone();
    let found = tokio::task::spawn_blocking(move || run_client(&["http", &client_url, token]))
        .await
        .expect("the client thread");
    assert_found_everything(&found);
    assert!(found["foreign_origin"].is_string(), "{found}");

    // The same rules as the rest of the API, checked without the SDK.
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}
    });
    let http = reqwest::Client::new();
    let post = |origin: Option<&str>, bearer: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        request.send()
    };
    let no_token = post(None, None).await.expect("response");
    assert_eq!(no_token.status(), StatusCode::UNAUTHORIZED);
    let foreign = post(Some("http://evil.example"), Some(token))
        .await
        .expect("response");
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let body: Value = foreign.json().await.expect("JSON error");
    assert_eq!(body["error"]["code"], "forbidden-origin");
    let own_origin = server.base_url.clone();
    let local = post(Some(&own_origin), Some(token))
        .await
        .expect("response");
    assert_eq!(local.status(), StatusCode::OK);
    // No MCP session is kept: none is handed out, and a tool call is served
    // on its own, so a client that leaves without closing leaves nothing.
    assert!(local.headers().get("mcp-session-id").is_none());
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search", "arguments": {"q": "deploy"}}
    });
    let called = http
        .post(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .bearer_auth(token)
        .json(&call)
        .send()
        .await
        .expect("response");
    assert_eq!(called.status(), StatusCode::OK);
    assert!(called.headers().get("mcp-session-id").is_none());
    let body = called.text().await.expect("body");
    assert!(body.contains("Harbor/Runbooks/Deploy.md"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_refuses_bad_requests_as_the_api_does() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let url = format!("{}/mcp", server.base_url);
    let http = reqwest::Client::new();
    let both = "application/json, text/event-stream";
    let cases = [
        // A body that is no JSON is the caller's mistake in its content,
        // not in its media type.
        (
            http.post(&url)
                .header("Accept", both)
                .header("Content-Type", "application/json")
                .body("{not json"),
            StatusCode::BAD_REQUEST,
            "invalid-json",
        ),
        (
            http.post(&url).header("Accept", both).body("{}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
        ),
        (
            http.post(&url)
                .header("Content-Type", "application/json")
                .body(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#),
            StatusCode::NOT_ACCEPTABLE,
            "not-acceptable",
        ),
        (
            http.get(&url).header("Accept", both),
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
        ),
    ];
    for (request, status, code) in cases {
        let response = request.send().await.expect("response");
        assert_eq!(response.status(), status);
        let content_type = response.headers()[reqwest::header::CONTENT_TYPE].clone();
        assert_eq!(content_type, "application/json", "{code}");
        let allow = response.headers().get(reqwest::header::ALLOW).cloned();
        let body: Value = response.json().await.expect("a JSON error");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        if status == StatusCode::METHOD_NOT_ALLOWED {
            assert_eq!(allow.expect("Allow"), "POST");
        }
    }
    server.stop().await;
}

/// A call whose parameters do not fit its method is invalid params over
/// `/mcp` too, and the transport's own refusals stand before it.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_answers_parameters_that_do_not_fit_as_invalid_params() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let url = format!("{}/mcp", server.base_url);
    let http = reqwest::Client::new();
    let both = "application/json, text/event-stream";
    let misfits = [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":["deploy"]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"path":"a.md"}}"#,
        // Params that are no object: rmcp cannot read the message at all.
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":5}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"search"}"#,
    ];
    for body in misfits {
        let response = http
            .post(&url)
            .header("Accept", both)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("response");
        assert_eq!(response.status(), StatusCode::OK, "{body}");
        assert_eq!(
            response.headers()[reqwest::header::CONTENT_TYPE],
            "application/json"
        );
        let answer: Value = response.json().await.expect("a JSON-RPC answer");
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], 2, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Invalid params of ")),
            "{answer}"
        );
    }
    let refused = http
        .post(&url)
        .header("Content-Type", "application/json")
        .body(misfits[0])
        .send()
        .await
        .expect("response");
    assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
    // A call that fits is served as before.
    let served = http
        .post(&url)
        .header("Accept", both)
        .header("Content-Type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"q":"deploy"}}}"#)
        .send()
        .await
        .expect("response");
    assert_eq!(served.status(), StatusCode::OK);
    let text = served.text().await.expect("body");
    assert!(text.contains("Harbor/Runbooks/Deploy.md"), "{text}");
    server.stop().await;
}

/// A call whose arguments say a key twice is a tool error over `/mcp`, as
/// the HTTP API's 400 for the same body, and runs nothing: a `remember`
/// of two answers under one key writes no note.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_refuses_arguments_that_say_a_key_twice() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let url = format!("{}/mcp", server.base_url);
    let http = reqwest::Client::new();
    let both = "application/json, text/event-stream";
    let twice = r#"{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"remember","arguments":{"prompt":"Pick a colour","qa":[{"question":"Which colour?","answer":"Teal","answer":"Red"}]}}}"#;
    let knowledge = brain.path().join("Alignment Knowledge");
    let notes = || std::fs::read_dir(&knowledge).expect("the folder").count();
    let before = notes();
    let response = http
        .post(&url)
        .header("Accept", both)
        .header("Content-Type", "application/json")
        .body(twice)
        .send()
        .await
        .expect("response");
    assert_eq!(response.status(), StatusCode::OK);
    let answer: Value = response.json().await.expect("a JSON-RPC answer");
    assert_eq!(answer["id"], "r", "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(
        text.starts_with("invalid-json: ") && text.contains("duplicate field `answer`"),
        "{answer}"
    );
    assert_eq!(notes(), before, "no note was written");
    // The HTTP API refuses the same body.
    let api = http
        .post(format!("{}/v1/answers", server.base_url))
        .header("Content-Type", "application/json")
        .body(r#"{"prompt":"Pick a colour","qa":[{"question":"Which colour?","answer":"Teal","answer":"Red"}]}"#)
        .send()
        .await
        .expect("response");
    assert_eq!(api.status(), StatusCode::BAD_REQUEST);
    // The transport's own refusals stand before it.
    let refused = http
        .post(&url)
        .header("Content-Type", "application/json")
        .body(twice)
        .send()
        .await
        .expect("response");
    assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
    server.stop().await;
}
