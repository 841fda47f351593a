//! The seam where a decision is made: a [`Decider`] turns the evidence
//! gathered for each question into "answered" or "unanswered".
//!
//! Research runs the configured deciders in order; the first that decides a
//! question wins, and the local decider always comes last, so a failing or
//! silent remote decider still leaves every question decided. A new kind of
//! decider (another model, a remote service) is a new implementation here,
//! chosen in [`deciders_for`]; nothing else in research changes.

use std::future::Future;
use std::pin::Pin;

use super::llm::{self, LlmSettings};
use super::{decide_locally, Decision, QuestionEvidence, ResearchSettings};

/// What every decider sees of one request.
pub struct DecisionInput<'a> {
    pub prompt: &'a str,
    pub project_context: Option<&'a str>,
    pub questions: &'a [QuestionEvidence],
}

/// A future a decider returns: boxed so that deciders can live behind `dyn`.
pub type DecisionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Option<Decision>>, String>> + Send + 'a>>;

/// Decides, per question, whether its evidence states the answer.
pub trait Decider: Send + Sync {
    /// Named in `/v1/status`.
    fn name(&self) -> &'static str;
    /// One entry per question, in order; `None` leaves the question to the
    /// next decider. An error leaves every question to the next decider.
    fn decide<'a>(&'a self, input: &'a DecisionInput<'a>) -> DecisionFuture<'a>;
}

/// The local, deterministic decider: stored answers first, then the best
/// sentence when its confidence reaches the threshold.
pub struct LocalDecider {
    pub threshold: f32,
}

impl Decider for LocalDecider {
    fn name(&self) -> &'static str {
        "local"
    }

    fn decide<'a>(&'a self, input: &'a DecisionInput<'a>) -> DecisionFuture<'a> {
        let decisions = input
            .questions
            .iter()
            .map(|q| Some(decide_locally(q, self.threshold)))
            .collect();
        Box::pin(std::future::ready(Ok(decisions)))
    }
}

/// An OpenAI-compatible LLM asked once per request. It never overrides an
/// answer the user gave before (a stored answer).
pub struct LlmDecider {
    pub settings: LlmSettings,
}

impl Decider for LlmDecider {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn decide<'a>(&'a self, input: &'a DecisionInput<'a>) -> DecisionFuture<'a> {
        Box::pin(async move {
            let decisions = llm::decide(
                &self.settings,
                input.prompt,
                input.project_context,
                input.questions,
            )
            .await
            .map_err(|error| error.to_string())?;
            Ok(decisions
                .into_iter()
                .zip(input.questions)
                // A stored answer from the user outranks any model.
                .map(|(decision, q)| decision.filter(|_| q.stored.is_none()))
                .collect())
        })
    }
}

/// The deciders the settings ask for, in the order they are tried.
pub fn deciders_for(settings: &ResearchSettings) -> Vec<Box<dyn Decider>> {
    let mut deciders: Vec<Box<dyn Decider>> = Vec::new();
    if let Some(llm) = &settings.llm {
        deciders.push(Box::new(LlmDecider {
            settings: llm.clone(),
        }));
    }
    deciders.push(Box::new(LocalDecider {
        threshold: settings.threshold,
    }));
    deciders
}

/// Runs `deciders` in order until every question is decided; whatever no
/// decider decides stays unanswered.
pub async fn decide_all(deciders: &[Box<dyn Decider>], input: &DecisionInput<'_>) -> Vec<Decision> {
    let mut decided: Vec<Option<Decision>> = vec![None; input.questions.len()];
    for decider in deciders {
        if decided.iter().all(Option::is_some) {
            break;
        }
        match decider.decide(input).await {
            Ok(decisions) => {
                for (slot, decision) in decided.iter_mut().zip(decisions) {
                    if slot.is_none() {
                        *slot = decision;
                    }
                }
            }
            Err(error) => {
                tracing::warn!(decider = decider.name(), %error, "a decider failed; trying the next");
            }
        }
    }
    decided
        .into_iter()
        .map(|d| d.unwrap_or(Decision::Unanswered))
        .collect()
}
