//! The alignment loop end to end: a question the brain cannot answer goes to
//! the user, the user's answer is posted back, and the next research answers
//! it (and its paraphrases) from `Alignment Knowledge/`; a newer answer on a
//! later day wins and names the one it supersedes.

use chrono::NaiveDate;
use noggin::knowledge::Settings;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{ServerOptions, TestBrain, TestServer};

const QUESTION: &str = "What color should the booking confirmation button be?";
const PARAPHRASE: &str = "Which color is the confirmation button of a booking?";
const PROMPT: &str = "Restyle the booking flow";

fn on_day(day: u32) -> ServerOptions {
    ServerOptions {
        knowledge: Settings {
            today: NaiveDate::from_ymd_opt(2026, 11, day),
            ..Settings::default()
        },
        ..ServerOptions::default()
    }
}

async fn research(server: &TestServer, question: &str) -> Value {
    let (status, body) = server
        .post_json(
            "/v1/research",
            &json!({"prompt": PROMPT, "questions": [question]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn answer(server: &TestServer, text: &str) -> String {
    let (status, body) = server
        .post_json(
            "/v1/answers",
            &json!({"prompt": PROMPT, "qa": [{"question": QUESTION, "answer": text}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["saved"][0]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("nothing saved: {body}"))
        .to_string()
}

#[tokio::test]
async fn an_answered_question_is_never_asked_again() {
    let brain = TestBrain::sample();
    let server = TestServer::start_with(&brain, on_day(22)).await;

    let before = research(&server, QUESTION).await;
    assert_eq!(before["answered"], json!([]), "{before}");
    assert_eq!(before["unanswered"][0]["question"], QUESTION);

    let blue = "Harbor blue, hex 1F5FA8, as in the new style guide.";
    let path = answer(&server, blue).await;
    assert_eq!(
        path,
        "Alignment Knowledge/2026-11-22 Restyle the booking flow.md"
    );
    assert!(brain
        .read(&path)
        .ends_with(&format!("### Q. {QUESTION}\n{blue}\n")));

    for question in [QUESTION, PARAPHRASE] {
        let after = research(&server, question).await;
        assert_eq!(after["unanswered"], json!([]), "{question}: {after}");
        let answered = &after["answered"][0];
        assert_eq!(answered["answer"], blue, "{question}: {after}");
        assert_eq!(answered["source"], "self-research");
        assert_eq!(answered["evidence"][0]["path"], path.as_str(), "{after}");
        assert!(answered.get("superseded").is_none(), "{after}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_newer_answer_wins_and_names_the_one_it_replaces() {
    let brain = TestBrain::sample();
    let green = "Sea green, the accent color of the old style guide.";
    let blue = "Harbor blue, hex 1F5FA8, as in the new style guide.";

    let first = TestServer::start_with(&brain, on_day(20)).await;
    let older = answer(&first, green).await;
    assert_eq!(
        older,
        "Alignment Knowledge/2026-11-20 Restyle the booking flow.md"
    );
    first.stop().await;

    let second = TestServer::start_with(&brain, on_day(22)).await;
    let newer = answer(&second, blue).await;
    assert_eq!(
        newer,
        "Alignment Knowledge/2026-11-22 Restyle the booking flow.md"
    );
    for question in [QUESTION, PARAPHRASE] {
        let body = research(&second, question).await;
        let answered = &body["answered"][0];
        assert_eq!(answered["answer"], blue, "{question}: {body}");
        assert_eq!(answered["evidence"][0]["path"], newer.as_str(), "{body}");
        let superseded = answered["superseded"]
            .as_array()
            .unwrap_or_else(|| panic!("no superseded answer named: {body}"));
        assert_eq!(superseded.len(), 1, "{body}");
        assert_eq!(superseded[0]["path"], older.as_str());
        assert_eq!(superseded[0]["answer"], green);
        assert_eq!(superseded[0]["created"], "2026-11-20");
    }
    second.stop().await;
}
