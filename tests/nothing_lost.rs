//! Nothing lost: the real binary is killed with SIGKILL in the middle of a
//! burst of answers; after a restart every acknowledged answer is in the
//! brain, every knowledge note parses, and the index finds them again.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use noggin::brain::parse::split_frontmatter;
use noggin::brain::parse_note;
use noggin::knowledge::note::{read_entries, Entry};
use serde_json::{json, Value};

use crate::helpers::TestBrain;

/// Tasks posting at the same time; two share each prompt, so two write to
/// the same note.
const WRITERS: usize = 4;
/// Posts each task sends at most.
const POSTS_PER_WRITER: usize = 60;
/// The server is killed once this many posts were acknowledged.
const KILL_AFTER_ACKS: usize = 40;

/// The server process; killed if the test ends early.
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

async fn start(brain: &Path, client: &reqwest::Client) -> Server {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_noggin"))
        // The model, when installed, is for the tests that ask for it.
        .env("NOGGIN_NO_MODEL", "1")
        .args(["serve", "--brain"])
        .arg(brain)
        .args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--today",
            "2026-11-22",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin serve");
    let server = Server {
        child,
        base_url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = client
            .get(format!("{}/v1/status", server.base_url))
            .send()
            .await;
        if let Ok(response) = status {
            let body: Value = response.json().await.unwrap_or_default();
            if body["indexing"] == false && body["last_reconcile"].is_object() {
                return server;
            }
        }
        assert!(Instant::now() < deadline, "noggin did not become ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A word of letters only, unique to `n`, so a search finds one answer.
fn word(n: usize) -> String {
    let letters: String = n
        .to_string()
        .chars()
        .map(|d| (b'a' + d.to_digit(10).unwrap_or(0) as u8) as char)
        .collect();
    format!("zulu{letters}")
}

fn entry(writer: usize, i: usize) -> (String, Entry) {
    let n = writer * 1000 + i;
    let prompt = format!("Burst prompt {}", writer % 2);
    let entry = Entry {
        question: format!("Burst question {writer}-{i}?"),
        answer: format!("Confirmed value {} for burst entry {writer}-{i}.", word(n)),
    };
    (prompt, entry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_in_the_middle_of_a_burst_loses_no_acknowledged_answer() {
    let brain = TestBrain::sample();
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client");
    let mut server = start(brain.path(), &client).await;

    let sent = Arc::new(AtomicUsize::new(0));
    let acknowledged: Arc<Mutex<Vec<(usize, Entry)>>> = Arc::default();
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let (client, url) = (client.clone(), server.base_url.clone());
        let (sent, acknowledged) = (sent.clone(), acknowledged.clone());
        writers.push(tokio::spawn(async move {
            for i in 0..POSTS_PER_WRITER {
                let (prompt, entry) = entry(writer, i);
                let body = json!({"prompt": prompt, "qa": [
                    {"question": entry.question, "answer": entry.answer}]});
                sent.fetch_add(1, Ordering::SeqCst);
                let response = client
                    .post(format!("{url}/v1/answers"))
                    .json(&body)
                    .send()
                    .await;
                match response {
                    Ok(r) if r.status().is_success() => {
                        let body: Value = r.json().await.unwrap_or_default();
                        if body["saved"].as_array().is_some_and(|s| !s.is_empty()) {
                            let n = writer * 1000 + i;
                            acknowledged.lock().unwrap().push((n, entry));
                        }
                    }
                    // The server is gone.
                    _ => break,
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged.lock().unwrap().len() < KILL_AFTER_ACKS {
        assert!(Instant::now() < deadline, "the burst is too slow");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // `Child::kill` sends SIGKILL on Unix: no shutdown code runs.
    server.child.kill().expect("kill noggin");
    server.child.wait().expect("reap noggin");
    for writer in writers {
        writer.await.expect("a writer task");
    }
    let sent = sent.load(Ordering::SeqCst);
    let acknowledged = acknowledged.lock().unwrap().clone();
    drop(server);

    let server = start(brain.path(), &client).await;
    let folder = brain.note("Alignment Knowledge");
    let mut on_disk: HashSet<(String, String)> = HashSet::new();
    let mut notes = 0;
    let mut temp_files = 0;
    for file in std::fs::read_dir(&folder).expect("the knowledge folder") {
        let path = file.expect("a folder entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with('.') {
            temp_files += 1;
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a note is UTF-8");
        let (frontmatter, _) = split_frontmatter(&text);
        let yaml: Value = serde_saphyr::from_str(frontmatter.expect("a frontmatter block"))
            .unwrap_or_else(|e| panic!("{name}: invalid frontmatter: {e}"));
        assert_eq!(yaml["tags"], json!(["alignment-knowledge"]), "{name}");
        let parsed = parse_note(&name, &text);
        assert!(parsed.tags.contains(&"alignment-knowledge".to_string()));
        let entries = read_entries(&text);
        assert!(!entries.is_empty(), "{name} has no entries");
        for e in entries {
            assert!(
                on_disk.insert((e.question, e.answer)),
                "{name}: an entry twice"
            );
        }
        notes += 1;
    }
    let found = acknowledged
        .iter()
        .filter(|(_, e)| on_disk.contains(&(e.question.clone(), e.answer.clone())))
        .count();
    let unacknowledged = on_disk
        .iter()
        .filter(|(q, _)| q.starts_with("Burst question"))
        .count()
        - found;
    eprintln!(
        "nothing lost: sent {sent}, acknowledged {}, found {found} \
         (plus {unacknowledged} written but not acknowledged) in {notes} notes; \
         {temp_files} temporary files left by the kill",
        acknowledged.len()
    );
    assert!(acknowledged.len() >= KILL_AFTER_ACKS);
    assert_eq!(found, acknowledged.len(), "acknowledged answers were lost");

    // The restarted server's index holds what is on disk.
    for (n, e) in &acknowledged {
        let url = format!("{}/v1/search?q={}&limit=5", server.base_url, word(*n));
        let hits: Value = client
            .get(url)
            .send()
            .await
            .expect("search")
            .json()
            .await
            .expect("search JSON");
        let hits = hits["hits"].as_array().expect("hits");
        assert!(
            hits.iter()
                .any(|h| h["snippet"].as_str().is_some_and(|s| s.contains(&word(*n)))),
            "the index does not find {:?}: {hits:?}",
            e.question
        );
    }
}
