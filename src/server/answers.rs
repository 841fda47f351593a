//! `POST /v1/answers`: the user's answers written back into the brain.
//!
//! The response is sent only once the note is on disk and indexed, so a
//! search or research right after it finds the answers.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;

use super::error::{ApiError, AppJson};
use super::AppState;
use crate::knowledge::{Answer, Outcome};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/answers", post(answers))
}

#[derive(Deserialize)]
struct AnswersRequest {
    #[serde(default)]
    prompt: Option<String>,
    qa: Vec<QuestionAnswer>,
    // `session` is accepted (unknown fields are ignored): notes are kept per
    // prompt and day, not per session.
}

#[derive(Deserialize)]
struct QuestionAnswer {
    #[serde(default)]
    question: Option<String>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    source: Option<String>,
}

async fn answers(
    State(state): State<AppState>,
    AppJson(request): AppJson<AnswersRequest>,
) -> Result<Json<Outcome>, ApiError> {
    let given: Vec<Answer> = request
        .qa
        .into_iter()
        .map(|qa| Answer {
            question: qa.question.unwrap_or_default(),
            answer: qa.answer.unwrap_or_default(),
            source: qa.source,
        })
        .collect();
    let prompt = request.prompt.unwrap_or_default();
    let outcome = state.knowledge.remember(&prompt, &given).await?;
    let paths: Vec<String> = outcome.saved.iter().map(|s| s.path.clone()).collect();
    if !paths.is_empty() {
        // The answers are safely on disk; if indexing fails the watcher or
        // the next reconcile picks the note up, so the save still stands.
        if let Err(error) = state.index.sync_paths(paths).await {
            tracing::error!(%error, "a saved note could not be indexed right away");
        }
    }
    Ok(Json(outcome))
}
