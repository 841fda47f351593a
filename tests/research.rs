//! Self-research over HTTP: answering from the notes with evidence, leaving
//! the rest for the user, the project context, stored answers, bad requests,
//! and the optional LLM decider falling back to the local one.

use std::time::Duration;

use axum::routing::post;
use axum::{Json, Router};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::card::Browser;
use crate::helpers::{assert_error_shape, ServerOptions, TestBrain, TestServer, START_DEADLINE};

async fn research(server: &TestServer, questions: &[&str]) -> Value {
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "", "questions": questions}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn answered<'a>(body: &'a Value, question: &str) -> Option<&'a Value> {
    body["answered"]
        .as_array()?
        .iter()
        .find(|a| a["question"] == question)
}

fn evidence_paths(entry: &Value) -> Vec<String> {
    entry["evidence"]
        .as_array()
        .map(|e| {
            e.iter()
                .map(|x| x["path"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_the_notes_answer_are_answered_from_the_right_note() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let cases = [
        (
            "Who owns the payments service?",
            "People/Jonas Weber.md",
            "Jonas",
        ),
        (
            "Which database do we use?",
            "Harbor/Decisions/ADR-001 PostgreSQL over MongoDB.md",
            "PostgreSQL",
        ),
        ("When do we deploy?", "Harbor/Runbooks/Deploy.md", "Tuesday"),
        (
            "결제 서비스 담당자는 누구인가요?",
            "한국어/팀 소개.md",
            "요나스",
        ),
    ];
    let questions: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let body = research(&server, &questions).await;
    for (question, path, word) in cases {
        let Some(entry) = answered(&body, question) else {
            panic!("{question:?} not answered: {body:#}");
        };
        assert_eq!(evidence_paths(entry)[0], path, "{question}: {entry:#}");
        assert!(
            entry["answer"].as_str().unwrap().contains(word),
            "{question}: {entry:#}"
        );
        assert_eq!(entry["source"], "self-research");
        let confidence = entry["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&confidence), "{entry}");
    }
    assert!(body["research_id"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    assert!(body["took_ms"].is_u64());
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_the_notes_do_not_answer_stay_open_with_weak_evidence() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let questions = [
        "What is the office wifi password?",
        "Which CI provider do we use?",
        "What colour should the login button be?",
    ];
    let body = research(&server, &questions).await;
    assert_eq!(body["answered"], json!([]), "{body:#}");
    let open: Vec<&str> = body["unanswered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["question"].as_str().unwrap())
        .collect();
    assert_eq!(open, questions);
}

#[tokio::test(flavor = "multi_thread")]
async fn evidence_stays_within_its_budget() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let questions: Vec<String> = (0..20)
        .map(|i| format!("How do we handle deploys, payments and bookings in case {i}?"))
        .collect();
    let refs: Vec<&str> = questions.iter().map(String::as_str).collect();
    let body = research(&server, &refs).await;
    let mut total = 0;
    for entry in body["answered"]
        .as_array()
        .unwrap()
        .iter()
        .chain(body["unanswered"].as_array().unwrap())
    {
        let evidence = entry["evidence"].as_array().unwrap();
        assert!(evidence.len() <= 2, "{entry:#}");
        for e in evidence {
            total += e["excerpt"].as_str().unwrap().chars().count();
        }
    }
    assert!(total > 0, "no evidence at all: {body:#}");
    assert!(total <= 4000, "{total} characters of evidence");
    assert_eq!(body["evidence_chars"], total);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_cites_its_note_even_with_no_room_for_excerpts() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        args: ["--evidence-budget-chars", "0"].map(String::from).to_vec(),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let body = research(&server, &["When do we deploy?"]).await;
    let entry = answered(&body, "When do we deploy?").unwrap_or_else(|| panic!("{body:#}"));
    assert!(
        evidence_paths(entry).contains(&"Harbor/Runbooks/Deploy.md".to_string()),
        "{entry:#}"
    );
    for evidence in entry["evidence"].as_array().unwrap() {
        assert_eq!(evidence["excerpt"], "", "{entry:#}");
    }
    assert_eq!(body["evidence_chars"], 0, "{body:#}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn project_context_comes_back_capped_on_a_sentence() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        args: vec!["--project-context-chars".into(), "300".into()],
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let body = research(&server, &["Which database do we use?"]).await;
    let context = body["project_context"].as_str().expect("project context");
    assert!(context.chars().count() <= 300, "{context}");
    assert!(
        context.ends_with(".…") || context.ends_with("…"),
        "{context}"
    );
    assert!(context.contains("Harbor"), "{context}");

    // Sent with the request, it replaces the brain's own.
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({
                "questions": ["Which message queue do we use?"],
                "project_context": "The project is Skiff. Skiff uses NATS JetStream as its message queue."
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["project_context"]
        .as_str()
        .unwrap()
        .starts_with("The project is Skiff."));
    let entry = answered(&body, "Which message queue do we use?").expect("answered");
    assert!(
        entry["answer"].as_str().unwrap().contains("NATS"),
        "{entry}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_context_note_of_a_title_alone_gives_no_project_context() {
    let brain = TestBrain::empty();
    brain.write(
        "Context.md",
        "---\nnoggin: project-context\n---\n# Project context\n",
    );
    brain.write("Deploy.md", "# Deploy\n\nWe deploy on Thursdays.\n");
    let server = TestServer::start(&brain).await;
    let body = research(&server, &["When do we deploy?"]).await;
    assert!(body.get("project_context").is_none(), "{body:#}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn default_project_context_is_at_most_3000_characters() {
    let brain = TestBrain::sample();
    let long = "The marina opens at dawn and closes at dusk every day. ".repeat(100);
    brain.write(
        "Long Context.md",
        &format!("---\nnoggin: project-context\n---\n# Long context\n\n{long}\n"),
    );
    let server = TestServer::start(&brain).await;
    let body = research(&server, &["When does the marina open?"]).await;
    let context = body["project_context"].as_str().expect("project context");
    assert!(
        context.chars().count() <= 3000,
        "{}",
        context.chars().count()
    );
    assert!(context.ends_with('…'));
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_answers_are_found_and_the_newest_wins() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let question = "How much should the cancellation fee be?";
    let body = research(
        &server,
        &[question, "What cancellation fee should we charge?"],
    )
    .await;
    for q in [question, "What cancellation fee should we charge?"] {
        let entry = answered(&body, q).unwrap_or_else(|| panic!("{q}: {body:#}"));
        assert!(
            evidence_paths(entry)[0].starts_with("Alignment Knowledge/"),
            "{entry:#}"
        );
        assert!(entry["answer"].as_str().unwrap().contains("10 euros"));
        assert!(entry.get("superseded").is_none(), "{entry:#}");
    }

    let newer = "Alignment Knowledge/2026-11-20 Revisit the cancellation fee.md";
    brain.write(
        newer,
        "---\ncreated: 2026-11-20\ntags: [alignment-knowledge]\n---\n\
         # Revisit the cancellation fee\n\n## Confirmed information\n\
         ### Q. How much should the cancellation fee be?\n\
         A flat 20 percent of the booking total, no minimum.\n",
    );
    let s = &server;
    crate::helpers::wait_until(
        crate::helpers::CHANGE_DEADLINE,
        "the newer answer is indexed",
        || async move {
            let body = research(s, &[question]).await;
            answered(&body, question)
                .is_some_and(|a| a["answer"].as_str().unwrap().contains("20 percent"))
        },
    )
    .await;
    let body = research(&server, &[question]).await;
    let entry = answered(&body, question).unwrap();
    assert_eq!(evidence_paths(entry)[0], newer);
    let superseded = entry["superseded"].as_array().expect("superseded");
    assert_eq!(superseded.len(), 1, "{entry:#}");
    assert!(superseded[0]["path"]
        .as_str()
        .unwrap()
        .starts_with("Alignment Knowledge/2026-11-02"));
    assert!(superseded[0]["answer"]
        .as_str()
        .unwrap()
        .contains("10 euros"));
}

/// A note whose status says it no longer holds is searched but never
/// answered from: the question is answered from the note that holds, or
/// left open.
#[tokio::test(flavor = "multi_thread")]
async fn a_superseded_note_is_never_the_answer() {
    let brain = TestBrain::empty();
    brain.write(
        "Decisions/Deploy on Thursdays.md",
        "---\nstatus: superseded\n---\n# Deploy on Thursdays\n\nWe deploy Lumen to production every Thursday at 10:00.\n",
    );
    brain.write(
        "Decisions/Cache in Redis.md",
        "---\nstatus: Deprecated\n---\n# Cache in Redis\n\nThe session cache runs on Redis 6.\n",
    );
    let server = TestServer::start(&brain).await;
    let body = research(
        &server,
        &[
            "Which day do we deploy Lumen to production?",
            "What does the session cache run on?",
        ],
    )
    .await;
    assert_eq!(body["answered"], json!([]), "{body}");
    // Still found by search.
    let hits = server.search("thursday deploy", &[]).await;
    assert_eq!(
        hits[0]["path"], "Decisions/Deploy on Thursdays.md",
        "{hits:?}"
    );
    brain.write(
        "Decisions/Deploy on Tuesdays.md",
        "# Deploy on Tuesdays\n\nWe deploy Lumen to production every Tuesday at 15:00.\n",
    );
    let mut answered = None;
    for _ in 0..50 {
        let body = research(&server, &["Which day do we deploy Lumen to production?"]).await;
        if let Some(a) = answered_of(&body) {
            answered = Some(a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let answer = answered.expect("answered once the new note is indexed");
    assert!(answer.contains("Tuesday"), "{answer}");
}

fn answered_of(body: &Value) -> Option<String> {
    body["answered"][0]["answer"].as_str().map(str::to_string)
}

/// An answer from a code block keeps the block's lines: a command of
/// several lines comes back as it runs, and so does the search snippet.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_from_a_code_block_keeps_its_lines() {
    let brain = TestBrain::empty();
    brain.write(
        "Deploy steps.md",
        "# Deploy steps\n\nTo deploy the app run:\n\n```bash\ncd /srv/app\ngit pull\nsystemctl restart app\n```\n",
    );
    let server = TestServer::start(&brain).await;
    let body = research(&server, &["How do I deploy the app?"]).await;
    let answer = answered(&body, "How do I deploy the app?").expect("answered");
    assert!(
        answer["answer"]
            .as_str()
            .is_some_and(|a| a.contains("cd /srv/app\ngit pull\nsystemctl restart app")),
        "{answer}"
    );
    let (status, hits) = server.get("/v1/search?q=systemctl").await;
    assert_eq!(status, StatusCode::OK, "{hits}");
    assert!(
        hits["hits"][0]["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("git pull\n<mark>systemctl</mark> restart app")),
        "{hits}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_brain_leaves_everything_unanswered() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let body = research(&server, &["When do we deploy?", "배포는 언제 하나요?"]).await;
    assert_eq!(body["answered"], json!([]));
    assert_eq!(body["unanswered"].as_array().unwrap().len(), 2);
    assert!(body.get("project_context").is_none(), "{body}");
    assert_eq!(body["evidence_chars"], 0);
}

/// A research while the first index of a new brain is being built says so,
/// and so do search and the card: what it leaves open is provisional, not
/// "not in your notes". Once indexing is done the same question is answered.
#[tokio::test(flavor = "multi_thread")]
async fn research_during_the_first_index_says_the_index_is_not_done() {
    let brain = TestBrain::empty();
    // Enough notes that indexing them takes far longer than one request.
    for i in 0..5000 {
        brain.write(
            &format!("Archive/{:02}/Log {i}.md", i % 50),
            &format!("# Log {i}\n\nEntry {i} of the archive, kept for the record.\n"),
        );
    }
    brain.write(
        "Harbor/Payments.md",
        "# Payments\n\nThe payments service is owned by Jonas Weber.\n",
    );
    let server = TestServer::launch(&brain, ServerOptions::default()).await;
    let question = "Who owns the payments service?";
    let mut provisional = 0;
    let started = std::time::Instant::now();
    loop {
        assert!(
            started.elapsed() < START_DEADLINE,
            "the first index never finished"
        );
        // The first research in a session of its own, for the card below.
        let session = if provisional == 0 { "first" } else { "later" };
        let (status, body) = server
            .post_json(
                "/v1/research",
                &json!({"questions": [question], "session": session}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let indexing = body["indexing"]
            .as_bool()
            .unwrap_or_else(|| panic!("research says whether it was indexing: {body}"));
        let (_, card) = server.get("/v1/card").await;
        assert_eq!(card["research"]["indexing"], indexing, "{card}");
        let (status, search) = server.get("/v1/search?q=payments").await;
        assert_eq!(status, StatusCode::OK, "{search}");
        assert!(search["indexing"].is_boolean(), "{search}");
        // Only a research during indexing leaves this question open, and
        // the context pack then says why.
        let (status, pack) = server
            .post_json("/v1/context", &json!({"questions": [question]}))
            .await;
        assert_eq!(status, StatusCode::OK, "{pack}");
        if pack["unanswered"] == json!([question]) {
            assert!(
                pack["warnings"].to_string().contains("still indexing"),
                "{pack}"
            );
        }
        if !indexing {
            let found = answered(&body, question)
                .unwrap_or_else(|| panic!("left open by a finished index: {body}"));
            assert!(
                found["answer"].as_str().unwrap().contains("Jonas Weber"),
                "{found}"
            );
            break;
        }
        provisional += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        provisional > 0,
        "the first research came after 5,001 notes were indexed"
    );

    // The card of the first research tells its reader; the last one's not.
    let browser = Browser::start().await;
    let indexing_line = "const e = document.querySelector('#research .indexing'); \
                         return e ? e.textContent : null;";
    for (session, shown) in [("first", true), ("later", false)] {
        browser
            .client()
            .goto(&format!("{}/?session={session}", server.base_url))
            .await
            .expect("open the card");
        browser
            .wait_for_js(
                "the research is shown",
                "return !!document.querySelector('#research .panel.open');",
            )
            .await;
        let line = browser.js(indexing_line).await;
        assert_eq!(line.is_string(), shown, "{session}: {line}");
        if shown {
            assert!(line.as_str().unwrap().contains("still indexing"), "{line}");
        }
    }
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_research_requests_are_refused() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let long = "x".repeat(501);
    let many: Vec<String> = (0..21).map(|i| format!("question {i}?")).collect();
    let cases = [
        (json!({"questions": []}), "no-questions"),
        (json!({"prompt": "p"}), "invalid-json"),
        (json!({"questions": many}), "too-many-questions"),
        (json!({"questions": [long]}), "question-too-long"),
        (json!({"questions": ["two\nlines?"]}), "control-character"),
        (json!({"questions": ["  "]}), "empty-question"),
        (
            json!({"questions": ["ok?"], "prompt": "p".repeat(20_001)}),
            "prompt-too-long",
        ),
        (json!({"questions": "not a list"}), "invalid-json"),
        (json!([["ok?"]]), "invalid-json"),
        (
            json!({"questions": ["ok?"], "session": ""}),
            "invalid-session",
        ),
    ];
    for (body, code) in cases {
        let (status, reply) = server.post_json("/v1/research", &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {reply}");
        assert_error_shape(&reply, "research");
        if code != "invalid-json" {
            assert_eq!(reply["error"]["code"], code, "{reply}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn optional_research_fields_may_be_null() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, reply) = server
        .post_json(
            "/v1/research",
            &json!({
                "prompt": null,
                "questions": ["When do we deploy?"],
                "session": null,
                "project_context": null,
            }),
        )
        .await;
    server.stop().await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert!(reply["answered"][0]["answer"]
        .as_str()
        .is_some_and(|a| a.contains("Tuesday")));
}

/// How the fake LLM endpoint behaves.
#[derive(Clone, Copy)]
enum Llm {
    /// Answers question 1 from evidence E1.1, in a code fence with a
    /// trailing comma.
    Good,
    /// Replies 200 with prose and no JSON.
    Garbage,
    /// Replies after 3 s (the server is told to wait 300 ms).
    Slow,
    /// Replies 500.
    Failing,
}

/// An OpenAI-compatible `/v1/chat/completions` on a free port.
async fn fake_llm(mode: Llm) -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |Json(request): Json<Value>| async move {
            assert!(request["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("[E1.1]"));
            let content = match mode {
                Llm::Good => {
                    "Here you go:\n```json\n{\"answers\": [{\"id\": 1, \"answered\": true, \
                     \"answer\": \"Jonas Weber owns payments.\", \"confidence\": 0.93, \
                     \"citations\": [\"E1.1\"],}]}\n```"
                        .to_string()
                }
                Llm::Garbage => "I am sorry, I cannot help with that.".to_string(),
                Llm::Slow => {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    "{\"answers\": []}".to_string()
                }
                Llm::Failing => {
                    return (
                        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        Json(json!({"error": "boom"})),
                    )
                }
            };
            (
                axum::http::StatusCode::OK,
                Json(json!({"choices": [{"message": {"role": "assistant", "content": content}}]})),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/v1")
}

async fn server_with_llm(brain: &TestBrain, url: &str) -> TestServer {
    let options = ServerOptions {
        args: vec![
            "--llm-url".into(),
            url.into(),
            "--llm-timeout-ms".into(),
            "300".into(),
        ],
        ..ServerOptions::default()
    };
    TestServer::start_with(brain, options).await
}

const OWNER: &str = "Who owns the payments service?";
const WIFI: &str = "What is the office wifi password?";

#[tokio::test(flavor = "multi_thread")]
async fn the_llm_decides_when_it_answers_with_citations() {
    let brain = TestBrain::sample();
    let server = server_with_llm(&brain, &fake_llm(Llm::Good).await).await;
    let body = research(&server, &[OWNER, WIFI]).await;
    let entry = answered(&body, OWNER).expect("answered");
    assert_eq!(entry["answer"], "Jonas Weber owns payments.");
    assert!((entry["confidence"].as_f64().unwrap() - 0.93).abs() < 1e-3);
    assert_eq!(evidence_paths(entry)[0], "People/Jonas Weber.md");
    // The model said nothing about the wifi: the local decider's "open" stands.
    assert!(answered(&body, WIFI).is_none(), "{body:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_decider_takes_over_when_the_llm_fails() {
    let brain = TestBrain::sample();
    let closed = {
        // A port that was free a moment ago: nothing listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    for url in [
        closed,
        fake_llm(Llm::Garbage).await,
        fake_llm(Llm::Slow).await,
        fake_llm(Llm::Failing).await,
    ] {
        let server = server_with_llm(&brain, &url).await;
        let body = research(&server, &[OWNER, WIFI]).await;
        let entry = answered(&body, OWNER).unwrap_or_else(|| panic!("{url}: {body:#}"));
        assert!(
            entry["answer"].as_str().unwrap().contains("Jonas"),
            "{url}: {entry}"
        );
        assert!(answered(&body, WIFI).is_none(), "{url}: {body:#}");
        server.stop().await;
    }
}
