//! `POST /v1/answers` and `noggin remember`: the user's answers become dated
//! notes in `Alignment Knowledge/`, exactly formatted, appended, never lost,
//! never outside the folder, searchable as soon as the response arrives.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::NaiveDate;
use futures_util::future::join_all;
use noggin::knowledge::note::{read_entries, Entry};
use noggin::knowledge::Settings;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{
    answered_questions, assert_error_shape, ServerOptions, TestBrain, TestServer,
};
#[cfg(target_os = "linux")]
use crate::helpers::{wait_until, CHANGE_DEADLINE};

const FOLDER: &str = "Alignment Knowledge";

fn date(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, day).expect("a valid date")
}

/// Server options that write notes dated 2026-11-`day`.
fn on_day(day: u32) -> ServerOptions {
    ServerOptions {
        knowledge: Settings {
            today: Some(date(day)),
            ..Settings::default()
        },
        ..ServerOptions::default()
    }
}

fn qa(question: &str, answer: &str) -> Value {
    json!({"question": question, "answer": answer})
}

/// Every file of the brain except the index, with its bytes.
fn tree(brain: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(brain)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".noggin")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(brain)
                .expect("walked below the brain")
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(e.path()).expect("read a file of the brain");
            (rel, bytes)
        })
        .collect()
}

#[tokio::test]
async fn a_new_note_has_the_exact_format() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({
                "prompt": "Add a waitlist for full marinas",
                "session": "s1",
                "qa": [
                    qa("How long does a waitlist offer stay open?", "Twenty-four hours, then it goes to the next guest."),
                    qa("Who is notified first?", "Guests in the order they joined the waitlist."),
                ]
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let path = "Alignment Knowledge/2026-11-22 Add a waitlist for full marina.md";
    assert_eq!(
        body,
        json!({
            "indexed": true,
            "saved": [{"path": path, "questions": [
                "How long does a waitlist offer stay open?", "Who is notified first?"]}],
            "skipped": []
        })
    );
    assert_eq!(
        brain.read(path),
        "---\n\
         created: 2026-11-22\n\
         tags: [alignment-knowledge]\n\
         ---\n\
         # Add a waitlist for full marinas\n\
         \n\
         > Provided by the user while clarifying a request on 2026-11-22.\n\
         \n\
         ## Original request\n\
         Add a waitlist for full marinas\n\
         \n\
         ## Confirmed information\n\
         ### Q. How long does a waitlist offer stay open?\n\
         Twenty-four hours, then it goes to the next guest.\n\
         \n\
         ### Q. Who is notified first?\n\
         Guests in the order they joined the waitlist.\n"
    );
    let text = brain.read(path);
    let (frontmatter, _) = noggin::brain::parse::split_frontmatter(&text);
    let yaml: Value = serde_saphyr::from_str(frontmatter.expect("a frontmatter block"))
        .expect("the frontmatter is valid YAML");
    assert_eq!(
        yaml,
        json!({"created": "2026-11-22", "tags": ["alignment-knowledge"]})
    );
    server.stop().await;
}

#[tokio::test]
async fn the_title_is_fifty_characters_and_the_request_is_kept_whole() {
    let brain = TestBrain::empty();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let prompt =
        "Migrate the nightly invoice job to the background queue and\nkeep the retry policy";
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": prompt, "qa": [qa("Which queue?", "The PostgreSQL job table, as in ADR-005.")]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let path = body["saved"][0]["path"].as_str().expect("a saved path");
    assert_eq!(
        path,
        "Alignment Knowledge/2026-11-22 Migrate the nightly invoice jo.md"
    );
    let text = brain.read(path);
    assert!(
        text.contains("\n# Migrate the nightly invoice job to the background\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("## Original request\n{prompt}\n\n")),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_second_post_the_same_day_appends_and_skips_duplicates() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let prompt = "Add a waitlist for full marinas";
    let first = qa(
        "How long does an offer stay open?",
        "Twenty-four hours, then the next guest.",
    );
    let second = qa("Who is notified first?", "Guests in the order they joined.");
    let (status, _) = server
        .post_json("/v1/answers", &json!({"prompt": prompt, "qa": [first]}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": prompt, "qa": [first, second]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["saved"][0]["questions"],
        json!(["Who is notified first?"])
    );
    assert_eq!(
        body["skipped"],
        json!([{"question": "How long does an offer stay open?", "reason": "duplicate"}])
    );
    let path = "Alignment Knowledge/2026-11-22 Add a waitlist for full marina.md";
    let text = brain.read(path);
    assert_eq!(text.matches("### Q. ").count(), 2, "{text}");
    assert!(text.ends_with(
        "### Q. How long does an offer stay open?\nTwenty-four hours, then the next guest.\n\n\
         ### Q. Who is notified first?\nGuests in the order they joined.\n"
    ));
    // The same question with another answer is new information.
    let changed = qa(
        "Who is notified first?",
        "Members first, then guests in order.",
    );
    let (_, body) = server
        .post_json("/v1/answers", &json!({"prompt": prompt, "qa": [changed]}))
        .await;
    assert_eq!(
        body["saved"][0]["questions"],
        json!(["Who is notified first?"])
    );
    assert_eq!(read_entries(&brain.read(path)).len(), 3);
    server.stop().await;
}

#[tokio::test]
async fn a_hand_edit_between_two_posts_is_kept() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let prompt = "Add a waitlist for full marinas";
    let (_, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": prompt, "qa": [qa("How long does an offer stay open?", "Twenty-four hours, then the next guest.")]}),
        )
        .await;
    let path = body["saved"][0]["path"]
        .as_str()
        .expect("saved")
        .to_string();
    let edited = brain.read(&path).replace(
        "Twenty-four hours",
        "Twelve hours (changed after the ops meeting)",
    ) + "\n## My notes\n- ask Dana about weekends\n";
    brain.write(&path, &edited);
    let (status, _) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": prompt, "qa": [qa("Who is notified first?", "Guests in the order they joined.")]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let text = brain.read(&path);
    assert_eq!(
        text,
        edited.replace(
            "next guest.\n\n## My notes",
            "next guest.\n\n### Q. Who is notified first?\nGuests in the order they joined.\n\n## My notes"
        )
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_posts_for_one_prompt_make_one_note_with_all_entries() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let posts = (0..50).map(|i| {
        let body = json!({
            "prompt": "Plan the winter haul-out",
            "qa": [qa(&format!("Question number {i}?"), &format!("Answer number {i}, given by the user."))]
        });
        let server = &server;
        async move { server.post_json("/v1/answers", &body).await }
    });
    for (status, body) in join_all(posts).await {
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["saved"].as_array().map(Vec::len), Some(1), "{body}");
    }
    let notes: Vec<String> = tree(brain.path())
        .into_keys()
        .filter(|p| p.starts_with(FOLDER) && p.contains("haul-out"))
        .collect();
    assert_eq!(
        notes,
        ["Alignment Knowledge/2026-11-22 Plan the winter haul-out.md"]
    );
    let entries = read_entries(&brain.read(&notes[0]));
    assert_eq!(entries.len(), 50);
    for i in 0..50 {
        let expected = Entry {
            question: format!("Question number {i}?"),
            answer: format!("Answer number {i}, given by the user."),
        };
        assert!(entries.contains(&expected), "entry {i} is missing");
    }
    server.stop().await;
}

/// A user appending lines to the note (`>>`, one open and write each)
/// while answers are written to it: every line stays, once, and every
/// answer is there once (the user's lines after an answer read as part of
/// it, which once made the answer look missing and written again).
///
/// noggin keeps the note as it was for `LATE_WRITE_GRACE` after its swap
/// and then drops it (README, Safety). A line whose open and write took less
/// landed within that grace of any swap it straddled, so it must be there;
/// only a slower one may have gone into the dropped file (a loaded machine
/// deschedules the appender inside `open` now and then: 7 to 60 ms seen).
/// No line may ever be there twice.
#[tokio::test(flavor = "multi_thread")]
async fn lines_the_user_appends_meanwhile_are_kept_and_answers_written_once() {
    /// noggin's `knowledge::write::LATE_WRITE_GRACE`.
    const LATE_WRITE_GRACE: Duration = Duration::from_millis(3);
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let prompt = "Keep my lines";
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": prompt, "qa": [qa("Seed?", "A seed answer, long enough.")]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let note = brain.note("Alignment Knowledge/2026-11-22 Keep my lines.md");
    let appender = {
        let note = note.clone();
        std::thread::spawn(move || {
            // How long each line took from before its open to after its write.
            let mut took = Vec::new();
            for k in 0..300 {
                let start = std::time::Instant::now();
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&note)
                    .expect("open the note");
                std::io::Write::write_all(&mut f, format!("\nUSERLINE {k}\n").as_bytes())
                    .expect("append");
                took.push(start.elapsed());
                drop(f);
                std::thread::sleep(Duration::from_millis(2));
            }
            took
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let posts = (0..10).map(|i| {
        let body = json!({"prompt": prompt, "qa": [
            qa(&format!("Server question {i}?"), &format!("Server answer number {i} is long enough."))
        ]});
        let server = &server;
        async move { server.post_json("/v1/answers", &body).await }
    });
    for (status, body) in join_all(posts).await {
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let took = appender.join().expect("the appender finished");
    server.stop().await;
    let text = std::fs::read_to_string(&note).expect("read the note");
    for (k, took) in took.iter().enumerate() {
        let count = text.matches(&format!("USERLINE {k}\n")).count();
        let late = *took >= LATE_WRITE_GRACE;
        assert!(
            count == 1 || (count == 0 && late),
            "line {k} is there {count} times (open and write took {took:?}) in\n{text}"
        );
    }
    assert_eq!(text.matches("### Q. ").count(), 11, "{text}");
}

/// An answers' folder that links out of the brain takes no answer, and the
/// response says why instead of "internal".
#[tokio::test(flavor = "multi_thread")]
async fn a_knowledge_folder_linking_out_of_the_brain_is_refused_by_name() {
    let brain = TestBrain::sample();
    let outside = tempfile::tempdir().expect("a temp dir");
    std::fs::remove_dir_all(brain.note(FOLDER)).expect("remove the knowledge folder");
    std::os::unix::fs::symlink(outside.path(), brain.note(FOLDER)).expect("symlink");
    let server = TestServer::start(&brain).await;
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Link out", "qa": [qa("Where?", "Nowhere outside the brain, please.")]}),
        )
        .await;
    server.stop().await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "knowledge-folder-outside", "{body}");
    assert_eq!(
        std::fs::read_dir(outside.path())
            .expect("read the folder")
            .count(),
        0,
        "nothing is written outside"
    );
}

#[tokio::test]
async fn every_rejected_request_leaves_the_brain_unchanged() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let before = tree(brain.path());
    let ok = qa("A fine question?", "A fine answer that is long enough.");
    let cases: Vec<(&str, Value)> = vec![
        (
            "newline in a question",
            json!({"prompt": "p", "qa": [ok, qa("two\nlines?", "An answer long enough to save.")]}),
        ),
        (
            "carriage return",
            json!({"prompt": "p", "qa": [qa("a\rb?", "An answer long enough to save.")]}),
        ),
        (
            "tab",
            json!({"prompt": "p", "qa": [qa("a\tb?", "An answer long enough to save.")]}),
        ),
        (
            "NUL",
            json!({"prompt": "p", "qa": [qa("a\u{0}b?", "An answer long enough to save.")]}),
        ),
        (
            "escape",
            json!({"prompt": "p", "qa": [qa("a\u{1b}[31mb?", "An answer long enough to save.")]}),
        ),
        (
            "DEL",
            json!({"prompt": "p", "qa": [qa("a\u{7f}b?", "An answer long enough to save.")]}),
        ),
        ("empty prompt", json!({"prompt": "", "qa": [ok]})),
        ("blank prompt", json!({"prompt": " \n ", "qa": [ok]})),
        ("missing prompt", json!({"qa": [ok]})),
        (
            "prompt too long",
            json!({"prompt": "x".repeat(20_001), "qa": [ok]}),
        ),
        (
            "51 entries",
            json!({"prompt": "p", "qa": vec![ok.clone(); 51]}),
        ),
        (
            "question too long",
            json!({"prompt": "p", "qa": [qa(&"q".repeat(501), "An answer long enough to save.")]}),
        ),
        (
            "answer too long",
            json!({"prompt": "p", "qa": [qa("q?", &"a".repeat(10_001))]}),
        ),
        ("missing qa", json!({"prompt": "p"})),
        ("qa not a list", json!({"prompt": "p", "qa": "answer"})),
        (
            "question not a string",
            json!({"prompt": "p", "qa": [{"question": 7, "answer": "An answer long enough."}]}),
        ),
        ("not an object", json!(["p"])),
        // A misspelt field would lose the answer, or the session, silently.
        (
            "misspelt question",
            json!({"prompt": "p", "qa": [{"qustion": "Who signs off?", "answer": "The finance lead signs off."}]}),
        ),
        (
            "missing answer",
            json!({"prompt": "p", "qa": [ok, {"question": "Who signs off?"}]}),
        ),
        (
            "misspelt session",
            json!({"prompt": "p", "qa": [ok], "sesion": "s1"}),
        ),
    ];
    for (what, body) in cases {
        let (status, response) = server.post_json("/v1/answers", &body).await;
        assert!(status.is_client_error(), "{what}: {status} {response}");
        assert_error_shape(&response, what);
    }
    let (status, response) = server
        .request(
            reqwest::Method::POST,
            "/v1/answers",
            Some("{\"prompt\": ".into()),
        )
        .await;
    assert!(status.is_client_error(), "broken JSON: {status}");
    assert_error_shape(&response, "broken JSON");
    let (status, response) = server.announce_body("/v1/answers", 2 * 1024 * 1024).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_error_shape(&response, "body too large");
    assert!(
        tree(brain.path()) == before,
        "a rejected request changed the brain"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_brain_moved_away_answers_nothing_and_is_not_made_again() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let away = brain.path().with_file_name("moved-away");
    std::fs::rename(brain.path(), &away).expect("move the brain away");
    let body = json!({"prompt": "Ship the fee", "qa": [qa("Who approves it?", "The finance lead approves every fee change.")]});
    let (status, response) = server.post_json("/v1/answers", &body).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{response}");
    assert_eq!(response["error"]["code"], "brain-unavailable", "{response}");
    assert!(
        !brain.path().exists(),
        "the answer made the brain folder again"
    );
    let (_, status) = server.get("/v1/status").await;
    assert_eq!(status["healthy"], false, "{status}");
    assert!(
        status["brain_error"]
            .as_str()
            .is_some_and(|e| e.contains("does not exist")),
        "{status}"
    );
    // The watcher says it follows nothing until the brain is back.
    #[cfg(target_os = "linux")]
    wait_until(
        CHANGE_DEADLINE,
        "the watcher waits for the brain",
        || async { server.get("/v1/status").await.1["watcher"]["state"] == "waiting" },
    )
    .await;
    // Nothing is answered from, or cited of, notes that cannot be opened.
    let ask = json!({"questions": ["When do we deploy?"]});
    let (_, research) = server.post_json("/v1/research", &ask).await;
    assert_eq!(research["answered"], json!([]), "{research}");
    assert_eq!(
        research["unanswered"],
        json!([{"question": "When do we deploy?", "evidence": []}]),
        "{research}"
    );

    // Back in place: healthy, and the answer is saved.
    std::fs::rename(&away, brain.path()).expect("move the brain back");
    let (_, status) = server.get("/v1/status").await;
    assert_eq!(status["healthy"], true, "{status}");
    #[cfg(target_os = "linux")]
    wait_until(
        CHANGE_DEADLINE,
        "the watcher follows the brain again",
        || async { server.get("/v1/status").await.1["watcher"]["state"] == "watching" },
    )
    .await;
    let (_, research) = server.post_json("/v1/research", &ask).await;
    assert_eq!(
        research["answered"].as_array().map(Vec::len),
        Some(1),
        "{research}"
    );
    let (status, response) = server.post_json("/v1/answers", &body).await;
    assert_eq!(status, StatusCode::OK, "{response}");
    assert_eq!(
        response["saved"][0]["questions"],
        json!(["Who approves it?"])
    );
    server.stop().await;
}

#[tokio::test]
async fn skipped_answers_say_why() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Add a waitlist", "qa": [
                {"question": "Which marinas?", "answer": "Every marina of the network.", "source": "self-research"},
                qa("How is the fee computed?", "(self-research) 15 percent, says the fee note."),
                qa("Is it paid?", "No."),
                qa("   ", "An answer to no question at all."),
                qa("Who builds it?", "The booking team, starting in January."),
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["saved"][0]["questions"], json!(["Who builds it?"]));
    let reasons: Vec<&str> = body["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| s["reason"].as_str().expect("a reason"))
        .collect();
    assert_eq!(
        reasons,
        ["self-research", "self-research", "too-short", "empty"]
    );
    // No answers at all is refused, as research refuses no questions.
    let before = tree(brain.path());
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Add a waitlist", "qa": []}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "no-answers", "{body}");
    assert_eq!(tree(brain.path()), before);
    server.stop().await;
}

#[tokio::test]
async fn with_saving_off_everything_is_skipped_as_disabled() {
    let brain = TestBrain::sample();
    let mut options = on_day(22);
    options.knowledge.save = false;
    let server = TestServer::start_with(&brain, options).await;
    let before = tree(brain.path());
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Add a waitlist", "qa": [
                qa("Who builds it?", "The booking team, starting in January."),
                qa("", ""),
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"indexed": true, "saved": [], "skipped": [
            {"question": "Who builds it?", "reason": "disabled"},
            {"question": "", "reason": "disabled"}]})
    );
    assert!(tree(brain.path()) == before);
    server.stop().await;
}

#[tokio::test]
async fn hostile_prompts_land_inside_the_knowledge_folder() {
    let brain = TestBrain::empty();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let long = "긴 요청 ".repeat(60);
    let prompts = [
        "../../etc/passwd",
        "..\\..\\Windows\\win.ini",
        "/etc/shadow",
        "CON",
        "nul",
        "....",
        "/////",
        "./../.",
        "~/.ssh/authorized_keys",
        "C:\\Users\\me",
        "🚀🚀 launch 👩‍👩‍👧‍👦 plan",
        "두뇌를 검색에 쓰는 방법",
        long.as_str(),
    ];
    for prompt in prompts {
        let (status, body) = server
            .post_json(
                "/v1/answers",
                &json!({"prompt": prompt, "qa": [qa("Where does this go?", "Inside the knowledge folder, always.")]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prompt:?}: {body}");
        let path = body["saved"][0]["path"].as_str().expect("saved");
        let name = path
            .strip_prefix("Alignment Knowledge/2026-11-22 ")
            .unwrap_or_else(|| panic!("{prompt:?} went to {path:?}"));
        assert!(!name.contains('/') && name.ends_with(".md"), "{path:?}");
        let file = brain.note(path);
        assert!(file.is_file(), "{path:?} is not on disk");
        let real = std::fs::canonicalize(&file).expect("the note exists");
        let folder = std::fs::canonicalize(brain.note(FOLDER)).expect("the folder exists");
        assert_eq!(real.parent(), Some(folder.as_path()), "{prompt:?}");
    }
    let outside: Vec<String> = tree(brain.path())
        .into_keys()
        .filter(|p| !p.starts_with("Alignment Knowledge/"))
        .collect();
    assert!(outside.is_empty(), "files outside the folder: {outside:?}");
    server.stop().await;
}

#[tokio::test]
async fn a_saved_answer_is_searchable_when_the_response_arrives() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    for i in 0..5 {
        let word = ["quokka", "narwhal", "axolotl", "pangolin", "capybara"][i];
        let (status, body) = server
            .post_json(
                "/v1/answers",
                &json!({"prompt": "Name the mascots", "qa": [
                    qa(&format!("Mascot {i}?"), &format!("The {word} is the mascot of pier {i}."))]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // No waiting: the response is sent once the note is indexed.
        assert_eq!(
            server.search_paths(word).await,
            ["Alignment Knowledge/2026-11-22 Name the mascots.md"],
            "{word}"
        );
    }
    server.stop().await;
}

/// A long answer is indexed as several passages; asked again, it comes
/// back whole, not as the one passage that matched best.
#[tokio::test]
async fn a_long_saved_answer_comes_back_whole() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let question = "How are seasonal slip prices computed?";
    let answer: Vec<String> = (0..45)
        .map(|i| format!("Rule {i} of the seasonal slip pricing is explained in this sentence."))
        .collect();
    let answer = answer.join(" ");
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Seasonal pricing", "qa": [qa(question, &answer)]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .post_json("/v1/research", &json!({"questions": [question]}))
        .await;
    server.stop().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let got = body["answered"][0]["answer"].as_str().unwrap_or_default();
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words(got), answer, "{body}");
}

/// The request a note of answers keeps says what the assistant was asked,
/// not what holds: research never answers from it, while the answer under
/// its question still answers.
#[tokio::test]
async fn the_request_kept_with_answers_answers_nothing() {
    let brain = TestBrain::empty();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "The database migration is run by Mina Park once Jonas is back from leave",
                "qa": [qa("Which day works for the migration?", "Thursday after the weekly sync works best.")]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"questions": ["Who runs the database migration?", "Which day works for the migration?"]}),
        )
        .await;
    server.stop().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answered = answered_questions(&body);
    assert_eq!(answered, ["Which day works for the migration?"], "{body}");
}

/// What the user said of one person is no answer about another: Tom's
/// phone number never comes back for Maria's, while it still does for his.
#[tokio::test]
async fn an_answer_about_one_person_is_no_answer_about_another() {
    let brain = TestBrain::empty();
    brain.write(
        "People/Maria Lopez.md",
        "# Maria Lopez\n\nRole: SRE lead. Owns the Kafka clusters.\n",
    );
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": "Contacts for the on-call handover",
                "qa": [qa("What's Tom Becker's phone number?", "Tom's phone is +49 151 2345 6789, only for pages.")]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"questions": ["What's Maria Lopez's phone number?", "What is Tom Becker's phone number?"]}),
        )
        .await;
    server.stop().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answered = answered_questions(&body);
    assert_eq!(answered, ["What is Tom Becker's phone number?"], "{body}");
}

#[tokio::test]
async fn temporary_files_are_never_indexed_and_the_note_is_indexed_once() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    for i in 0..10 {
        let (status, _) = server
            .post_json(
                "/v1/answers",
                &json!({"prompt": "Choose the dock lighting", "qa": [
                    qa(&format!("Lamp {i}?"), &format!("Amber floodlight number {i} on the dock."))]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    // The watcher sees every temporary file and rename; give its debounce
    // (about 250 ms) time to pass before looking at what it indexed.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let hits = server
        .search("amber floodlight dock", &[("limit", "100")])
        .await;
    let paths = crate::helpers::paths(&hits);
    assert!(!paths.is_empty());
    for path in &paths {
        assert!(
            !path.split('/').any(|part| part.starts_with('.')),
            "a hidden file was indexed: {path}"
        );
    }
    let note = "Alignment Knowledge/2026-11-22 Choose the dock lighting.md";
    assert_eq!(paths.iter().filter(|p| *p == note).count(), 1, "{paths:?}");
    let status = server.status().await;
    let notes_on_disk = tree(brain.path())
        .into_keys()
        .filter(|p| p.ends_with(".md") && !p.split('/').any(|c| c.starts_with('.')))
        .count();
    assert_eq!(status["notes"], json!(notes_on_disk), "{status}");
    server.stop().await;
}

#[tokio::test]
async fn answers_route_is_in_the_openapi_document() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    let (status, doc) = server.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let op = &doc["paths"]["/v1/answers"]["post"];
    assert!(
        op["requestBody"].is_object() && op["responses"]["200"].is_object(),
        "{op}"
    );
    server.stop().await;
}

/// Runs the built `noggin` binary.
fn noggin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_noggin"))
        // The model, when installed, is for the tests that ask for it.
        .env("NOGGIN_NO_MODEL", "1")
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run noggin")
}

#[tokio::test]
async fn remember_writes_the_same_note_from_the_command_line() {
    let brain = TestBrain::sample();
    let dir = brain.path().to_str().expect("UTF-8 temp path");
    let out = noggin(&[
        "remember",
        "--brain",
        dir,
        "--today",
        "2026-11-22",
        "--prompt",
        "Add a waitlist",
        "-q",
        "Who builds it?",
        "-a",
        "The booking team, starting in January.",
        "-q",
        "Paid?",
        "-a",
        "No.",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("saved 1 answer to Alignment Knowledge/2026-11-22 Add a waitlist.md"),
        "{stdout}"
    );
    assert!(
        stdout.contains("skipped \"Paid?\": answer too short"),
        "{stdout}"
    );
    assert!(stdout.contains("searchable now"), "{stdout}");

    let out = noggin(&[
        "remember",
        "--brain",
        dir,
        "--today",
        "2026-11-22",
        "--prompt",
        "Add a waitlist",
        "-q",
        "Who builds it?",
        "-a",
        "The booking team, starting in January.",
        "--json",
    ]);
    let body: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(body["skipped"][0]["reason"], "duplicate");

    // Unequal counts: a usage error, as a wrong order is.
    for (args, counts) in [
        (
            &["-q", "a?", "-a", "x", "-q", "b?"][..],
            "2 questions but 1 answers",
        ),
        (
            &["-q", "a?", "-a", "x", "-a", "y"][..],
            "1 questions but 2 answers",
        ),
    ] {
        let out = noggin(&[&["remember", "--brain", dir, "--prompt", "p"][..], args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(counts), "{stderr}");
    }

    // Two questions, then their answers: refused rather than paired wrongly.
    let out = noggin(&[
        "remember",
        "--brain",
        dir,
        "--today",
        "2026-11-22",
        "--prompt",
        "Misordered answers",
        "-q",
        "Who builds the waitlist?",
        "-q",
        "When does it ship?",
        "-a",
        "The booking team builds it, starting in January.",
        "-a",
        "It ships with the February release.",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("does not come right after its question"),
        "{stderr}"
    );
    assert!(!brain
        .path()
        .join("Alignment Knowledge/2026-11-22 Misordered answers.md")
        .exists());
}

#[tokio::test]
async fn remember_while_a_server_runs_leaves_indexing_to_the_server() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;
    let dir = brain.path().to_str().expect("UTF-8 temp path").to_string();
    let out = tokio::task::spawn_blocking(move || {
        noggin(&[
            "remember",
            "--brain",
            &dir,
            "--today",
            "2026-11-22",
            "--prompt",
            "Pick a mascot",
            "-q",
            "Which animal?",
            "-a",
            "A friendly wombat wearing a life vest.",
        ])
    })
    .await
    .expect("run noggin");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("holds the index; its watcher indexes the note"),
        "{stdout}"
    );
    let s = &server;
    crate::helpers::wait_until(
        crate::helpers::CHANGE_DEADLINE,
        "the server indexes the note",
        || async move {
            s.search_paths("wombat").await == ["Alignment Knowledge/2026-11-22 Pick a mascot.md"]
        },
    )
    .await;
    server.stop().await;
}
