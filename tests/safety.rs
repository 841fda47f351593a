//! Nothing lost, no open door: writers in several processes, an editor
//! saving while answers are appended, a command run while the server starts,
//! foreign `Host` and `Origin` headers, and clients that dawdle.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use noggin::knowledge::note::read_entries;
use noggin::knowledge::{Answer, Knowledge, Settings};
use serde_json::{json, Value};

use crate::helpers::{shared_eval, ServerOptions, TestBrain, TestServer};

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 22).expect("a valid date")
}

/// `noggin` with none of the caller's `NOGGIN_*` settings.
fn noggin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_noggin"));
    // The model, when installed, is for the tests that ask for it.
    command.env("NOGGIN_NO_MODEL", "1");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("NOGGIN_") {
            command.env_remove(name);
        }
    }
    command.env("RUST_LOG", "warn").stdin(Stdio::null());
    command
}

/// Sends `request` as is and returns the status code and the body (empty
/// when the server closed the connection without answering).
fn raw_request(base_url: &str, request: &str) -> (u16, String) {
    raw_request_waiting(base_url, request, Duration::from_secs(10))
}

/// `raw_request`, waiting at most `patience` for the answer.
fn raw_request_waiting(base_url: &str, request: &str, patience: Duration) -> (u16, String) {
    let addr = base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(patience))
        .expect("a read timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn get_with(base_url: &str, path: &str, host: &str, origin: Option<&str>) -> (u16, String) {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    raw_request(
        base_url,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_commands_and_twenty_requests_on_one_note_keep_all_forty_answers() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        knowledge: Settings {
            today: Some(day()),
            ..Settings::default()
        },
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let prompt = "Plan the harbour festival";
    let answer = |who: &str, i: usize| format!("The {who} writer number {i} confirms this detail.");
    let mut children = Vec::new();
    for i in 0..20 {
        let child = noggin()
            .args(["remember", "--brain"])
            .arg(brain.path())
            .args(["--today", "2026-11-22", "--prompt", prompt])
            .args(["-q", &format!("Command question {i}?")])
            .args(["-a", &answer("command", i)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start noggin remember");
        children.push(child);
    }
    let mut posts = Vec::new();
    for i in 0..20 {
        let body = json!({"prompt": prompt, "qa": [
            {"question": format!("Request question {i}?"), "answer": answer("request", i)}]});
        let url = format!("{}/v1/answers", server.base_url);
        posts.push(tokio::spawn(async move {
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let response = client.post(url).json(&body).send().await.expect("post");
            let status = response.status();
            let body: Value = response.json().await.expect("JSON");
            (status, body)
        }));
    }
    for post in posts {
        let (status, body) = post.await.expect("a post");
        assert!(status.is_success(), "{status}: {body}");
        assert_eq!(
            body["saved"][0]["questions"].as_array().map(Vec::len),
            Some(1),
            "{body}"
        );
    }
    for child in children {
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("join")
            .expect("noggin remember ran");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("saved 1 answer"),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("(pid") && stdout.contains("its watcher indexes the note"),
            "the command should name the server that indexes the note: {stdout}"
        );
    }
    let text = brain.read("Alignment Knowledge/2026-11-22 Plan the harbour festival.md");
    let entries = read_entries(&text);
    let found: HashSet<(String, String)> = entries
        .iter()
        .map(|e| (e.question.clone(), e.answer.clone()))
        .collect();
    for i in 0..20 {
        for (kind, who) in [("Command", "command"), ("Request", "request")] {
            let wanted = (format!("{kind} question {i}?"), answer(who, i));
            assert!(found.contains(&wanted), "missing {wanted:?} in\n{text}");
        }
    }
    assert_eq!(entries.len(), 40, "{text}");
    server.stop().await;
}

/// What a careful editor does on save: write the whole buffer to a
/// temporary file, check that the note did not change on disk since it was
/// read, and swap the file in. A plain rename after the check leaves a
/// window between the two that no other writer can see or close (README,
/// "Safety"); on a loaded machine the test's own thread can be descheduled
/// right there. So this editor swaps atomically (`RENAME_EXCHANGE`) and puts
/// back what it displaced when that is not what it read, as noggin does.
fn editor_save(note: &Path, read: &[u8], new_text: &str) -> bool {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let temp = note.with_file_name(".note.md.swp");
    std::fs::write(&temp, new_text).expect("the editor writes its temp file");
    if std::fs::read(note).ok().as_deref() != Some(read) {
        let _ = std::fs::remove_file(&temp);
        return false;
    }
    renameat_with(CWD, &temp, CWD, note, RenameFlags::EXCHANGE).expect("the editor swaps");
    let displaced = std::fs::read(&temp).expect("the editor reads what it displaced");
    if displaced != read {
        // Someone wrote between the check and the swap: theirs goes back.
        renameat_with(CWD, &temp, CWD, note, RenameFlags::EXCHANGE).expect("the editor swaps back");
        let _ = std::fs::remove_file(&temp);
        return false;
    }
    let _ = std::fs::remove_file(&temp);
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_saving_in_a_loop_loses_no_answer_and_no_save() {
    let brain = TestBrain::empty();
    let root = std::fs::canonicalize(brain.path()).expect("canonical brain");
    let knowledge = Knowledge::new(
        &root,
        Settings {
            today: Some(day()),
            ..Settings::default()
        },
    );
    let prompt = "Keep the shared notes tidy";
    let first = Answer {
        question: "Append question 0?".into(),
        answer: "The first answer that creates the note.".into(),
        source: None,
    };
    knowledge
        .remember(prompt, std::slice::from_ref(&first))
        .await
        .expect("the first answer");
    let note = root.join("Alignment Knowledge/2026-11-22 Keep the shared notes tidy.md");

    // The editor: every save adds a line under its own heading at the end
    // of the note and drops its line from ten saves ago, so each save is in
    // time overwritten by a later one. Before each save it checks that the
    // lines its last save left are still there: one still missing a second
    // later means someone else's write replaced that save.
    const KEPT: usize = 10;
    let stop = Arc::new(AtomicBool::new(false));
    let (saves, clobbered, transient) = (
        Arc::new(Mutex::new(0usize)),
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(AtomicUsize::new(0)),
    );
    let editor = {
        let (stop, note) = (stop.clone(), note.clone());
        let (saves, clobbered) = (saves.clone(), clobbered.clone());
        let transient = transient.clone();
        std::thread::spawn(move || {
            let mut k = 0usize;
            let mut expected: Vec<String> = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let read = std::fs::read(&note).expect("the editor reads the note");
                let text = String::from_utf8(read.clone()).expect("UTF-8");
                if expected.iter().any(|line| !text.contains(line.as_str())) {
                    // noggin's version can stand in place of a save for the
                    // moment between its swap and its swap back: only a
                    // save still missing once that is surely over is lost
                    // (nobody else writes these lines).
                    transient.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_secs(1));
                    let now = std::fs::read_to_string(&note).expect("the editor reads again");
                    for line in &expected {
                        if !now.contains(line.as_str()) {
                            clobbered.lock().unwrap().push(line.clone());
                        }
                    }
                }
                let (head, _) = text.split_once("\n## My notes\n").unwrap_or((&text, ""));
                let mut mine: Vec<String> = (k.saturating_sub(KEPT - 1)..=k)
                    .map(|j| format!("- user save {j}\n"))
                    .collect();
                let new_text = format!("{head}\n## My notes\n{}", mine.concat());
                if editor_save(&note, &read, &new_text) {
                    expected = std::mem::take(&mut mine);
                    *saves.lock().unwrap() += 1;
                    k += 1;
                }
                // About a hundred saves a second, far faster than a person,
                // at uneven intervals.
                std::thread::sleep(Duration::from_micros(500 + (k as u64 * 7919) % 20_000));
            }
            expected
        })
    };
    let mut acknowledged = vec![first];
    let mut busy = 0;
    // A hundred appends at least, and on until the editor has saved a few
    // times in between (however fast the disk makes the appends).
    let mut i = 0;
    while i < 100 || *saves.lock().unwrap() <= 10 {
        i += 1;
        assert!(i <= 10_000, "the editor never got to save");
        let given = Answer {
            question: format!("Append question {i}?"),
            answer: format!("Answer number {i}, given while the editor saves."),
            source: None,
        };
        // An editor saving faster than noggin can read, append and swap
        // makes it give up (503 over HTTP): not acknowledged, nothing lost.
        match knowledge
            .remember(prompt, std::slice::from_ref(&given))
            .await
        {
            Ok(outcome) if !outcome.saved.is_empty() => acknowledged.push(given),
            Ok(outcome) => panic!("not saved: {outcome:?}"),
            Err(noggin::knowledge::Error::KeptChanging(_)) => busy += 1,
            Err(error) => panic!("an append failed: {error}"),
        }
    }
    stop.store(true, Ordering::SeqCst);
    let last_save = editor.join().expect("the editor thread");

    let text = std::fs::read_to_string(&note).expect("the note");
    let entries = read_entries(&text);
    for given in &acknowledged {
        assert!(
            entries
                .iter()
                .any(|e| e.question == given.question && e.answer == given.answer),
            "acknowledged answer {:?} lost:\n{text}",
            given.question
        );
    }
    let saves = *saves.lock().unwrap();
    assert!(saves > 10, "the editor hardly saved: {saves}");
    let clobbered = clobbered.lock().unwrap();
    assert!(clobbered.is_empty(), "user saves replaced: {clobbered:?}");
    for line in &last_save {
        assert!(
            text.contains(line.as_str()),
            "the last user save is lost:\n{text}"
        );
    }
    assert!(
        acknowledged.len() > 50,
        "noggin hardly got an answer in: {} acknowledged, {busy} gave up",
        acknowledged.len()
    );
    eprintln!(
        "editor loop: {} answers acknowledged ({busy} gave up), {saves} user saves, all kept \
         ({} seen for a moment without the latest save)",
        acknowledged.len(),
        transient.load(Ordering::SeqCst)
    );
}
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_run_while_the_server_starts_leaves_its_index_alone() {
    let vault = shared_eval("vaults/tldr-pages-en");
    let brain = TestBrain::from_dir(&vault);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let _server = Stopped(
        noggin()
            .args(["serve", "--brain"])
            .arg(brain.path())
            .args([
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--today",
                "2026-11-22",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start noggin serve"),
    );
    std::thread::sleep(Duration::from_millis(50));
    let remember = noggin()
        .args(["remember", "--brain"])
        .arg(brain.path())
        .args(["--today", "2026-11-22", "--prompt", "Start-up race"])
        .args(["-q", "Which word marks this answer?"])
        .args([
            "-a",
            "The marker word is quokkaberry, written during start-up.",
        ])
        .output()
        .expect("run noggin remember");
    let stdout = String::from_utf8_lossy(&remember.stdout).into_owned();
    assert!(remember.status.success(), "{stdout}");
    assert!(stdout.contains("saved 1 answer"), "{stdout}");

    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        assert!(
            Instant::now() < deadline,
            "the server never finished indexing"
        );
        if let Ok(response) = client.get(format!("{base}/v1/status")).send().await {
            let status: Value = response.json().await.unwrap_or_default();
            if status["indexing"] == false && status["last_reconcile"].is_object() {
                break status;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status["healthy"], true, "{status}");
    assert!(status["notes"].as_u64().unwrap_or(0) > 5000, "{status}");
    for q in ["tar", "quokkaberry"] {
        // The answer may have been written after the server's first scan:
        // then its watcher indexes it within a second or so.
        let found_by = Instant::now() + Duration::from_secs(10);
        let hits = loop {
            let hits: Value = client
                .get(format!("{base}/v1/search?q={q}"))
                .send()
                .await
                .expect("search")
                .json()
                .await
                .expect("JSON");
            if hits["hits"].as_array().is_some_and(|h| !h.is_empty()) || Instant::now() >= found_by
            {
                break hits;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(
            hits["hits"].as_array().is_some_and(|h| !h.is_empty()),
            "no hits for {q}: {hits}"
        );
    }
}

// Multi-threaded: the test talks to the server with blocking sockets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused_and_the_card_still_opens() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let base = &server.base_url;
    let port = base.rsplit(':').next().expect("a port");
    let note = "/notes/Harbor/Decisions/ADR-001%20PostgreSQL%20over%20MongoDB.md";
    for path in [
        "/v1/status",
        "/v1/search?q=deploy",
        note,
        "/",
        "/healthz",
        "/nope",
    ] {
        let (status, body) = get_with(base, path, &format!("evil.example:{port}"), None);
        assert_eq!(status, 403, "Host evil.example on {path}: {body}");
        let body: Value = serde_json::from_str(&body).expect("JSON error");
        assert_eq!(body["error"]["code"], "forbidden-host", "{body}");
        let (status, body) = get_with(
            base,
            path,
            &format!("127.0.0.1:{port}"),
            Some("http://evil.example"),
        );
        assert_eq!(status, 403, "Origin evil.example on {path}: {body}");
        assert!(body.contains("forbidden-origin"), "{body}");
    }
    // A rebinding page cannot post answers either, and nothing is written.
    let before = std::fs::read_dir(brain.note("Alignment Knowledge"))
        .map(|d| d.count())
        .unwrap_or(0);
    let answer =
        r#"{"prompt":"p","qa":[{"question":"q?","answer":"an answer long enough to keep"}]}"#;
    let (status, _) = raw_request(
        base,
        &format!(
            "POST /v1/answers HTTP/1.1\r\nHost: evil.example:{port}\r\nOrigin: http://evil.example:{port}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
            answer.len()
        ),
    );
    assert_eq!(status, 403);
    let knowledge = std::fs::read_dir(brain.note("Alignment Knowledge"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(knowledge, before, "a refused request wrote a note");

    for host in ["localhost", "127.0.0.1"] {
        let host = format!("{host}:{port}");
        let origin = format!("http://{host}");
        let (status, page) = get_with(base, "/", &host, None);
        assert_eq!(status, 200, "the card at {host}");
        assert!(
            page.contains("<html") || page.contains("<!doctype"),
            "{page}"
        );
        for path in ["/v1/card", "/v1/status", note] {
            let (status, body) = get_with(base, path, &host, Some(&origin));
            assert_eq!(status, 200, "{path} from the card at {host}: {body}");
        }
        // No CORS: nothing invites other origins to read responses.
        let (_, raw) = raw_request(
            base,
            &format!(
                "OPTIONS /v1/answers HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n\
                 Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
            ),
        );
        assert!(
            !raw.to_ascii_lowercase().contains("access-control-allow"),
            "{raw}"
        );
    }
    // /mcp follows the same door as every route: the loopback names the
    // Safety section lists are served, a foreign one is refused alike.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mcp = |host: &str| {
        raw_request(
            base,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{ping}",
                ping.len()
            ),
        )
    };
    for host in ["foo.localhost", "127.0.0.2", "localhost"] {
        let (status, raw) = mcp(&format!("{host}:{port}"));
        assert_eq!(status, 200, "/mcp at {host}: {raw}");
    }
    let (status, raw) = mcp(&format!("evil.example:{port}"));
    assert_eq!(status, 403, "{raw}");
    assert!(raw.contains("forbidden-host"), "{raw}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dawdling_clients_are_cut_off_and_huge_bodies_refused_up_front() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        args: ["--header-timeout-ms", "300", "--body-timeout-ms", "300"]
            .map(String::from)
            .to_vec(),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let addr = server.base_url.trim_start_matches("http://").to_string();
    let closed_within = |mut stream: TcpStream, what: &str| {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        let mut rest = Vec::new();
        match stream.read_to_end(&mut rest) {
            Ok(_) => rest,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => rest,
            Err(e) => panic!("{what}: the connection stayed open ({e})"),
        }
    };

    // Half a header, then nothing.
    let mut slow = TcpStream::connect(&addr).expect("connect");
    slow.write_all(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .expect("send half a header");
    closed_within(slow, "a slow header");

    // A kept-alive connection that goes quiet after its first request.
    let mut idle = TcpStream::connect(&addr).expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("send a request");
    let rest = closed_within(idle, "an idle keep-alive connection");
    assert!(String::from_utf8_lossy(&rest).starts_with("HTTP/1.1 200"));

    // A body that never comes: told so, not that its JSON is broken.
    let mut stalled = TcpStream::connect(&addr).expect("connect");
    stalled
        .write_all(
            b"POST /v1/research HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"questions\":",
        )
        .expect("send part of a body");
    let response = String::from_utf8_lossy(&closed_within(stalled, "a stalled body")).into_owned();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("body-timeout"), "{response}");

    // A body trickled a byte at a time, each pause shorter than the
    // timeout: cut off all the same once the time is up.
    let trickled = TcpStream::connect(&addr).expect("connect");
    let mut writer = trickled.try_clone().expect("a second handle");
    let trickler = std::thread::spawn(move || {
        writer
            .write_all(
                b"POST /v1/research HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                  Content-Type: application/json\r\nContent-Length: 100\r\n\r\n",
            )
            .expect("send the head");
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(100));
            if writer.write_all(b" ").is_err() {
                break;
            }
        }
    });
    let response =
        String::from_utf8_lossy(&closed_within(trickled, "a trickled body")).into_owned();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    trickler.join().expect("the trickling thread");

    // Ten gigabytes announced: refused before a byte of it is read.
    let mut huge = TcpStream::connect(&addr).expect("connect");
    huge.write_all(
        b"POST /v1/answers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Content-Length: 10000000000\r\n\r\n",
    )
    .expect("send the head");
    let response = String::from_utf8_lossy(&closed_within(huge, "a huge body")).into_owned();
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("body-too-large"), "{response}");

    // The server still answers.
    let (status, body) = server.get("/v1/status").await;
    assert!(status.is_success(), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_gets_its_413_not_a_broken_pipe() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let addr = server.base_url.trim_start_matches("http://").to_string();
    // Sent whole before the answer is read, as most clients do; larger than
    // the kernel buffers of a loopback connection take without a reader.
    let body = "x".repeat(12 << 20);
    for _ in 0..2 {
        let mut over = TcpStream::connect(&addr).expect("connect");
        over.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("a read timeout");
        over.write_all(
            format!(
                "POST /v1/answers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .expect("send the head");
        over.write_all(body.as_bytes())
            .expect("the whole body is taken before the answer");
        let mut response = String::new();
        over.read_to_string(&mut response).expect("the answer");
        assert!(response.starts_with("HTTP/1.1 413"), "{response}");
        assert!(response.contains("body-too-large"), "{response}");
    }
    server.stop().await;
}

/// A compressed body is refused for what it is, and changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_compressed_body_is_refused_as_such() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let body = "\u{1f}\u{8b}not really gzip";
    let (status, answer) = raw_request(
        &server.base_url,
        &format!(
            "POST /v1/sessions/z/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Encoding: gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(status, 415, "{answer}");
    assert!(
        answer.contains("unsupported-media-type") && answer.contains("gzip"),
        "{answer}"
    );
    let (status, _) = server.get("/v1/sessions/z/context").await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND, "nothing was stored");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_marks_the_index_unhealthy_and_answers_not_indexed() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    assert_eq!(server.status().await["healthy"], true);
    // A first answer is indexed: the index has its writer now. (Right after
    // the first pass it has none yet, and a write that finds the folder gone
    // makes the index again.)
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Commit trouble", "qa": [
                {"question": "Is the first answer kept?", "answer": "Yes, the first answer is kept and indexed."}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["saved"][0]["questions"].as_array().map(Vec::len),
        Some(1),
        "{body}"
    );
    assert_eq!(body["indexed"], true, "{body}");
    // The index folder vanishes under the server: its next commit fails.
    std::fs::remove_dir_all(brain.data_dir().join("index")).expect("remove the index");
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Commit trouble", "qa": [
                {"question": "Is the answer kept?", "answer": "Yes, even though the index is gone."}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["saved"][0]["questions"][0], "Is the answer kept?",
        "{body}"
    );
    assert_eq!(body["indexed"], false, "{body}");
    let status = server.status().await;
    assert_eq!(status["healthy"], false, "{status}");
    assert!(status["commit_error"].is_string(), "{status}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_file_descriptors_the_server_answers_503_and_recovers() {
    let brain = TestBrain::sample();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let binary = env!("CARGO_BIN_EXE_noggin");
    let _server = Stopped(noggin_under_fd_limit(binary, brain.path(), port));
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !matches!(client.get(format!("{base}/healthz")).send().await, Ok(r) if r.status() == 200)
    {
        assert!(Instant::now() < deadline, "noggin did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Idle connections until the server's descriptors run out.
    let addr = format!("127.0.0.1:{port}");
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    // The server takes the idle connections from its backlog one by one: a
    // probe that arrives before it has run out is served. Probe until it has,
    // and within the 30 s after which the server closes idle connections
    // (and so has descriptors again).
    let deadline = Instant::now() + Duration::from_secs(25);
    let (status, body) = loop {
        let (status, body) = tokio::task::spawn_blocking({
            let base = base.clone();
            move || {
                raw_request_waiting(
                    &base,
                    "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                    Duration::from_secs(2),
                )
            }
        })
        .await
        .expect("join");
        if status == 503 || Instant::now() >= deadline {
            break (status, body);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status, 503, "out of descriptors: {body}");
    assert!(body.contains("\"busy\""), "{body}");
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = client.get(format!("{base}/v1/status")).send().await {
            if r.status() == 200 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the server did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `noggin serve` with at most 100 open file descriptors.
fn noggin_under_fd_limit(binary: &str, brain: &Path, port: u16) -> std::process::Child {
    Command::new("sh")
        .arg("-c")
        // Idle connections are held 30 s (not 10): on a loaded machine the
        // probes below may take seconds each.
        .arg(r#"ulimit -n 100 && exec "$0" serve --brain "$1" --addr "127.0.0.1:$2" --watch poll --header-timeout-ms 30000"#)
        .arg(binary)
        .arg(brain)
        .arg(port.to_string())
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin serve under a descriptor limit")
}

/// A server process this test started: killed when the test ends, also when
/// an assertion fails first (else it would serve on after the suite).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
