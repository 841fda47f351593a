//! The web card: its JSON, rendered notes, security headers, and the card
//! itself in a real headless Chromium.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{wait_until, ServerOptions, TestBrain, TestServer};

const XSS_NOTE: &str = "Harbor/Security Notes.md";
const ANSWERED: [&str; 4] = [
    "Who owns the payments service?",
    "Which database do we use?",
    "When do we deploy?",
    "How much should the cancellation fee be?",
];
const OPEN: &str = "What is the office wifi password?";

async fn fetch(server: &TestServer, path: &str) -> reqwest::Response {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}{path}", server.base_url))
        .send()
        .await
        .unwrap()
}

async fn post_research(server: &TestServer, session: &str) -> Value {
    let mut questions: Vec<&str> = ANSWERED.to_vec();
    questions.push(OPEN);
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": "Add a refund button", "questions": questions, "session": session}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_shows_the_latest_research_of_a_session() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, empty) = server.get("/v1/card").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(empty["research"], Value::Null, "{empty}");
    assert_eq!(empty["sessions"], json!([]));

    let research = post_research(&server, "alpha").await;
    assert!(
        research["answered"].as_array().unwrap().len() > 3,
        "{research:#}"
    );
    let (_, card) = server.get("/v1/card?session=alpha").await;
    let facts = card["research"]["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 3, "{card:#}");
    for fact in facts {
        let answer = fact["answer"].as_str().unwrap();
        assert!(answer.chars().count() <= 150, "{answer}");
        let source = &fact["sources"][0];
        assert!(
            source["url"].as_str().unwrap().starts_with("/notes/"),
            "{fact}"
        );
    }
    assert!(card["research"]["more_facts"].as_u64().unwrap() >= 1);
    assert_eq!(card["research"]["open"], json!([{"question": OPEN}]));
    assert_eq!(card["marker"], "(self-research) ");

    let (_, other) = server.get("/v1/card?session=beta").await;
    assert_eq!(other["research"], Value::Null);
    post_research(&server, "beta").await;
    let (_, latest) = server.get("/v1/card").await;
    assert_eq!(latest["research"]["session"], "beta");
    assert_eq!(latest["sessions"], json!(["beta", "alpha"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn card_answers_are_cut_to_the_configured_length() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        args: vec![
            "--card-answer-chars".into(),
            "30".into(),
            "--card-facts".into(),
            "2".into(),
        ],
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    post_research(&server, "s").await;
    let (_, card) = server.get("/v1/card").await;
    let facts = card["research"]["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 2);
    for fact in facts {
        let answer = fact["answer"].as_str().unwrap();
        assert!(
            answer.chars().count() <= 30 && answer.ends_with('…'),
            "{answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn notes_render_with_their_html_escaped_and_wikilinks_linked() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let response = fetch(&server, "/notes/Harbor/Security%20Notes.md").await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.unwrap();
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(\"xss\")&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(html.contains("href=\"/\""), "no way back to the card");

    let html = fetch(&server, "/notes/Harbor/Runbooks/Deploy.md")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("href=\"/notes/Harbor/Runbooks/On-call.md\""),
        "{html}"
    );

    let (status, note) = server.get("/v1/notes/Harbor/Runbooks/Deploy.md").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(note["title"], "Deploy");
    assert!(note["source"].as_str().unwrap().contains("[[On-call]]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn paths_outside_the_brain_are_not_found() {
    let brain = TestBrain::sample();
    std::fs::write(brain.path().join("../outside.md"), "# secret").ok();
    let server = TestServer::start(&brain).await;
    for path in [
        "../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "../outside.md",
        ".noggin/.gitignore",
        "Harbor/Missing.md",
        "Harbor",
        "/etc/passwd",
    ] {
        let page = fetch(&server, &format!("/notes/{path}")).await;
        assert_eq!(page.status(), StatusCode::NOT_FOUND, "/notes/{path}");
        assert!(!page.text().await.unwrap().contains("root:"), "{path}");
        let (status, body) = server.get(&format!("/v1/notes/{path}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "/v1/notes/{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_carry_security_headers() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    for (path, content_type) in [
        ("/", "text/html"),
        ("/assets/card.js", "text/javascript"),
        ("/assets/card.css", "text/css"),
        ("/notes/People/Jonas%20Weber.md", "text/html"),
    ] {
        let response = fetch(&server, path).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let headers = response.headers();
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{csp}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with(content_type),
            "{path}"
        );
    }
    let html = fetch(&server, "/").await.text().await.unwrap();
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "inline script or style"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_token_notes_need_it_too() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        token: Some("s3cret".into()),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let path = "/notes/People/Jonas%20Weber.md";
    assert_eq!(
        fetch(&server, path).await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(fetch(&server, "/").await.status(), StatusCode::OK);
    let with_cookie = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}{path}", server.base_url))
        .header("Cookie", "noggin_token=s3cret")
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), StatusCode::OK);
}

/// chromedriver on a free port, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver() -> Driver {
    for binary in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        assert!(
            std::path::Path::new(binary).exists(),
            "{binary} is missing: install Debian's chromium and chromium-driver (.ci/run does)"
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("/usr/bin/chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    Driver { child, port }
}

async fn browser(driver: &Driver, profile: &std::path::Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                format!("--user-data-dir={}", profile.display()),
                "--window-size=1280,900",
            ],
        }),
    );
    let url = format!("http://127.0.0.1:{}", driver.port);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(client) => return client,
            Err(error) if std::time::Instant::now() > deadline => {
                panic!("cannot start headless chromium: {error}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

fn output_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("card");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn texts(client: &Client, css: &str) -> Vec<String> {
    let mut out = Vec::new();
    for element in client.find_all(Locator::Css(css)).await.unwrap() {
        out.push(element.text().await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_in_a_real_browser() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let driver = start_driver();
    let profile = tempfile::tempdir().unwrap();
    let client = browser(&driver, profile.path()).await;
    let result = drive(&client, &server).await;
    client.close().await.ok();
    result.unwrap();
}

async fn drive(client: &Client, server: &TestServer) -> Result<(), fantoccini::error::CmdError> {
    let out = output_dir();
    client.goto(&format!("{}/", server.base_url)).await?;
    // The empty state first, telling a new user what to do.
    let empty = client.find(Locator::Id("empty")).await?;
    assert!(empty.text().await?.contains("/v1/research"));
    let status = client.find(Locator::Id("status")).await?;
    wait_until(Duration::from_secs(10), "the status line", || async {
        status.text().await.is_ok_and(|t| t.contains("notes"))
    })
    .await;
    client
        .screenshot()
        .await
        .map(|png| std::fs::write(out.join("card-empty.png"), png))?
        .ok();

    // A research arrives; the card shows it without a reload.
    post_research(server, "refunds").await;
    wait_until(
        Duration::from_secs(5),
        "facts appear without a reload",
        || async {
            client
                .find_all(Locator::Css("#facts .fact .answer-text"))
                .await
                .is_ok_and(|f| f.len() == 3)
        },
    )
    .await;
    for answer in texts(client, "#facts .answer-text").await {
        assert!(answer.chars().count() <= 150, "{answer}");
        assert!(!answer.is_empty());
    }
    assert_eq!(texts(client, "#open li").await, [OPEN]);
    let desktop = out.join("card-desktop.png");
    std::fs::write(&desktop, client.screenshot().await?).unwrap();
    client.set_window_size(375, 812).await?;
    let phone = out.join("card-phone.png");
    std::fs::write(&phone, client.screenshot().await?).unwrap();
    println!(
        "card screenshots: {} {}",
        desktop.display(),
        phone.display()
    );
    client.set_window_size(1280, 900).await?;

    // Search with highlighted results, built from text, not HTML.
    client
        .find(Locator::Id("q"))
        .await?
        .send_keys("xss script")
        .await?;
    client
        .find(Locator::Css("#search-form button"))
        .await?
        .click()
        .await?;
    wait_until(Duration::from_secs(5), "search results", || async {
        client
            .find_all(Locator::Css("#hits .hit mark"))
            .await
            .is_ok_and(|m| !m.is_empty())
    })
    .await;
    let snippets = texts(client, "#hits .snippet").await.join("\n");
    assert!(
        snippets.contains("<script>") || snippets.contains("<img"),
        "{snippets}"
    );
    let injected: Value = client
        .execute(
            "return document.querySelectorAll('#hits script, #hits img, [onerror]').length;",
            vec![],
        )
        .await?;
    assert_eq!(injected, json!(0));
    std::fs::write(out.join("card-search.png"), client.screenshot().await?).unwrap();

    // A source link opens the rendered note.
    let link = client.find(Locator::Css("#facts .sources a")).await?;
    let href = link.attr("href").await?.unwrap_or_default();
    assert!(href.starts_with("/notes/"), "{href}");
    link.click().await?;
    wait_until(Duration::from_secs(5), "the note opens", || async {
        client
            .current_url()
            .await
            .is_ok_and(|u| u.path().starts_with("/notes/"))
    })
    .await;
    assert!(client.find(Locator::Css("article.note")).await.is_ok());
    client.find(Locator::LinkText("← Back to the card")).await?;

    // The note with hostile HTML shows it as text.
    client
        .goto(&format!(
            "{}/notes/{}",
            server.base_url,
            XSS_NOTE.replace(' ', "%20")
        ))
        .await?;
    let body = client
        .find(Locator::Css("article.note"))
        .await?
        .text()
        .await?;
    assert!(body.contains("<img src=x onerror=alert(1)>"), "{body}");
    assert!(body.contains("<script>alert(\"xss\")</script>"), "{body}");
    let injected: Value = client
        .execute(
            "return document.querySelectorAll('article script, article img, [onerror]').length;",
            vec![],
        )
        .await?;
    assert_eq!(injected, json!(0));
    std::fs::write(out.join("note-xss.png"), client.screenshot().await?).unwrap();
    Ok(())
}
