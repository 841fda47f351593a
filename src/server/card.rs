//! `GET /v1/card`: what the web card shows, from the latest research of a
//! session (or of all): up to a few self-researched facts, their answers
//! cut short, their sources, and the questions still open for the user.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::error::{ApiError, AppQuery};
use super::notes::note_url;
use super::AppState;
use crate::research::context::{word_cut, CUT_MARKER};
use crate::research::log::ResearchRecord;

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/card", get(card))
}

#[derive(Deserialize)]
struct CardParams {
    session: Option<String>,
}

#[derive(Serialize)]
struct Card {
    /// The session shown, `None` for the latest research of any.
    session: Option<String>,
    /// Sessions with a research, most recent first.
    sessions: Vec<String>,
    /// Shown before every self-researched answer.
    marker: String,
    research: Option<CardResearch>,
}

#[derive(Serialize)]
struct CardResearch {
    research_id: String,
    /// Grows with every research: the card redraws when it changes.
    seq: u64,
    at: String,
    session: Option<String>,
    prompt: String,
    facts: Vec<Fact>,
    /// Answered questions beyond the facts shown.
    more_facts: usize,
    open: Vec<OpenQuestion>,
    took_ms: u64,
}

#[derive(Serialize)]
struct Fact {
    question: String,
    /// The answer, cut to the configured length with "…".
    answer: String,
    confidence: f32,
    sources: Vec<Source>,
}

#[derive(Serialize)]
struct Source {
    path: String,
    title: String,
    heading: String,
    /// The rendered note.
    url: String,
}

#[derive(Serialize)]
struct OpenQuestion {
    question: String,
}

async fn card(
    State(state): State<AppState>,
    AppQuery(params): AppQuery<CardParams>,
) -> Result<Json<Card>, ApiError> {
    let session = params.session.filter(|s| !s.is_empty());
    let record = state.research_log.latest(session.as_deref());
    Ok(Json(Card {
        sessions: state.research_log.sessions(),
        marker: state.config.knowledge.marker.clone(),
        research: record.map(|r| card_research(&r, &state)),
        session,
    }))
}

fn card_research(record: &ResearchRecord, state: &AppState) -> CardResearch {
    let settings = state.config.card;
    let response = &record.response;
    let facts = response
        .answered
        .iter()
        .take(settings.facts)
        .map(|a| Fact {
            question: a.question.clone(),
            answer: cut_answer(&a.answer, settings.answer_chars),
            confidence: a.confidence,
            sources: a
                .evidence
                .iter()
                .filter(|e| e.path != crate::research::context::REQUEST_CONTEXT_PATH)
                .map(|e| Source {
                    path: e.path.clone(),
                    title: e.title.clone(),
                    heading: e.heading.clone(),
                    url: note_url(&e.path),
                })
                .collect(),
        })
        .collect();
    CardResearch {
        research_id: response.research_id.clone(),
        seq: record.seq,
        at: record.at.clone(),
        session: record.session.clone(),
        prompt: record.prompt.clone(),
        facts,
        more_facts: response.answered.len().saturating_sub(settings.facts),
        open: response
            .unanswered
            .iter()
            .map(|u| OpenQuestion {
                question: u.question.clone(),
            })
            .collect(),
        took_ms: response.took_ms,
    }
}

/// At most `max_chars` characters, "…" included, cut on a word when one is
/// near.
pub fn cut_answer(answer: &str, max_chars: usize) -> String {
    let answer = answer.split_whitespace().collect::<Vec<_>>().join(" ");
    if answer.chars().count() <= max_chars {
        return answer;
    }
    let room = max_chars.saturating_sub(CUT_MARKER.chars().count());
    let end = word_cut(&answer, room);
    format!(
        "{}{CUT_MARKER}",
        answer[..end].trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_cut_on_a_word() {
        assert_eq!(cut_answer("short", 150), "short");
        let long = "word ".repeat(60);
        let cut = cut_answer(&long, 150);
        assert!(
            cut.chars().count() <= 150 && cut.ends_with("word…"),
            "{cut}"
        );
        let korean = "가나다라마바사 ".repeat(40);
        let cut = cut_answer(&korean, 150);
        assert!(cut.chars().count() <= 150 && cut.ends_with('…'), "{cut}");
        let unbroken = "x".repeat(400);
        assert_eq!(cut_answer(&unbroken, 20).chars().count(), 20);
    }
}
