//! Context-loss analysis of agent trajectories: `POST
//! /v1/trajectories/analyze` and its page on the real server, `noggin
//! analyze` as a person runs it, both on real Claude Code and Codex CLI
//! transcripts (tests/fixtures/trajectories/), bad inputs, and the timeline
//! page in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::card::Browser;
use crate::helpers::{assert_error_shape, TestBrain, TestServer};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trajectories")
        .join(name)
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = fixture(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"))
}

async fn analyze(server: &TestServer, query: &str, body: Vec<u8>) -> (StatusCode, Value) {
    server
        .request(
            Method::POST,
            &format!("/v1/trajectories/analyze{query}"),
            Some(body.into()),
        )
        .await
}

fn patterns(analysis: &Value) -> Vec<&str> {
    analysis["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["pattern"].as_str().expect("a pattern"))
        .collect()
}

/// Checks what every finding has: its calls, a severity, what was lost.
fn assert_findings_are_whole(analysis: &Value) {
    for finding in analysis["findings"].as_array().expect("findings") {
        let severity = finding["severity"].as_u64().expect("severity");
        assert!((1..=10).contains(&severity), "{finding}");
        assert!(!finding["lost"].as_array().expect("lost").is_empty());
        assert!(!finding["summary"].as_str().expect("summary").is_empty());
        let calls = finding["calls"].as_array().expect("calls");
        assert!(!calls.is_empty(), "{finding}");
        for call in calls {
            assert!(call["index"].is_u64() && call["tool"].is_string(), "{call}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn real_transcripts_of_both_agents_are_analysed_over_http() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;

    // A Claude Code session with an automatic compaction.
    let (status, claude) =
        analyze(&server, "", fixture_bytes("claude-code-compaction.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{claude}");
    assert_eq!(claude["format"], "claude-code");
    assert_eq!(claude["calls"], 48);
    assert_eq!(claude["skipped_lines"], 0);
    assert_eq!(claude["compactions"].as_array().map(Vec::len), Some(1));
    let found = patterns(&claude);
    assert!(found.contains(&"reread-after-compaction"), "{found:?}");
    assert!(found.contains(&"reread"), "{found:?}");
    assert_findings_are_whole(&claude);
    let after = claude["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["pattern"] == "reread-after-compaction")
        .unwrap();
    assert_eq!(
        after["calls"][0]["path"],
        "/Users/user/repo/src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md"
    );
    let instructions = claude["keep"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(
        instructions.contains("/Users/user/repo/src/agents/core/metrics/types.ts"),
        "{instructions}"
    );
    assert!(
        instructions.contains("> update phase 4.1 document"),
        "{instructions}"
    );

    // A Claude Code session with failed calls.
    let (status, errors) = analyze(&server, "", fixture_bytes("claude-code-errors.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{errors}");
    assert_eq!(errors["calls"], 76);
    assert_eq!(errors["errors"], 5);
    let found = patterns(&errors);
    assert!(found.contains(&"searches-after-error"), "{found:?}");
    assert!(found.contains(&"repeated-failure"), "{found:?}");
    assert_findings_are_whole(&errors);

    // A Codex CLI rollout.
    let (status, codex) = analyze(&server, "", fixture_bytes("codex-rollout.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{codex}");
    assert_eq!(codex["format"], "codex");
    assert_eq!(codex["calls"], 52, "write_stdin polls are not calls");
    assert_eq!(codex["kinds"]["write"], 3, "three apply_patch calls");
    // Two of its five non-zero exits are `rg` finding nothing: no failures.
    assert_eq!(codex["errors"], 3, "{}", codex["keep"]["errors"]);
    // Where its shell searches matched is read from their output.
    let searches = codex["keep"]["searches"].as_array().expect("searches");
    assert!(
        searches.iter().any(|s| s["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|p| p == "docs/AGENTS.md"))),
        "{searches:?}"
    );
    let found = patterns(&codex);
    assert!(found.contains(&"grep-heavy"), "{found:?}");
    assert!(found.contains(&"searches-after-error"), "{found:?}");
    assert_findings_are_whole(&codex);
    let events = codex["keep"]["events"].as_array().expect("events");
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    for wanted in ["goal", "tool_call", "progress", "user_message"] {
        assert!(types.contains(&wanted), "{wanted} in {types:?}");
    }
    // Its failures are a search of a folder that is not there and a poll
    // of a closed terminal: named in the instructions, but no failure the
    // session is left with (its build and tests passed).
    assert!(!types.contains(&"failure"), "{types:?}");
    assert!(
        codex["keep"]["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("node_modules/opencode-ai: No such file")),
        "{}",
        codex["keep"]["instructions"]
    );
    assert!(events
        .iter()
        .all(|e| e["type"] != "tool_call" || e["arguments"]["file_path"].is_string()));

    // An older Codex rollout and a plain list of calls.
    let (status, legacy) = analyze(&server, "", fixture_bytes("codex-legacy.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{legacy}");
    assert_eq!(
        (legacy["format"].clone(), legacy["calls"].clone()),
        ("codex".into(), 15.into())
    );
    assert!(patterns(&legacy).contains(&"repeated-failure"));
    assert_eq!(legacy["errors"], 3, "`rg` finding nothing is no error");
    assert!(
        legacy["keep"]["errors"]
            .as_array()
            .expect("errors to keep")
            .iter()
            .all(|e| !e["subject"].as_str().unwrap_or_default().starts_with("rg ")),
        "{}",
        legacy["keep"]["errors"]
    );
    let (status, list) = analyze(&server, "", fixture_bytes("tool-list.json")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["format"], "tool-list");
    assert!(patterns(&list).contains(&"reread-after-compaction"));

    // Thresholds are query parameters.
    let (status, strict) = analyze(
        &server,
        "?max_greps=100&same_file_reads=5&searches_after_error=50",
        fixture_bytes("codex-rollout.jsonl"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strict}");
    assert_eq!(strict["thresholds"]["max_greps"], 100);
    let found = patterns(&strict);
    assert!(
        !found.contains(&"grep-heavy") && !found.contains(&"searches-after-error"),
        "{found:?}"
    );

    // Each analysis has a page with its timeline.
    for analysis in [&claude, &codex] {
        let link = analysis["link"].as_str().expect("link");
        assert_eq!(
            link,
            format!("/trajectories/{}", analysis["id"].as_str().unwrap())
        );
        let response = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .get(format!("{}{link}", server.base_url))
            .send()
            .await
            .expect("get the page");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/html; charset=utf-8"
        );
        let page = response.text().await.expect("the page");
        let calls = analysis["calls"].as_u64().unwrap() as usize;
        assert_eq!(page.matches("<rect id=\"c").count(), calls);
        assert!(page.contains("href=\"/trajectory.css\""));
        assert!(!page.contains("<script"));
    }
    let (status, _) = server
        .get("/trajectories/0123456789abcdef0123456789abcdef")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = server.get("/trajectories/..%2F..%2Fetc%2Fpasswd").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Not UTF-8 once decoded: the same page, not axum's plain-text 400.
    let (status, _) = server.get("/trajectories/%FF").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, css) = server.get("/trajectory.css").await;
    assert_eq!(status, StatusCode::OK);
    assert!(css
        .as_str()
        .unwrap_or_default()
        .contains("prefers-color-scheme: dark"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_trajectories_get_clear_errors_and_leave_nothing_behind() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let binary: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    let cut = {
        let list = fixture_bytes("tool-list.json");
        list[..list.len() / 2].to_vec()
    };
    let cases: Vec<(&str, Vec<u8>, &str, StatusCode, &str)> = vec![
        (
            "",
            Vec::new(),
            "empty-trajectory",
            StatusCode::BAD_REQUEST,
            "empty",
        ),
        (
            "",
            binary,
            "binary-trajectory",
            StatusCode::BAD_REQUEST,
            "binary",
        ),
        (
            "",
            cut,
            "invalid-trajectory",
            StatusCode::BAD_REQUEST,
            "cut short",
        ),
        (
            "",
            b"# notes\nnot a transcript\n{\"type\":\"unknown\"}\n".to_vec(),
            "no-calls",
            StatusCode::BAD_REQUEST,
            "no tool call could be read",
        ),
        (
            "?read_share=1.5",
            fixture_bytes("tool-list.json"),
            "invalid-threshold",
            StatusCode::BAD_REQUEST,
            "read_share",
        ),
        (
            "?max_grep=3",
            fixture_bytes("tool-list.json"),
            "invalid-query",
            StatusCode::BAD_REQUEST,
            "max_grep",
        ),
    ];
    for (query, body, code, status, says) in cases {
        let (got, response) = analyze(&server, query, body).await;
        assert_eq!(got, status, "{code}: {response}");
        assert_error_shape(&response, code);
        assert_eq!(response["error"]["code"], code, "{response}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{code}: {message}");
    }

    // A 50 MB upload is refused from its announced length, before a byte of
    // it is read.
    let (status, answer) = server
        .announce_body("/v1/trajectories/analyze", 50 * 1024 * 1024)
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    assert_eq!(answer["error"]["code"], "body-too-large", "{answer}");
    assert!(answer.to_string().contains("10485760"), "{answer}");

    // A JSONL transcript cut mid-line loses its last line, not the rest.
    let session = fixture_bytes("claude-code-errors.jsonl");
    let cut_line = session[..session.len() - 40].to_vec();
    let (status, body) = analyze(&server, "", cut_line).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["skipped_lines"], 1);

    // Over the server's 1 MiB body limit, under the route's 10 MiB.
    let mut big = Vec::new();
    while big.len() < 3 * 1024 * 1024 {
        big.extend_from_slice(&fixture_bytes("claude-code-compaction.jsonl"));
    }
    let (status, body) = analyze(&server, "", big).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["calls"].as_u64().unwrap() > 48 * 10);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_analysis_route_needs_the_token_and_the_page_its_id() {
    let brain = TestBrain::empty();
    let options = crate::helpers::ServerOptions {
        token: Some("s3cret".to_string()),
        ..Default::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let (status, body) = server
        .request_as(
            Method::POST,
            "/v1/trajectories/analyze",
            None,
            Some(fixture_bytes("tool-list.json").into()),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, body) = analyze(&server, "", fixture_bytes("tool-list.json")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let link = body["link"].as_str().unwrap();
    let (status, _) = server.request_as(Method::GET, link, None, None).await;
    assert_eq!(status, StatusCode::OK, "the id is the page's pass");

    let (status, document) = server.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let analyze = &document["paths"]["/v1/trajectories/analyze"]["post"];
    let parameters: Vec<&str> = analyze["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(parameters.contains(&"max_greps") && parameters.contains(&"read_share"));
    assert!(analyze["responses"]["413"].is_object());
    assert!(document["paths"]["/trajectories/{id}"]["get"].is_object());
    server.stop().await;
}

// --- the command line ----------------------------------------------------------

fn noggin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_noggin"));
    // The model, when installed, is for the tests that ask for it.
    command.env("NOGGIN_NO_MODEL", "1");
    command.stdin(Stdio::null());
    command
}

fn output_text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn analyze_reports_real_transcripts_of_both_agents() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (name, format, pattern) in [
        (
            "claude-code-compaction.jsonl",
            "Claude Code session",
            "re-reading after a compaction",
        ),
        ("codex-rollout.jsonl", "Codex CLI rollout", "many greps"),
    ] {
        let html = dir.path().join(format!("{name}.html"));
        let output = noggin()
            .arg("analyze")
            .arg(fixture(name))
            .arg("--html")
            .arg(&html)
            .output()
            .expect("run noggin analyze");
        let (stdout, stderr) = output_text(&output);
        assert!(output.status.success(), "{stderr}");
        assert!(stdout.starts_with(format), "{stdout}");
        assert!(stdout.contains(pattern), "{stdout}");
        assert!(stdout.contains("What to keep"), "{stdout}");
        let page = std::fs::read_to_string(&html).expect("the page was written");
        assert!(page.contains("<style>") && page.contains("<svg class=\"tl\""));
        assert!(!page.contains("<script"));
    }

    // --json is the HTTP response without id and link; thresholds are flags.
    let output = noggin()
        .args(["analyze", "--json", "--max-greps", "100"])
        .arg(fixture("codex-rollout.jsonl"))
        .output()
        .expect("run noggin analyze --json");
    let (stdout, stderr) = output_text(&output);
    assert!(output.status.success(), "{stderr}");
    let analysis: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(analysis["calls"], 52);
    assert_eq!(analysis["thresholds"]["max_greps"], 100);
    assert!(!patterns(&analysis).contains(&"grep-heavy"));

    // `-` reads standard input.
    let mut child = noggin()
        .args(["analyze", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start noggin analyze -");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(&fixture_bytes("claude-code-errors.jsonl"))
            .expect("write the transcript");
    }
    let output = child.wait_with_output().expect("wait for noggin");
    assert!(output.status.success());
    let analysis: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(analysis["calls"], 76);
}

#[test]
fn analyze_refuses_bad_input_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write an input");
        path
    };
    let big = write("big.jsonl", &vec![b'{'; 11 * 1024 * 1024]);
    let cases = [
        (write("empty.jsonl", b""), "empty"),
        (
            write("binary.bin", &[0x89, b'P', b'N', b'G', 0, 0, 0, 13]),
            "binary",
        ),
        (
            write("cut.json", b"[{\"tool\": \"Read\", \"argu"),
            "cut short",
        ),
        (
            write("prose.txt", b"hello\nworld\n"),
            "no tool call could be read",
        ),
        (big, "over the limit"),
        (dir.path().join("missing.jsonl"), "cannot read"),
    ];
    for (path, says) in cases {
        let output = noggin()
            .arg("analyze")
            .arg(&path)
            .output()
            .expect("run noggin analyze");
        let (stdout, stderr) = output_text(&output);
        assert_eq!(output.status.code(), Some(1), "{path:?}: {stdout}{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(stderr.contains(says), "{path:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

// --- the page in a real browser -----------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn the_timeline_page_in_a_browser() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let (status, hostile) = analyze(&server, "", fixture_bytes("hostile.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{hostile}");
    let (status, claude) =
        analyze(&server, "", fixture_bytes("claude-code-compaction.jsonl")).await;
    assert_eq!(status, StatusCode::OK, "{claude}");
    // The transcript's terminal escapes (ESC, BEL) do not reach the page.
    assert!(String::from_utf8_lossy(&fixture_bytes("hostile.jsonl")).contains("\\u001b"));
    let page = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!(
            "{}{}",
            server.base_url,
            hostile["link"].as_str().unwrap()
        ))
        .send()
        .await
        .expect("the hostile page")
        .text()
        .await
        .expect("its text");
    assert!(
        !page
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{page}"
    );

    let browser = Browser::start().await;
    let client = browser.client();

    // Nothing from a hostile transcript runs or becomes markup.
    client
        .goto(&format!(
            "{}{}",
            server.base_url,
            hostile["link"].as_str().unwrap()
        ))
        .await
        .expect("open the hostile page");
    browser
        .wait_for_js(
            "the timeline is drawn",
            "return document.querySelectorAll('svg.tl rect.call').length === 7;",
        )
        .await;
    let markup = browser
        .js(
            "return { scripts: document.scripts.length, imgs: document.images.length, \
                      iframes: document.querySelectorAll('iframe, b, svg.tl svg').length, \
                      alerted: !!window.alerted, \
                      path: document.querySelector('#c0 title').textContent };",
        )
        .await;
    assert_eq!(markup["scripts"], 0, "{markup}");
    assert_eq!(markup["imgs"], 0, "{markup}");
    assert_eq!(markup["iframes"], 0, "{markup}");
    assert!(
        markup["path"]
            .as_str()
            .unwrap()
            .contains("notes/<img src=x onerror=\"alert(1)\">.md"),
        "shown as text: {markup}"
    );
    let instructions = browser
        .js("return document.querySelector('pre.instructions').textContent;")
        .await;
    assert!(instructions
        .as_str()
        .unwrap()
        .contains("<iframe src=javascript:alert(5)>"));

    // The real session: one mark per call, errors and compactions marked,
    // re-reads joined, findings beside it.
    client
        .goto(&format!(
            "{}{}",
            server.base_url,
            claude["link"].as_str().unwrap()
        ))
        .await
        .expect("open the page");
    browser.viewport(1280, 900).await;
    browser
        .wait_for_js(
            "the timeline is drawn",
            "return document.querySelectorAll('svg.tl rect.call').length === 48;",
        )
        .await;
    let drawn = browser
        .js("const tl = document.querySelector('svg.tl'); \
             const f = document.querySelector('.findings').getBoundingClientRect(); \
             const t = document.querySelector('.timeline').getBoundingClientRect(); \
             return { compactions: tl.querySelectorAll('line.compaction').length, \
                      arcs: tl.querySelectorAll('g.reread path').length, \
                      kinds: new Set([...tl.querySelectorAll('rect.call')].map(r => getComputedStyle(r).fill)).size, \
                      findings: document.querySelectorAll('.finding').length, \
                      beside: f.left >= t.right - 1, \
                      overflow: document.documentElement.scrollWidth > window.innerWidth };")
        .await;
    assert_eq!(drawn["compactions"], 1, "{drawn}");
    assert!(drawn["arcs"].as_u64().unwrap() >= 4, "{drawn}");
    assert!(
        drawn["kinds"].as_u64().unwrap() >= 3,
        "colours by kind: {drawn}"
    );
    assert_eq!(
        drawn["findings"],
        claude["findings"].as_array().unwrap().len()
    );
    assert_eq!(
        drawn["beside"], true,
        "findings beside the timeline: {drawn}"
    );
    assert_eq!(drawn["overflow"], false, "{drawn}");
    let desktop = browser
        .screenshot("trajectory-desktop.png", 1280, Some(900))
        .await;

    // On a phone: one column, nothing wider than the screen; dark mode.
    browser.viewport(375, 812).await;
    let phone = browser
        .js(
            "const f = document.querySelector('.findings').getBoundingClientRect(); \
             const t = document.querySelector('.timeline').getBoundingClientRect(); \
             const svg = document.querySelector('svg.tl').getBoundingClientRect(); \
             return { stacked: f.top >= t.bottom - 1, svg: svg.width, \
                      overflow: document.documentElement.scrollWidth > window.innerWidth };",
        )
        .await;
    assert_eq!(phone["stacked"], true, "{phone}");
    assert_eq!(phone["overflow"], false, "{phone}");
    assert!(phone["svg"].as_f64().unwrap() <= 375.0, "{phone}");
    let light_phone = browser
        .screenshot("trajectory-phone.png", 375, Some(812))
        .await;
    browser.prefer_color_scheme("dark").await;
    let background = browser
        .js("return getComputedStyle(document.body).backgroundColor;")
        .await;
    assert_ne!(
        background, "rgb(250, 250, 249)",
        "dark mode changes the page"
    );
    let dark_phone = browser
        .screenshot("trajectory-phone-dark-full.png", 375, None)
        .await;
    for png in [desktop, light_phone, dark_phone] {
        let bytes = std::fs::read(&png).expect("the screenshot");
        assert!(bytes.len() > 1000, "{png:?} is not empty");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png:?} is a PNG");
    }
    browser.close().await;
    server.stop().await;
}
