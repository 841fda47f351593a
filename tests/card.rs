//! The web card: `GET /v1/card` and its event stream, notes as JSON and as
//! rendered pages (escaped, confined to the brain), the static files and
//! their security headers, the token, and the card itself driven in headless
//! Chromium.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use noggin::limits::CARD_SESSIONS;
use reqwest::{header, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{
    assert_error_shape, wait_until, ServerOptions, TestBrain, TestServer, CHANGE_DEADLINE,
};

/// A note whose answer is longer than the card shows.
const BACKUPS_NOTE: &str = "Harbor/Runbooks/Backups.md";
const BACKUPS: &str = "# Backups\n\n## Schedule\nWe back up the production database every night \
    at 02:00 UTC with pgBackRest to an encrypted bucket in Frankfurt, keep thirty daily and \
    twelve monthly snapshots, and rehearse a full restore on the first Monday of every month.\n";
const LONG_QUESTION: &str = "When do we back up the production database?";

/// The questions of a research that fills the card: answered ones (one of
/// them long) and one the notes cannot answer.
const QUESTIONS: [&str; 5] = [
    "When do we deploy?",
    LONG_QUESTION,
    "Which database do we use?",
    "Who owns the payments service?",
    "What color should the login button be?",
];
const OPEN_QUESTION: &str = "What color should the login button be?";

/// The sample brain with the long-answer note.
fn brain() -> TestBrain {
    let brain = TestBrain::sample();
    brain.write(BACKUPS_NOTE, BACKUPS);
    brain
}

async fn research(server: &TestServer, session: &str, questions: &[&str]) -> Value {
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "Add a cancellation fee to transient bookings", "session": session, "questions": questions}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn card(server: &TestServer, query: &str) -> Value {
    let (status, body) = server.get(&format!("/v1/card{query}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// A plain GET whose headers and body the test can look at.
async fn fetch(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("build an HTTP client");
    let mut request = client.get(format!("{}{path}", server.base_url));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("send a request")
}

/// A GET sent byte for byte, so that `..` and odd encodings reach the server
/// as written (HTTP clients normalize them away).
async fn raw_get(server: &TestServer, path: &str) -> (u16, String) {
    let addr = server.base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the server");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send the request");
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .await
        .expect("read the response");
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"));
    (status, response)
}

/// An address nothing serves is a page for a browser, a JSON error for
/// the API's clients.
#[tokio::test(flavor = "multi_thread")]
async fn a_mistyped_address_is_a_page_in_a_browser() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    for path in ["/foo", "/notes/", "/v2/search"] {
        let page = fetch(&server, path, &[("accept", "text/html,*/*;q=0.8")]).await;
        assert_eq!(page.status(), StatusCode::NOT_FOUND, "{path}");
        let kind = page.headers()["content-type"].to_str().unwrap().to_string();
        let body = page.text().await.unwrap();
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        assert!(
            body.contains("Nothing here") && body.contains("href=\"/\""),
            "{path}: {body}"
        );
        let api = fetch(&server, path, &[]).await;
        assert_eq!(api.status(), StatusCode::NOT_FOUND, "{path}");
        let error: Value = api.json().await.expect("a JSON error");
        assert_eq!(error["error"]["code"], "not-found", "{path}: {error}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_is_empty_until_a_research_arrives() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let body = card(&server, "").await;
    assert_eq!(body["research"], Value::Null, "{body}");
    assert_eq!(body["sessions"], json!([]));
    assert_eq!(body["marker"], "(self-research) ");
    assert_eq!(body["max_facts"], 3);
    assert_eq!(body["answer_chars"], 150);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_shows_a_few_facts_cut_short_with_their_sources() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    let response = research(&server, "editor", &QUESTIONS).await;
    let answered = response["answered"].as_array().expect("answered").len();
    assert!(answered >= 4, "the sample brain answers these: {response}");

    let body = card(&server, "").await;
    let shown = &body["research"];
    assert_eq!(shown["research_id"], response["research_id"]);
    assert_eq!(shown["session"], "editor");
    let facts = shown["facts"].as_array().expect("facts");
    assert_eq!(facts.len(), 3, "{body}");
    assert_eq!(shown["more_facts"], answered - 3);
    // The rest are there for the card to open, in the order asked.
    let more = shown["more"].as_array().expect("more");
    assert_eq!(more.len(), answered - 3);
    let asked_after: Vec<&Value> = response["answered"].as_array().unwrap()[3..]
        .iter()
        .map(|a| &a["question"])
        .collect();
    assert_eq!(
        more.iter().map(|f| &f["question"]).collect::<Vec<_>>(),
        asked_after
    );
    for fact in facts.iter().chain(more) {
        let answer = fact["answer"].as_str().expect("answer");
        assert!(answer.chars().count() <= 150, "{answer}");
        assert_eq!(fact["text"], format!("(self-research) {answer}"));
        assert_eq!(fact["source"], "self-research");
        let sources = fact["sources"].as_array().expect("sources");
        assert!(!sources.is_empty(), "{fact}");
        for source in sources {
            let link = source["link"].as_str().expect("a note's source has a link");
            assert!(link.starts_with("/notes/"), "{link}");
            assert!(source["title"].is_string() && source["heading"].is_string());
        }
    }
    let long = facts
        .iter()
        .find(|f| f["question"] == LONG_QUESTION)
        .unwrap_or_else(|| panic!("{LONG_QUESTION:?} is answered: {body}"));
    let answer = long["answer"].as_str().expect("answer");
    assert_eq!(long["cut"], true);
    assert!(
        answer.ends_with('…') && answer.starts_with("We back up"),
        "{answer}"
    );
    assert!(!answer.ends_with(" …"), "cut on a word: {answer}");
    // A fact names the note its answer comes from, not every note read
    // for it (research's evidence still lists them all).
    assert_eq!(
        long["sources"],
        json!([{"path": "Harbor/Runbooks/Backups.md", "title": long["sources"][0]["title"],
                "heading": long["sources"][0]["heading"], "link": "/notes/Harbor/Runbooks/Backups.md"}]),
        "{long}"
    );
    let evidence = response["answered"]
        .as_array()
        .expect("answered")
        .iter()
        .find(|a| a["question"] == LONG_QUESTION)
        .map(|a| a["evidence"].as_array().expect("evidence").len());
    assert!(evidence > Some(1), "{response}");
    let open: Vec<&Value> = shown["open"]
        .as_array()
        .expect("open")
        .iter()
        .map(|q| &q["question"])
        .collect();
    assert_eq!(open, [OPEN_QUESTION]);

    // Each session keeps its own latest research; without one, the newest wins.
    let other = research(&server, "terminal", &["Which database do we use?"]).await;
    assert_eq!(
        card(&server, "").await["research"]["research_id"],
        other["research_id"]
    );
    let editor = card(&server, "?session=editor").await;
    assert_eq!(editor["research"]["research_id"], response["research_id"]);
    assert_eq!(editor["session"], "editor");
    assert_eq!(editor["sessions"], json!(["terminal", "editor"]));
    let unknown = card(&server, "?session=nobody").await;
    assert_eq!(unknown["research"], Value::Null);

    // Refused as every other place that takes a session refuses it.
    let too_long = format!("?session={}", "x".repeat(201));
    for query in [
        too_long.as_str(),
        "?session=%00",
        "?session=a%0Ab",
        "?session=%20",
    ] {
        for route in ["/v1/card", "/v1/card/events"] {
            let (status, body) = server.get(&format!("{route}{query}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{route}{query}: {body}");
            assert_eq!(body["error"]["code"], "invalid-session", "{body}");
            assert_error_shape(&body, query);
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_follows_its_settings() {
    let brain = brain();
    let options = ServerOptions {
        args: ["--card-facts", "2", "--card-answer-chars", "40"]
            .map(String::from)
            .to_vec(),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    research(&server, "editor", &QUESTIONS).await;
    let body = card(&server, "").await;
    assert_eq!(
        (body["max_facts"].clone(), body["answer_chars"].clone()),
        (json!(2), json!(40))
    );
    let facts = body["research"]["facts"].as_array().expect("facts");
    assert_eq!(facts.len(), 2, "{body}");
    for fact in facts {
        let answer = fact["answer"].as_str().expect("answer");
        assert!(answer.chars().count() <= 40, "{answer}");
        assert_eq!(fact["cut"], answer.ends_with('…'), "{fact}");
    }
    server.stop().await;
}

/// Reads server-sent events until one of type `card` satisfies `wanted`.
async fn next_card(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + CHANGE_DEADLINE;
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if block.lines().any(|l| l == "event: card") {
                let card: Value = serde_json::from_str(&data.join("\n")).expect("card JSON");
                if wanted(&card) {
                    return card;
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, response.chunk())
            .await
            .expect("a card event before the deadline")
            .expect("read the event stream")
            .expect("the event stream stays open");
        buffer.push_str(std::str::from_utf8(&chunk).expect("events are UTF-8"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn card_events_arrive_with_every_research() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let mut events = fetch(&server, "/v1/card/events", &[]).await;
    assert_eq!(events.status(), StatusCode::OK);
    assert_eq!(events.headers()[header::CONTENT_TYPE], "text/event-stream");
    let mut buffer = String::new();
    let first = next_card(&mut events, &mut buffer, |_| true).await;
    assert_eq!(first["research"], Value::Null, "the card as it is now");

    // The card as it is is sent once: nothing more comes until a change.
    let again = tokio::time::timeout(
        Duration::from_millis(500),
        next_card(&mut events, &mut buffer, |_| true),
    )
    .await;
    assert!(again.is_err(), "the same card again: {again:?}");

    let posted = research(&server, "s1", &["Which database do we use?"]).await;
    let card = next_card(&mut events, &mut buffer, |c| !c["research"].is_null()).await;
    assert_eq!(card["research"]["research_id"], posted["research_id"]);
    let posted = research(&server, "s2", &["When do we deploy?"]).await;
    let card = next_card(&mut events, &mut buffer, |c| {
        c["research"]["research_id"] == posted["research_id"]
    })
    .await;
    assert_eq!(card["sessions"], json!(["s2", "s1"]));

    // Open event streams do not hold up a graceful shutdown.
    tokio::time::timeout(Duration::from_secs(10), server.stop())
        .await
        .expect("the server stops with an event stream open");
}

/// The questions a card shows as still open.
fn open_questions(card: &Value) -> Vec<&str> {
    card["research"]["open"]
        .as_array()
        .unwrap_or_else(|| panic!("open questions: {card}"))
        .iter()
        .filter_map(|q| q["question"].as_str())
        .collect()
}

const VPN_QUESTION: &str = "What is the guest VPN server name?";

#[tokio::test(flavor = "multi_thread")]
async fn a_question_the_user_answered_leaves_the_card() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "Laptop setup", "session": "s3", "questions": [VPN_QUESTION, OPEN_QUESTION]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut events = fetch(&server, "/v1/card/events?session=s3", &[]).await;
    let mut buffer = String::new();
    let first = next_card(&mut events, &mut buffer, |c| !c["research"].is_null()).await;
    assert_eq!(open_questions(&first), [VPN_QUESTION, OPEN_QUESTION]);

    // Answered in the session: gone from its card, at once and after a reload.
    let answer = |session: Option<&str>, question: &str| {
        json!({"prompt": "Laptop setup", "session": session, "qa": [{
            "question": question,
            "answer": "It is guest-vpn.example.net, on port 1194 over UDP."}]})
    };
    let (status, saved) = server
        .post_json("/v1/answers", &answer(Some("s3"), VPN_QUESTION))
        .await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    assert_eq!(saved["saved"][0]["questions"], json!([VPN_QUESTION]));
    let live = next_card(&mut events, &mut buffer, |c| {
        !open_questions(c).contains(&VPN_QUESTION)
    })
    .await;
    assert_eq!(open_questions(&live), [OPEN_QUESTION]);
    assert_eq!(live["research"]["answered_by_user"], json!([VPN_QUESTION]));
    // The session's panel lists what the user confirmed.
    let panel = card(&server, "?session=s3").await;
    assert_eq!(
        panel["working_context"]["confirmed"][0]["question"], VPN_QUESTION,
        "{panel}"
    );
    for query in ["?session=s3", ""] {
        assert_eq!(
            open_questions(&card(&server, query).await),
            [OPEN_QUESTION],
            "{query}"
        );
    }

    // An answer of another session leaves this one's questions alone; one
    // without a session is for the latest research of all.
    let (status, _) = server
        .post_json("/v1/answers", &answer(Some("s4"), OPEN_QUESTION))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(open_questions(&card(&server, "").await), [OPEN_QUESTION]);
    let (status, _) = server
        .post_json("/v1/answers", &answer(None, OPEN_QUESTION))
        .await;
    assert_eq!(status, StatusCode::OK);
    let live = next_card(&mut events, &mut buffer, |c| open_questions(c).is_empty()).await;
    assert_eq!(
        live["research"]["answered_by_user"],
        json!([VPN_QUESTION, OPEN_QUESTION])
    );
    drop(events);
    server.stop().await;
}

/// The card keeps research in memory; after a restart a session's open
/// questions, which its store keeps, are shown with its working context.
#[tokio::test(flavor = "multi_thread")]
async fn open_questions_outlive_a_restart_on_the_card() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    research(&server, "ops-q", &["What colour should the new logo be?"]).await;
    let shown = card(&server, "?session=ops-q").await;
    // With the research in memory, its open questions are shown with it.
    assert!(shown.get("working_context").is_none(), "{shown}");
    server.stop().await;
    let server = TestServer::start(&brain).await;
    let shown = card(&server, "?session=ops-q").await;
    assert_eq!(shown["research"], Value::Null, "{shown}");
    assert_eq!(
        shown["working_context"]["open_questions"],
        json!(["What colour should the new logo be?"]),
        "{shown}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_session_leaves_the_card() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    research(&server, "s1", &["Which database do we use?"]).await;
    let (status, _) = server
        .post_json("/v1/sessions/s3/events", &working_events())
        .await;
    assert_eq!(status, StatusCode::OK);
    let posted = research(&server, "s3", &["When do we deploy?"]).await;
    let mut events = fetch(&server, "/v1/card/events", &[]).await;
    let mut buffer = String::new();
    let first = next_card(&mut events, &mut buffer, |_| true).await;
    assert_eq!(first["research"]["research_id"], posted["research_id"]);
    assert_eq!(first["sessions"], json!(["s3", "s1"]));

    let (status, _) = server
        .request(reqwest::Method::DELETE, "/v1/sessions/s3", None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Gone at once from the live card: the latest of all is s1's again.
    let live = next_card(&mut events, &mut buffer, |c| c["sessions"] == json!(["s1"])).await;
    assert_eq!(live["research"]["session"], "s1", "{live}");
    let s3 = card(&server, "?session=s3").await;
    assert_eq!(s3["research"], Value::Null, "{s3}");
    assert!(s3.get("working_context").is_none(), "{s3}");
    assert_eq!(s3["sessions"], json!(["s1"]));
    assert_eq!(s3["session_found"], false, "{s3}");
    assert_eq!(card(&server, "?session=s1").await["session_found"], true);
    assert_eq!(card(&server, "?session=typo").await["session_found"], false);
    assert_eq!(card(&server, "").await["research"]["session"], "s1");

    // A new research of the same name is a new session, shown again.
    let again = research(&server, "s3", &["When do we deploy?"]).await;
    let live = next_card(&mut events, &mut buffer, |c| {
        c["research"]["research_id"] == again["research_id"]
    })
    .await;
    assert_eq!(live["sessions"], json!(["s3", "s1"]));
    drop(events);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_comes_with_its_source_and_metadata() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, note) = server.get("/v1/notes/Harbor/Runbooks/Deploy.md").await;
    assert_eq!(status, StatusCode::OK, "{note}");
    assert_eq!(note["path"], "Harbor/Runbooks/Deploy.md");
    assert_eq!(note["title"], "Deploy");
    assert_eq!(note["link"], "/notes/Harbor/Runbooks/Deploy.md");
    assert!(note["tags"]
        .as_array()
        .is_some_and(|t| t.contains(&json!("runbook"))));
    assert!(note["modified"].as_str().is_some_and(|m| m.ends_with('Z')));
    assert_eq!(note["source"], brain.read("Harbor/Runbooks/Deploy.md"));

    let (status, note) = server
        .get("/v1/notes/%ED%95%9C%EA%B5%AD%EC%96%B4/%EB%B0%B0%ED%8F%AC%20%EC%A0%88%EC%B0%A8.md")
        .await;
    assert_eq!(status, StatusCode::OK, "a Korean path: {note}");
    assert_eq!(note["path"], "한국어/배포 절차.md");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn only_notes_inside_the_brain_are_served() {
    let brain = TestBrain::sample();
    let outside = tempfile::tempdir().expect("a temp dir");
    std::fs::write(outside.path().join("secret.md"), "# Secret\n").expect("write a file");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), brain.note("leak.md"))
        .expect("symlink");
    std::fs::write(brain.note("Harbor/notes.txt"), "not a note").expect("write a file");
    let server = TestServer::start(&brain).await;

    let paths = [
        "../../etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "%2e%2e/%2e%2e/etc/passwd",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "Harbor/../../../etc/passwd",
        "%2Fetc%2Fpasswd",
        "/etc/passwd",
        "..%5C..%5Cetc%5Cpasswd",
        "Harbor/Runbooks/Deploy.md%00",
        "%FF.md",
        ".noggin/.gitignore",
        ".noggin/x.md",
        "leak.md",
        "Harbor/notes.txt",
        "Harbor",
        "Harbor/Missing.md",
    ];
    for path in paths {
        let (status, response) = raw_get(&server, &format!("/v1/notes/{path}")).await;
        assert_eq!(status, 404, "/v1/notes/{path}: {response}");
        assert!(!response.contains("root:"), "{response}");
        let (status, response) = raw_get(&server, &format!("/notes/{path}")).await;
        assert_eq!(status, 404, "/notes/{path}: {response}");
        assert!(!response.contains("root:") && !response.contains("Secret"));
    }
    let (status, body) = server.get("/v1/notes/..%2Fleak.md").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error_shape(&body, "a path outside the brain");
    let page = fetch(&server, "/notes/Harbor/Missing.md", &[]).await;
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    let html = page.text().await.expect("body");
    assert!(
        html.contains("Note not found") && html.contains("href=\"/\""),
        "{html}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rendered_notes_show_html_as_text_and_link_other_notes() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let page = fetch(&server, "/notes/Harbor/Security%20Notes.md", &[]).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(
        page.headers()[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    let html = page.text().await.expect("body");
    assert!(!html.contains("<script"), "no script element: {html}");
    assert!(!html.contains("<img src=x"), "no img element: {html}");
    assert!(
        html.contains("&lt;script&gt;alert(\"xss\")&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    // Wikilinks, aliased or not, lead to the notes they name.
    assert!(
        html.contains("<a href=\"/notes/People/Mina%20Park.md\">Mina Park</a>"),
        "{html}"
    );
    assert!(html.contains("<a href=\"/notes/Harbor/Conventions/Testing.md\">Testing</a>"));
    // The title and tags are shown; the frontmatter is not part of the body.
    // The path and title are isolated from the text around them.
    assert!(html.contains("<h1 dir=\"auto\">Security Notes</h1>"));
    assert!(html.contains("<p class=\"note-path\" dir=\"auto\">Harbor/Security Notes.md</p>"));
    assert!(html.contains("<title>\u{2068}Security Notes\u{2069} · noggin</title>"));
    assert!(html.contains("#security"));
    assert!(!html.contains("aliases:"), "{html}");
    assert!(html.contains("<a class=\"back-link\" href=\"/\">"));

    // Opened from a session's card, it leads back to that card.
    for (query, back) in [
        ("?session=s%203", "/?session=s%203"),
        ("?session=%E2%80%AEagent", "/?session=%E2%80%AEagent"),
        ("?session=%00", "/"),
        ("?session=", "/"),
        ("?session=a&session=b", "/"),
    ] {
        let html = fetch(
            &server,
            &format!("/notes/Harbor/Security%20Notes.md{query}"),
            &[],
        )
        .await
        .text()
        .await
        .expect("body");
        assert!(
            html.contains(&format!("<a class=\"back-link\" href=\"{back}\">")),
            "{query}: {html}"
        );
    }

    let html = fetch(
        &server,
        "/notes/%ED%95%9C%EA%B5%AD%EC%96%B4/%ED%8C%80%20%EC%86%8C%EA%B0%9C.md",
        &[],
    )
    .await
    .text()
    .await
    .expect("body");
    assert!(
        html.contains("<a href=\"/notes/People/Mina%20Park.md\">박민아</a>")
            || html.contains("<a href=\"/notes/People/Mina%20Park.md\">민아</a>"),
        "an aliased wikilink in Korean: {html}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_the_security_headers() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let cases = [
        ("/", StatusCode::OK, "text/html; charset=utf-8"),
        ("/card.js", StatusCode::OK, "text/javascript; charset=utf-8"),
        ("/card.css", StatusCode::OK, "text/css; charset=utf-8"),
        ("/favicon.svg", StatusCode::OK, "image/svg+xml"),
        (
            "/notes/Harbor/Runbooks/Deploy.md",
            StatusCode::OK,
            "text/html; charset=utf-8",
        ),
        (
            "/notes/Nowhere.md",
            StatusCode::NOT_FOUND,
            "text/html; charset=utf-8",
        ),
        ("/v1/card", StatusCode::OK, "application/json"),
        ("/no/such/route", StatusCode::NOT_FOUND, "application/json"),
    ];
    // And the refusals of the door in front of every route.
    let refused: [(&str, &[(&str, &str)]); 2] = [
        ("/v1/status", &[("origin", "http://evil.example")]),
        ("/", &[("origin", "http://evil.example")]),
    ];
    let cases = cases
        .into_iter()
        .map(|(path, status, content_type)| (path, &[][..], status, content_type))
        .chain(
            refused
                .into_iter()
                .map(|(path, headers)| (path, headers, StatusCode::FORBIDDEN, "application/json")),
        );
    for (path, request_headers, status, content_type) in cases {
        let response = fetch(&server, path, request_headers).await;
        assert_eq!(response.status(), status, "{path} {request_headers:?}");
        let headers = response.headers();
        assert_eq!(headers[header::CONTENT_TYPE], content_type, "{path}");
        let csp = headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("ASCII");
        for directive in [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
        assert_eq!(headers[header::REFERRER_POLICY], "no-referrer", "{path}");
    }
    // The page itself has no inline script or style for the policy to block.
    let html = fetch(&server, "/", &[]).await.text().await.expect("body");
    assert!(html.contains("<html lang=\"en\">"));
    assert!(html.contains("<script src=\"/card.js\" defer></script>"));
    assert!(
        !html.contains("<style") && !html.contains(" style="),
        "{html}"
    );
    assert!(!html.contains("onclick=") && !html.contains("javascript:"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_guards_the_card_data_and_the_notes_but_not_the_page() {
    let brain = TestBrain::sample();
    let token = "card-s3cret";
    let options = ServerOptions {
        token: Some(token.to_string()),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let note = "/notes/Harbor/Runbooks/Deploy.md";

    // The page and its files hold nothing from the brain.
    assert_eq!(fetch(&server, "/", &[]).await.status(), StatusCode::OK);
    assert_eq!(
        fetch(&server, "/card.js", &[]).await.status(),
        StatusCode::OK
    );
    for path in [
        "/v1/card",
        "/v1/card/events",
        "/v1/notes/Harbor/Runbooks/Deploy.md",
    ] {
        let (status, body) = server
            .request_as(reqwest::Method::GET, path, None, None)
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
    }
    let page = fetch(&server, note, &[]).await;
    assert_eq!(page.status(), StatusCode::UNAUTHORIZED);
    assert!(!page.text().await.expect("body").contains("Deploy windows"));

    // The card sends the token as a header and gets a cookie for note links.
    let bearer = format!("Bearer {token}");
    let response = fetch(&server, "/v1/card", &[("authorization", &bearer)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let set_cookie = response.headers()[header::SET_COOKIE]
        .to_str()
        .expect("ASCII")
        .to_string();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Strict"), "{set_cookie}");
    assert!(set_cookie.contains("Path=/notes"), "{set_cookie}");
    assert!(
        !set_cookie.contains(token),
        "the cookie is not the token: {set_cookie}"
    );
    let cookie = set_cookie.split(';').next().expect("name=value");

    let page = fetch(&server, note, &[("cookie", cookie)]).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.expect("body").contains("Deploy windows"));
    let page = fetch(&server, note, &[("authorization", &bearer)]).await;
    assert_eq!(page.status(), StatusCode::OK);
    let forged = format!("{cookie}0");
    assert_eq!(
        fetch(&server, note, &[("cookie", &forged)]).await.status(),
        StatusCode::UNAUTHORIZED
    );
    // The cookie opens notes, nothing else.
    let response = fetch(&server, "/v1/card", &[("cookie", cookie)]).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    server.stop().await;
}

// --- in a real browser -------------------------------------------------------

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Where the screenshots go.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-output");
    std::fs::create_dir_all(&dir).expect("create the test output folder");
    dir
}

/// chromedriver and a headless Chromium session; both end when dropped.
pub(crate) struct Browser {
    client: Option<Client>,
    driver: Child,
    /// Chromium's profile folder, removed with the browser.
    profile: tempfile::TempDir,
}

impl Browser {
    pub(crate) async fn start() -> Browser {
        for program in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: the card's browser test needs Debian's chromium and \
                 chromium-driver packages (.ci/run installs them: apt-get install chromium chromium-driver)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("find a free port")
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
        let profile = tempfile::tempdir().expect("a temp dir for the browser profile");
        let mut browser = Browser {
            client: None,
            driver,
            profile,
        };
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", browser.profile.path().display()),
        ];
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_string(),
            json!({"binary": CHROMIUM, "args": args}),
        );
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(capabilities);
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match builder.connect(&url).await {
                Ok(client) => {
                    browser.client = Some(client);
                    return browser;
                }
                Err(error) if Instant::now() < deadline => {
                    if let Ok(Some(status)) = browser.driver.try_wait() {
                        panic!("{CHROMEDRIVER} exited with {status}");
                    }
                    // chromedriver is still starting, or Chromium is.
                    let _ = error;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => {
                    panic!("cannot start headless Chromium through {CHROMEDRIVER}: {error}")
                }
            }
        }
    }

    pub(crate) fn client(&self) -> &Client {
        self.client.as_ref().expect("a browser session")
    }

    /// Waits until `script` (a function body returning a boolean) is true.
    pub(crate) async fn wait_for_js(&self, what: &str, script: &str) {
        let client = self.client();
        wait_until(CHANGE_DEADLINE, what, || async move {
            client
                .execute(script, vec![])
                .await
                .is_ok_and(|v| v == json!(true))
        })
        .await;
    }

    pub(crate) async fn js(&self, script: &str) -> Value {
        self.client()
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    async fn cdp(&self, cmd: &'static str, params: Value) {
        self.client()
            .issue_cmd(Cdp { cmd, params })
            .await
            .unwrap_or_else(|e| panic!("{cmd} failed: {e}"));
    }

    /// Shows the page as the user's system in dark (or light) mode would.
    pub(crate) async fn prefer_color_scheme(&self, scheme: &str) {
        self.cdp(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        )
        .await;
    }

    /// Gives the page a viewport of this size (a phone's below 600 px).
    pub(crate) async fn viewport(&self, width: u32, height: u32) {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}),
        )
        .await;
        self.wait_for_js(
            "the page has its new size",
            &format!("return window.innerWidth === {width} && window.innerHeight === {height};"),
        )
        .await;
    }

    /// Saves a picture of the page at `width` × `height` (the whole page
    /// when `height` is `None`) in the test output folder.
    pub(crate) async fn screenshot(&self, name: &str, width: u32, height: Option<u32>) -> PathBuf {
        let client = self.client();
        self.viewport(width, height.unwrap_or(800)).await;
        if height.is_none() {
            let full = self
                .js("return document.documentElement.scrollHeight;")
                .await
                .as_u64()
                .expect("page height") as u32;
            self.viewport(width, full).await;
        }
        self.wait_for_js(
            "the page is still",
            "return document.getAnimations().every(a => \
               a.playState === 'finished' || a.effect.getTiming().iterations === Infinity);",
        )
        .await;
        let png = client.screenshot().await.expect("take a screenshot");
        let path = output_dir().join(name);
        std::fs::write(&path, png).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
        println!("screenshot: {}", path.display());
        path
    }

    /// Presses Tab; describes the element that has the focus then.
    async fn tab(&self) -> Value {
        let tab = char::from(Key::Tab);
        let keys = KeyActions::new("keyboard".to_string())
            .then(KeyAction::Down { value: tab })
            .then(KeyAction::Up { value: tab });
        self.client()
            .perform_actions(keys)
            .await
            .expect("press Tab");
        self.js("const a = document.activeElement; \
             return { id: a.id, tag: a.tagName, source: !!a.closest('.sources'), \
                      outline: getComputedStyle(a).outlineStyle };")
            .await
    }

    pub(crate) async fn close(mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A failed test never called `close`: end the session so that
        // Chromium does not outlive chromedriver.
        if let Some(client) = self.client.take() {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
                    tokio::task::block_in_place(|| {
                        let _ = handle
                            .block_on(tokio::time::timeout(Duration::from_secs(5), client.close()));
                    });
                }
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A Chrome DevTools command sent through chromedriver.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &reqwest::Url,
        session_id: Option<&str>,
    ) -> Result<reqwest::Url, url_error::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &reqwest::Url) -> (reqwest::Method, Option<String>) {
        (
            reqwest::Method::POST,
            Some(json!({"cmd": self.cmd, "params": self.params}).to_string()),
        )
    }
}

/// `url::ParseError`, named through the URL type reqwest re-exports.
mod url_error {
    pub type ParseError = <reqwest::Url as std::str::FromStr>::Err;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_in_a_browser() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    let browser = Browser::start().await;
    let client = browser.client();
    browser.viewport(1280, 900).await;

    // A new user sees how to send a first research.
    client
        .goto(&format!("{}/", server.base_url))
        .await
        .expect("open the card");
    browser
        .wait_for_js(
            "the empty card explains how to start",
            "const e = document.querySelector('#research .empty'); \
             return !!e && e.textContent.includes('/v1/research');",
        )
        .await;
    browser
        .wait_for_js(
            "the brain's status is shown",
            "return /\\d+ notes/.test(document.getElementById('status-text').textContent);",
        )
        .await;
    browser
        .screenshot("card-empty-desktop.png", 1280, Some(900))
        .await;

    // A research arrives: the facts appear without a reload.
    browser
        .js("window.nogginNotReloaded = true; return true;")
        .await;
    let posted = research(&server, "editor", &QUESTIONS).await;
    let arrived = Instant::now();
    browser
        .wait_for_js(
            "the facts of the research appear",
            "return document.querySelectorAll('#research .fact:not(details .fact)').length > 0;",
        )
        .await;
    println!(
        "the card showed the research {:?} after it was answered",
        arrived.elapsed()
    );
    assert_eq!(
        browser
            .js("return window.nogginNotReloaded === true;")
            .await,
        json!(true),
        "the card updated without a reload"
    );
    let facts = browser
        .js(
            "return [...document.querySelectorAll('#research .fact:not(details .fact)')].map(f => ({ \
               question: f.querySelector('.question').textContent, \
               marker: f.querySelector('.marker').textContent, \
               answer: f.querySelector('.answer-text').textContent, \
               links: [...f.querySelectorAll('.sources a')].map(a => a.getAttribute('href')) }));",
        )
        .await;
    let facts = facts.as_array().expect("facts");
    assert_eq!(facts.len(), 3, "at most three facts: {facts:?}");
    // An answer of several lines (a command from a code block) keeps them.
    assert_eq!(
        browser
            .js("return getComputedStyle(document.querySelector('#research .answer')).whiteSpace;")
            .await,
        json!("pre-wrap")
    );
    // The rest are a click away, numbered on from the shown ones.
    let answered = posted["answered"].as_array().expect("answered").len();
    assert_eq!(
        browser
            .js(
                "const more = document.querySelector('#research details.more'); \
                 more.querySelector('summary').click(); \
                 return [more.open, more.querySelector('summary').textContent, \
                         more.querySelectorAll('.fact').length, \
                         more.querySelector('ol').getAttribute('start')];",
            )
            .await,
        json!([
            true,
            format!("+{} more answered by noggin", answered - 3),
            answered - 3,
            "4"
        ])
    );
    for fact in facts {
        let answer = fact["answer"].as_str().expect("answer text");
        assert!(
            answer.chars().count() <= 150,
            "{} characters: {answer}",
            answer.chars().count()
        );
        assert_eq!(fact["marker"], "(self-research)");
        let links = fact["links"].as_array().expect("links");
        assert!(!links.is_empty(), "{fact}");
        assert!(links
            .iter()
            .all(|l| l.as_str().is_some_and(|l| l.starts_with("/notes/"))));
    }
    assert!(
        facts
            .iter()
            .any(|f| f["answer"].as_str().is_some_and(|a| a.ends_with('…'))),
        "the long answer is cut: {facts:?}"
    );
    let open = browser
        .js("return [...document.querySelectorAll('#research .open-list > li .question')].map(q => q.textContent);")
        .await;
    assert_eq!(open, json!([OPEN_QUESTION]));
    assert_eq!(
        posted["unanswered"][0]["question"], OPEN_QUESTION,
        "the card shows what the research left open"
    );

    // The keyboard reaches the sources and the search box, with a visible focus.
    browser
        .js("document.activeElement.blur(); window.scrollTo(0, 0); return true;")
        .await;
    let mut reached_source = false;
    let mut reached_search = false;
    for _ in 0..30 {
        let focused = browser.tab().await;
        if focused["source"] == true || focused["id"] == "q" {
            assert_ne!(focused["outline"], "none", "focus is visible: {focused}");
        }
        reached_source |= focused["source"] == true && focused["tag"] == "A";
        reached_search |= focused["id"] == "q";
    }
    assert!(
        reached_source && reached_search,
        "Tab reaches a source link and the search box"
    );
    browser
        .js("document.activeElement.blur(); return true;")
        .await;

    // Screenshots, light and dark, desktop and phone.
    browser
        .screenshot("card-desktop.png", 1280, Some(900))
        .await;
    browser.screenshot("card-phone.png", 375, Some(812)).await;
    assert_eq!(
        browser
            .js("return document.documentElement.scrollWidth <= window.innerWidth;")
            .await,
        json!(true),
        "nothing overflows sideways on a phone"
    );
    browser.prefer_color_scheme("dark").await;
    browser
        .screenshot("card-phone-dark.png", 375, Some(812))
        .await;
    browser
        .screenshot("card-phone-full-dark.png", 375, None)
        .await;
    browser
        .screenshot("card-desktop-dark.png", 1280, Some(900))
        .await;
    browser.prefer_color_scheme("light").await;
    browser.screenshot("card-phone-full.png", 375, None).await;
    browser.viewport(1280, 900).await;

    // A second session brings the session selector.
    research(&server, "terminal", &["Who owns the payments service?"]).await;
    browser
        .wait_for_js(
            "the session selector appears",
            "const bar = document.getElementById('session-bar'); \
             return !bar.hidden && document.querySelectorAll('#session option').length === 3;",
        )
        .await;
    let select = client
        .find(Locator::Css("#session"))
        .await
        .expect("the session selector");
    select
        .select_by_value("editor")
        .await
        .expect("choose a session");
    browser
        .wait_for_js(
            "the chosen session's research is shown",
            "return document.querySelectorAll('#research .fact:not(details .fact)').length === 3;",
        )
        .await;

    // A source link opens the rendered note.
    // Read and click the link in one script: the card may redraw between two
    // WebDriver calls (a late event of the session switch), which would
    // leave a stale element.
    let title = client
        .execute(
            "const a = document.querySelector('#research .fact .sources a'); \
             const title = a.textContent; a.click(); return title;",
            vec![],
        )
        .await
        .expect("follow the source link");
    let title = title.as_str().expect("link text").trim().to_string();
    assert!(!title.is_empty(), "the source link names its note");
    let page_title = client
        .wait()
        .at_most(CHANGE_DEADLINE)
        .for_element(Locator::Css("article.note h1"))
        .await
        .expect("the rendered note opens")
        .text()
        .await
        .expect("title");
    assert_eq!(page_title, title);
    assert!(client
        .current_url()
        .await
        .expect("url")
        .path()
        .starts_with("/notes/"));
    // Back to the card of the session it was opened from.
    client
        .find(Locator::Css("a.back-link[href='/?session=editor']"))
        .await
        .expect("a way back to the session's card");

    // A note with HTML in it shows the HTML as text.
    client
        .goto(&format!(
            "{}/notes/Harbor/Security%20Notes.md",
            server.base_url
        ))
        .await
        .expect("open the note");
    let body = client
        .wait()
        .at_most(CHANGE_DEADLINE)
        .for_element(Locator::Css(".note-body"))
        .await
        .expect("the note's body")
        .text()
        .await
        .expect("text");
    assert!(body.contains("<img src=x onerror=alert(1)>"), "{body}");
    assert!(body.contains("<script>alert(\"xss\")</script>"), "{body}");
    assert_eq!(
        browser
            .js("return document.querySelectorAll('img[onerror], .note-body img, .note-body script, svg[onload]').length;")
            .await,
        json!(0)
    );
    assert!(
        client.get_alert_text().await.is_err(),
        "no script from the note ran"
    );
    browser
        .screenshot("note-desktop.png", 1280, Some(900))
        .await;
    browser.screenshot("note-phone-full.png", 375, None).await;

    // The search box finds notes and marks the matches, safely.
    client
        .goto(&format!("{}/", server.base_url))
        .await
        .expect("open the card");
    let search = client
        .wait()
        .at_most(CHANGE_DEADLINE)
        .for_element(Locator::Css("#q"))
        .await
        .expect("the search box");
    search
        .send_keys("onerror deploy\u{E007}")
        .await
        .expect("search with Enter");
    browser
        .wait_for_js(
            "search results with highlighted matches",
            "return document.querySelectorAll('#search-results .result mark').length > 0;",
        )
        .await;
    let results = browser
        .js("return { \
               titles: [...document.querySelectorAll('#search-results .result-title')].map(a => a.getAttribute('href')), \
               marks: [...document.querySelectorAll('#search-results mark')].map(m => m.textContent), \
               elements: [...document.querySelectorAll('#search-results .snippet *')].map(e => e.tagName), \
               text: document.getElementById('search-results').textContent };")
        .await;
    let titles = results["titles"].as_array().expect("titles");
    assert!(!titles.is_empty());
    assert!(titles
        .iter()
        .all(|t| t.as_str().is_some_and(|t| t.starts_with("/notes/"))));
    assert!(
        results["elements"]
            .as_array()
            .expect("elements")
            .iter()
            .all(|t| t == "MARK"),
        "snippets hold text and <mark> only: {results}"
    );
    assert!(
        results["text"]
            .as_str()
            .is_some_and(|t| t.contains("<img src=x onerror=")),
        "the hostile note's snippet is text: {results}"
    );
    assert!(client.get_alert_text().await.is_err(), "nothing ran");
    browser
        .js("document.getElementById('search').scrollIntoView(); return true;")
        .await;
    browser
        .screenshot("card-search-desktop.png", 1280, Some(900))
        .await;

    // A word most notes have: the card shows the best few and says so.
    let search = client
        .find(Locator::Css("#q"))
        .await
        .expect("the search box");
    search.clear().await.expect("clear the search box");
    search
        .send_keys("the\u{E007}")
        .await
        .expect("search with Enter");
    browser
        .wait_for_js(
            "the results for the new search",
            "return document.getElementById('search-summary').textContent.includes('“the”');",
        )
        .await;
    assert!(
        server.search("the", &[("limit", "100")]).await.len() > 8,
        "more notes match than the card shows"
    );
    assert_eq!(
        browser
            .js(
                "return [document.getElementById('search-summary').textContent, \
                         document.querySelectorAll('#search-results .result').length];"
            )
            .await,
        json!(["The top 8 notes for “the”", 8])
    );

    server.stop().await;

    // With a token: the card takes it from the address once, and its note
    // links work without the token in any URL.
    let token = "browser-s3cret";
    let options = ServerOptions {
        token: Some(token.to_string()),
        ..ServerOptions::default()
    };
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, options).await;
    client
        .goto(&format!("{}/#token={token}", server.base_url))
        .await
        .expect("open the card with its token");
    browser
        .wait_for_js(
            "the card opens with the token",
            "return !!document.querySelector('#research .empty');",
        )
        .await;
    let address = client.current_url().await.expect("url");
    assert_eq!(address.fragment(), None, "the token left the address bar");
    research(&server, "locked", &["Which database do we use?"]).await;
    browser
        .wait_for_js(
            "the research arrives through the token-protected stream",
            "return document.querySelectorAll('#research .fact:not(details .fact)').length === 1;",
        )
        .await;
    client
        .find(Locator::Css("#research .fact .sources a"))
        .await
        .expect("a source link")
        .click()
        .await
        .expect("follow the source link");
    client
        .wait()
        .at_most(CHANGE_DEADLINE)
        .for_element(Locator::Css("article.note h1"))
        .await
        .expect("the note opens with the card's cookie");

    // A tab without the token asks for it, and says when it is wrong.
    client
        .goto(&format!("{}/", server.base_url))
        .await
        .expect("open the card");
    browser
        .js("sessionStorage.clear(); location.reload(); return true;")
        .await;
    let input = client
        .wait()
        .at_most(CHANGE_DEADLINE)
        .for_element(Locator::Css("#token-panel:not([hidden]) #token-input"))
        .await
        .expect("the card asks for the token");
    input
        .send_keys("wrong\u{E007}")
        .await
        .expect("enter a token");
    browser
        .wait_for_js(
            "a wrong token is refused",
            "return !document.getElementById('token-error').hidden;",
        )
        .await;
    let input = client
        .find(Locator::Css("#token-input"))
        .await
        .expect("the token box");
    input
        .send_keys(&format!("{token}\u{E007}"))
        .await
        .expect("enter the token");
    browser
        .wait_for_js(
            "the right token opens the card",
            "return document.getElementById('token-panel').hidden && \
                    document.querySelectorAll('#research .fact:not(details .fact)').length === 1;",
        )
        .await;

    // A wrong token in the address is said to be wrong, and the right one
    // put into the address of the open card opens it, without a reload.
    browser
        .js("sessionStorage.clear(); location.hash = 'token=wrong'; location.reload(); return true;")
        .await;
    browser
        .wait_for_js(
            "a wrong token from the address is refused as wrong",
            "return !document.getElementById('token-panel').hidden && \
                    !document.getElementById('token-error').hidden;",
        )
        .await;
    browser
        .js(&format!("location.hash = 'token={token}'; return true;"))
        .await;
    browser
        .wait_for_js(
            "the right token in the address opens the card",
            "return document.getElementById('token-panel').hidden && \
                    document.querySelectorAll('#research .fact:not(details .fact)').length === 1;",
        )
        .await;

    browser.close().await;
    server.stop().await;
}

/// Korean breaks lines between its words on the card, Chinese between its
/// characters.
#[tokio::test(flavor = "multi_thread")]
async fn korean_breaks_between_words_on_the_card() {
    let server = TestServer::start(&TestBrain::sample()).await;
    research(&server, "ko", &["배포는 언제 하나요?", "发布负责人是谁？"]).await;
    let browser = Browser::start().await;
    browser
        .client()
        .goto(&format!("{}/?session=ko", server.base_url))
        .await
        .expect("open the card");
    browser
        .wait_for_js(
            "the questions are shown",
            "return document.querySelectorAll('#research .question bdi').length === 2;",
        )
        .await;
    let breaks = browser
        .js(
            "return [...document.querySelectorAll('#research .question bdi')].map(b => \
               [b.textContent, b.lang, getComputedStyle(b).wordBreak]);",
        )
        .await;
    browser.close().await;
    server.stop().await;
    assert_eq!(
        breaks,
        json!([
            ["배포는 언제 하나요?", "ko", "keep-all"],
            ["发布负责人是谁？", "", "normal"]
        ]),
        "{breaks}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_routes_are_in_the_openapi_document() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let (status, doc) = server.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        "/v1/card",
        "/v1/card/events",
        "/v1/notes/{path}",
        "/notes/{path}",
        "/",
        "/v1/sessions",
        "/v1/sessions/{id}/context",
    ] {
        assert!(doc["paths"][path]["get"].is_object(), "{path} is described");
    }
    for path in [
        "/v1/sessions/{id}/events",
        "/v1/context",
        "/v1/context/window",
    ] {
        assert!(
            doc["paths"][path]["post"].is_object(),
            "{path} is described"
        );
    }
    assert!(doc["paths"]["/v1/sessions/{id}"]["delete"].is_object());
    server.stop().await;
}

/// Events that give a session a working context, one of them hostile.
fn working_events() -> Value {
    json!([
        {"type": "user_message", "text": "Add a cancellation fee to transient bookings"},
        {"type": "goal", "text": "Cancellation fee <img src=x onerror=\"window.nogginPwned=1\"> live"},
        {"type": "failure", "kind": "test", "text": "test fee::rounds_up failed\n  left: 12\n right: 10"},
        {"type": "tool_call", "tool": "Read", "arguments": {"path": "src/fees.rs"}},
        {"type": "tool_call", "tool": "Edit", "arguments": {"file_path": "src/bookings.rs"}},
        {"type": "progress", "text": "fee model written", "done": true},
        {"type": "progress", "text": "wire the fee into checkout", "done": false},
        {"type": "decision", "text": "Keep the fee in cents <b>bold</b>"},
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_carries_the_sessions_working_context() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    let (status, body) = server
        .post_json("/v1/sessions/agent/events", &working_events())
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let body = card(&server, "?session=agent").await;
    let wc = &body["working_context"];
    assert_eq!(wc["goals"][0]["done"], false, "{body}");
    assert_eq!(wc["failure"]["kind"], "test");
    assert_eq!(wc["recent_files"][0]["path"], "src/bookings.rs");
    assert_eq!(wc["recent_files"][0]["changed"], true);
    assert_eq!(wc["progress_done"], 1);
    assert_eq!(
        wc["decisions"],
        json!(["Keep the fee in cents <b>bold</b>"])
    );
    assert_eq!(wc["decisions_total"], 1);
    assert_eq!(wc["confirmed"], json!([]));
    assert_eq!(
        body["sessions"],
        json!(["agent"]),
        "stored sessions are listed"
    );
    let all = card(&server, "").await;
    assert!(all.get("working_context").is_none(), "only for a session");
    // A session of a research alone has nothing for the panel to show.
    research(&server, "asked", &["Which database do we use?"]).await;
    let asked = card(&server, "?session=asked").await;
    assert_eq!(asked["session_found"], true, "{asked}");
    assert!(asked.get("working_context").is_none(), "{asked}");

    // A change to the session reaches the card's event stream.
    let mut events = fetch(&server, "/v1/card/events?session=agent", &[]).await;
    let mut buffer = String::new();
    next_card(&mut events, &mut buffer, |c| {
        c["working_context"].is_object()
    })
    .await;
    let (status, _) = server
        .post_json(
            "/v1/sessions/agent/events",
            &json!({"type": "progress", "text": "wire the fee into checkout", "done": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let card = next_card(&mut events, &mut buffer, |c| {
        c["working_context"]["progress_done"] == 2
    })
    .await;
    assert_eq!(card["working_context"]["progress_total"], 2);
    drop(events);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_lists_the_most_recent_sessions_and_opens_any() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let count = CARD_SESSIONS + 10;
    let names: Vec<String> = (0..count).map(|i| format!("many-{i:03}")).collect();
    for name in &names {
        let (status, body) = server
            .post_json(
                &format!("/v1/sessions/{name}/events"),
                &json!({"type": "goal", "text": format!("goal of {name}")}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // An event makes a session the most recently active.
    let (status, _) = server
        .post_json(
            "/v1/sessions/many-000/events",
            &json!({"type": "progress", "text": "still going"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let all = card(&server, "").await;
    let listed: Vec<&str> = all["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("sessions: {all}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(listed.len(), CARD_SESSIONS, "{all}");
    assert_eq!(all["sessions_total"], count);
    assert_eq!(listed[0], "many-000", "the most recently active first");
    assert!(listed.contains(&names[count - 1].as_str()), "{all}");

    // A change that leaves a card as it was does not send it again: the
    // next card of the stream is that of the change after.
    let mut events = fetch(&server, "/v1/card/events", &[]).await;
    let mut buffer = String::new();
    let first = next_card(&mut events, &mut buffer, |_| true).await;
    assert_eq!(first["sessions"], all["sessions"]);
    for (name, event) in [
        (
            "many-000",
            json!({"type": "progress", "text": "still going"}),
        ),
        ("a-new", json!({"type": "goal", "text": "one more"})),
    ] {
        let (status, _) = server
            .post_json(&format!("/v1/sessions/{name}/events"), &event)
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let next = next_card(&mut events, &mut buffer, |_| true).await;
    assert_eq!(next["sessions_total"], count + 1, "{next}");
    drop(events);

    // A session the card does not list still opens by name, live too.
    let unlisted = names
        .iter()
        .find(|n| !listed.contains(&n.as_str()))
        .expect("a session left off the list");
    let shown = card(&server, &format!("?session={unlisted}")).await;
    assert_eq!(shown["session"], unlisted.as_str());
    assert_eq!(
        shown["working_context"]["goals"][0]["text"],
        format!("goal of {unlisted}"),
        "{shown}"
    );
    assert_eq!(
        shown["sessions"].as_array().map(Vec::len),
        Some(CARD_SESSIONS)
    );
    let mut events = fetch(&server, &format!("/v1/card/events?session={unlisted}"), &[]).await;
    let mut buffer = String::new();
    next_card(&mut events, &mut buffer, |c| {
        c["working_context"].is_object()
    })
    .await;
    let (status, _) = server
        .post_json(
            &format!("/v1/sessions/{unlisted}/events"),
            &json!({"type": "progress", "text": "picked up again", "done": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let live = next_card(&mut events, &mut buffer, |c| {
        c["working_context"]["progress_done"] == 1
    })
    .await;
    assert!(
        live["sessions"]
            .as_array()
            .is_some_and(|s| s.contains(&json!(unlisted))),
        "listed now that it is among the most recent: {live}"
    );
    assert_eq!(
        live["sessions"].as_array().map(Vec::len),
        Some(CARD_SESSIONS)
    );
    drop(events);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_working_context_sits_beside_the_research_in_a_browser() {
    let brain = brain();
    let server = TestServer::start(&brain).await;
    let (status, body) = server
        .post_json("/v1/sessions/agent/events", &working_events())
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    research(&server, "agent", &QUESTIONS).await;
    let browser = Browser::start().await;
    let client = browser.client();
    browser.viewport(1280, 900).await;
    client
        .goto(&format!("{}/?session=agent", server.base_url))
        .await
        .expect("open the card");
    browser
        .wait_for_js(
            "the working context and the research are shown",
            "const w = document.querySelector('#working .working'); \
             return !!w && document.querySelectorAll('#research .fact:not(details .fact)').length > 0;",
        )
        .await;
    let shown = browser
        .js("const w = document.getElementById('working'); \
             const r = document.getElementById('research').getBoundingClientRect(); \
             const b = w.getBoundingClientRect(); \
             return { text: w.textContent, imgs: w.querySelectorAll('img').length, \
                      pwned: !!window.nogginPwned, beside: b.left >= r.right && b.top < r.bottom, \
                      changed: [...w.querySelectorAll('.files li')].map(li => li.textContent), \
                      done: w.querySelectorAll('.progress .done').length, \
                      todo: w.querySelectorAll('.progress .todo').length };")
        .await;
    let text = shown["text"].as_str().expect("text");
    assert!(
        text.contains("<img src=x"),
        "hostile text shown as text: {text}"
    );
    assert_eq!(shown["imgs"], 0);
    assert_eq!(shown["pwned"], false);
    assert!(text.contains("test fee::rounds_up failed"), "{text}");
    assert!(text.contains("Add a cancellation fee"), "{text}");
    assert!(
        text.contains("DecisionKeep the fee in cents <b>bold</b>"),
        "{text}"
    );
    assert_eq!(
        shown["changed"],
        json!(["src/bookings.rschanged", "src/fees.rs"])
    );
    assert_eq!(
        (shown["done"].clone(), shown["todo"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        shown["beside"], true,
        "beside the research on a wide screen: {shown}"
    );
    browser
        .screenshot("card-working-context-desktop.png", 1280, None)
        .await;

    // A new event redraws it without a reload.
    browser
        .js("window.nogginNotReloaded = true; return true;")
        .await;
    let (status, _) = server
        .post_json(
            "/v1/sessions/agent/events",
            &json!({"type": "failure", "kind": "build", "text": "error[E0599]: no method `fee`"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    browser
        .wait_for_js(
            "the new failure appears",
            "return document.querySelector('#working .failure-text').textContent.includes('E0599') \
                    && window.nogginNotReloaded === true;",
        )
        .await;
    // The failing test is still open too: it opens under the latest.
    assert_eq!(
        browser
            .js(
                "const more = document.querySelector('#working details.more-failures'); \
                 more.querySelector('summary').click(); \
                 return [more.open, more.querySelector('summary').textContent, \
                         more.querySelector('.failure-text').textContent];"
            )
            .await,
        json!([
            true,
            "+1 more open failure",
            "test fee::rounds_up failed\n  left: 12\n right: 10"
        ])
    );

    // On a phone it stacks below the research and fits the width.
    browser.viewport(390, 844).await;
    let phone = browser
        .js("const w = document.getElementById('working').getBoundingClientRect(); \
             const r = document.getElementById('research').getBoundingClientRect(); \
             return { below: w.top >= r.bottom, fits: document.documentElement.scrollWidth <= 390 };")
        .await;
    assert_eq!(phone, json!({"below": true, "fits": true}));
    browser
        .screenshot("card-working-context-phone.png", 390, None)
        .await;
    browser.close().await;
    server.stop().await;
}

/// Open questions as the card in the browser lists them.
const SHOWN_OPEN: &str =
    "return [...document.querySelectorAll('#research .open-list > li .question')].map(q => q.textContent);";

#[tokio::test(flavor = "multi_thread")]
async fn the_card_follows_answers_and_deleted_sessions_in_a_browser() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    research(&server, "s1", &["When do we deploy?"]).await;
    research(&server, "s3", &[VPN_QUESTION, OPEN_QUESTION]).await;
    let browser = Browser::start().await;
    let client = browser.client();
    browser.viewport(1280, 900).await;
    client
        .goto(&format!("{}/", server.base_url))
        .await
        .expect("open the card");
    browser
        .wait_for_js(
            "the latest research's open questions",
            "return document.querySelectorAll('#research .open-list > li').length === 2;",
        )
        .await;
    browser
        .js("window.nogginNotReloaded = true; return true;")
        .await;

    // The user answers one in the session, the other without one.
    let answer = |session: Option<&str>, question: &str| {
        json!({"prompt": "Laptop setup", "session": session, "qa": [{
            "question": question,
            "answer": "It is guest-vpn.example.net, on port 1194 over UDP."}]})
    };
    let (status, _) = server
        .post_json("/v1/answers", &answer(Some("s3"), VPN_QUESTION))
        .await;
    assert_eq!(status, StatusCode::OK);
    browser
        .wait_for_js(
            "the answered question leaves the card",
            "return document.querySelectorAll('#research .open-list > li').length === 1;",
        )
        .await;
    assert_eq!(browser.js(SHOWN_OPEN).await, json!([OPEN_QUESTION]));
    let (status, _) = server
        .post_json("/v1/answers", &answer(None, OPEN_QUESTION))
        .await;
    assert_eq!(status, StatusCode::OK);
    browser
        .wait_for_js(
            "nothing is left open",
            "return document.querySelector('#research .open .none')?.textContent === \
                    'Nothing left to ask: you answered the rest.';",
        )
        .await;

    // The session is deleted: its research and its name leave the card.
    let (status, _) = server
        .request(reqwest::Method::DELETE, "/v1/sessions/s3", None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    browser
        .wait_for_js(
            "the deleted session leaves the selector",
            "return [...document.querySelectorAll('#session option')].map(o => o.value).join() === ',s1';",
        )
        .await;
    let shown = browser
        .js("return [[...document.querySelectorAll('#research .fact .question')].map(q => q.textContent), \
                     window.nogginNotReloaded === true];")
        .await;
    assert_eq!(
        shown,
        json!([["When do we deploy?"], true]),
        "s1's research, without a reload"
    );
    // Opened by its name, the deleted session is said to be missing; the
    // selector names it as what the card shows (blank, it named nothing).
    client
        .goto(&format!("{}/?session=s3", server.base_url))
        .await
        .expect("open the deleted session's card");
    browser
        .wait_for_js(
            "the card says there is no such session",
            "return document.querySelector('#no-session-heading')?.textContent === 'No session s3';",
        )
        .await;
    assert_eq!(
        browser
            .js("const s = document.getElementById('session'); \
                 return [[...s.options].map(o => o.value).join(), s.value];")
            .await,
        json!([",s1,s3", "s3"])
    );
    // A session at work that has asked nothing yet: its working context,
    // and no tutorial beside it.
    let (status, _) = server
        .post_json(
            "/v1/sessions/busy/events",
            &json!({"type": "goal", "text": "Ship the refund button"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    client
        .goto(&format!("{}/?session=busy", server.base_url))
        .await
        .expect("open the busy session's card");
    browser
        .wait_for_js(
            "the card says the session has no research yet, beside its work",
            "return document.querySelector('#empty-heading')?.textContent === 'No research in busy yet' \
                    && !document.getElementById('working').hidden \
                    && !document.querySelector('#research pre.command');",
        )
        .await;
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_says_what_is_wrong_in_a_browser() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    research(&server, "s1", &["When do we deploy?"]).await;
    let browser = Browser::start().await;
    let client = browser.client();
    browser.viewport(1280, 900).await;

    // A session name noggin refuses: said once, with the way back.
    for session in ["%00".to_string(), "x".repeat(300)] {
        client
            .goto(&format!("{}/?session={session}", server.base_url))
            .await
            .expect("open the card");
        browser
            .wait_for_js(
                "the card says it cannot show that session",
                "const r = document.querySelector('#research .refused'); \
                 return !!r && r.textContent.includes('200 characters');",
            )
            .await;
        // The brain is fine, and nothing is waiting to reconnect.
        browser
            .wait_for_js(
                "the brain's status",
                "const s = document.getElementById('brain-status'); \
                 return /\\d+ notes/.test(s.textContent) && s.dataset.state !== 'reconnecting';",
            )
            .await;
        let streams = browser
            .js("return performance.getEntriesByType('resource') \
                   .filter(e => e.name.includes('/v1/card/events')).length;")
            .await;
        assert!(
            streams.as_u64().is_some_and(|n| n <= 1),
            "a refused stream is not asked for again: {streams}"
        );
    }
    browser
        .screenshot("card-refused-session.png", 375, Some(812))
        .await;
    client
        .find(Locator::Css("#research .refused a[href='/']"))
        .await
        .expect("a way back to the latest of all sessions")
        .click()
        .await
        .expect("follow it");
    browser
        .wait_for_js(
            "the latest research of all",
            "return document.querySelectorAll('#research .fact:not(details .fact)').length === 1;",
        )
        .await;

    // The brain moved away: the status says so, and why.
    let away = brain.path().with_file_name("moved-away");
    std::fs::rename(brain.path(), &away).expect("move the brain away");
    client.refresh().await.expect("reload the card");
    browser
        .wait_for_js(
            "the status says the brain cannot be read",
            "const s = document.getElementById('brain-status'); \
             return s.dataset.state === 'unhealthy' && \
                    s.textContent.includes('Cannot read your brain') && \
                    s.textContent.includes('does not exist');",
        )
        .await;
    let status = browser
        .js("const s = document.getElementById('brain-status'); \
             return [s.textContent.includes('following edits'), \
                     getComputedStyle(s.querySelector('.dot')).backgroundColor];")
        .await;
    assert_eq!(status, json!([false, "rgb(192, 54, 44)"]));
    browser
        .screenshot("card-unhealthy-phone.png", 375, Some(812))
        .await;
    std::fs::rename(&away, brain.path()).expect("move the brain back");
    browser.close().await;
    server.stop().await;
}

/// A note whose title and heading turn the text after them around unless
/// they are isolated, and one whose title and heading are one long word.
const REVERSED_NOTE: &str = "Notes/Reversed.md";
const LONG_WORD_NOTE: &str = "Notes/Long.md";

#[tokio::test(flavor = "multi_thread")]
async fn text_from_notes_and_requests_stays_in_its_place_in_a_browser() {
    let brain = TestBrain::sample();
    let long = "x".repeat(300);
    brain.write(
        REVERSED_NOTE,
        "# \u{202E}Reversed title\n\n## \u{202E}Reversed heading\n\nThe okapi census is in May.\n",
    );
    brain.write(
        LONG_WORD_NOTE,
        &format!("# {long}\n\n## {long}\n\nThe zebrafish census is in June.\n"),
    );
    let server = TestServer::start(&brain).await;
    let browser = Browser::start().await;
    let client = browser.client();
    client
        .goto(&format!("{}/?session=%E2%80%AEagent", server.base_url))
        .await
        .expect("open the card");
    browser.viewport(360, 800).await;

    // What an assistant sends arrives while the card is open on a phone.
    let session = "\u{202E}agent";
    let (status, _) = server
        .post_json(
            "/v1/sessions/%E2%80%AEagent/events",
            &json!([
                {"type": "user_message", "text": "\u{202E}Add a refund button"},
                {"type": "goal", "text": format!("\u{202E}{long}")},
            ]),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": format!("\u{202E}{long}"), "session": session, "questions": [
                format!("When do we deploy to production?{long}"),
                format!("What color should the login button be?\u{202E}{long}"),
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (
            body["answered"].as_array().map(Vec::len),
            body["unanswered"].as_array().map(Vec::len)
        ),
        (Some(1), Some(1)),
        "one fact and one open question: {body}"
    );
    browser
        .wait_for_js(
            "the research and the working context",
            "return document.querySelectorAll('#research .fact:not(details .fact)').length === 1 && \
                    !!document.querySelector('#working .working');",
        )
        .await;
    for query in ["zebrafish", "okapi"] {
        let search = client.find(Locator::Css("#q")).await.expect("search box");
        search.clear().await.expect("clear the search box");
        search
            .send_keys(&format!("{query}\u{E007}"))
            .await
            .expect("search");
        browser
            .wait_for_js(
                "the note is found",
                &format!(
                    "return document.getElementById('search-summary').textContent.includes('{query}') \
                            && document.querySelectorAll('#search-results .result').length > 0;"
                ),
            )
            .await;
        // Nothing widens a phone's page.
        let width = browser
            .js("return document.documentElement.scrollWidth;")
            .await;
        assert_eq!(width, 360, "after searching {query}");
    }
    browser
        .screenshot("card-hostile-text-phone.png", 360, None)
        .await;
    browser.viewport(360, 800).await;

    // The card's own text reads left to right around the reversed text:
    // the heading after a reversed title stays after it, and the quotes
    // around a reversed request stay around it.
    let order = browser
        .js("const chars = (e) => { const rects = []; \
               const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT); \
               for (let n = walk.nextNode(); n; n = walk.nextNode()) \
                 for (let i = 0; i < n.length; i++) { \
                   const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); \
                   rects.push(r.getBoundingClientRect()); } \
               return rects; }; \
             const result = document.querySelector('#search-results .result'); \
             const titled = chars(result.querySelector('.result-title')); \
             const title = titled[titled.length - 1]; \
             const heading = chars(result.querySelector('.heading')).find(r => r.width > 0); \
             const quoted = chars(document.querySelector('#working .request-text')); \
             const open = quoted[0], close = quoted[quoted.length - 1], inner = quoted.slice(1, -1); \
             return { heading_after_title: heading.left >= title.right - 1 || heading.top >= title.bottom - 1, \
                      quotes_around_request: inner.every(r => open.right <= r.left + 1 && r.right <= close.left + 1) };")
        .await;
    assert_eq!(
        order,
        json!({"heading_after_title": true, "quotes_around_request": true})
    );
    // An override is shown as a character, not obeyed: a path or a
    // session's name cannot pass for another.
    assert_eq!(
        browser
            .js("return [document.querySelector('#working .request-text').textContent.startsWith('“\u{FFFD}Add'), \
                         [...document.querySelectorAll('#session option')].some(o => o.textContent === '\u{FFFD}agent')];")
            .await,
        json!([true, true])
    );
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_without_javascript_says_so() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let browser = Browser::start().await;
    browser
        .cdp(
            "Emulation.setScriptExecutionDisabled",
            json!({"value": true}),
        )
        .await;
    let client = browser.client();
    client
        .goto(&format!("{}/", server.base_url))
        .await
        .expect("open the card");
    let text = client
        .find(Locator::Css("body"))
        .await
        .expect("the page")
        .text()
        .await
        .expect("its text");
    assert!(text.contains("This card needs JavaScript"), "{text}");
    assert!(text.contains("Note pages"), "{text}");
    assert!(
        !text.contains("Connecting"),
        "nothing waits forever: {text}"
    );
    browser.close().await;
    server.stop().await;
}
