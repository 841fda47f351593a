//! Phase 2 and the local decider: evidence for each question, and whether
//! that evidence states the answer.
//!
//! Passages are retrieved by BM25; every sentence of them is scored by how
//! much of the question's informative content it covers (each term weighted
//! by its IDF, so "PostgreSQL" counts for more than "use"), with half credit
//! for terms that only the title, heading or neighbouring sentences carry (a
//! sentence often says "it" for the note's subject), and a penalty when the
//! sentence lacks the kind of answer asked for (a "when" question needs a
//! time). The best sentence's score is the confidence; the question counts as
//! answered when it reaches the threshold.

use std::collections::{HashMap, HashSet};

use tantivy::tokenizer::TextAnalyzer;

use crate::index::analyzer::{analyze, text_analyzer};
use crate::index::{Index, SearchFilter, SectionHit};

use super::question::{answer_kind, informative_text, offers, AnswerKind};
use super::sentences::sentence_spans;

/// Passages retrieved per question before sentences are scored.
const PASSAGES_PER_QUESTION: usize = 12;
/// Credit for a question term found only around the sentence.
const CONTEXT_CREDIT: f32 = 0.5;
/// Multiplier when the sentence lacks the kind of answer asked for.
const WRONG_KIND_FACTOR: f32 = 0.55;
/// Multiplier when the question has a single informative term: one shared
/// word is thin evidence.
const SINGLE_TERM_FACTOR: f32 = 0.8;

/// A question ready to be scored against sentences.
pub struct QuestionTerms {
    pub question: String,
    pub kind: AnswerKind,
    /// Analyzed informative terms and their IDF weights.
    pub terms: Vec<(String, f32)>,
}

impl QuestionTerms {
    fn total_weight(&self) -> f32 {
        self.terms.iter().map(|(_, w)| w).sum()
    }
}

/// IDF weights of terms, cached for one request.
pub struct Weights<'a> {
    index: &'a Index,
    cache: HashMap<String, f32>,
}

impl<'a> Weights<'a> {
    pub fn new(index: &'a Index) -> Self {
        Weights {
            index,
            cache: HashMap::new(),
        }
    }

    /// BM25's IDF of a term over the brain's passages.
    pub fn idf(&mut self, term: &str) -> f32 {
        if let Some(&w) = self.cache.get(term) {
            return w;
        }
        let (df, n) = self.index.doc_freq(term);
        let (df, n) = (df as f32, n.max(1) as f32);
        let w = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        self.cache.insert(term.to_string(), w);
        w
    }

    /// The question's informative terms with their weights.
    pub fn question_terms(&mut self, question: &str) -> QuestionTerms {
        let terms = self.index.query_terms(&informative_text(question));
        QuestionTerms {
            question: question.to_string(),
            kind: answer_kind(question),
            terms: terms
                .into_iter()
                .map(|t| {
                    let w = self.idf(&t);
                    (t, w)
                })
                .collect(),
        }
    }
}

/// A scored sentence of a passage.
#[derive(Debug, Clone)]
pub struct ScoredSentence {
    /// Byte range of the sentence in the passage text.
    pub span: (usize, usize),
    pub confidence: f32,
}

/// The best sentence of one note for one question.
#[derive(Debug, Clone)]
pub struct NoteFinding {
    pub section: SectionHit,
    pub sentence: ScoredSentence,
}

/// Retrieves passages for a question (plus the project context) and returns
/// the best sentence of each note, best note first.
pub fn find_evidence(
    index: &Index,
    question: &QuestionTerms,
    context: &[SectionHit],
) -> Vec<NoteFinding> {
    if question.terms.is_empty() || question.total_weight() <= 0.0 {
        return Vec::new();
    }
    let terms: Vec<String> = question.terms.iter().map(|(t, _)| t.clone()).collect();
    let mut sections =
        match index.search_sections(&terms, &SearchFilter::default(), PASSAGES_PER_QUESTION) {
            Ok(sections) => sections,
            Err(error) => {
                tracing::warn!(%error, "evidence search failed; treating as none");
                Vec::new()
            }
        };
    let mut seen: HashSet<(String, u64)> =
        sections.iter().map(|s| (s.path.clone(), s.ord)).collect();
    for section in context {
        if seen.insert((section.path.clone(), section.ord)) {
            sections.push(section.clone());
        }
    }
    let mut analyzer = text_analyzer();
    let mut best_by_note: HashMap<String, NoteFinding> = HashMap::new();
    for section in sections {
        let Some(sentence) = best_sentence(&mut analyzer, question, &section) else {
            continue;
        };
        let better = best_by_note
            .get(&section.path)
            .is_none_or(|f| sentence.confidence > f.sentence.confidence);
        if better {
            best_by_note.insert(section.path.clone(), NoteFinding { section, sentence });
        }
    }
    let mut findings: Vec<NoteFinding> = best_by_note.into_values().collect();
    findings.sort_by(|a, b| {
        b.sentence
            .confidence
            .total_cmp(&a.sentence.confidence)
            .then(b.section.score.total_cmp(&a.section.score))
            .then(a.section.path.cmp(&b.section.path))
    });
    findings
}

fn token_set(analyzer: &mut TextAnalyzer, text: &str) -> HashSet<String> {
    analyze(analyzer, text)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

/// Scores every sentence of a passage and keeps the best.
fn best_sentence(
    analyzer: &mut TextAnalyzer,
    question: &QuestionTerms,
    section: &SectionHit,
) -> Option<ScoredSentence> {
    let spans = sentence_spans(&section.text);
    let sets: Vec<HashSet<String>> = spans
        .iter()
        .map(|&(s, e)| token_set(analyzer, &section.text[s..e]))
        .collect();
    let around = token_set(analyzer, &format!("{} {}", section.title, section.heading));
    let total = question.total_weight();
    let mut best: Option<ScoredSentence> = None;
    for (i, &(s, e)) in spans.iter().enumerate() {
        let mut own = 0.0;
        let mut near = 0.0;
        for (term, weight) in &question.terms {
            if sets[i].contains(term) {
                own += weight;
            } else if around.contains(term)
                || (i > 0 && sets[i - 1].contains(term))
                || sets.get(i + 1).is_some_and(|set| set.contains(term))
            {
                near += weight;
            }
        }
        let mut confidence = ((own + CONTEXT_CREDIT * near) / total).min(1.0);
        if !offers(question.kind, &section.text[s..e], &question.question) {
            confidence *= WRONG_KIND_FACTOR;
        }
        if question.terms.len() == 1 {
            confidence *= SINGLE_TERM_FACTOR;
        }
        if best.as_ref().is_none_or(|b| confidence > b.confidence) {
            best = Some(ScoredSentence {
                span: (s, e),
                confidence,
            });
        }
    }
    best
}

/// The answer text: the sentence, with list markers dropped.
pub fn answer_text(finding: &NoteFinding) -> String {
    let (s, e) = finding.sentence.span;
    finding.section.text[s..e]
        .trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '>') || c.is_whitespace())
        .trim()
        .to_string()
}

/// An excerpt of at most `max_chars` around the finding's sentence: the
/// sentence, then its neighbours while they fit.
pub fn excerpt(finding: &NoteFinding, max_chars: usize) -> String {
    let text = &finding.section.text;
    let spans = sentence_spans(text);
    let Some(at) = spans.iter().position(|&s| s == finding.sentence.span) else {
        return cut(text, max_chars);
    };
    let (mut start, mut end) = spans[at];
    let (mut lo, mut hi) = (at, at);
    loop {
        let mut grew = false;
        if hi + 1 < spans.len() && text[start..spans[hi + 1].1].chars().count() <= max_chars {
            hi += 1;
            end = spans[hi].1;
            grew = true;
        }
        if lo > 0 && text[spans[lo - 1].0..end].chars().count() <= max_chars {
            lo -= 1;
            start = spans[lo].0;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    cut(&text[start..end], max_chars)
}

fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let end = super::context::word_cut(text, max_chars.saturating_sub(1));
    format!("{}{}", text[..end].trim_end(), super::context::CUT_MARKER)
}
