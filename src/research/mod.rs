//! Self-research: answering an assistant's open questions from the brain
//! before the user is asked.
//!
//! One request runs in two phases. Phase 1 loads the project context
//! ([`context`]); phase 2 gathers evidence for every question and decides,
//! per question, whether the evidence states the answer: first against the
//! answers the user already gave ([`qa`]), then against the notes
//! ([`decider`]). An optional LLM ([`llm`]) may decide instead, with the local
//! decider as its fallback. Research never fails: whatever goes wrong leaves a
//! question unanswered.

pub mod context;
pub mod decider;
pub mod deciders;
pub mod llm;
pub mod log;
pub mod model;
pub mod qa;
pub mod question;
pub mod sentences;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::index::search::rfc3339;
use crate::index::{Corpus, SectionHit};
use context::{load_project_context, ContextSource, ProjectContext};
use decider::{answer_text, excerpt, find_evidence, NoteFinding, Weights};
use qa::{find_stored_answer, StoredAnswer, Superseded};

/// The `source` of every self-researched answer.
pub const SOURCE: &str = "self-research";
/// Shown before a self-researched answer where it appears as text.
pub const MARKER: &str = "(self-research) ";
pub use crate::limits::{
    MAX_PROJECT_CONTEXT_CHARS, MAX_PROMPT_CHARS, MAX_QUESTIONS, MAX_QUESTION_CHARS,
    MAX_SESSION_CHARS,
};
/// The default answer threshold of the prior decider, chosen on SQuAD
/// part A (see README).
pub const DEFAULT_THRESHOLD: f32 = 0.5;
/// The default answer threshold of the learned decider: the calibrated
/// confidence at which the development questions reached an
/// answered-precision of 0.9 (`train/fit_decider.py` writes it into
/// `decider_model.json`).
pub const LEARNED_THRESHOLD: f32 = 0.75;

/// Which local decider turns a question's best candidate into a confidence.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DeciderKind {
    /// The hand-made score: IDF coverage with answer-kind penalties, less
    /// the closeness of a disagreeing runner-up.
    #[default]
    Prior,
    /// The logistic model fitted by `train/fit_decider.py`, calibrated so
    /// that the confidence is the probability that the answer is right.
    Learned,
}

impl DeciderKind {
    /// The threshold this decider answers at unless told otherwise.
    pub fn default_threshold(self) -> f32 {
        match self {
            DeciderKind::Prior => DEFAULT_THRESHOLD,
            DeciderKind::Learned => LEARNED_THRESHOLD,
        }
    }
}
/// Confidence floor of a stored answer whose question matches.
const STORED_ANSWER_BASE: f32 = 0.8;

/// Validated research settings.
#[derive(Debug, Clone)]
pub struct ResearchSettings {
    /// A note used as project context instead of the brain's
    /// `noggin: project-context` notes.
    pub project_context_path: Option<PathBuf>,
    pub project_context_chars: usize,
    pub notes_per_question: usize,
    pub evidence_budget_chars: usize,
    /// Confidence an answer needs.
    pub threshold: f32,
    /// Which local decider scores the evidence.
    pub decider: DeciderKind,
    /// Folder (relative to the brain) of the notes the learning loop writes.
    pub knowledge_folder: String,
    pub llm: Option<llm::LlmSettings>,
}

impl Default for ResearchSettings {
    fn default() -> Self {
        ResearchSettings {
            project_context_path: None,
            project_context_chars: 3000,
            notes_per_question: 2,
            evidence_budget_chars: 4000,
            threshold: DEFAULT_THRESHOLD,
            decider: DeciderKind::Prior,
            knowledge_folder: "Alignment Knowledge".into(),
            llm: None,
        }
    }
}

/// `POST /v1/research` body.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchRequest {
    /// What the user asked for, for context (optional: absent, null and ""
    /// all mean no prompt).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schemars(with = "Option<String>")]
    pub prompt: String,
    /// The open clarification questions, one line each.
    #[schemars(length(min = 1, max = MAX_QUESTIONS), inner(length(min = 1, max = MAX_QUESTION_CHARS)))]
    pub questions: Vec<String>,
    /// The working-context session these questions belong to (optional):
    /// they and their answers become part of it.
    #[serde(default)]
    pub session: Option<String>,
    /// What the assistant knows of the project (optional): it stands in for
    /// the brain's project-context note, and is read as evidence too.
    #[serde(default)]
    pub project_context: Option<String>,
}

/// A string field that clients may also send as `null`.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Why a request was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvalidRequest {
    #[error("questions must not be empty")]
    NoQuestions,
    #[error("at most {MAX_QUESTIONS} questions per request (got {0})")]
    TooManyQuestions(usize),
    #[error("question {0} is empty")]
    EmptyQuestion(usize),
    #[error("question {0} is longer than {MAX_QUESTION_CHARS} characters")]
    QuestionTooLong(usize),
    #[error("question {0} contains a control character (a question is one line)")]
    ControlCharacter(usize),
    #[error("prompt is longer than {MAX_PROMPT_CHARS} characters")]
    PromptTooLong,
    #[error("project_context is longer than {MAX_PROJECT_CONTEXT_CHARS} characters")]
    ProjectContextTooLong,
    #[error("{}", crate::context::session_rule())]
    BadSession,
}

impl InvalidRequest {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            InvalidRequest::NoQuestions => "no-questions",
            InvalidRequest::TooManyQuestions(_) => "too-many-questions",
            InvalidRequest::EmptyQuestion(_) => "empty-question",
            InvalidRequest::QuestionTooLong(_) => "question-too-long",
            InvalidRequest::ControlCharacter(_) => "control-character",
            InvalidRequest::PromptTooLong => "prompt-too-long",
            InvalidRequest::ProjectContextTooLong => "project-context-too-long",
            InvalidRequest::BadSession => "invalid-session",
        }
    }
}

impl ResearchRequest {
    /// Checks the limits of SPEC §4; questions are numbered from 1.
    pub fn validate(&self) -> Result<(), InvalidRequest> {
        if self.questions.is_empty() {
            return Err(InvalidRequest::NoQuestions);
        }
        if self.questions.len() > MAX_QUESTIONS {
            return Err(InvalidRequest::TooManyQuestions(self.questions.len()));
        }
        for (i, question) in self.questions.iter().enumerate() {
            let n = i + 1;
            if question.chars().any(char::is_control) {
                return Err(InvalidRequest::ControlCharacter(n));
            }
            if question.trim().is_empty() {
                return Err(InvalidRequest::EmptyQuestion(n));
            }
            if question.chars().count() > MAX_QUESTION_CHARS {
                return Err(InvalidRequest::QuestionTooLong(n));
            }
        }
        if self.prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(InvalidRequest::PromptTooLong);
        }
        if self
            .project_context
            .as_ref()
            .is_some_and(|c| c.chars().count() > MAX_PROJECT_CONTEXT_CHARS)
        {
            return Err(InvalidRequest::ProjectContextTooLong);
        }
        if let Some(session) = &self.session {
            if crate::context::validate_session_id(session).is_err() {
                return Err(InvalidRequest::BadSession);
            }
        }
        Ok(())
    }
}

/// One piece of evidence: an excerpt of a note.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Evidence {
    pub path: String,
    pub title: String,
    pub heading: String,
    pub excerpt: String,
    pub score: f32,
    /// RFC 3339, or empty for text sent with the request.
    pub modified: String,
}

/// A question the brain answered.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Answered {
    pub question: String,
    pub answer: String,
    pub confidence: f32,
    pub source: &'static str,
    pub evidence: Vec<Evidence>,
    /// Older stored answers that this one replaced.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<Superseded>,
    /// How many of `evidence`, from the first, the answer comes from; the
    /// rest were read too. (What the card names as the answer's sources.)
    #[serde(skip)]
    #[schemars(skip)]
    pub cited: usize,
}

/// A question left for the user, with the best weak evidence.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Unanswered {
    pub question: String,
    pub evidence: Vec<Evidence>,
}

/// `POST /v1/research` response.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ResearchResponse {
    pub research_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_context: Option<String>,
    pub answered: Vec<Answered>,
    pub unanswered: Vec<Unanswered>,
    pub evidence_chars: usize,
    pub took_ms: u64,
    /// True when noggin was still bringing its index up to date with the
    /// brain after it started (the first index of a new brain, notes changed
    /// while it was not running) as the research began: a question left
    /// open may find its note once that is done.
    pub indexing: bool,
}

/// What the deciders see of one question.
pub struct QuestionEvidence {
    pub question: String,
    /// Best note first, at most `notes_per_question`.
    pub findings: Vec<NoteFinding>,
    pub evidence: Vec<Evidence>,
    pub stored: Option<StoredAnswer>,
}

/// A decision about one question.
#[derive(Debug, Clone)]
pub enum Decision {
    Answered {
        answer: String,
        confidence: f32,
        /// Indexes into the question's evidence, the cited ones first.
        cited: Vec<usize>,
        superseded: Vec<Superseded>,
    },
    Unanswered,
}

/// Requests gathering evidence at the same time: one per core.
static GATHERING: std::sync::LazyLock<std::sync::Arc<tokio::sync::Semaphore>> =
    std::sync::LazyLock::new(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        std::sync::Arc::new(tokio::sync::Semaphore::new(cores))
    });

/// Researches a validated request. Never fails: problems leave questions
/// unanswered and are logged.
pub async fn research_questions(
    index: std::sync::Arc<dyn Corpus>,
    settings: &ResearchSettings,
    request: &ResearchRequest,
) -> ResearchResponse {
    let started = Instant::now();
    let (context, gathered) = {
        // Gathering is CPU work: at most one per core at a time, in arrival
        // order, so a burst of requests queues instead of thrashing. The
        // permit goes with the work, which runs on even if the caller leaves.
        let permit = GATHERING.clone().acquire_owned().await;
        let settings = settings.clone();
        let request = request.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            gather(index.as_ref(), &settings, &request)
        })
        .await
        .unwrap_or_else(|error| {
            tracing::error!(%error, "gathering evidence failed");
            (ProjectContext::default(), Vec::new())
        })
    };
    let deciders = deciders::deciders_for(settings);
    let input = deciders::DecisionInput {
        prompt: &request.prompt,
        project_context: context.text.as_deref(),
        questions: &gathered,
    };
    let decisions = deciders::decide_all(&deciders, &input).await;
    respond(context, gathered, decisions, started)
}

/// Phase 1 and 2: project context, stored answers and evidence per question.
fn gather(
    index: &dyn Corpus,
    settings: &ResearchSettings,
    request: &ResearchRequest,
) -> (ProjectContext, Vec<QuestionEvidence>) {
    let source = match (&request.project_context, &settings.project_context_path) {
        (Some(text), _) => ContextSource::Request(text),
        (None, Some(path)) => ContextSource::File(path),
        (None, None) => ContextSource::Brain,
    };
    let context = load_project_context(index, source, settings.project_context_chars);
    let slots = (request.questions.len() * settings.notes_per_question).max(1);
    let excerpt_chars = (settings.evidence_budget_chars / slots).min(600);
    let mut weights = Weights::new(index);
    let has_stored_answers = index.folder_sections(&settings.knowledge_folder) > 0;
    // The question's words and a stored answer first (they share the
    // weights' cache); then the evidence of all questions on every core: with
    // the semantic model, embedding each question takes 25-30 ms.
    let asked: Vec<_> = request
        .questions
        .iter()
        .map(|asked| {
            let terms = weights.question_terms(asked.trim());
            let stored = if has_stored_answers {
                find_stored_answer(index, &mut weights, &settings.knowledge_folder, &terms)
            } else {
                None
            };
            (asked, terms, stored)
        })
        .collect();
    let gathered = asked
        .into_par_iter()
        .map(|(asked, terms, stored)| {
            let mut findings = find_evidence(
                index,
                &terms,
                &context.sections,
                settings.decider,
                settings.threshold,
            );
            if let Some(stored) = &stored {
                // The stored answer's note comes first.
                findings.retain(|f| f.section.path != stored.section.path);
                findings.insert(0, stored_finding(stored));
            }
            findings.truncate(settings.notes_per_question);
            // Every finding is evidence; the budget bounds only the excerpts
            // (none when it is smaller than the number of findings).
            let evidence = findings
                .iter()
                .map(|f| Evidence {
                    path: f.section.path.clone(),
                    title: f.section.title.clone(),
                    heading: f.section.heading.clone(),
                    excerpt: if excerpt_chars > 0 {
                        crate::text::code_lines(&excerpt(f, excerpt_chars)).into_owned()
                    } else {
                        String::new()
                    },
                    score: round3(f.sentence.confidence),
                    modified: if f.section.modified == 0 {
                        String::new()
                    } else {
                        rfc3339(f.section.modified)
                    },
                })
                .collect();
            QuestionEvidence {
                // The caller's own spelling, so it can match its questions.
                question: asked.clone(),
                findings,
                evidence,
                stored,
            }
        })
        .collect();
    (context, gathered)
}

/// A stored answer as a finding: its whole text is the sentence.
fn stored_finding(stored: &StoredAnswer) -> NoteFinding {
    let section: SectionHit = stored.section.clone();
    let text = &section.text;
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len();
    NoteFinding {
        sentence: decider::ScoredSentence {
            span: (start, end.max(start)),
            answer_span: (start, end.max(start)),
            confidence: stored_confidence(stored),
            coverage: stored.similarity,
            ..Default::default()
        },
        section,
    }
}

fn stored_confidence(stored: &StoredAnswer) -> f32 {
    STORED_ANSWER_BASE + (1.0 - STORED_ANSWER_BASE) * stored.similarity
}

/// The local decider: a stored answer, else the best sentence when its
/// confidence reaches the threshold.
pub fn decide_locally(q: &QuestionEvidence, threshold: f32) -> Decision {
    if let Some(stored) = &q.stored {
        return Decision::Answered {
            answer: stored.answer.clone(),
            confidence: stored_confidence(stored),
            cited: vec![0],
            superseded: stored.superseded.clone(),
        };
    }
    match q.findings.first() {
        Some(best) if best.sentence.confidence >= threshold => Decision::Answered {
            answer: answer_text(best),
            confidence: best.sentence.confidence,
            // The note the sentence comes from; the others were read too.
            cited: vec![0],
            superseded: Vec::new(),
        },
        _ => Decision::Unanswered,
    }
}

fn respond(
    context: ProjectContext,
    gathered: Vec<QuestionEvidence>,
    decisions: Vec<Decision>,
    started: Instant,
) -> ResearchResponse {
    let mut answered = Vec::new();
    let mut unanswered = Vec::new();
    let mut evidence_chars = 0;
    for (i, q) in gathered.into_iter().enumerate() {
        let decision = decisions.get(i).cloned().unwrap_or(Decision::Unanswered);
        evidence_chars += q
            .evidence
            .iter()
            .map(|e| e.excerpt.chars().count())
            .sum::<usize>();
        match decision {
            Decision::Answered {
                answer,
                confidence,
                cited,
                superseded,
            } => {
                let mut evidence: Vec<Evidence> = cited
                    .iter()
                    .filter_map(|&c| q.evidence.get(c).cloned())
                    .collect();
                let cited_count = evidence.len();
                for (c, e) in q.evidence.iter().enumerate() {
                    if !cited.contains(&c) {
                        evidence.push(e.clone());
                    }
                }
                answered.push(Answered {
                    question: q.question,
                    answer: crate::text::code_lines(&answer).into_owned(),
                    confidence: round3(confidence),
                    source: SOURCE,
                    evidence,
                    superseded,
                    cited: cited_count,
                });
            }
            Decision::Unanswered => unanswered.push(Unanswered {
                question: q.question,
                evidence: q.evidence,
            }),
        }
    }
    ResearchResponse {
        research_id: new_research_id(),
        project_context: context.text,
        answered,
        unanswered,
        evidence_chars,
        took_ms: started.elapsed().as_millis() as u64,
        indexing: false,
    }
}

/// Every question left open with no evidence: the response when there are
/// no notes to look in.
pub fn all_open(request: &ResearchRequest) -> ResearchResponse {
    ResearchResponse {
        research_id: new_research_id(),
        project_context: None,
        answered: Vec::new(),
        unanswered: request
            .questions
            .iter()
            .map(|question| Unanswered {
                question: question.clone(),
                evidence: Vec::new(),
            })
            .collect(),
        evidence_chars: 0,
        took_ms: 0,
        indexing: false,
    }
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// A short id, unique within this process and unlikely to repeat across runs.
fn new_research_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let hash = xxhash_rust::xxh3::xxh3_64(&[nanos.to_le_bytes(), n.to_le_bytes()].concat());
    format!("r-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(questions: &[&str]) -> ResearchRequest {
        ResearchRequest {
            prompt: String::new(),
            questions: questions.iter().map(|q| q.to_string()).collect(),
            session: None,
            project_context: None,
        }
    }

    #[test]
    fn requests_are_validated() {
        assert_eq!(request(&[]).validate(), Err(InvalidRequest::NoQuestions));
        assert_eq!(request(&["ok?"]).validate(), Ok(()));
        assert_eq!(
            request(&["ok?"; 21]).validate(),
            Err(InvalidRequest::TooManyQuestions(21))
        );
        assert_eq!(
            request(&["ok", "  "]).validate(),
            Err(InvalidRequest::EmptyQuestion(2))
        );
        assert_eq!(
            request(&["a\nb"]).validate(),
            Err(InvalidRequest::ControlCharacter(1))
        );
        let long = "x".repeat(501);
        assert_eq!(
            request(&[long.as_str()]).validate(),
            Err(InvalidRequest::QuestionTooLong(1))
        );
        let mut r = request(&["ok"]);
        r.session = Some(String::new());
        assert_eq!(r.validate(), Err(InvalidRequest::BadSession));
    }
}
