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
use std::sync::{Arc, LazyLock, Mutex};

use xxhash_rust::xxh3::{Xxh3, Xxh3DefaultBuilder};

/// Sets of analyzed words, hashed fast: they are probed for every question
/// term in every sentence.
type WordSet = HashSet<String, Xxh3DefaultBuilder>;

use tantivy::tokenizer::TextAnalyzer;

use crate::index::analyzer::{analyze, with_analyzer};
use crate::index::search::is_stopword;
use crate::index::{Index, SearchFilter, SectionHit};

use super::context::cut_on_word;
use super::question::{
    answer_kind, informative_text, offers_lower, type_noun, vague_time_lower, AnswerKind,
};
use super::sentences::sentence_spans;

/// Passages retrieved per question before sentences are scored.
const PASSAGES_PER_QUESTION: usize = 8;
/// Credit for a question term found only around the sentence.
const CONTEXT_CREDIT: f32 = 0.5;
/// Weight of the noun naming the kind of answer ("what *city*").
const TYPE_NOUN_WEIGHT: f32 = 0.3;
/// Multiplier when neither the sentence nor its neighbour has the kind of
/// answer asked for.
const WRONG_KIND_FACTOR: f32 = 0.55;
/// Multiplier when a "when" question meets only a vague time ("every week").
const VAGUE_TIME_FACTOR: f32 = 0.9;
/// Multiplier when a "which X" question meets a sentence that names nothing
/// specific (no name, number or code-like token): often, not always, wrong.
const UNSPECIFIC_CHOICE_FACTOR: f32 = 0.75;
/// How much a close runner-up elsewhere lowers the confidence: two places
/// that fit equally well make either a guess.
const RUNNER_UP_WEIGHT: f32 = 1.0;
/// A runner-up this far below the best does not lower the confidence.
const RUNNER_UP_GAP: f32 = 0.3;
/// Share of its own content words a sentence must have in common with the
/// answer to count as saying the same thing.
const AGREEMENT: f32 = 0.5;
/// Confidence lost per informative term the question has fewer than
/// [`FULL_TERMS`]: short questions match by chance more often.
const SHORT_QUESTION_PENALTY: f32 = 0.05;
const FULL_TERMS: usize = 5;

/// A scored sentence anywhere in the evidence, to compare the best against.
struct Rival {
    path: String,
    ord: u64,
    span: (usize, usize),
    confidence: f32,
    tokens: Arc<SectionTokens>,
    /// Which sentence of the section.
    sentence: usize,
}

/// A passage's sentences and their analyzed words, and the words of its
/// title and heading.
pub struct SectionTokens {
    spans: Vec<(usize, usize)>,
    sets: Vec<WordSet>,
    around: WordSet,
}

/// Passages whose words are kept between requests; beyond it the cache
/// starts over.
const TOKEN_CACHE_SECTIONS: usize = 50_000;

/// Analyzing sentences is most of the work of research, and the same
/// passages come back for many questions: their words are cached under a
/// hash of their text, so an edited passage is simply a new entry.
static TOKEN_CACHE: LazyLock<Mutex<HashMap<u64, Arc<SectionTokens>>>> =
    LazyLock::new(Mutex::default);

fn section_tokens(section: &SectionHit) -> Arc<SectionTokens> {
    let mut hasher = Xxh3::new();
    for part in [&section.title, &section.heading, &section.text] {
        hasher.update(part.as_bytes());
        hasher.update(&[0]);
    }
    let key = hasher.digest();
    if let Some(found) = TOKEN_CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return found.clone();
    }
    let text = &section.text;
    let spans = sentence_spans(text);
    let (sets, around) = with_analyzer(|analyzer| {
        let sets = spans
            .iter()
            .map(|&(s, e)| token_set(analyzer, &text[s..e]))
            .collect();
        let around = token_set(analyzer, &format!("{} {}", section.title, section.heading));
        (sets, around)
    });
    let tokens = Arc::new(SectionTokens {
        spans,
        sets,
        around,
    });
    let mut cache = TOKEN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= TOKEN_CACHE_SECTIONS {
        cache.clear();
    }
    cache.insert(key, tokens.clone());
    tokens
}

/// True when a sentence says much the same as the answer.
fn agrees(content: &HashSet<&str>, answer: &HashSet<&str>) -> bool {
    if content.is_empty() {
        return false;
    }
    let common = content.intersection(answer).count() as f32;
    common / content.len().min(answer.len()).max(1) as f32 >= AGREEMENT
}

/// A rival sentence's words that are neither asked about nor stop words.
fn content_words<'a>(rival: &'a Rival, asked: &HashSet<&str>) -> HashSet<&'a str> {
    rival.tokens.sets[rival.sentence]
        .iter()
        .map(String::as_str)
        .filter(|t| !asked.contains(t) && !is_stopword(t))
        .collect()
}

/// Words that open a sentence which leans on the one before ("He made Ralph
/// earl"): the answer then needs both.
const LEANING_OPENERS: &[&str] = &[
    "he", "she", "it", "they", "this", "these", "that", "those", "his", "her", "its", "their",
    "there", "such", "both", "however", "thus", "then",
];

/// A question ready to be scored against sentences.
pub struct QuestionTerms {
    pub question: String,
    /// The question in lower case, for the answer-kind checks.
    pub lower: String,
    pub kind: AnswerKind,
    /// Analyzed informative terms and their weights (IDF, less for the
    /// type noun).
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
        let type_terms: HashSet<String> = type_noun(question)
            .map(|noun| {
                with_analyzer(|a| analyze(a, &noun))
                    .into_iter()
                    .map(|t| t.text)
                    .collect()
            })
            .unwrap_or_default();
        QuestionTerms {
            question: question.to_string(),
            lower: question.to_lowercase(),
            kind: answer_kind(question),
            terms: terms
                .into_iter()
                .map(|t| {
                    let mut w = self.idf(&t);
                    if type_terms.contains(&t) {
                        w *= TYPE_NOUN_WEIGHT;
                    }
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
    /// Byte range of the answer: the sentence, with the one before when it
    /// leans on it, or with the neighbour that holds the asked-for kind.
    pub answer_span: (usize, usize),
    pub confidence: f32,
    /// Weighted share of the question covered (before any penalty).
    pub coverage: f32,
}

/// The best sentence of one note for one question.
#[derive(Debug, Clone)]
pub struct NoteFinding {
    pub section: SectionHit,
    pub sentence: ScoredSentence,
}

/// Retrieves passages for a question (plus the project context) and returns
/// the best sentence of each note, best note first, with confidences that
/// account for close runners-up.
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
    let mut best_by_note: HashMap<String, NoteFinding> = HashMap::new();
    // Every sentence's score, to find the best one's closest rival.
    let mut all: Vec<Rival> = Vec::new();
    for section in sections {
        let tokens = section_tokens(&section);
        let scored = score_sentences(question, &section, &tokens);
        for (i, sentence) in scored.iter().enumerate() {
            all.push(Rival {
                path: section.path.clone(),
                ord: section.ord,
                span: sentence.span,
                confidence: sentence.confidence,
                tokens: tokens.clone(),
                sentence: i,
            });
        }
        // On a tie the earlier sentence wins: notes tend to state a thing
        // first and qualify it after.
        let Some(best) = scored.into_iter().reduce(|best, next| {
            if next.confidence > best.confidence {
                next
            } else {
                best
            }
        }) else {
            continue;
        };
        let better = best_by_note
            .get(&section.path)
            .is_none_or(|f| best.confidence > f.sentence.confidence);
        if better {
            best_by_note.insert(
                section.path.clone(),
                NoteFinding {
                    section,
                    sentence: best,
                },
            );
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
    if let Some(best) = findings.first_mut() {
        // The rival: the best sentence elsewhere that says something else.
        // A sentence that repeats the answer agrees with it and is no rival.
        let (bs, be) = best.sentence.answer_span;
        let is_answer = |r: &Rival| {
            r.path == best.section.path
                && r.ord == best.section.ord
                && r.span.0 >= bs
                && r.span.1 <= be
        };
        let asked: HashSet<&str> = question.terms.iter().map(|(t, _)| t.as_str()).collect();
        let answer_content: HashSet<&str> = all
            .iter()
            .filter(|r| is_answer(r))
            .flat_map(|r| content_words(r, &asked))
            .collect();
        let mut rivals: Vec<&Rival> = all.iter().filter(|r| !is_answer(r)).collect();
        rivals.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        let runner_up = rivals
            .iter()
            .find(|r| !agrees(&content_words(r, &asked), &answer_content))
            .map_or(0.0, |r| r.confidence);
        let confidence = best.sentence.confidence;
        best.sentence.confidence = (confidence
            - RUNNER_UP_WEIGHT * (runner_up - (confidence - RUNNER_UP_GAP)).max(0.0))
        .max(0.0);
    }
    findings
}

fn token_set(analyzer: &mut TextAnalyzer, text: &str) -> WordSet {
    analyze(analyzer, text)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

fn leans_on_previous(sentence: &str) -> bool {
    let first = sentence
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase();
    LEANING_OPENERS.contains(&first.as_str())
}

/// Scores every sentence of a passage.
fn score_sentences(
    question: &QuestionTerms,
    section: &SectionHit,
    tokens: &SectionTokens,
) -> Vec<ScoredSentence> {
    let text = &section.text;
    let spans = &tokens.spans;
    let sets = &tokens.sets;
    let around = &tokens.around;
    let total = question.total_weight();
    let offered: Vec<bool> = spans
        .iter()
        .map(|&(s, e)| offers_lower(question.kind, &text[s..e], &question.lower))
        .collect();
    let offers_at = |i: usize| offered[i];
    // Which question terms each sentence (and the title and heading) has:
    // one lookup per term and sentence.
    let n = question.terms.len();
    let has: Vec<bool> = sets
        .iter()
        .flat_map(|set| question.terms.iter().map(move |(t, _)| set.contains(t)))
        .collect();
    let around_has: Vec<bool> = question
        .terms
        .iter()
        .map(|(t, _)| around.contains(t))
        .collect();
    let mut scored = Vec::with_capacity(spans.len());
    for (i, &(s, e)) in spans.iter().enumerate() {
        let mut own = 0.0;
        let mut near = 0.0;
        for (k, (_, weight)) in question.terms.iter().enumerate() {
            if has[i * n + k] {
                own += weight;
            } else if around_has[k]
                || (i > 0 && has[(i - 1) * n + k])
                || (i + 1 < spans.len() && has[(i + 1) * n + k])
            {
                near += weight;
            }
        }
        let coverage = ((own + CONTEXT_CREDIT * near) / total).min(1.0);
        let mut answer_span = (s, e);
        if i > 0 && leans_on_previous(&text[s..e]) {
            answer_span.0 = spans[i - 1].0;
        }
        // A sentence that introduces a list ("There are three ways:") is
        // answered by the lines after it.
        let mut last = i;
        while text[spans[last].0..spans[last].1]
            .trim_end()
            .ends_with([':', '：'])
            && last + 1 < spans.len()
            && last < i + 3
        {
            last += 1;
        }
        answer_span.1 = spans[last].1;
        let mut confidence = coverage;
        let answer_offers = if answer_span == (s, e) {
            offered[i]
        } else {
            offers_lower(
                question.kind,
                &text[answer_span.0..answer_span.1],
                &question.lower,
            )
        };
        if !answer_offers {
            if last + 1 < spans.len() && offers_at(last + 1) {
                answer_span.1 = spans[last + 1].1;
            } else if i > 0 && offers_at(i - 1) {
                answer_span.0 = answer_span.0.min(spans[i - 1].0);
            } else if question.kind == AnswerKind::Choice {
                confidence *= UNSPECIFIC_CHOICE_FACTOR;
            } else {
                confidence *= WRONG_KIND_FACTOR;
            }
        }
        if question.kind == AnswerKind::Time
            && vague_time_lower(&text[answer_span.0..answer_span.1], &question.lower)
        {
            confidence *= VAGUE_TIME_FACTOR;
        }
        confidence *=
            1.0 - SHORT_QUESTION_PENALTY * FULL_TERMS.saturating_sub(question.terms.len()) as f32;
        scored.push(ScoredSentence {
            span: (s, e),
            answer_span,
            confidence,
            coverage,
        });
    }
    scored
}

/// The answer text: the sentence (or two), with list markers dropped.
pub fn answer_text(finding: &NoteFinding) -> String {
    let (s, e) = finding.sentence.answer_span;
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
        return cut_on_word(text, max_chars).0;
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
    cut_on_word(&text[start..end], max_chars).0
}
