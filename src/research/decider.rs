//! Phase 2 and the local decider: evidence for each question, and whether
//! that evidence states the answer.
//!
//! Passages are retrieved by BM25 and split into candidates: sentences,
//! table rows (read with their header row) and list items. Each candidate
//! gets a handful of cheap features ([`FEATURES`]): how much of the
//! question's informative content it covers (each term weighted by its IDF,
//! so "PostgreSQL" counts for more than "use", with half credit for terms
//! that only the title, heading, callout title, table header or neighbouring
//! sentences carry), which of the question's word pairs it says in the
//! question's order ("money amounts", "deploy to production"), whether it
//! holds the kind of answer asked for (a "when"
//! question needs a time), the passage's rank and BM25 score, and how far it
//! stands above the best candidate of other notes. Each note's best
//! candidate by a hand-made prior score (coverage and word pairs, with
//! answer-kind penalties) is its finding; a small logistic model learned
//! from labelled questions ([`super::model`], fitted by
//! `train/fit_decider.py`) scores the finding's features, and a calibration
//! fitted on held-apart questions turns that score and its lead over the
//! next note into `confidence`: the probability that the answer is right.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use regex::Regex;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::brain::parse::{CALLOUT_TITLE_END, STRUCK};
use crate::cache::CappedMap;
use crate::index::analyzer::{adjacent, analyze, pairs_of, with_analyzer};
use crate::index::search::{is_stopword, joined_words, query_pairs};
use crate::index::{Corpus, PassageKey, SearchFilter, SectionHit};

use super::context::cut_on_word;
use super::model;
use super::question::{
    days_named, field_label, forms_asked, informative_text, type_noun, AnswerKind, Asked, Forms,
    Offers, MONTHS,
};
use super::sentences::sentence_spans;
use super::DeciderKind;

/// Passages retrieved per question before sentences are scored.
const PASSAGES_PER_QUESTION: usize = 8;
/// Credit for a question term found only around the sentence.
const CONTEXT_CREDIT: f32 = 0.5;
/// Weight of the noun naming the kind of answer ("what *city*").
const TYPE_NOUN_WEIGHT: f32 = 0.3;
/// Multiplier when neither the sentence nor its neighbour has the kind of
/// answer asked for.
const WRONG_KIND_FACTOR: f32 = 0.55;
/// Multiplier when the answer names the rival of a qualifier the question
/// asks with ("the public API timeout" for "the private API timeout?"),
/// and not the qualifier: it is about the other one of the two.
const RIVAL_FACTOR: f32 = 0.5;
/// Qualifiers that tell one of two things apart, in pairs: a sentence with
/// one of them is not about the other.
const RIVAL_QUALIFIERS: &[(&str, &str)] = &[
    ("public", "private"),
    ("internal", "external"),
    ("staging", "production"),
    ("minimum", "maximum"),
    ("min", "max"),
    ("primary", "secondary"),
    ("frontend", "backend"),
    ("inbound", "outbound"),
    ("upload", "download"),
    ("local", "remote"),
    ("input", "output"),
    ("ingress", "egress"),
];
/// Multiplier when a "when" question meets only a vague time ("every week").
const VAGUE_TIME_FACTOR: f32 = 0.9;
/// Multiplier when a "which X" question meets a sentence that names nothing
/// specific (no name, number or code-like token): often, not always, wrong.
const UNSPECIFIC_CHOICE_FACTOR: f32 = 0.75;
/// Candidates per question the model scores: the best by the prior score.
/// Training sees the same cut (`examples/decider_features.rs`).
pub const CANDIDATES_PER_QUESTION: usize = 30;
/// A line this short without closing punctuation, between sentences, reads
/// as a title (a callout's title, a bold lead-in), not as a statement.
const TITLE_LINE_WORDS: usize = 6;
/// Share of its own content words a sentence must have in common with the
/// answer to count as saying the same thing.
const AGREEMENT: f32 = 0.5;
/// For the prior decider: a disagreeing runner-up this far below the best
/// does not lower its confidence.
const RUNNER_UP_GAP: f32 = 0.3;
/// Confidence lost per informative term the question has fewer than
/// [`FULL_TERMS`]: short questions match by chance more often.
const SHORT_QUESTION_PENALTY: f32 = 0.05;
const FULL_TERMS: usize = 5;
/// Weight in the prior of the share of the question's word pairs that the
/// answer says in the same order. Chosen on the dev split of the training
/// sets by how often the pick is right (`train/prior_weight.py`): KorQuAD 264
/// of 331 without pairs, 267, 269, 275, 271 at 0.1, 0.2, 0.4, 0.8; SQuAD
/// train 269 of 400, then 270, 273, 274, 268.
const PAIR_WEIGHT: f32 = 0.4;

/// An analyzed word, as a hash of its text: a term lookup then compares
/// two numbers. (Two words sharing a hash is a 1 in 2^64 event per pair.)
type WordId = u64;

fn word_id(term: &str) -> WordId {
    xxh3_64(term.as_bytes())
}

/// A day of the year as one term, however a text writes it ("2026-10-12",
/// "October 12", "12 Oct"): no analyzed word starts with a NUL.
fn day_term(month: u32, day: u32) -> String {
    format!("\0{month}-{day}")
}

/// The ids of the days of the year `text` names ([`day_term`]).
fn day_ids(text: &str) -> impl Iterator<Item = WordId> {
    days_named(text)
        .into_iter()
        .map(|d| word_id(&day_term(d.month, d.day)))
}

/// Two words in this order, as one hash.
fn pair_id(first: &str, second: &str) -> WordId {
    let mut hasher = Xxh3::new();
    hasher.update(first.as_bytes());
    hasher.update(&[0]);
    hasher.update(second.as_bytes());
    hasher.digest()
}

/// A passage's sentences and their analyzed words, and the words of its
/// title and heading; each list sorted and free of repeats.
pub struct SectionTokens {
    spans: Vec<(usize, usize)>,
    words: Vec<Vec<WordId>>,
    /// Each sentence's words without the stop words.
    content: Vec<Vec<WordId>>,
    /// Each sentence's word pairs ([`pair_id`]).
    pairs: Vec<Vec<WordId>>,
    around: Vec<WordId>,
    /// What each sentence could answer with.
    offers: Vec<Offers>,
    /// What the passage's own heading (the last of its heading path) could
    /// answer with.
    heading_offers: Offers,
    /// The words of the passage's own heading when it is a short name ("##
    /// Database"): what its sentences are about.
    heading_words: Vec<WordId>,
    /// Whether each sentence leans on the one before ("He made …").
    leans: Vec<bool>,
    /// Whether each sentence introduces a list ("There are three ways:").
    opens_list: Vec<bool>,
    /// The label's words of each sentence that is a "Label: value" field
    /// ([`field_label`]).
    labels: Vec<Option<Vec<WordId>>>,
    /// Whether each sentence stands on its own: it starts its line (a
    /// paragraph, a list item), or it is a field in a run of fields within
    /// a paragraph ("Brand color: #1E40AF. Font: Inter.").
    stands_alone: Vec<bool>,
    /// Whether each line is a table row.
    table_row: Vec<bool>,
    /// Whether each line reads as a title (a callout's title): context for
    /// what follows, never an answer or part of one.
    title_like: Vec<bool>,
    /// The line that gives each line its context: a row's header row, or
    /// the title line above a sentence.
    context_line: Vec<Option<usize>>,
    /// Each line's length in words.
    word_count: Vec<usize>,
    /// Whether each line ends like a statement (a list item may not).
    ends_sentence: Vec<bool>,
    /// Whether all of each sentence is struck through (`~~…~~`): no longer
    /// so, never an answer or part of one.
    struck: Vec<bool>,
    /// Whether each sentence is a question: it asks, it states nothing, so
    /// it is never an answer or part of one (a note of open questions, the
    /// request an answer note quotes), though its words are context for
    /// the sentences around it (a FAQ's answer after its question).
    asks: Vec<bool>,
    /// Each sentence that ends on its topic ([`topic_of`]): the ids of its
    /// words before the topic and of the topic's.
    topics: Vec<Option<Topic>>,
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
    // What a note strikes through is no longer so: its words are not the
    // sentence's.
    let struck_at = struck_ranges(text);
    let said: Vec<std::borrow::Cow<'_, str>> = spans
        .iter()
        .map(|&(s, e)| unstruck(&text[s..e], s, &struck_at))
        .collect();
    // An open item states nothing, and its words say nothing of the
    // sentences beside it either ("Alerts go to #ops-alerts" after "TODO:
    // decide the alert threshold").
    let open: Vec<bool> = said.iter().map(|s| is_open_item(s)).collect();
    let (words, content, pairs, around) = with_analyzer(|analyzer| {
        let mut words = Vec::with_capacity(spans.len());
        let mut content = Vec::with_capacity(spans.len());
        let mut pairs = Vec::with_capacity(spans.len());
        for (sentence, &open) in said.iter().zip(&open) {
            let sentence = if open { "" } else { sentence.as_ref() };
            let tokens = analyze(analyzer, sentence);
            let mut ids: Vec<WordId> = pairs_of(sentence, &tokens)
                .map(|(a, b)| pair_id(a, b))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            pairs.push(ids);
            let terms: Vec<String> = tokens.into_iter().map(|t| t.text).collect();
            words.push(with_days(word_ids(terms.iter()), sentence));
            content.push(word_ids(terms.iter().filter(|t| !is_stopword(t))));
        }
        let title_heading = format!("{} {}", section.title, section.heading);
        let around = analyze(analyzer, &title_heading);
        (
            words,
            content,
            pairs,
            with_days(word_ids(around.iter().map(|t| &t.text)), &title_heading),
        )
    });
    let sentences = || spans.iter().map(|&(s, e)| &text[s..e]);
    let table_row: Vec<bool> = sentences().map(is_table_row).collect();
    let word_count: Vec<usize> = sentences().map(|s| s.split_whitespace().count()).collect();
    let title_like = title_lines(text, &spans, &table_row, &word_count);
    // A sentence struck through as a whole is never an answer.
    let struck: Vec<bool> = spans
        .iter()
        .zip(&said)
        .map(|(&(s, e), left)| {
            text[s..e].contains(char::is_alphanumeric) && !left.contains(char::is_alphanumeric)
        })
        .collect();
    let context_line = context_lines(&table_row, &title_like);
    let asks: Vec<bool> = sentences()
        .zip(&table_row)
        .zip(&open)
        .map(|((sentence, &row), &open)| open || (!row && is_question(sentence)))
        .collect();
    let labels: Vec<Option<Vec<WordId>>> =
        sentences().map(|s| field_label(s).map(text_ids)).collect();
    let starts_line: Vec<bool> = spans
        .iter()
        .map(|&(s, e)| {
            let sentence = text[s..e].trim_start();
            let before = text[..e - sentence.len()].trim_end_matches([' ', '\t']);
            before.is_empty() || before.ends_with('\n')
        })
        .collect();
    let tokens = Arc::new(SectionTokens {
        offers: sentences().map(Offers::of).collect(),
        heading_offers: Offers::of(own_heading(&section.heading)),
        heading_words: {
            let heading = own_heading(&section.heading);
            if heading.split_whitespace().count() <= HEADING_NAME_WORDS {
                text_ids(heading)
            } else {
                Vec::new()
            }
        },
        leans: sentences().map(leans_on_previous).collect(),
        opens_list: sentences()
            .map(|s| s.trim_end().ends_with([':', '：']))
            .collect(),
        stands_alone: stand_alone(&starts_line, &labels),
        labels,
        ends_sentence: sentences().map(ends_like_sentence).collect(),
        table_row,
        title_like,
        context_line,
        word_count,
        struck,
        asks,
        topics: sentences().map(topic_of).collect(),
        spans,
        words,
        content,
        pairs,
        around,
    });
    TOKEN_CACHE.insert(key, tokens.clone());
    tokens
}

/// Which sentences stand on their own ([`SectionTokens::stands_alone`]):
/// those that start a line, and the fields of a run of fields in a
/// paragraph.
fn stand_alone(starts_line: &[bool], labels: &[Option<Vec<WordId>>]) -> Vec<bool> {
    let field = |j: usize| labels[j].is_some();
    (0..starts_line.len())
        .map(|i| {
            let run = (i > 0 && field(i - 1) && !starts_line[i])
                || (i + 1 < starts_line.len() && field(i + 1) && !starts_line[i + 1]);
            starts_line[i] || (field(i) && run)
        })
        .collect()
}

/// The byte ranges of a passage struck through: from a `~~` to the end of
/// the next.
fn struck_ranges(text: &str) -> Vec<(usize, usize)> {
    if !text.contains(STRUCK) {
        return Vec::new();
    }
    let marks: Vec<usize> = text.match_indices(STRUCK).map(|(i, _)| i).collect();
    marks
        .chunks_exact(2)
        .map(|pair| (pair[0], pair[1] + STRUCK.len()))
        .collect()
}

/// A sentence (at `start` of the passage) with what is struck through in it
/// blanked out, byte for byte, so that its words are the ones it still says.
fn unstruck<'a>(
    sentence: &'a str,
    start: usize,
    struck: &[(usize, usize)],
) -> std::borrow::Cow<'a, str> {
    let end = start + sentence.len();
    if !struck.iter().any(|&(s, e)| s < end && start < e) {
        return std::borrow::Cow::Borrowed(sentence);
    }
    let inside = |at: usize| struck.iter().any(|&(s, e)| s <= at && at < e);
    let mut out = String::with_capacity(sentence.len());
    for (i, c) in sentence.char_indices() {
        if inside(start + i) {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// True for a table row as the parser writes it: cells ending in " | ".
fn is_table_row(line: &str) -> bool {
    line.trim_end().ends_with('|') && line.contains(" | ")
}

/// True for a sentence that ends with a question mark (before any closing
/// quote, bracket or emphasis).
fn is_question(sentence: &str) -> bool {
    sentence
        .trim_end()
        .trim_end_matches([
            '"', '\'', ')', ']', '”', '’', '*', '_', '~', '」', '』', '）',
        ])
        .ends_with(['?', '？'])
}

/// True for an open item: a to-do ("TODO: decide the alert threshold",
/// "FIXME …") or a task not done ("[ ] ask Ben about the dashboard"). It
/// says what is still to be done or decided, not what is so: like a
/// question, it is never an answer.
fn is_open_item(sentence: &str) -> bool {
    let sentence = sentence.trim_start();
    if sentence.starts_with(crate::brain::parse::OPEN_TASK) {
        return true;
    }
    let word_end = sentence
        .find(|c: char| !c.is_alphanumeric())
        .unwrap_or(sentence.len());
    let (word, rest) = sentence.split_at(word_end);
    // "TODO decide …", or "Todo: decide …"; not "todo list apps …".
    ["TODO", "FIXME"]
        .iter()
        .any(|&mark| word == mark || (word.eq_ignore_ascii_case(mark) && rest.starts_with(':')))
}

/// True when a line ends like a statement (or opens a list).
fn ends_like_sentence(line: &str) -> bool {
    // A sentence struck through ends before its closing `~~`.
    line.trim_end().trim_end_matches('~').ends_with([
        '.', '!', '?', ':', '。', '！', '？', '：', '｡', '"', ')', '”',
    ])
}

/// Which lines read as titles: short, without closing punctuation, on a
/// line of their own, after a statement (or first) and before a longer
/// statement. A list's items are short and unpunctuated too, but they
/// follow one another, so the line before a title must not be one.
fn title_lines(
    text: &str,
    spans: &[(usize, usize)],
    table_row: &[bool],
    word_count: &[usize],
) -> Vec<bool> {
    (0..spans.len())
        .map(|i| {
            // A callout's title, as the parser marks it.
            let next_start = spans.get(i + 1).map_or(text.len(), |n| n.0);
            if text[spans[i].1..next_start].contains(CALLOUT_TITLE_END) {
                return true;
            }
            let line = &text[spans[i].0..spans[i].1];
            if table_row[i] || word_count[i] > TITLE_LINE_WORDS || ends_like_sentence(line) {
                return false;
            }
            let Some(&(next_start, next_end)) = spans.get(i + 1) else {
                return false;
            };
            let own_line = text[spans[i].1..next_start].contains('\n');
            let next = &text[next_start..next_end];
            let before_ok = i == 0 || ends_like_sentence(&text[spans[i - 1].0..spans[i - 1].1]);
            own_line && before_ok && ends_like_sentence(next) && word_count[i + 1] > word_count[i]
        })
        .collect()
}

/// The last heading of a heading path ("Options › --locked" → "--locked").
fn own_heading(heading: &str) -> &str {
    heading
        .rsplit(crate::brain::parse::HEADING_SEPARATOR)
        .next()
        .unwrap_or_default()
}

/// Most words of a heading that names what its section is about.
const HEADING_NAME_WORDS: usize = 2;

/// Words after which a sentence names its topic, not a fact of it.
const TOPIC_MARKERS: &[&str] = &["about", "regarding", "concerning"];

/// Most words of a topic a sentence ends on ("… about the API rate limit.").
const MAX_TOPIC_WORDS: usize = 6;

/// The words of a sentence that ends on its topic: before the topic, and
/// the topic's (sorted ids, [`word_ids`]).
struct Topic {
    before: Vec<WordId>,
    topic: Vec<WordId>,
}

/// Where a sentence ends on its topic ("Meeting with Ana about the API rate
/// limit."), its words before and in the topic; none for a topic longer
/// than [`MAX_TOPIC_WORDS`] or with a number in it ("… about the limit of
/// 100 requests"), which may say what the thing is.
fn topic_of(sentence: &str) -> Option<Topic> {
    // ASCII only, so that an offset in it is one in the sentence ("İ" is
    // longer in lower case).
    let lower = sentence.to_ascii_lowercase();
    let at = TOPIC_MARKERS
        .iter()
        .filter_map(|m| {
            lower
                .match_indices(m)
                .filter(|&(i, _)| {
                    let before = lower[..i].chars().next_back();
                    let after = lower[i + m.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric) && after == Some(' ')
                })
                .map(|(i, _)| i + m.len())
                .last()
        })
        .max()?;
    let (before, topic) = sentence.split_at(at);
    if topic.split_whitespace().count() > MAX_TOPIC_WORDS
        || topic.contains(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    Some(Topic {
        before: text_ids(before),
        topic: text_ids(topic),
    })
}

/// True for a sentence that says the question's words only in the topic it
/// ends on ("Meeting with Ana about the API rate limit." for "What is the API
/// rate limit?"): it says that something was about the asked thing, nothing
/// of what it is.
fn names_as_topic(question: &QuestionTerms, topic: Option<&Topic>) -> bool {
    let Some(topic) = topic else {
        return false;
    };
    let says = |ids: &[WordId]| question.ids.iter().any(|id| ids.binary_search(id).is_ok());
    says(&topic.topic) && !says(&topic.before)
}

/// True for the first row of a table that has rows below it.
fn is_header_row(tokens: &SectionTokens, i: usize) -> bool {
    tokens.table_row[i] && tokens.context_line.get(i + 1).copied().flatten() == Some(i)
}

/// Each line's context line: a table row's header row (the first row of its
/// table), else the nearest title line above it.
fn context_lines(table_row: &[bool], title_like: &[bool]) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(table_row.len());
    let mut title = None;
    let mut header = None;
    for i in 0..table_row.len() {
        if table_row[i] {
            let first = *header.get_or_insert(i);
            out.push((first != i).then_some(first));
            continue;
        }
        header = None;
        out.push(title);
        if title_like[i] {
            title = Some(i);
        }
    }
    out
}

/// `ids` (sorted, [`word_ids`]) with the days of the year `text` names.
fn with_days(mut ids: Vec<WordId>, text: &str) -> Vec<WordId> {
    let before = ids.len();
    ids.extend(day_ids(text));
    if ids.len() > before {
        ids.sort_unstable();
        ids.dedup();
    }
    ids
}

/// The sorted, de-duplicated ids of the words the analyzer finds in `text`.
fn text_ids(text: &str) -> Vec<WordId> {
    let terms = with_analyzer(|a| analyze(a, text));
    word_ids(terms.iter().map(|t| &t.text))
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
    /// The forms of value each term asks for ("address", "port"): a
    /// sentence that shows such a value has the term.
    forms: Vec<Forms>,
    /// The question's word pairs but those of two stop words
    /// ([`pair_id`], sorted).
    pair_ids: Vec<WordId>,
    /// Two adjacent words written as one word in the brain ("time zone",
    /// "timezone"): the positions in `terms` of those of the two that are
    /// terms, and the word's id and text.
    joined: Vec<(Vec<usize>, WordId, String)>,
    /// The rival of each term that is a qualifier of [`RIVAL_QUALIFIERS`].
    rivals: Vec<Option<WordId>>,
}

impl QuestionTerms {
    fn total_weight(&self) -> f32 {
        self.terms.iter().map(|(_, w)| w).sum()
    }
}

/// IDF weights of terms, cached for one request.
pub struct Weights<'a> {
    index: &'a dyn Corpus,
    cache: HashMap<String, f32>,
}

impl<'a> Weights<'a> {
    pub fn new(index: &'a dyn Corpus) -> Self {
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
        // A word no passage has counts as much as the rarest word, not more:
        // in a brain of a handful of notes a missing word would otherwise
        // outweigh everything a sentence does say.
        let (df, n) = (df.max(1) as f32, n.max(1) as f32);
        let w = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        self.cache.insert(term.to_string(), w);
        w
    }

    /// Adjacent words of the question ("time zone", "rolls back") that the
    /// brain also writes as one word ("timezone", "rollback"), with the
    /// positions in `terms` of those of the two that are informative;
    /// `text` is the question's informative text.
    fn joined_terms(&mut self, text: &str, terms: &[String]) -> Vec<(Vec<usize>, WordId, String)> {
        joined_words(text, |word| self.index.doc_freq(word).0 > 0)
            .into_iter()
            .filter_map(|joined| {
                let covered: Vec<usize> = [&joined.first, &joined.second]
                    .into_iter()
                    .filter_map(|part| terms.iter().position(|t| t == part))
                    .collect();
                (!covered.is_empty()).then(|| (covered, word_id(&joined.word), joined.word))
            })
            .collect()
    }

    /// The question's informative terms with their weights. A question of
    /// nothing but stop words ("When?", "Who is it?") has none: search falls
    /// back to its stop words, but nothing in the notes can answer it.
    pub fn question_terms(&mut self, question: &str) -> QuestionTerms {
        // Notes are read composed (`parse::nfc`): so is the question.
        let composed = crate::brain::parse::nfc(question);
        let question = composed.as_ref();
        // A date is one term, met however a sentence writes it: "October
        // 12" in the question finds "2026-10-12" in a table. Its year stays
        // a word of its own.
        let mut informative = informative_text(question);
        let days = days_named(&informative);
        for day in days.iter().rev() {
            let year = format!(" {} ", day.year.as_deref().unwrap_or_default());
            informative.replace_range(day.span.0..day.span.1, &year);
        }
        let mut terms = self.index.query_terms(&informative);
        terms.retain(|t| !is_stopword(t));
        let type_terms: HashSet<String> = type_noun(question)
            .map(|noun| {
                with_analyzer(|a| analyze(a, &noun))
                    .into_iter()
                    .map(|t| t.text)
                    .collect()
            })
            .unwrap_or_default();
        let mut pair_ids: Vec<WordId> = query_pairs(question)
            .into_iter()
            .map(|(a, b)| pair_id(&a, &b))
            .collect();
        pair_ids.sort_unstable();
        pair_ids.dedup();
        let joined = self.joined_terms(&informative, &terms);
        let mut terms: Vec<(String, f32)> = terms
            .into_iter()
            .map(|t| {
                let mut w = self.idf(&t);
                if type_terms.contains(&t) {
                    w *= TYPE_NOUN_WEIGHT;
                }
                (t, w)
            })
            .collect();
        // A date weighs what its month's name and its day's number do.
        for day in &days {
            let term = day_term(day.month, day.day);
            if terms.iter().all(|(t, _)| *t != term) {
                let month = with_analyzer(|a| analyze(a, MONTHS[day.month as usize - 1]));
                let weight = month.iter().map(|t| self.idf(&t.text)).sum::<f32>()
                    + self.idf(&day.day.to_string());
                terms.push((term, weight));
            }
        }
        QuestionTerms {
            question: question.to_string(),
            asked: Asked::new(question),
            pair_ids,
            joined,
            ids: terms.iter().map(|(t, _)| word_id(t)).collect(),
            rivals: terms.iter().map(|(t, _)| rival_of(t)).collect(),
            forms: {
                let asked = forms_asked(question);
                terms
                    .iter()
                    .map(|(t, _)| asked.get(t).copied().unwrap_or_default())
                    .collect()
            },
            terms,
        }
    }
}

/// The rival of an analyzed qualifier ([`RIVAL_QUALIFIERS`]), if it is one.
fn rival_of(term: &str) -> Option<WordId> {
    static RIVALS: LazyLock<HashMap<String, WordId>> = LazyLock::new(|| {
        let stem = |word: &str| with_analyzer(|a| analyze(a, word)).remove(0).text;
        RIVAL_QUALIFIERS
            .iter()
            .flat_map(|&(a, b)| {
                let (a, b) = (stem(a), stem(b));
                [(a.clone(), word_id(&b)), (b, word_id(&a))]
            })
            .collect()
    });
    RIVALS.get(term).copied()
}

/// The features a candidate is scored on, in the order of the model's
/// weights (`decider_model.json` names them; a test checks they match).
pub const FEATURES: &[&str] = &[
    "coverage",
    "own_coverage",
    "context_coverage",
    "prior",
    "kind_in_sentence",
    "kind_nearby",
    "vague_time",
    "asks_time",
    "asks_number",
    "asks_person",
    "asks_place",
    "asks_choice",
    "passage_rank",
    "bm25_ratio",
    "gap_to_best",
    "margin_rival",
    "margin_other_note",
    "question_terms",
    "cjk_question",
    "log_words",
    "table_row",
    "unpunctuated",
    "leans",
    "first_in_section",
    "pairs",
    "semantic",
    "has_semantic",
];
/// How many features a candidate has.
pub const N_FEATURES: usize = FEATURES.len();
/// A candidate's features, in the order of [`FEATURES`].
pub type Features = [f32; N_FEATURES];

/// Indexes into [`Features`] of the features computed across candidates.
mod at {
    pub const PASSAGE_RANK: usize = 12;
    pub const BM25_RATIO: usize = 13;
    pub const GAP_TO_BEST: usize = 14;
    pub const MARGIN_RIVAL: usize = 15;
    pub const MARGIN_OTHER_NOTE: usize = 16;
}

/// Where the term of a definition stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// A title line of the passage (a definition list's `<dt>`): its byte
    /// range in the passage text.
    Line(usize, usize),
    /// The passage's own heading (`### --enable-source-maps`).
    Heading,
    /// The note's title, when a "who" question is answered from a note about
    /// someone whose sentence does not name them ("Mina Park: Owns the
    /// payments service.").
    Title,
}

/// A scored sentence of a passage.
#[derive(Debug, Clone, Default)]
pub struct ScoredSentence {
    /// Byte range of the sentence in the passage text.
    pub span: (usize, usize),
    /// Byte range of the answer: the sentence, with the one before when it
    /// leans on it, or with the neighbour that holds the asked-for kind.
    pub answer_span: (usize, usize),
    /// Byte range of a table row's header row, read with the row.
    pub header_span: Option<(usize, usize)>,
    /// The term a definition describes, read before it ("--locked: Asserts
    /// that …"), when the question asks for a technical shape that only the
    /// term shows.
    pub term: Option<Term>,
    /// The probability that the answer is right.
    pub confidence: f32,
    /// Weighted share of the question covered (before any penalty).
    pub coverage: f32,
    /// The model's score (a log-odds) that ranks candidates.
    pub logit: f32,
}

/// The best sentence of one note for one question.
#[derive(Debug, Clone)]
pub struct NoteFinding {
    pub section: SectionHit,
    pub sentence: ScoredSentence,
}

/// A candidate answer with its features, before the model picks.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Which of the retrieved sections.
    pub section: usize,
    /// Which sentence of the section.
    pub sentence_at: usize,
    pub sentence: ScoredSentence,
    pub features: Features,
    /// The lead of [`prior_confidence`] over the rival's (as `margin_rival`
    /// is the prior's lead), which the prior decider reads. The rival is the
    /// first that disagrees by the prior with the pairs, so when the pairs
    /// chose this candidate over one that says more of the question's words,
    /// the lead is negative and the prior decider is rightly unsure.
    pub plain_margin: f32,
}

/// The retrieved passages of one question and its scored candidates (the
/// best [`CANDIDATES_PER_QUESTION`] by prior, each with the model's logit).
pub struct Candidates {
    pub sections: Vec<SectionHit>,
    pub candidates: Vec<Candidate>,
}

/// Retrieves passages for a question (plus the project context), scores
/// every candidate and returns the best candidate of each note, best first,
/// with calibrated confidences. The words come first: only when their best
/// finding stays below `threshold` are the passages nearest in meaning read
/// too (when the semantic model is loaded), which spares most answered
/// questions the 25-30 ms of embedding them.
pub fn find_evidence(
    index: &dyn Corpus,
    question: &QuestionTerms,
    context: &[SectionHit],
    decider: DeciderKind,
    threshold: f32,
) -> Vec<NoteFinding> {
    let lexical = findings(index, question, context, decider, false);
    if !index.reads_meaning()
        || lexical
            .first()
            .is_some_and(|f| f.sentence.confidence >= threshold)
    {
        return lexical;
    }
    findings(index, question, context, decider, true)
}

fn findings(
    index: &dyn Corpus,
    question: &QuestionTerms,
    context: &[SectionHit],
    decider: DeciderKind,
    by_meaning: bool,
) -> Vec<NoteFinding> {
    let Candidates {
        sections,
        candidates,
    } = score_candidates(index, question, context, by_meaning);
    let model = model::decider();
    // The best candidate of each note by the prior score (the first on a
    // tie: candidates come best first). The learned model decides whether
    // that pick is right; as a ranker it did no better than the prior on the
    // development questions (train/README.md).
    let mut best_by_note: HashMap<&str, Candidate> = HashMap::new();
    for candidate in candidates {
        let path = sections[candidate.section].path.as_str();
        let better = best_by_note
            .get(path)
            .is_none_or(|b| candidate.features[PRIOR] > b.features[PRIOR]);
        if better {
            best_by_note.insert(path, candidate);
        }
    }
    let mut findings: Vec<Candidate> = best_by_note.into_values().collect();
    // On a tie, the passage retrieved first (by BM25, or nearest in meaning).
    findings.sort_by(|x, y| {
        y.features[PRIOR]
            .total_cmp(&x.features[PRIOR])
            .then(x.section.cmp(&y.section))
    });
    // Each finding's lead over the next best note (the best one's) or its
    // distance below the best (the others'), which the calibration reads.
    let logits: Vec<f32> = findings.iter().map(|f| f.sentence.logit).collect();
    findings
        .into_iter()
        .enumerate()
        .map(|(i, candidate)| {
            let lead = if i == 0 {
                logits
                    .get(1)
                    .map_or(model::MAX_LEAD, |second| logits[0] - second)
            } else {
                logits[i] - logits[0]
            };
            let mut sentence = candidate.sentence;
            sentence.confidence = match decider {
                DeciderKind::Learned => model.confidence(sentence.logit, lead),
                // Two places that fit equally well make either a guess: a
                // disagreeing runner-up within RUNNER_UP_GAP lowers the best.
                DeciderKind::Prior if i == 0 => {
                    let prior = prior_confidence(&candidate.features);
                    let margin = candidate.plain_margin;
                    if margin < RUNNER_UP_GAP && asks_for_any_mention(question) {
                        prior.min(GUESS_CONFIDENCE)
                    } else {
                        (prior - (RUNNER_UP_GAP - margin).max(0.0)).max(0.0)
                    }
                }
                DeciderKind::Prior => prior_confidence(&candidate.features),
            };
            NoteFinding {
                section: sections[candidate.section].clone(),
                sentence,
            }
        })
        .collect()
}

/// True for a question that any sentence saying its one informative term
/// answers as well as another: "payments", "What is Harbor?", "Is it
/// done?". It has nothing but that term and asks for no kind of answer (a
/// time, a person, a number, which the sentence must also hold), so a
/// disagreeing runner-up within [`RUNNER_UP_GAP`] makes the pick a guess.
fn asks_for_any_mention(question: &QuestionTerms) -> bool {
    question.terms.len() <= 1
        && question.asked.kind == super::question::AnswerKind::Other
        && question.asked.shape.is_none()
}

/// The prior decider's confidence in a guess ([`asks_for_any_mention`]):
/// below its default threshold. The runner-up's lowering left such answers
/// at exactly that threshold, 0.5, where `brain-sample`'s were wrong (the
/// tech stack for "What is Harbor?", a checklist line for "x").
const GUESS_CONFIDENCE: f32 = 0.4;

/// The prior decider's confidence in a candidate: its prior score without
/// the word pairs. The pairs choose between candidates (which sentence, which
/// note) but do not make the prior decider answer more: counted in its
/// confidence too, they lowered its precision at 0.5 on the training
/// questions (KorQuAD 0.887 -> 0.862, SQuAD train 0.857 -> 0.828).
pub fn prior_confidence(features: &Features) -> f32 {
    features[PRIOR] - PAIR_WEIGHT * features[PAIR_SHARE]
}

/// Retrieves passages and scores their candidates: the features, then the
/// model's logit. Training reads the same candidates through
/// `examples/decider_features.rs`, so both see one definition.
pub fn score_candidates(
    index: &dyn Corpus,
    question: &QuestionTerms,
    context: &[SectionHit],
    by_meaning: bool,
) -> Candidates {
    if question.terms.is_empty() || question.total_weight() <= 0.0 {
        return Candidates {
            sections: Vec::new(),
            candidates: Vec::new(),
        };
    }
    let mut terms: Vec<String> = question.terms.iter().map(|(t, _)| t.clone()).collect();
    terms.extend(question.joined.iter().map(|(.., word)| word.clone()));
    let found = if by_meaning {
        index.sections_by_meaning(&question.question, &terms, PASSAGES_PER_QUESTION)
    } else {
        index.search_sections(&terms, &SearchFilter::default(), PASSAGES_PER_QUESTION)
    };
    let mut sections = match found {
        Ok(sections) => sections,
        Err(error) => {
            tracing::warn!(%error, "evidence search failed; treating as none");
            Vec::new()
        }
    };
    let retrieved = sections.len();
    // The project context is evidence too, where the search missed it.
    let extra: Vec<SectionHit> = context
        .iter()
        .filter(|c| !sections.iter().any(|s| s.path == c.path && s.ord == c.ord))
        .cloned()
        .collect();
    sections.extend(extra);
    let tokens: Vec<Arc<SectionTokens>> = sections.iter().map(section_tokens).collect();
    let top_score = sections[..retrieved]
        .iter()
        .map(|s| s.score)
        .fold(0.0f32, f32::max);
    // A passage that nowhere says a thing the question names as code, or
    // a name it writes in capitals ("Maria Lopez"), is about something or
    // someone else: a thing some passage says (an English
    // compound such as "per-key" may be said by none, with words between:
    // "per API key"). A table row is about what it says (and its header),
    // not what the table's other rows do.
    // Nothing of it is looked at for a question that names nothing so.
    let said_by = |section: &SectionHit, text: &str| {
        super::question::alphanumeric_lower(&format!(
            "{} {} {} {text}",
            section.path, section.title, section.heading
        ))
    };
    let code_names = super::question::code_names(&question.question);
    let mut asked_names = code_names.clone();
    asked_names.extend(super::question::proper_names(&question.question));
    let passages_said: Vec<String> = if asked_names.is_empty() {
        Vec::new()
    } else {
        sections.iter().map(|s| said_by(s, &s.text)).collect()
    };
    let named: Vec<String> = asked_names
        .into_iter()
        .filter(|n| passages_said.iter().any(|said| said.contains(n.as_str())))
        .collect();
    let says_all = |said: &str| named.iter().all(|n| said.contains(n.as_str()));
    let asked_tokens = with_analyzer(|a| analyze(a, &question.question));
    let asked_triples: Vec<[String; 3]> = word_triples(&question.question, &asked_tokens)
        .into_iter()
        .filter_map(|(triple, named)| named.then_some(triple))
        .collect();
    let mut candidates: Vec<Candidate> = Vec::new();
    for (at, section) in sections.iter().enumerate() {
        if !named.is_empty() && !says_all(&passages_said[at]) {
            continue;
        }
        let rank = at.min(retrieved);
        let bm25 = if at < retrieved && top_score > 0.0 {
            section.score / top_score
        } else {
            0.0
        };
        let answerable = super::qa::answers_by_words(section);
        // A note whose title is a thing the question names as code
        // ("ledger-sink") is about it: each of its sentences is.
        let about_named = code_names
            .iter()
            .any(|n| super::question::alphanumeric_lower(&section.title) == *n);
        let swapped = swapped_word(question, &section.heading);
        for (i, (sentence, mut features)) in score_sentences(question, &tokens[at], about_named)
            .into_iter()
            .enumerate()
        {
            // Titles, questions and table header rows are context for what
            // follows them, not answers.
            // Nor is what a note that no longer holds says.
            let t = &tokens[at];
            if section.stale
                || t.title_like[i]
                || t.struck[i]
                || t.asks[i]
                || is_header_row(t, i)
                || !answerable
                || names_as_topic(question, t.topics[i].as_ref())
            {
                continue;
            }
            if !named.is_empty() && t.table_row[i] {
                let (s, e) = t.spans[i];
                let header =
                    t.context_line[i].map_or("", |h| &section.text[t.spans[h].0..t.spans[h].1]);
                if !says_all(&said_by(
                    section,
                    &format!("{header} {}", &section.text[s..e]),
                )) {
                    continue;
                }
            }
            features[at::PASSAGE_RANK] = 1.0 / (1.0 + rank as f32);
            features[at::BM25_RATIO] = bm25;
            let (s, e) = sentence.answer_span;
            let answer = &section.text[s..e];
            if names_another(&asked_triples, answer) {
                continue;
            }
            if let Some(word) = &swapped {
                let said = with_analyzer(|a| analyze(a, answer));
                if !said.iter().any(|t| t.text == *word) {
                    continue;
                }
            }
            let mut sentence = sentence;
            if sentence.term.is_none()
                && question.asked.kind == AnswerKind::Person
                && !names_someone(answer, &question.asked)
                && title_names_someone(section, answer, &question.asked)
            {
                sentence.term = Some(Term::Title);
                // The title names someone: the answer has the kind asked
                // for, which its sentence alone lacked.
                if features[5] == 0.0 {
                    let pairs = PAIR_WEIGHT * features[PAIR_SHARE];
                    features[PRIOR] = (features[PRIOR] - pairs) / WRONG_KIND_FACTOR + pairs;
                }
            }
            candidates.push(Candidate {
                section: at,
                sentence_at: i,
                sentence,
                features,
                plain_margin: 0.0,
            });
        }
    }
    // The model sees the best candidates by prior; on a tie the earlier
    // passage and sentence first (the sort is stable).
    candidates.sort_by(|a, b| b.features[PRIOR].total_cmp(&a.features[PRIOR]));
    candidates.truncate(CANDIDATES_PER_QUESTION);
    let best = candidates.first().map_or(0.0, |c| c.features[PRIOR]);
    // Each candidate's words that the question does not ask about: a rival
    // that shares most of them says the same thing and is no rival.
    let unasked_words: Vec<Vec<WordId>> = candidates
        .iter()
        .map(|c| answer_words(&tokens[c.section], c, &question.ids))
        .collect();
    // What each candidate names of the asked shape: two that name the same
    // flag or variable give one answer, whatever else they say.
    let named: Vec<Vec<&str>> = candidates
        .iter()
        .map(|c| shape_named(&tokens[c.section], c, &question.asked))
        .collect();
    let model = model::decider();
    for k in 0..candidates.len() {
        let prior = candidates[k].features[PRIOR];
        let (section, span) = (candidates[k].section, candidates[k].sentence.answer_span);
        let path = &sections[section].path;
        let rival_at = (0..candidates.len()).filter(|&j| j != k).find(|&j| {
            let other = &candidates[j];
            let inside = other.section == section
                && other.sentence.span.0 >= span.0
                && other.sentence.span.1 <= span.1;
            let same_named = named[j].iter().any(|t| named[k].contains(t));
            !inside && !same_named && !agrees(&unasked_words[j], &unasked_words[k])
        });
        let rival = rival_at.map_or(0.0, |j| candidates[j].features[PRIOR]);
        let plain_rival = rival_at.map_or(0.0, |j| prior_confidence(&candidates[j].features));
        let plain_margin = prior_confidence(&candidates[k].features) - plain_rival;
        let other_note = candidates
            .iter()
            .find(|c| sections[c.section].path != *path)
            .map_or(0.0, |c| c.features[PRIOR]);
        let candidate = &mut candidates[k];
        candidate.features[at::GAP_TO_BEST] = prior - best;
        candidate.features[at::MARGIN_RIVAL] = prior - rival;
        candidate.plain_margin = plain_margin;
        candidate.features[at::MARGIN_OTHER_NOTE] = prior - other_note;
        candidate.sentence.logit = model.logit(&candidate.features);
    }
    Candidates {
        sections,
        candidates,
    }
}

/// Index of the hand-made prior score in [`Features`].
const PRIOR: usize = 3;
/// Index of the share of the question's word pairs the answer says.
const PAIR_SHARE: usize = 24;

/// The content words of a candidate's answer that the question does not ask
/// about, sorted.
fn answer_words(tokens: &SectionTokens, candidate: &Candidate, asked: &[WordId]) -> Vec<WordId> {
    let (s, e) = candidate.sentence.answer_span;
    let mut words: Vec<WordId> = (0..tokens.spans.len())
        .filter(|&i| tokens.spans[i].0 >= s && tokens.spans[i].1 <= e)
        .flat_map(|i| unasked(tokens, i, asked))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// What a candidate's answer (and the term it defines) names of the shape
/// the question asks for: `--cpu-prof`, `NODE_OPTIONS`; none for a question
/// that asks for no shape.
fn shape_named<'t>(
    tokens: &'t SectionTokens,
    candidate: &Candidate,
    asked: &'t Asked,
) -> Vec<&'t str> {
    if asked.shape.is_none() {
        return Vec::new();
    }
    let (s, e) = candidate.sentence.answer_span;
    let term = match candidate.sentence.term {
        Some(Term::Line(ts, te)) => tokens.spans.iter().position(|&span| span == (ts, te)),
        _ => None,
    };
    let mut named: Vec<&str> = (0..tokens.spans.len())
        .filter(|&i| (tokens.spans[i].0 >= s && tokens.spans[i].1 <= e) || Some(i) == term)
        .flat_map(|i| tokens.offers[i].shape_terms(asked))
        .collect();
    if matches!(candidate.sentence.term, Some(Term::Heading)) {
        named.extend(tokens.heading_offers.shape_terms(asked));
    }
    named
}

fn leans_on_previous(sentence: &str) -> bool {
    let first = sentence
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase();
    LEANING_OPENERS.contains(&first.as_str())
}

/// Scores every sentence of a passage: the prior score (IDF coverage with
/// the answer-kind penalties, plus the question's word pairs it says) and
/// the features a sentence has on its own. `about_named`: the passage's
/// note is titled with a thing the question names as code, so its title's
/// and heading's words are each sentence's own.
fn score_sentences(
    question: &QuestionTerms,
    tokens: &SectionTokens,
    about_named: bool,
) -> Vec<(ScoredSentence, Features)> {
    let spans = &tokens.spans;
    let asked = &question.asked;
    let total = question.total_weight();
    let offered: Vec<bool> = tokens.offers.iter().map(|o| o.offer(asked)).collect();
    // The learned decider was fitted before questions had shapes: its kind
    // features stay those of the kind alone.
    let kind_offered: Vec<bool> = if asked.shape.is_some() {
        tokens.offers.iter().map(|o| o.offer_kind(asked)).collect()
    } else {
        offered.clone()
    };
    // What the passage's own heading names of the asked shape, if any.
    let heading_terms: Vec<&str> = tokens.heading_offers.shape_terms(asked).collect();
    // Which question terms each sentence (and the title and heading) has:
    // one lookup per term and sentence.
    let n = question.terms.len();
    let mut has: Vec<bool> = tokens
        .words
        .iter()
        .flat_map(|words| {
            question
                .ids
                .iter()
                .map(|id| words.binary_search(id).is_ok())
        })
        .collect();
    // A sentence that writes two of the terms as one word has both.
    for (i, words) in tokens.words.iter().enumerate() {
        for (covered, id, _) in &question.joined {
            if words.binary_search(id).is_ok() {
                for &term in covered {
                    has[i * n + term] = true;
                }
            }
        }
    }
    let around_has: Vec<bool> = question
        .ids
        .iter()
        .map(|id| tokens.around.binary_search(id).is_ok())
        .collect();
    let cjk_question = question
        .question
        .chars()
        .any(crate::index::analyzer::is_cjk);
    let short_factor =
        1.0 - SHORT_QUESTION_PENALTY * FULL_TERMS.saturating_sub(question.terms.len()) as f32;
    // A title line is never part of an answer.
    let usable = |j: usize| !tokens.title_like[j] && !tokens.struck[j] && !tokens.asks[j];
    let mut scored = Vec::with_capacity(spans.len());
    for (i, &(s, e)) in spans.iter().enumerate() {
        let context = tokens.context_line[i];
        let mut own = 0.0;
        let mut near = 0.0;
        let mut heading = 0.0;
        // A field whose label is a word of the question ("Timezone::
        // Europe/Madrid" for "What timezone is Maria Lopez in?") is about
        // what its note's title and heading name: their words are its own.
        // (A line of its own: a label inside a sentence or a table cell,
        // "오늘 날짜. 기본 형식: YYYY-MM-DD", is about what the row names.)
        let asked_field = tokens.stands_alone[i]
            && !tokens.table_row[i]
            && tokens.labels[i].as_ref().is_some_and(|label| {
                question
                    .ids
                    .iter()
                    .any(|id| label.binary_search(id).is_ok())
            });
        // A sentence that introduces a list ("There are three ways:",
        // "Sync:") is answered by the lines after it, whose words are its
        // own.
        let mut listed = i;
        while tokens.opens_list[listed] && listed + 1 < spans.len() && listed < i + 3 {
            listed += 1;
        }
        let shown = tokens.offers[i..=listed]
            .iter()
            .fold(Forms::default(), |forms, o| forms | o.forms());
        // A table row says its cells under their columns' names ("role:
        // SRE"): the header row's words are its own.
        let header = context.filter(|&c| tokens.table_row[i] && tokens.table_row[c]);
        for (k, (_, weight)) in question.terms.iter().enumerate() {
            let in_context = around_has[k] || context.is_some_and(|c| has[c * n + k]);
            if in_context {
                heading += weight;
            }
            if (i..=listed).any(|j| has[j * n + k])
                || header.is_some_and(|c| has[c * n + k])
                || ((asked_field || about_named) && around_has[k])
                || tokens.heading_words.binary_search(&question.ids[k]).is_ok()
                || question.forms[k].meets(shown)
            {
                own += weight;
            } else if in_context
                || (i > 0 && has[(i - 1) * n + k])
                || (i + 1 < spans.len() && has[(i + 1) * n + k])
            {
                near += weight;
            }
        }
        let coverage = ((own + CONTEXT_CREDIT * near) / total).min(1.0);
        // The answer is sentences `first..=last`.
        let mut first = if i > 0 && tokens.leans[i] && usable(i - 1) {
            i - 1
        } else {
            i
        };
        let mut last = listed;
        let mut prior = coverage;
        let mut kind_nearby = offered[first..=last].iter().any(|&o| o);
        // A definition whose term has the asked-for shape ("which flag …?"
        // under `--locked`) is answered with its term, unless the answer
        // already names it.
        let mut term = None;
        if asked.shape.is_some() {
            let named: Vec<&str> = tokens.offers[first..=last]
                .iter()
                .flat_map(|o| o.shape_terms(asked))
                .collect();
            let defines =
                |terms: &[&str]| !terms.is_empty() && terms.iter().all(|t| !named.contains(t));
            let line = context
                .filter(|&c| !tokens.table_row[c])
                .filter(|&c| defines(&tokens.offers[c].shape_terms(asked).collect::<Vec<_>>()))
                .map(|c| Term::Line(spans[c].0, spans[c].1));
            term = line.or_else(|| defines(&heading_terms).then_some(Term::Heading));
            kind_nearby |= term.is_some();
        }
        if !kind_nearby {
            // A field ("Product manager: Maria Chen") says its value
            // itself: the field beside it ("Owner: Alex Rivera") is
            // another one, no part of its answer.
            let beside = |j: usize| tokens.labels[i].is_none() && offered[j] && usable(j);
            if last + 1 < spans.len() && beside(last + 1) {
                last += 1;
                kind_nearby = true;
            } else if i > 0 && beside(i - 1) {
                first = first.min(i - 1);
                kind_nearby = true;
            } else if asked.kind == AnswerKind::Choice || asked.shape.is_some() {
                prior *= UNSPECIFIC_CHOICE_FACTOR;
            } else {
                prior *= WRONG_KIND_FACTOR;
            }
        }
        let vague = asked.kind == AnswerKind::Time
            && tokens.offers[first..=last]
                .iter()
                .all(|o| o.vague_time(asked));
        if vague {
            prior *= VAGUE_TIME_FACTOR;
        }
        let rivalled = question.rivals.iter().enumerate().any(|(k, rival)| {
            rival.is_some_and(|rival| {
                (first..=last).all(|j| !has[j * n + k])
                    && (first..=last).any(|j| tokens.words[j].binary_search(&rival).is_ok())
            })
        });
        if rivalled {
            prior *= RIVAL_FACTOR;
        }
        prior *= short_factor;
        // The question's word pairs the answer says in the same order.
        let pair_share = if question.pair_ids.is_empty() {
            0.0
        } else {
            let said = question
                .pair_ids
                .iter()
                .filter(|id| {
                    tokens.pairs[first..=last]
                        .iter()
                        .any(|p| p.binary_search(id).is_ok())
                })
                .count();
            said as f32 / question.pair_ids.len() as f32
        };
        prior += PAIR_WEIGHT * pair_share;
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let mut features: Features = [0.0; N_FEATURES];
        features[0] = coverage;
        features[1] = (own / total).min(1.0);
        features[2] = (heading / total).min(1.0);
        features[PRIOR] = prior;
        features[4] = flag(kind_offered[i]);
        features[5] = flag(kind_offered[first..=last].iter().any(|&o| o));
        features[6] = flag(vague);
        features[7] = flag(asked.kind == AnswerKind::Time);
        features[8] = flag(asked.kind == AnswerKind::Number);
        features[9] = flag(asked.kind == AnswerKind::Person);
        features[10] = flag(asked.kind == AnswerKind::Place);
        features[11] = flag(asked.kind == AnswerKind::Choice);
        features[17] = n.min(10) as f32 / 10.0;
        features[18] = flag(cjk_question);
        features[19] = (1.0 + tokens.word_count[i] as f32).ln() / 5.0;
        features[20] = flag(tokens.table_row[i]);
        features[21] = flag(!tokens.table_row[i] && !tokens.ends_sentence[i]);
        features[22] = flag(tokens.leans[i]);
        features[23] = flag(i == 0);
        features[PAIR_SHARE] = pair_share;
        // "semantic" and "has_semantic" stay 0 until a local model scores
        // question and candidate; the model is then refitted with them.
        let header_span = tokens
            .context_line
            .get(i)
            .copied()
            .flatten()
            .filter(|_| tokens.table_row[i])
            .map(|h| spans[h]);
        scored.push((
            ScoredSentence {
                span: (s, e),
                answer_span: (spans[first].0, spans[last].1),
                header_span,
                term,
                confidence: prior,
                coverage,
                logit: 0.0,
            },
            features,
        ));
    }
    scored
}

/// Each three adjacent words of `text` (its analyzed `tokens`) of which
/// none is a stop word, as analyzed ("stripe", "product", "key"), and whether they are written
/// as a name and two words of lower case ("Stripe production keys").
fn word_triples(text: &str, tokens: &[tantivy::tokenizer::Token]) -> Vec<([String; 3], bool)> {
    let starts_upper = |t: &tantivy::tokenizer::Token| {
        text[t.offset_from..t.offset_to]
            .chars()
            .next()
            .is_some_and(char::is_uppercase)
    };
    tokens
        .windows(3)
        .filter(|w| {
            adjacent(text, &w[0], &w[1])
                && adjacent(text, &w[1], &w[2])
                // Nor the "s" of "DOT's".
                && w.iter().all(|t| !is_stopword(&t.text) && t.text.len() > 1)
        })
        .map(|w| {
            let named = starts_upper(&w[0]) && !starts_upper(&w[1]) && !starts_upper(&w[2]);
            (
                [w[0].text.clone(), w[1].text.clone(), w[2].text.clone()],
                named,
            )
        })
        .collect()
}

/// True when `answer` speaks of another kind of a thing the question
/// names in three words, a name and two words of lower case: "Stripe test
/// keys" for "Where are the Stripe production keys?", where it says the
/// first and the last word around another one (not the middle one
/// misspelt), and the middle one nowhere. `asked` are those three words
/// of the question ([`word_triples`] written as a name).
fn names_another(asked: &[[String; 3]], answer: &str) -> bool {
    if asked.is_empty() {
        return false;
    }
    let tokens = with_analyzer(|a| analyze(a, answer));
    let said: Vec<[String; 3]> = word_triples(answer, &tokens)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    if said.is_empty() {
        return false;
    }
    let words: HashSet<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    asked.iter().any(|[first, middle, last]| {
        !words.contains(middle.as_str())
            && said
                .iter()
                .any(|[f, m, l]| f == first && l == last && !one_word_two_ways(m, middle))
    })
}

/// The question's word that a passage answering another question has in
/// place of another: its own heading asks the asked question with one
/// informative word swapped ("Which *database* should the analytics service
/// use?" for "Which *cache* …", a user's answer written back under its
/// question), not as another spelling of it. Such a passage answers the
/// question only with a sentence that says the word.
fn swapped_word(question: &QuestionTerms, heading: &str) -> Option<String> {
    let theirs = own_heading(heading).trim();
    if !theirs.ends_with(['?', '？']) {
        return None;
    }
    // Single letters ("Q." before a written-back question) say nothing.
    let theirs: HashSet<String> = with_analyzer(|a| analyze(a, &informative_text(theirs)))
        .into_iter()
        .map(|t| t.text)
        .filter(|t| t.chars().count() > 1 && !is_stopword(t))
        .collect();
    let ours: Vec<&str> = question
        .terms
        .iter()
        .map(|(t, _)| t.as_str())
        .filter(|t| !t.starts_with('\0'))
        .collect();
    let missing: Vec<&str> = ours
        .iter()
        .copied()
        .filter(|t| !theirs.contains(*t))
        .collect();
    let extra: Vec<&String> = theirs
        .iter()
        .filter(|t| !ours.contains(&t.as_str()))
        .collect();
    match (missing.as_slice(), extra.as_slice()) {
        ([word], [other]) if ours.len() >= 3 && !one_word_two_ways(word, other) => {
            Some(word.to_string())
        }
        _ => None,
    }
}

/// Whether two analyzed words may be one word written two ways: the same
/// but for one letter changed, added or left out, as a typo makes them
/// ("serf breaks" for "surf breaks", "low" for "law"), or one the other's
/// start, as stems of two spellings are ("harmon", "harmonis").
fn one_word_two_ways(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() < 3 {
        return false;
    }
    if short.len() >= 4 && long.starts_with(&short) {
        return true;
    }
    if long.len() - short.len() > 1 {
        return false;
    }
    let head = short.iter().zip(&long).take_while(|(x, y)| x == y).count();
    let rest = if short.len() == long.len() {
        head + 1
    } else {
        head
    };
    short[rest.min(short.len())..] == long[head + 1..]
}

/// True when `answer` names someone the question does not: a capitalized
/// word past the start of a sentence ("… is owned by Jonas"), not an
/// acronym ("100 USD", "the API"). Korean, Japanese and Chinese names carry
/// no capitals: there, a sentence that says who is who ("负责人是李娜",
/// "担当者は佐藤です", "담당자는 김민수입니다") names them.
fn names_someone(answer: &str, asked: &super::question::Asked) -> bool {
    answer
        .split_inclusive(['.', '!', '?', '\n', '。', '！', '？'])
        .any(|sentence| {
            CJK_NAMING.is_match(sentence)
                || sentence
                    .split_whitespace()
                    .skip(1)
                    .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                    .any(|w| {
                        w.chars().next().is_some_and(char::is_uppercase)
                            && !w.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
                            && !asked.lower.contains(&w.to_lowercase())
                    })
        })
}

/// A Chinese, Japanese or Korean sentence that says who someone is: "X 是
/// <name>", "X は <name> です", "X 는 <name> 입니다" (a name of a few
/// characters ending the sentence).
static CJK_NAMING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"是\s*\p{Han}{2,4}\s*[。.!！]?\s*$|[はが]\s*[\p{Han}\p{Katakana}ー]{1,8}(?:さん)?\s*(?:です|だ)|[은는이가]\s*[가-힣]{2,4}\s*(?:입니다|이에요|예요|이다|님)",
    )
    .expect("static regex")
});

/// True when a note's title reads as someone's name ("Mina Park", "佐藤健")
/// that neither the question nor the answer says: a note about them.
fn title_names_someone(section: &SectionHit, answer: &str, asked: &super::question::Asked) -> bool {
    let title = section.title.trim();
    let lower = title.to_lowercase();
    let answer = answer.to_lowercase();
    let words: Vec<&str> = title.split_whitespace().collect();
    // "Jonas owns the payments service." names him already.
    let said = |text: &str| {
        text.contains(&lower)
            || words.len() > 1
                && text
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| words.iter().any(|t| t.to_lowercase() == w))
    };
    if title.is_empty() || said(&asked.lower) || said(&answer) {
        return false;
    }
    // A name is written in capitals wherever the note says it: "Billing
    // Portal", whose note says `fernway/billing-portal`, names no one. (An
    // address or a file name, `maria.lopez@fernway.io`, is written in lower
    // case whatever it names.)
    let in_lower_case = |word: &str| {
        let lower = word.to_lowercase();
        section
            .text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.contains(['@', '.']))
            .flat_map(|w| w.split(|c: char| !c.is_alphanumeric()))
            .any(|w| w == lower)
    };
    let latin_name = (2..=3).contains(&words.len())
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars()
                    .all(|c| c.is_alphabetic() || matches!(c, '-' | '\'' | '.'))
                && !in_lower_case(w)
        });
    let cjk_name = words.len() == 1
        && (2..=4).contains(&title.chars().count())
        && title.chars().all(crate::index::analyzer::is_cjk);
    latin_name || cjk_name
}

/// The answer text: the sentence (or two), with list markers dropped; a
/// table row is read with its header ("Owner: Mina Park").
pub fn answer_text(finding: &NoteFinding) -> String {
    let text = &finding.section.text;
    let (s, e) = finding.sentence.answer_span;
    if let Some((hs, he)) = finding.sentence.header_span {
        if let Some(row) = row_with_header(&text[hs..he], &text[s..e]) {
            return row;
        }
    }
    let answer = text[s..e]
        .trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '>') || c.is_whitespace())
        .trim();
    let term = match finding.sentence.term {
        Some(Term::Line(ts, te)) => text[ts..te].trim(),
        Some(Term::Heading) => own_heading(&finding.section.heading).trim(),
        Some(Term::Title) => finding.section.title.trim(),
        None => return answer.to_string(),
    };
    format!("{}: {answer}", term.trim_end_matches(':'))
}

/// A table row as "Header: cell; Header: cell", or `None` when the row and
/// header do not line up.
fn row_with_header(header: &str, row: &str) -> Option<String> {
    let cells = |line: &str| -> Vec<String> {
        let mut cells: Vec<String> = line.split('|').map(|c| c.trim().to_string()).collect();
        if cells.last().is_some_and(String::is_empty) {
            cells.pop();
        }
        cells
    };
    let (names, values) = (cells(header), cells(row));
    if names.len() != values.len() || values.len() < 2 {
        return None;
    }
    let parts: Vec<String> = names
        .iter()
        .zip(&values)
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| {
            if n.is_empty() {
                v.clone()
            } else {
                format!("{n}: {v}")
            }
        })
        .collect();
    Some(parts.join("; "))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> (Vec<(usize, usize)>, Vec<bool>, Vec<usize>) {
        let spans = sentence_spans(text);
        let rows = spans
            .iter()
            .map(|&(s, e)| is_table_row(&text[s..e]))
            .collect();
        let words = spans
            .iter()
            .map(|&(s, e)| text[s..e].split_whitespace().count())
            .collect();
        (spans, rows, words)
    }

    #[test]
    fn the_answer_that_says_the_question_words_in_order_is_picked() {
        // The ledger note has the same words, scattered, and its title
        // matches the question better: by words alone it would win.
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "ledger.md",
                "# Money amounts\n\nThe stored amount of money is rounded by the ledger.\n",
            ),
            (
                "adr.md",
                "# Decision\n\nMoney amounts are stored as integer cents.\n",
            ),
            ("other.md", "# Other\n\nLunch orders and the plant rota.\n"),
        ]);
        let question = Weights::new(&index).question_terms("How are money amounts stored?");
        let Candidates {
            sections,
            candidates,
        } = score_candidates(&index, &question, &[], false);
        let share = |path: &str| {
            candidates
                .iter()
                .find(|c| sections[c.section].path == path)
                .map(|c| c.features[PAIR_SHARE])
        };
        // Of "are money", "money amounts" and "amounts stored" (not "how
        // are", two stop words), the decision says "money amounts".
        assert_eq!(share("adr.md"), Some(1.0 / 3.0));
        assert_eq!(share("ledger.md"), Some(0.0));
        let best = &candidates[0];
        assert_eq!(sections[best.section].path, "adr.md");
        // The prior decider's confidence leaves the pairs out.
        assert!(prior_confidence(&best.features) < best.features[PRIOR]);
    }

    /// The candidates `asked` gets from `index`, best first.
    fn candidates_for(index: &crate::index::Index, asked: &str) -> Candidates {
        let question = Weights::new(index).question_terms(asked);
        score_candidates(index, &question, &[], false)
    }

    /// The answers of the candidates `asked` gets from `index`, best first.
    fn candidate_answers(index: &crate::index::Index, asked: &str) -> Vec<String> {
        let found = candidates_for(index, asked);
        found
            .candidates
            .iter()
            .map(|c| {
                let (s, e) = c.sentence.answer_span;
                found.sections[c.section].text[s..e].to_string()
            })
            .collect()
    }

    /// The candidate whose sentence says `words`, and its answer.
    fn candidate_saying<'a>(found: &'a Candidates, words: &str) -> (&'a Candidate, &'a str) {
        let text = |c: &Candidate, (s, e): (usize, usize)| &found.sections[c.section].text[s..e];
        let candidate = found
            .candidates
            .iter()
            .find(|c| text(c, c.sentence.span).contains(words))
            .unwrap_or_else(|| panic!("no candidate says {words:?}"));
        (candidate, text(candidate, candidate.sentence.answer_span))
    }

    /// A thing the question names as code (`ledger-sync`) that a passage,
    /// or a table row with its header, says nowhere: that evidence is
    /// about something else. Written with other separators it is said.
    #[test]
    fn evidence_that_never_names_the_asked_code_name_is_no_candidate() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "keys.md",
                "# Where the keys are\n\n| What | Where |\n|---|---|\n\
                 | GitHub deploy key for billing-portal | vault Eng-Shared, item billing-portal deploy key |\n\
                 | ledger-sync DB password (staging) | vault Staging |\n",
            ),
            (
                "runbook.md",
                "# Runbook\n\nThe GitHub deploy key of ledger_sync is in the vault Ops-Keys.\n",
            ),
        ]);
        let found = candidate_answers(
            &index,
            "Which vault holds the GitHub deploy key for ledger-sync?",
        );
        assert!(
            found.iter().all(|c| !c.contains("billing-portal")),
            "{found:?}"
        );
        assert!(found.iter().any(|c| c.contains("Ops-Keys")), "{found:?}");
        let found = candidate_answers(
            &index,
            "Which vault holds the GitHub deploy key for billing-portal?",
        );
        assert!(
            found
                .iter()
                .any(|c| c.contains("billing-portal deploy key")),
            "{found:?}"
        );
        assert!(found.iter().all(|c| !c.contains("Ops-Keys")), "{found:?}");
    }

    /// "Stripe test keys" are no answer to where the Stripe production
    /// keys are: the evidence says the question's first and last word
    /// around another one, and its middle one nowhere.
    #[test]
    fn evidence_about_another_kind_of_the_asked_thing_is_no_candidate() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "keys.md",
            "# Where the keys are\n\n| What | Where |\n|---|---|\n\
             | Stripe test keys | 1Password, item Stripe test |\n\
             | Stripe webhook secret | vault Payments |\n",
        )]);
        let found = candidate_answers(&index, "Where are the Stripe production keys?");
        assert!(found.iter().all(|c| !c.contains("test keys")), "{found:?}");
        for asked in [
            "Where are the Stripe test keys?",
            // Two words of three are no thing the test keys are another of.
            "Where are the Stripe keys?",
        ] {
            let found = candidate_answers(&index, asked);
            assert!(
                found.iter().any(|c| c.contains("test keys")),
                "{asked}: {found:?}"
            );
        }
    }

    #[test]
    fn a_typo_is_one_word_two_ways_and_another_word_is_not() {
        for (a, b) in [
            ("surf", "serf"),
            ("low", "law"),
            ("product", "products"),
            ("harmon", "harmonis"),
        ] {
            assert!(
                one_word_two_ways(a, b) && one_word_two_ways(b, a),
                "{a} {b}"
            );
        }
        for (a, b) in [("test", "product"), ("prod", "staging"), ("qa", "dev")] {
            assert!(!one_word_two_ways(a, b), "{a} {b}");
        }
    }

    /// "Timezone:: Europe/Madrid" in Maria Lopez's note is her timezone:
    /// a field whose label the question says has the words of its note's
    /// title as its own, and beats a line that only names her.
    #[test]
    fn a_field_the_question_names_is_about_its_notes_title() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "People/Maria Lopez.md",
                "# Maria Lopez\n\nRole: SRE lead\n\nTimezone:: Europe/Madrid\n",
            ),
            (
                "Meetings/Review.md",
                "# Review\n\nAttendees: Maria Lopez, Tom Becker.\n",
            ),
        ]);
        let found = candidates_for(&index, "What timezone is Maria Lopez in?");
        let best = &found.candidates[0];
        let (s, e) = best.sentence.span;
        assert_eq!(
            &found.sections[best.section].text[s..e],
            "Timezone:: Europe/Madrid"
        );
        assert_eq!(
            best.features[1], 1.0,
            "all the question's words are its own"
        );
        // A field the question does not name keeps its title as context.
        let (role, _) = candidate_saying(&found, "Role:");
        assert!(role.features[1] < 0.5, "{:?}", role.features);
    }

    /// A table row says its cells under their columns' names: the header's
    /// words are the row's own, and the row the question names says all of
    /// them.
    #[test]
    fn a_table_row_says_its_header() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "team.md",
            "# Team\n\n| name | role | slack |\n|---|---|---|\n\
             | Ana Ruiz | backend lead | @ana |\n\
             | Ben Okafor | SRE | @benok |\n",
        )]);
        let found = candidates_for(&index, "What is Ben's role?");
        let (ben, _) = candidate_saying(&found, "Ben Okafor");
        let (ana, _) = candidate_saying(&found, "Ana Ruiz");
        assert!(ben.features[1] > 0.99, "{:?}", ben.features);
        assert!(ana.features[1] < 0.6, "{:?}", ana.features);
    }

    /// A sentence that ends on the asked thing as its topic says nothing of
    /// what it is; one that says more of it, or names it before, may.
    #[test]
    fn a_sentence_about_the_asked_thing_is_no_answer() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "2026-11-21.md",
            "# 2026-11-21\n\nMeeting with Ana about the API rate limit.\n\n\
             Ben wrote to us regarding the deploy window of 10:00 to 12:00.\n\n\
             The retry policy concerning webhooks is three tries.\n",
        )]);
        let answers = candidate_answers(&index, "What is the API rate limit?");
        assert!(
            answers.iter().all(|a| !a.contains("Meeting")),
            "{answers:?}"
        );
        let answers = candidate_answers(&index, "What is the deploy window?");
        assert!(answers.iter().any(|a| a.contains("10:00")), "{answers:?}");
        let answers = candidate_answers(&index, "What is the retry policy for webhooks?");
        assert!(
            answers.iter().any(|a| a.contains("three tries")),
            "{answers:?}"
        );
    }

    proptest::proptest! {
        /// Any sentence, with letters longer or shorter in lower case
        /// among it ("İ", "ẞ"), is read for a topic without a panic.
        #[test]
        fn any_sentence_is_read_for_a_topic(sentence in "[a-zA-Z0-9 .,İẞΣ]{0,12}(about|Regarding|concerning) [a-zA-Z İẞ]{0,20}") {
            let _ = topic_of(&sentence);
        }
    }

    /// A heading that names what its section is about ("## Database") is
    /// said by each of its sentences; a longer heading is context only.
    #[test]
    fn a_short_heading_names_what_its_sentences_are_about() {
        let own = |heading: &str| {
            let (_temp, index) = crate::index::indexed_brain(&[(
                "billing.md",
                &format!(
                    "# Billing service\n\nThe billing service is written in Kotlin.\n\n\
                     ## {heading}\nBilling uses PostgreSQL 15 on pg-billing.internal.\n"
                ),
            )]);
            let found = candidates_for(&index, "What is the billing service's database?");
            candidate_saying(&found, "PostgreSQL").0.features[1]
        };
        let short = own("Database");
        let long = own("How we chose the database");
        assert!(short > long + 0.2, "{short} against {long}");
    }

    /// Fields in a run within a paragraph stand on their own, as fields on
    /// lines of their own do: the title's words are their own. A single
    /// field after a sentence is still read as part of the paragraph.
    #[test]
    fn a_run_of_fields_in_a_paragraph_are_fields() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "website.md",
            "# Website\n\nThe marketing site is built with Astro and hosted on Netlify.\n\
             Brand color: #1E40AF. Font: Inter.\n",
        )]);
        let found = candidates_for(&index, "What font does the website use?");
        let (best, _) = candidate_saying(&found, "Font: Inter");
        assert!(best.features[1] > 0.4, "{:?}", best.features);
        assert!(std::ptr::eq(best, &found.candidates[0]));
    }

    /// Two candidates that name the same variable asked for give one answer:
    /// neither is the other's rival. One that names another variable is.
    #[test]
    fn candidates_that_name_the_asked_shape_alike_agree() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "cli.md",
            "# Environment variables\n\n\
             NODE_EXTRA_CA_CERTS=file: When set, the root CAs are extended with the extra trusted certificates in file.\n\n\
             NODE_EXTRA_CA_CERTS=file: The file holds one or more trusted CA certificates in PEM format.\n\n\
             SSL_CERT_DIR=dir: The folder where OpenSSL looks for certificates.\n",
        )]);
        let found = candidates_for(
            &index,
            "Which environment variable adds extra trusted CA certificates?",
        );
        let best = &found.candidates[0];
        let text = &found.sections[best.section].text[best.sentence.span.0..best.sentence.span.1];
        assert!(text.contains("NODE_EXTRA_CA_CERTS"), "{text}");
        // Its rival is the other variable, well below it, not the
        // sentence that names the same one.
        assert!(best.plain_margin > 0.1, "{}", best.plain_margin);
    }

    /// An answer that names the rival of the question's qualifier ("public"
    /// for "private") is about the other thing; with both, or with the
    /// qualifier asked, it stands.
    #[test]
    fn an_answer_about_the_rival_qualifier_scores_less() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "2026-11-21.md",
            "# Standup\n\nWe agreed the public API timeout is 30 seconds.\n\n\
             The staging database runs on db-staging and the production database on db-prod.\n",
        )]);
        let prior = |asked: &str, words: &str| {
            let found = candidates_for(&index, asked);
            candidate_saying(&found, words).0.features[PRIOR]
        };
        // "mobile", like "private", is a word the brain never writes: the
        // two questions differ only in that one is the rival.
        let mobile = prior("What is the mobile API timeout?", "public API");
        let private = prior("What is the private API timeout?", "public API");
        assert!(private < 0.6 * mobile, "{private} against {mobile}");
        // Both qualifiers in the answer: no rival alone.
        let staging = prior("Where does the staging database run?", "staging database");
        let production = prior(
            "Where does the production database run?",
            "staging database",
        );
        assert!(
            (staging - production).abs() < 0.2,
            "{staging} against {production}"
        );
    }

    /// A to-do or an open task says what is still to be decided: it is no
    /// answer, and its words are not those of the lines beside it.
    #[test]
    fn an_open_item_is_no_answer_nor_context() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "alerts.md",
            "# Alerts\n\n\
             - TODO: decide the alert threshold for the checkout latency.\n\
             - Alerts go to #ops-alerts in Slack.\n\
             - [ ] Set the retention period for the alert history.\n\
             - [x] Route the alerts to PagerDuty.\n\
             - Todo list apps are not used for alerts.\n",
        )]);
        for (asked, open) in [
            (
                "What is the alert threshold for checkout latency?",
                "threshold",
            ),
            (
                "What is the retention period of the alert history?",
                "retention",
            ),
        ] {
            let found = candidates_for(&index, asked);
            let text = |c: &Candidate| {
                let (s, e) = c.sentence.span;
                &found.sections[c.section].text[s..e]
            };
            assert!(
                found.candidates.iter().all(|c| !text(c).contains(open)),
                "{asked}"
            );
            // The lines beside the open item get none of its words.
            for c in &found.candidates {
                assert!(c.features[0] < 0.5, "{asked}: {} {:?}", text(c), c.features);
            }
        }
        // Done tasks, and a sentence that only starts with the word, state
        // what is so.
        let found = candidates_for(&index, "Where are the alerts routed?");
        candidate_saying(&found, "PagerDuty");
        let found = candidates_for(&index, "Are todo list apps used?");
        candidate_saying(&found, "Todo list apps");
    }

    /// A passage under a question with one word swapped for the asked
    /// one's answers another question, unless it says the asked word.
    #[test]
    fn an_answer_to_a_question_with_another_word_is_no_candidate() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "Clarifications.md",
            "# Clarifications\n\n## Q. Which database should the analytics service use?\n\nThe analytics service uses ClickHouse Cloud.\n\n## Q. Which colour should the primary button use?\n\nThe primary button is teal.\n",
        )]);
        let answers = |asked: &str| candidate_answers(&index, asked);
        assert!(answers("Which database should the analytics service use?")
            .iter()
            .any(|a| a.contains("ClickHouse")));
        assert!(!answers("Which cache should the analytics service use?")
            .iter()
            .any(|a| a.contains("ClickHouse")));
        // Another spelling of the word is the same question.
        assert!(answers("Which color should the primary button use?")
            .iter()
            .any(|a| a.contains("teal")));
        assert_eq!(
            swapped_word(
                &Weights::new(&index)
                    .question_terms("Which cache should the analytics service use?"),
                "Clarifications › Q. Which database should the analytics service use?"
            )
            .as_deref(),
            Some("cach")
        );
    }

    /// A note titled with a thing the question names as code is about it:
    /// each of its sentences has the title's words as its own.
    #[test]
    fn a_note_titled_with_an_asked_code_name_is_about_it() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Projects/ledger-sink.md",
                "# ledger-sink\n\nledger-sink is the data team's exporter.\n\nWritten in Go 1.23.\n",
            ),
            (
                "Projects/ledger-sync.md",
                "# ledger-sync\n\nWritten in Rust.\n",
            ),
        ]);
        let found = candidates_for(&index, "What language is ledger-sink written in?");
        let (go, _) = candidate_saying(&found, "Written in Go");
        let (exporter, _) = candidate_saying(&found, "exporter");
        assert!(
            go.features[1] > exporter.features[1],
            "{:?} {:?}",
            go.features,
            exporter.features
        );
    }

    /// A date is one term however it is written: "October 12" in the
    /// question is the row of "2026-10-12", and no other row's.
    #[test]
    fn a_date_is_met_however_written() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "On-call.md",
                "# On-call\n\n| Week of | Primary |\n|---|---|\n| 2026-10-05 | Daniel Kim |\n| 2026-10-12 | Jun-ho Park |\n| 2026-12-10 | Maria Lopez |\n",
            ),
            ("Daily/2026-10-13.md", "# 2026-10-13\n\nOn call this week. Quiet.\n"),
        ]);
        let found = candidates_for(&index, "Who is primary the week of October 12?");
        let (best, _) = candidate_saying(&found, "Jun-ho Park");
        let (other, _) = candidate_saying(&found, "Maria Lopez");
        assert!(
            best.features[1] > other.features[1] + 0.3,
            "{:?} {:?}",
            best.features,
            other.features
        );
        assert_eq!(best.features[PRIOR], found.candidates[0].features[PRIOR]);
    }

    /// A value in the form a question's noun asks for says the noun: the
    /// address, the handle, the host and the port.
    #[test]
    fn a_value_of_the_asked_form_says_its_noun() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "People/Tom Becker.md",
                "# Tom Becker\n\nemail: tom.becker@fernway.io\n\nSlack: @tbecker\n",
            ),
            (
                "Environments.md",
                "# Environments\n\n## Staging\n\nPostgres: pg-staging.internal:6432, database ledger.\n\nPostgres backups run nightly.\n",
            ),
        ]);
        let own = |asked: &str, words: &str| {
            let found = candidates_for(&index, asked);
            candidate_saying(&found, words).0.features[1]
        };
        assert_eq!(
            own("What is the email address of Tom Becker?", "email:"),
            1.0
        );
        assert_eq!(
            own("What is the Slack handle of Tom Becker?", "Slack:"),
            1.0
        );
        assert_eq!(
            own(
                "What host and port is the staging Postgres on?",
                "pg-staging"
            ),
            1.0
        );
        // A sentence with no such value still lacks the noun.
        assert!(own("What host is the staging Postgres on?", "backups") < 1.0);
        // Nor is an address's domain a host.
        assert!(own("What host does Tom Becker use?", "email:") < 1.0);
    }

    /// "Sync:" is answered by the command below it, whose words are the
    /// answer's own, not its neighbour's.
    #[test]
    fn the_lines_a_sentence_opens_have_its_words() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "Runbooks/Deploy.md",
            "# Deploy\n\nSync:\n\n```sh\nargocd app sync ledger-prod\n```\n",
        )]);
        let found = candidates_for(&index, "Which command syncs ledger-prod in argocd?");
        let (opener, answer) = candidate_saying(&found, "Sync:");
        assert!(answer.contains("argocd app sync"), "{answer:?}");
        assert!(opener.features[1] > 0.9, "{:?}", opener.features);
    }

    /// "Product manager: Maria Chen." names no one but the person asked
    /// about: the fields beside it ("Owner: …", "Repo: …") are other
    /// fields, no part of its answer, while a sentence may still go on in
    /// the next line.
    #[test]
    fn a_field_is_answered_by_itself_and_not_by_the_fields_beside_it() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Projects/Portal.md",
                "# Portal\n\nOwner: Alex Rivera.\nProduct manager: Maria Chen.\nRepo: fernway/portal.\n",
            ),
            (
                "Teams.md",
                "# Teams\n\nThe manager Maria Chen reports to is the one below.\nPriya Nair, head of product.\n",
            ),
        ]);
        let found = candidates_for(&index, "Who is Maria Chen's manager?");
        let (field, answer) = candidate_saying(&found, "Product manager");
        assert_eq!(answer.trim(), "Product manager: Maria Chen.");
        assert_eq!(field.features[5], 0.0, "no one else is named");
        let (sentence, answer) = candidate_saying(&found, "reports to");
        assert!(answer.contains("Priya Nair"), "{answer:?}");
        assert_eq!(sentence.features[5], 1.0);
    }

    #[test]
    fn a_callout_title_is_a_title_line_and_a_list_item_is_not() {
        let cases: &[(&str, &[bool])] = &[
            (
                "Deploy windows\nProduction deploys happen on Tuesday after 14:00.",
                &[true, false],
            ),
            (
                "We ship weekly.\nDeploy windows\nProduction deploys happen on Tuesday.",
                &[false, true, false],
            ),
            // List items follow one another: the last one is no title.
            (
                "Tuesday\nThursday\nRollbacks take five minutes at most.",
                &[false, false, false],
            ),
            // A line that ends like a sentence is a statement.
            (
                "Deploys are weekly.\nThey happen on Tuesday after lunch.",
                &[false, false],
            ),
            ("Deploy windows", &[false]),
        ];
        for (text, want) in cases {
            let (spans, rows, words) = lines(text);
            assert_eq!(&title_lines(text, &spans, &rows, &words), want, "{text:?}");
        }
    }

    #[test]
    fn rows_read_with_their_header_and_sentences_with_their_title() {
        let rows = [false, true, true, true, false, false, false];
        let titles = [false, false, false, false, true, false, false];
        assert_eq!(
            context_lines(&rows, &titles),
            [None, None, Some(1), Some(1), None, Some(4), Some(4)]
        );
    }

    #[test]
    fn table_rows_are_answered_with_their_header() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            (
                "Service | Owner | Language |",
                "payments | Mina Park | Rust |",
                Some("Service: payments; Owner: Mina Park; Language: Rust"),
            ),
            ("Plan | Storage |", "Standard |  |", Some("Plan: Standard")),
            (" | Price |", "Plus | 8 USD |", Some("Plus; Price: 8 USD")),
            ("A | B |", "1 | 2 | 3 |", None),
        ];
        for (header, row, want) in cases {
            assert_eq!(
                row_with_header(header, row).as_deref(),
                *want,
                "{header:?} / {row:?}"
            );
        }
    }

    #[test]
    fn table_rows_are_told_from_prose() {
        assert!(is_table_row("payments | Mina Park | Rust |"));
        assert!(!is_table_row("Use a | b to pipe."));
        assert!(!is_table_row("We deploy on Tuesday."));
    }
}
