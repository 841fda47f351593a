//! Working context through the real server: sessions fed with events, the
//! `[working-context]` block within budgets, its ETag, durability across a
//! restart and a `kill -9`, concurrent writers, bad requests, the context
//! pack, the message window and the `noggin context` command.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_error_shape, ServerOptions, TestBrain, TestServer};

async fn post_events(server: &TestServer, session: &str, body: &Value) -> Value {
    let (status, response) = server
        .post_json(&format!("/v1/sessions/{session}/events"), body)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}: {response}");
    response
}

async fn context(server: &TestServer, session: &str, budget: usize) -> Value {
    let (status, body) = server
        .get(&format!("/v1/sessions/{session}/context?budget={budget}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn recent_paths(context: &Value) -> Vec<String> {
    context["working_context"]["recent_files"]
        .as_array()
        .expect("recent files")
        .iter()
        .map(|f| f["path"].as_str().expect("a path").to_string())
        .collect()
}

fn read(path: &str) -> Value {
    json!({"type": "tool_call", "tool": "Read", "arguments": {"path": path}})
}

#[tokio::test]
async fn recent_files_are_a_ring_of_ten_with_repeats_moved_to_the_front() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let events: Vec<Value> = (0..11).map(|i| read(&format!("src/f{i}.rs"))).collect();
    let response = post_events(&server, "ring", &json!(events)).await;
    assert_eq!(response["accepted"], 11);
    let body = context(&server, "ring", 5000).await;
    let paths = recent_paths(&body);
    assert_eq!(paths.len(), 10);
    assert_eq!(paths[0], "src/f10.rs");
    assert!(!paths.contains(&"src/f0.rs".to_string()), "{paths:?}");

    post_events(
        &server,
        "ring",
        &json!({"type": "tool_call", "tool": "Edit", "arguments": {"file_path": "src/f4.rs"}}),
    )
    .await;
    let body = context(&server, "ring", 5000).await;
    let paths = recent_paths(&body);
    assert_eq!(paths.len(), 10);
    assert_eq!(paths[0], "src/f4.rs");
    assert_eq!(paths.iter().filter(|p| *p == "src/f4.rs").count(), 1);
    assert_eq!(body["working_context"]["recent_files"][0]["changed"], true);
    let block = body["block"].as_str().expect("a block");
    assert!(
        block.contains("- src/f4.rs (changed)\n- src/f10.rs"),
        "{block}"
    );
    server.stop().await;
}

#[tokio::test]
async fn file_paths_are_found_under_every_field_name_and_inside_json_strings() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let arguments = [
        json!({"path": "a/path.md"}),
        json!({"file_path": "a/file_path.md"}),
        json!({"filePath": "a/filePath.md"}),
        json!({"file": "a/file.md"}),
        json!({"filename": "a/filename.md"}),
        json!({"fileName": "a/fileName.md"}),
        // OpenAI sends arguments as a JSON string.
        json!("{\"file_path\": \"a/in_string.md\", \"old_string\": \"x\"}"),
        // Nested, and a JSON string inside an object.
        json!({"input": {"filename": "a/nested.md"}}),
        json!({"payload": "{\"target\": {\"fileName\": \"a/deep_string.md\"}}"}),
        // No path at all: nothing recorded.
        json!({"pattern": "TODO"}),
    ];
    let events: Vec<Value> = arguments
        .iter()
        .map(|a| json!({"type": "tool_call", "tool": "some_custom_tool", "arguments": a}))
        .collect();
    post_events(&server, "probe", &json!(events)).await;
    let paths = recent_paths(&context(&server, "probe", 5000).await);
    let expected = [
        "a/deep_string.md",
        "a/nested.md",
        "a/in_string.md",
        "a/fileName.md",
        "a/filename.md",
        "a/file.md",
        "a/filePath.md",
        "a/file_path.md",
        "a/path.md",
    ];
    assert_eq!(paths, expected);
    server.stop().await;
}

#[tokio::test]
async fn paths_with_control_characters_are_dropped_and_reported() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let response = post_events(
        &server,
        "ctl",
        &json!([
            read("ok.rs"),
            read("evil\u{1b}[2J.rs"),
            read("line\nbreak.rs"),
            {"type": "tool_call", "tool": "Read", "arguments": "{\"path\": \"tab\\there.rs\"}"}
        ]),
    )
    .await;
    let notes = response["notes"].as_array().expect("notes");
    let dropped: Vec<u64> = notes
        .iter()
        .filter(|n| n["kind"] == "path-dropped")
        .map(|n| n["event"].as_u64().expect("event number"))
        .collect();
    assert_eq!(dropped, [2, 3, 4], "{response}");
    assert_eq!(
        recent_paths(&context(&server, "ctl", 5000).await),
        ["ok.rs"]
    );
    server.stop().await;
}

#[tokio::test]
async fn the_latest_failure_of_a_kind_supersedes_and_resolved_clears_it() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let long_log = format!(
        "error[E0308]: mismatched types\n{}",
        "  --> src/x.rs:1\n".repeat(300)
    );
    post_events(
        &server,
        "fail",
        &json!([
            {"type": "failure", "kind": "build", "text": "error[E0432]: unresolved import"},
            {"type": "failure", "kind": "test", "text": "test parse_empty failed"},
            {"type": "failure", "kind": "build", "text": long_log},
        ]),
    )
    .await;
    let body = context(&server, "fail", 100_000).await;
    let failures = body["working_context"]["failures"]
        .as_array()
        .expect("failures");
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0]["kind"], "build");
    assert_eq!(
        failures[0]["text"],
        long_log.trim_end(),
        "kept in full, but its trailing line break"
    );
    assert_eq!(failures[0]["superseded"], 1);
    let block = body["block"].as_str().expect("a block");
    assert!(!block.contains("E0432"), "the older build failure is gone");
    assert!(block.contains("E0308") && block.contains("parse_empty"));

    let response = post_events(
        &server,
        "fail",
        &json!({"type": "resolved", "kind": "build"}),
    )
    .await;
    assert!(response["notes"].as_array().expect("notes").is_empty());
    let body = context(&server, "fail", 100_000).await;
    let block = body["block"].as_str().expect("a block");
    assert!(
        !block.contains("E0308") && block.contains("parse_empty"),
        "{block}"
    );
    let response = post_events(
        &server,
        "fail",
        &json!({"type": "resolved", "kind": "build"}),
    )
    .await;
    assert_eq!(response["notes"][0]["kind"], "nothing-to-resolve");
    server.stop().await;
}

#[tokio::test]
async fn every_budget_from_zero_up_is_kept_and_cuts_show_an_ellipsis() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "budget",
        &json!([
            {"type": "user_message", "text": "배포 요일을 노트에서 찾아서 환불 버튼을 추가해 주세요 🚀"},
            {"type": "goal", "text": "환불 버튼 — ship the refund button"},
            {"type": "failure", "kind": "test", "text": "테스트 실패: 환불_금액_검증 expected 10 got 12"},
            read("src/환불.rs"),
            {"type": "progress", "text": "핸들러 작성", "done": true},
            {"type": "progress", "text": "테스트 작성", "done": false},
            {"type": "decision", "text": "금액은 센트 단위 정수로 저장한다"},
        ]),
    )
    .await;
    let full = context(&server, "budget", 100_000).await;
    let full_chars = full["chars"].as_u64().expect("chars") as usize;
    let full_block = full["block"].as_str().expect("a block");
    assert!(full_block.starts_with("[working-context]\nLast user query:"));
    assert!(
        full_block.contains("- [x] 핸들러 작성\n- [ ] 테스트 작성"),
        "{full_block}"
    );
    let names: Vec<&str> = full["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| s["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        &names[..6],
        [
            "last_user_query",
            "goals",
            "failures",
            "recent_files",
            "progress",
            "decisions"
        ]
    );
    let mut cuts_seen = 0;
    for budget in (0..=full_chars + 10).step_by(3) {
        let body = context(&server, "budget", budget).await;
        let chars = body["chars"].as_u64().expect("chars") as usize;
        assert!(chars <= budget, "budget {budget}: {chars} characters");
        match body["block"].as_str() {
            Some(block) => {
                assert_eq!(block.chars().count(), chars);
                assert!(block.ends_with("[/working-context]"));
                let cut = body["sections"]
                    .as_array()
                    .expect("sections")
                    .iter()
                    .any(|s| s["cut"] == true);
                if cut {
                    cuts_seen += 1;
                    assert!(block.contains('…'), "budget {budget}: {block}");
                }
            }
            None => assert!(budget < 80, "budget {budget} holds nothing"),
        }
        let left_out = body["sections"]
            .as_array()
            .expect("sections")
            .iter()
            .any(|s| s["left_out"] == true || s["cut"] == true || s["omitted"].as_u64() > Some(0));
        assert_eq!(left_out, budget < full_chars, "budget {budget}: {body}");
    }
    assert!(cuts_seen > 0, "some budget cuts an item");
    server.stop().await;
}

#[tokio::test]
async fn an_empty_context_renders_no_block_and_unknown_sessions_are_404() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let (status, body) = server.get("/v1/sessions/nobody/context").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "unknown-session");
    // Only a dropped path: the session exists but has nothing to show.
    post_events(&server, "empty", &json!(read("bad\u{7}.rs"))).await;
    let body = context(&server, "empty", 2000).await;
    assert!(body["block"].is_null(), "{body}");
    assert_eq!(body["sections"], json!([]));
    server.stop().await;
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client")
}

#[tokio::test]
async fn the_etag_answers_304_until_something_changes() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(&server, "etag", &json!({"type": "goal", "text": "one"})).await;
    let url = format!("{}/v1/sessions/etag/context?budget=500", server.base_url);
    let http = client();
    let first = http.get(&url).send().await.expect("GET");
    assert_eq!(first.status(), StatusCode::OK);
    let etag = first.headers()[header::ETAG]
        .to_str()
        .expect("ASCII")
        .to_string();
    let body: Value = first.json().await.expect("JSON");
    assert_eq!(body["etag"], etag.as_str());

    let again = http
        .get(&url)
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()[header::ETAG], etag.as_str());
    assert!(again.bytes().await.expect("body").is_empty());

    // Another budget renders another block.
    let other_budget = http
        .get(url.replace("500", "400"))
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(other_budget.status(), StatusCode::OK);

    post_events(
        &server,
        "etag",
        &json!({"type": "goal", "text": "one", "done": true}),
    )
    .await;
    let changed = http
        .get(&url)
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(changed.status(), StatusCode::OK);
    assert_ne!(changed.headers()[header::ETAG], etag.as_str());

    // Deleted and started again: the old tag does not match the new session.
    let (status, _) = server
        .request(Method::DELETE, "/v1/sessions/etag", None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    post_events(&server, "etag", &json!({"type": "goal", "text": "one"})).await;
    let recreated = http
        .get(&url)
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(recreated.status(), StatusCode::OK);
    server.stop().await;
}

/// The list comes a page at a time, newest first, with the number of all;
/// a limit or offset that cannot be read is refused.
#[tokio::test]
async fn sessions_are_listed_a_page_at_a_time() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    for n in 1..=5 {
        post_events(
            &server,
            &format!("run-{n}"),
            &json!({"type": "user_message", "text": format!("task {n}")}),
        )
        .await;
        // Each one updated in a millisecond of its own: newest first.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let ids = |list: &Value| -> Vec<String> {
        list["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .map(|s| s["id"].as_str().expect("id").to_string())
            .collect()
    };
    let (status, all) = server.get("/v1/sessions").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&all), ["run-5", "run-4", "run-3", "run-2", "run-1"]);
    assert_eq!(all["total"], 5);
    let (_, first) = server.get("/v1/sessions?limit=2").await;
    assert_eq!(
        (ids(&first), &first["total"]),
        (vec!["run-5".into(), "run-4".into()], &json!(5))
    );
    let (_, last) = server.get("/v1/sessions?limit=2&offset=4").await;
    assert_eq!(ids(&last), ["run-1"]);
    let (_, past) = server.get("/v1/sessions?offset=9").await;
    assert_eq!((ids(&past).len(), &past["total"]), (0, &json!(5)));
    for (query, code) in [
        ("limit=0", "invalid-limit"),
        ("limit=1001", "invalid-limit"),
        ("limit=ten", "invalid-limit"),
        ("offset=-1", "invalid-offset"),
        ("offset=2.5", "invalid-offset"),
    ] {
        let (status, body) = server.get(&format!("/v1/sessions?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert_error_shape(&body, query);
        assert_eq!(body["error"]["code"], code, "{query}: {body}");
    }
    server.stop().await;
}

#[tokio::test]
async fn sessions_are_listed_deleted_and_survive_a_restart() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "keep",
        &json!({"type": "user_message", "text": "keep me"}),
    )
    .await;
    post_events(
        &server,
        "drop",
        &json!({"type": "decision", "text": "use SQLite"}),
    )
    .await;
    let (_, list) = server.get("/v1/sessions").await;
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["drop", "keep"], "most recently updated first");
    let (status, _) = server
        .request(Method::DELETE, "/v1/sessions/drop", None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = server
        .request(Method::DELETE, "/v1/sessions/drop", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error_shape(&body, "delete twice");
    server.stop().await;

    let server = TestServer::start(&brain).await;
    let body = context(&server, "keep", 1000).await;
    assert!(body["block"].as_str().expect("a block").contains("keep me"));
    let (_, list) = server.get("/v1/sessions").await;
    assert_eq!(list["sessions"].as_array().expect("sessions").len(), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_writers_to_one_session_lose_nothing() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let http = client();
    let url = format!("{}/v1/sessions/crowd/events", server.base_url);
    let mut tasks = Vec::new();
    for i in 0..100usize {
        let (http, url) = (http.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!([
                {"type": "progress", "text": format!("step {i}"), "done": i.is_multiple_of(2)},
                read(&format!("crowd/{i}.rs")),
            ]);
            let response = http.post(url).json(&body).send().await.expect("POST");
            assert_eq!(response.status(), StatusCode::OK);
        }));
    }
    for task in tasks {
        task.await.expect("a writer");
    }
    let body = context(&server, "crowd", 1_000_000).await;
    assert_eq!(body["events"], 200);
    assert_eq!(body["version"], 100);
    let progress = body["working_context"]["progress"]
        .as_array()
        .expect("progress");
    let mut texts: Vec<&str> = progress
        .iter()
        .map(|p| p["text"].as_str().expect("text"))
        .collect();
    texts.sort();
    let mut expected: Vec<String> = (0..100).map(|i| format!("step {i}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
    assert_eq!(recent_paths(&body).len(), 10);
    server.stop().await;
}

#[tokio::test]
async fn bad_requests_get_a_4xx_and_change_nothing() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "strict",
        &json!({"type": "goal", "text": "stay as I am"}),
    )
    .await;
    let before = context(&server, "strict", 5000).await;
    let cases: Vec<(String, StatusCode, &str)> = vec![
        (
            json!({"type": "teleport"}).to_string(),
            StatusCode::BAD_REQUEST,
            "unknown-event-type",
        ),
        (
            json!({"text": "no type"}).to_string(),
            StatusCode::BAD_REQUEST,
            "missing-type",
        ),
        (
            json!({"type": "goal"}).to_string(),
            StatusCode::BAD_REQUEST,
            "missing-field",
        ),
        (
            json!({"type": "failure", "text": "x"}).to_string(),
            StatusCode::BAD_REQUEST,
            "missing-field",
        ),
        (
            json!({"type": "failure", "kind": "lint", "text": "x"}).to_string(),
            StatusCode::BAD_REQUEST,
            "unknown-failure-kind",
        ),
        (
            json!({"type": "tool_call", "arguments": {}}).to_string(),
            StatusCode::BAD_REQUEST,
            "missing-field",
        ),
        (
            json!({"type": "progress", "text": "x", "done": "yes"}).to_string(),
            StatusCode::BAD_REQUEST,
            "wrong-type",
        ),
        // A misspelt optional field is refused, not dropped.
        (
            json!({"type": "goal", "text": "g", "dnoe": true}).to_string(),
            StatusCode::BAD_REQUEST,
            "unknown-field",
        ),
        (
            json!([{"type": "goal", "text": "valid"}, {"type": "nope"}]).to_string(),
            StatusCode::BAD_REQUEST,
            "unknown-event-type",
        ),
        (json!([]).to_string(), StatusCode::BAD_REQUEST, "no-events"),
        (
            "{not json".to_string(),
            StatusCode::BAD_REQUEST,
            "invalid-json",
        ),
        // A key twice is no event of either kind, at the top or inside.
        (
            r#"{"type": "user_message", "text": "ok", "type": "goal"}"#.to_string(),
            StatusCode::BAD_REQUEST,
            "invalid-json",
        ),
        (
            r#"[{"type": "tool_call", "tool": "edit", "arguments": {"path": "a.rs", "path": "b.rs"}}]"#
                .to_string(),
            StatusCode::BAD_REQUEST,
            "invalid-json",
        ),
    ];
    for (body, status, code) in cases {
        let (got, response) = server
            .request(
                Method::POST,
                "/v1/sessions/strict/events",
                Some(body.clone().into()),
            )
            .await;
        let shown: String = body.chars().take(60).collect();
        assert_eq!(got, status, "{shown}: {response}");
        assert_eq!(response["error"]["code"], code, "{shown}: {response}");
        assert_error_shape(&response, &shown);
    }
    let (got, response) = server
        .announce_body("/v1/sessions/strict/events", 2 * 1024 * 1024)
        .await;
    assert_eq!(got, StatusCode::PAYLOAD_TOO_LARGE, "{response}");
    assert_eq!(response["error"]["code"], "body-too-large", "{response}");
    for (path, code) in [
        ("/v1/sessions/strict/context?budget=-1", "invalid-budget"),
        ("/v1/sessions/strict/context?budget=lots", "invalid-budget"),
        (
            "/v1/sessions/strict/context?budget=99999999999",
            "invalid-budget",
        ),
        ("/v1/sessions/bad%0Aid/context", "invalid-session"),
        // " a" would be a second session that looks like "a".
        ("/v1/sessions/%20a/context", "invalid-session"),
        ("/v1/sessions/a%20/context", "invalid-session"),
        // Not UTF-8 once decoded: refused in the API's error shape too.
        ("/v1/sessions/%FF/context", "invalid-session"),
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(body["error"]["code"], code, "{path}");
    }
    let (status, body) = server
        .request(Method::DELETE, "/v1/sessions/%FF", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "invalid-session", "{body}");
    let (status, _) = server
        .post_json(
            "/v1/sessions/bad%0Aid/events",
            &json!({"type": "goal", "text": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let after = context(&server, "strict", 5000).await;
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["working_context"], before["working_context"]);
    let (_, list) = server.get("/v1/sessions").await;
    assert_eq!(list["sessions"].as_array().expect("sessions").len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn research_and_answers_with_a_session_become_part_of_it() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let open = "What colour should the refund button be?";
    let (status, research) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "Add a refund button", "session": "loop",
                    "questions": ["When do we deploy?", open]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{research}");
    let body = context(&server, "loop", 5000).await;
    let questions = &body["working_context"]["open_questions"];
    assert!(
        questions
            .as_array()
            .expect("open")
            .iter()
            .any(|q| q == open),
        "{body}"
    );
    let answer = "Use the brand teal, #0F766E, for every refund button.";
    let (status, saved) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Add a refund button", "session": "loop",
                    "qa": [{"question": open, "answer": answer}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    let body = context(&server, "loop", 5000).await;
    let wc = &body["working_context"];
    assert!(!wc["open_questions"]
        .as_array()
        .expect("open")
        .iter()
        .any(|q| q == open));
    assert_eq!(wc["confirmed"][0]["answer"], answer);
    assert!(body["block"].as_str().expect("block").contains("#0F766E"));
    server.stop().await;
}

#[tokio::test]
async fn the_pack_shows_the_configured_marker() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(
        &brain,
        ServerOptions {
            knowledge: noggin::knowledge::Settings {
                marker: "(자가 조사) ".into(),
                ..noggin::knowledge::Settings::default()
            },
            ..ServerOptions::default()
        },
    )
    .await;
    let (status, body) = server
        .post_json(
            "/v1/context",
            &json!({"prompt": "Ship the refund button", "questions": ["When do we deploy?"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let pack = body["pack"].as_str().expect("a pack");
    assert!(pack.contains("  (자가 조사) "), "{pack}");
    assert!(!pack.contains("(self-research) "), "{pack}");
    server.stop().await;
}

#[tokio::test]
async fn the_pack_holds_facts_context_and_the_whole_query() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "pack",
        &json!([
            {"type": "user_message", "text": "환불 버튼을 추가하고 배포 일정을 맞춰 주세요"},
            {"type": "goal", "text": "refund button live"},
            {"type": "failure", "kind": "build", "text": "error[E0425]: cannot find value `fee`"},
        ]),
    )
    .await;
    let (status, body) = server
        .post_json(
            "/v1/context",
            &json!({"session": "pack", "questions": ["When do we deploy?"], "budget": 4000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let pack = body["pack"].as_str().expect("a pack");
    assert!(pack.chars().count() <= 4000);
    assert!(pack.contains("(self-research) "), "{pack}");
    assert!(pack.contains("E0425") && pack.contains("refund button live"));
    assert!(pack.ends_with(
        "## Last user query\n  환불 버튼을 추가하고 배포 일정을 맞춰 주세요\n[/context-pack]"
    ));
    assert_eq!(body["last_user_query"]["source"], "session");
    assert_eq!(body["last_user_query"]["fits"], true);
    let names: Vec<&str> = body["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names[..2], ["last_user_query", "self_researched_facts"]);
    assert!(names.contains(&"project_context"));
    assert!(body["research_id"].is_string());

    // A budget too small for the query: it stays whole and the pack says so.
    let (status, body) = server
        .post_json("/v1/context", &json!({"session": "pack", "budget": 10}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["pack"]
        .as_str()
        .expect("a pack")
        .contains("환불 버튼을 추가하고 배포 일정을 맞춰 주세요"));
    assert_eq!(body["last_user_query"]["fits"], false);
    assert!(body["warnings"][0]
        .as_str()
        .expect("a warning")
        .contains("cannot hold"));

    for (request, code) in [
        (json!({"budget": 10_000_000}), "invalid-budget"),
        // Not a whole number from 0 up: the same code as out of range.
        (json!({"budget": -1}), "invalid-budget"),
        (json!({"budget": 2.5}), "invalid-budget"),
        (json!({"budget": "lots"}), "invalid-budget"),
        (json!({"questions": [""]}), "empty-question"),
        (json!({"session": "a\u{0}b"}), "invalid-session"),
        (json!({"surprise": 1}), "invalid-json"),
        // A list is not read into the request by position.
        (json!([]), "invalid-json"),
        (
            json!([null, "Ship the refund button", [], 50]),
            "invalid-json",
        ),
    ] {
        let (status, body) = server.post_json("/v1/context", &request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{request}: {body}");
        assert_eq!(body["error"]["code"], code, "{request}");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_window_keeps_the_oldest_request_and_pins_the_working_context() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "win",
        &json!({"type": "goal", "text": "migrate the parser"}),
    )
    .await;
    let mut messages = vec![
        json!({"role": "user", "content": "Migrate the parser to pulldown-cmark and keep every test green."}),
    ];
    for i in 0..25 {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{i}"), "type": "function",
            "function": {"name": "read_file", "arguments": format!("{{\"path\": \"src/p{i}.rs\"}}")}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "x".repeat(400)}));
    }
    while messages.len() < 60 {
        messages.push(json!({"role": "assistant", "content": "Continuing with the next file."}));
    }
    let (status, body) = server
        .post_json(
            "/v1/context/window",
            &json!({"messages": messages, "budget": 1500, "session": "win",
                    "protect": {"working_context": true}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let kept: Vec<u64> = body["kept"]
        .as_array()
        .expect("kept")
        .iter()
        .map(|k| k.as_u64().expect("index"))
        .collect();
    assert_eq!(kept[0], 0, "the user's request is kept");
    assert!(kept.len() < 60);
    assert!(body["tokens"]["used"].as_u64() <= Some(1500));
    assert!(body["estimator"]
        .as_str()
        .expect("estimator")
        .starts_with("noggin-chars-v1"));
    assert!(body["pinned"]["block"]
        .as_str()
        .expect("pinned")
        .contains("migrate the parser"));
    assert!(body.get("pinned_left_out").is_none(), "{body}");
    // A budget too small for any of the block says why nothing is pinned.
    let (_, tiny) = server
        .post_json(
            "/v1/context/window",
            &json!({"messages": messages[..1], "budget": 5, "session": "win",
                    "protect": {"working_context": true}}),
        )
        .await;
    assert!(tiny["pinned"].is_null(), "{tiny}");
    assert_eq!(tiny["pinned_left_out"], "budget", "{tiny}");
    assert!(body["repairs"]
        .as_array()
        .expect("repairs")
        .iter()
        .any(|r| r["kind"] == "kept-latest-user-message"));
    // Every kept call has its result and every result its call.
    let kept_messages = body["messages"].as_array().expect("messages");
    let calls: Vec<&str> = kept_messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    let results: Vec<&str> = kept_messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(calls, results);
    assert_eq!(
        body["dropped"].as_array().expect("dropped").len() + kept.len(),
        60
    );

    for (request, code) in [
        (
            json!({"messages": [{"content": "no role"}], "budget": 10}),
            "invalid-message",
        ),
        (
            json!({"messages": [], "budget": 10, "protect": {"messages": [3]}}),
            "invalid-protect",
        ),
        (
            json!({"messages": [], "budget": 10, "protect": {"working_context": true}}),
            "missing-session",
        ),
        (
            json!({"messages": [], "budget": 100_000_000}),
            "invalid-budget",
        ),
        (json!({"messages": [], "budget": -1}), "invalid-budget"),
        (json!({"messages": [], "budget": null}), "invalid-budget"),
        (json!({"messages": "hi", "budget": 10}), "invalid-json"),
        (
            json!({"messages": [], "budget": 10, "session": " bad"}),
            "invalid-session",
        ),
    ] {
        let (status, body) = server.post_json("/v1/context/window", &request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{request}: {body}");
        assert_eq!(body["error"]["code"], code, "{request}");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_context_command_reads_the_store_beside_a_running_server() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    post_events(
        &server,
        "cli",
        &json!([
            {"type": "user_message", "text": "ship it"},
            {"type": "goal", "text": "release 1.0"},
            // Coloured build output, and a try at retitling the terminal.
            {"type": "failure", "kind": "build", "text": "\u{1b}[1;31merror[E0425]\u{1b}[0m: cannot find value `fee`\u{1b}]0;pwned\u{7}"},
        ]),
    )
    .await;
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_noggin"))
            // The model, when installed, is for the tests that ask for it.
            .env("NOGGIN_NO_MODEL", "1")
            .arg("context")
            .arg("--brain")
            .arg(brain.path())
            .args(args)
            .env("RUST_LOG", "warn")
            .env_remove("NOGGIN_DATA_DIR")
            .output()
            .expect("run noggin context")
    };
    let out = run(&["--session", "cli"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        text.starts_with(
            "[working-context]\nLast user query:\n  ship it\nGoals:\n- [ ] release 1.0\n\
             Latest failures:\n- build: error[E0425]: cannot find value `fee`\n"
        ),
        "{text}"
    );
    let out = run(&["--session", "cli", "--json", "--budget", "0"]);
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(json["block"].is_null());
    assert_eq!(json["version"], 1);
    // Nothing fits: stdout stays empty for a script, stderr says why.
    let out = run(&["--session", "cli", "--budget", "0"]);
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing fits in 0 characters"));
    let out = run(&["--session", "nobody"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"));
    server.stop().await;
    // And with no server running.
    let out = run(&["--session", "cli"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("release 1.0"));
}

/// The real binary, killed with SIGKILL if the test ends early.
struct Server {
    child: Child,
    base_url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_binary(brain: &std::path::Path, http: &reqwest::Client) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_noggin"))
        // The model, when installed, is for the tests that ask for it.
        .env("NOGGIN_NO_MODEL", "1")
        .args(["serve", "--brain"])
        .arg(brain)
        .args(["--addr", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "warn")
        .env_remove("NOGGIN_DATA_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin serve");
    let server = Server {
        child,
        base_url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while http
        .get(format!("{}/healthz", server.base_url))
        .send()
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "noggin did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_during_a_burst_of_events_loses_no_acknowledged_event() {
    const WRITERS: usize = 4;
    const POSTS_PER_WRITER: usize = 25;
    const KILL_AFTER_ACKS: usize = 40;
    let brain = TestBrain::empty();
    let http = client();
    let mut server = start_binary(brain.path(), &http).await;
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (http, url, acknowledged) =
            (http.clone(), server.base_url.clone(), acknowledged.clone());
        writers.push(tokio::spawn(async move {
            for i in 0..POSTS_PER_WRITER {
                let text = format!("burst step {w}-{i}");
                let body = json!({"type": "progress", "text": text});
                match http
                    .post(format!("{url}/v1/sessions/burst/events"))
                    .json(&body)
                    .send()
                    .await
                {
                    Ok(r) if r.status().is_success() => acknowledged.lock().unwrap().push(text),
                    _ => break,
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged.lock().unwrap().len() < KILL_AFTER_ACKS {
        assert!(Instant::now() < deadline, "the burst is too slow");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // SIGKILL: no shutdown code runs.
    server.child.kill().expect("kill noggin");
    server.child.wait().expect("reap noggin");
    for writer in writers {
        writer.await.expect("a writer");
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    drop(server);

    let server = start_binary(brain.path(), &http).await;
    let body: Value = http
        .get(format!(
            "{}/v1/sessions/burst/context?budget=1000000",
            server.base_url
        ))
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    let stored: Vec<&str> = body["working_context"]["progress"]
        .as_array()
        .expect("progress")
        .iter()
        .map(|p| p["text"].as_str().expect("text"))
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|t| !stored.contains(&t.as_str()))
        .collect();
    eprintln!(
        "sessions nothing lost: acknowledged {}, stored {} after the kill",
        acknowledged.len(),
        stored.len()
    );
    assert!(acknowledged.len() >= KILL_AFTER_ACKS);
    assert!(lost.is_empty(), "acknowledged events were lost: {lost:?}");
    assert!(body["events"].as_u64() >= Some(acknowledged.len() as u64));
}
