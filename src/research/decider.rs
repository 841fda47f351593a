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
use std::sync::{Arc, LazyLock};

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::cache::CappedMap;
use crate::index::analyzer::{analyze, with_analyzer};
use crate::index::search::is_stopword;
use crate::index::{Index, PassageKey, SearchFilter, SectionHit};

use super::context::cut_on_word;
use super::question::{informative_text, type_noun, AnswerKind, Asked, Offers};
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
    /// Which of the retrieved sections.
    section: usize,
    /// Which sentence of the section.
    sentence: usize,
    span: (usize, usize),
    confidence: f32,
}

/// An analyzed word, as a hash of its text: a term lookup then compares
/// two numbers. (Two words sharing a hash is a 1 in 2^64 event per pair.)
type WordId = u64;

fn word_id(term: &str) -> WordId {
    xxh3_64(term.as_bytes())
}

/// A passage's sentences and their analyzed words, and the words of its
/// title and heading; each list sorted and free of repeats.
pub struct SectionTokens {
    spans: Vec<(usize, usize)>,
    words: Vec<Vec<WordId>>,
    /// Each sentence's words without the stop words.
    content: Vec<Vec<WordId>>,
    around: Vec<WordId>,
    /// What each sentence could answer with.
    offers: Vec<Offers>,
    /// Whether each sentence leans on the one before ("He made …").
    leans: Vec<bool>,
    /// Whether each sentence introduces a list ("There are three ways:").
    opens_list: Vec<bool>,
}

/// Passages whose words are kept between requests; beyond it the cache
/// starts over.
const TOKEN_CACHE_SECTIONS: usize = 50_000;

/// What a passage's words are cached under: the stored passage, or for
/// text from elsewhere (a project-context file) a hash of the text.
#[derive(PartialEq, Eq, Hash)]
enum TokensKey {
    Stored(PassageKey),
    Text(u64),
}

/// Analyzing sentences is most of the work of research, and the same
/// passages come back for many questions: their words are cached.
static TOKEN_CACHE: LazyLock<CappedMap<TokensKey, SectionTokens>> =
    LazyLock::new(|| CappedMap::new(TOKEN_CACHE_SECTIONS));

fn section_tokens(section: &SectionHit) -> Arc<SectionTokens> {
    let key = match section.key {
        Some(key) => TokensKey::Stored(key),
        None => {
            let mut hasher = Xxh3::new();
            for part in [&section.title, &section.heading, &section.text] {
                hasher.update(part.as_bytes());
                hasher.update(&[0]);
            }
            TokensKey::Text(hasher.digest())
        }
    };
    if let Some(found) = TOKEN_CACHE.get(&key) {
        return found;
    }
    let text = &section.text;
    let spans = sentence_spans(text);
    let (words, content, around) = with_analyzer(|analyzer| {
        let mut words = Vec::with_capacity(spans.len());
        let mut content = Vec::with_capacity(spans.len());
        for &(s, e) in &spans {
            let terms: Vec<String> = analyze(analyzer, &text[s..e])
                .into_iter()
                .map(|t| t.text)
                .collect();
            words.push(word_ids(terms.iter()));
            content.push(word_ids(terms.iter().filter(|t| !is_stopword(t))));
        }
        let around = analyze(analyzer, &format!("{} {}", section.title, section.heading));
        (words, content, word_ids(around.iter().map(|t| &t.text)))
    });
    let sentences = || spans.iter().map(|&(s, e)| &text[s..e]);
    let tokens = Arc::new(SectionTokens {
        offers: sentences().map(Offers::of).collect(),
        leans: sentences().map(leans_on_previous).collect(),
        opens_list: sentences()
            .map(|s| s.trim_end().ends_with([':', '：']))
            .collect(),
        spans,
        words,
        content,
        around,
    });
    TOKEN_CACHE.insert(key, tokens.clone());
    tokens
}

/// The sorted, de-duplicated ids of words.
fn word_ids<'a>(terms: impl Iterator<Item = &'a String>) -> Vec<WordId> {
    let mut ids: Vec<WordId> = terms.map(|t| word_id(t)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// True when a sentence says much the same as the answer: most of the
/// smaller one's content words (sorted lists) are in both.
fn agrees(content: &[WordId], answer: &[WordId]) -> bool {
    if content.is_empty() {
        return false;
    }
    let common = content
        .iter()
        .filter(|w| answer.binary_search(w).is_ok())
        .count() as f32;
    common / content.len().min(answer.len()).max(1) as f32 >= AGREEMENT
}

/// A sentence's content words that the question does not ask about, sorted.
fn unasked(tokens: &SectionTokens, sentence: usize, asked: &[WordId]) -> Vec<WordId> {
    tokens.content[sentence]
        .iter()
        .copied()
        .filter(|w| !asked.contains(w))
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
    /// The kind of answer asked for.
    pub asked: Asked,
    /// Analyzed informative terms and their weights (IDF, less for the
    /// type noun).
    pub terms: Vec<(String, f32)>,
    /// The terms' word ids, in the same order.
    ids: Vec<WordId>,
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
            asked: Asked::new(question),
            ids: terms.iter().map(|t| word_id(t)).collect(),
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
    // The project context is evidence too, where the search missed it.
    let extra: Vec<SectionHit> = context
        .iter()
        .filter(|c| !sections.iter().any(|s| s.path == c.path && s.ord == c.ord))
        .cloned()
        .collect();
    sections.extend(extra);
    // The best sentence of each note: (section, sentence).
    let mut best_by_note: HashMap<&str, (usize, ScoredSentence)> = HashMap::new();
    // Every sentence's score, to find the best one's closest rival.
    let mut all: Vec<Rival> = Vec::new();
    let tokens: Vec<Arc<SectionTokens>> = sections.iter().map(section_tokens).collect();
    for (at, section) in sections.iter().enumerate() {
        let scored = score_sentences(question, &tokens[at]);
        all.extend(scored.iter().enumerate().map(|(i, sentence)| Rival {
            section: at,
            sentence: i,
            span: sentence.span,
            confidence: sentence.confidence,
        }));
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
            .get(section.path.as_str())
            .is_none_or(|(_, f)| best.confidence > f.confidence);
        if better {
            best_by_note.insert(&section.path, (at, best));
        }
    }
    let mut findings: Vec<(usize, ScoredSentence)> = best_by_note.into_values().collect();
    findings.sort_by(|(a, x), (b, y)| {
        y.confidence
            .total_cmp(&x.confidence)
            .then(sections[*b].score.total_cmp(&sections[*a].score))
            .then(sections[*a].path.cmp(&sections[*b].path))
    });
    if let Some((at, best)) = findings.first_mut() {
        // The rival: the best sentence elsewhere that says something else.
        // A sentence that repeats the answer agrees with it and is no rival.
        let (bs, be) = best.answer_span;
        let is_answer = |r: &Rival| r.section == *at && r.span.0 >= bs && r.span.1 <= be;
        let mut answer_content: Vec<WordId> = all
            .iter()
            .filter(|r| is_answer(r))
            .flat_map(|r| unasked(&tokens[r.section], r.sentence, &question.ids))
            .collect();
        answer_content.sort_unstable();
        answer_content.dedup();
        let mut rivals: Vec<&Rival> = all.iter().filter(|r| !is_answer(r)).collect();
        rivals.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        let runner_up = rivals
            .iter()
            .find(|r| {
                let content = unasked(&tokens[r.section], r.sentence, &question.ids);
                !agrees(&content, &answer_content)
            })
            .map_or(0.0, |r| r.confidence);
        let confidence = best.confidence;
        best.confidence = (confidence
            - RUNNER_UP_WEIGHT * (runner_up - (confidence - RUNNER_UP_GAP)).max(0.0))
        .max(0.0);
    }
    findings
        .into_iter()
        .map(|(at, sentence)| NoteFinding {
            section: sections[at].clone(),
            sentence,
        })
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
fn score_sentences(question: &QuestionTerms, tokens: &SectionTokens) -> Vec<ScoredSentence> {
    let spans = &tokens.spans;
    let asked = &question.asked;
    let total = question.total_weight();
    let offered: Vec<bool> = tokens.offers.iter().map(|o| o.offer(asked)).collect();
    // Which question terms each sentence (and the title and heading) has:
    // one lookup per term and sentence.
    let n = question.terms.len();
    let has: Vec<bool> = tokens
        .words
        .iter()
        .flat_map(|words| {
            question
                .ids
                .iter()
                .map(|id| words.binary_search(id).is_ok())
        })
        .collect();
    let around_has: Vec<bool> = question
        .ids
        .iter()
        .map(|id| tokens.around.binary_search(id).is_ok())
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
        // The answer is sentences `first..=last`.
        let mut first = if i > 0 && tokens.leans[i] { i - 1 } else { i };
        // A sentence that introduces a list ("There are three ways:") is
        // answered by the lines after it.
        let mut last = i;
        while tokens.opens_list[last] && last + 1 < spans.len() && last < i + 3 {
            last += 1;
        }
        let mut confidence = coverage;
        if !offered[first..=last].iter().any(|&o| o) {
            if last + 1 < spans.len() && offered[last + 1] {
                last += 1;
            } else if i > 0 && offered[i - 1] {
                first = first.min(i - 1);
            } else if asked.kind == AnswerKind::Choice {
                confidence *= UNSPECIFIC_CHOICE_FACTOR;
            } else {
                confidence *= WRONG_KIND_FACTOR;
            }
        }
        if asked.kind == AnswerKind::Time
            && tokens.offers[first..=last]
                .iter()
                .all(|o| o.vague_time(asked))
        {
            confidence *= VAGUE_TIME_FACTOR;
        }
        let answer_span = (spans[first].0, spans[last].1);
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
    let tokens = section_tokens(&finding.section);
    let spans = &tokens.spans;
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
