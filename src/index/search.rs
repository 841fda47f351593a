//! Searching the index: query building, ranking by note, and snippets.
//!
//! Queries are built from the analyzer's own tokens (an OR of term queries
//! over text, title and heading) rather than with tantivy's `QueryParser`,
//! which would turn a run of CJK bigrams into a phrase query that misses
//! "두뇌를" when the note says "두뇌에서".

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, MutexGuard};

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::index::SegmentId;
use tantivy::query::{Bm25StatisticsProvider, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Term, Value};
use tantivy::{DocAddress, DocId, Searcher, TantivyDocument};

use super::analyzer::{
    adjacent, analyze, text_analyzer, with_analyzer, with_marking_analyzer, word_pairs,
};
use super::{rank, Error, Fields, Index};
use crate::cache::{CappedMap, Generation, PerGeneration};

/// Score multipliers for a match in the title or heading instead of the text.
const TITLE_BOOST: f32 = 2.0;
const HEADING_BOOST: f32 = 1.5;

/// Characters of note text shown in a snippet.
pub const SNIPPET_CHARS: usize = 220;

/// English words that carry no meaning in a query; dropped unless a query
/// consists of nothing else. They are stored as the analyzer turns them.
static QUERY_STOPWORDS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    const WORDS: &str =
        "a an and are as at be been but by can could did do does for from had has have \
        how i if in into is it its me my no not of on or our should so such that the their them \
        then there these they this to us was we were what when where which who whom whose why \
        will with would you your";
    let mut analyzer = text_analyzer();
    WORDS
        .split_whitespace()
        .flat_map(|w| analyze(&mut analyzer, w))
        .map(|t| t.text)
        .collect()
});

/// True when an analyzed term is an English stop word.
pub fn is_stopword(term: &str) -> bool {
    QUERY_STOPWORDS.contains(term)
}

/// Two adjacent words of a query or question that the brain also writes as
/// one word: "time zone" as "timezone", and of their stems, "rolls back" as
/// "rollback", "logs in" as "login" (one of the two may be a stop word).
#[derive(Debug, Clone, PartialEq)]
pub struct JoinedWord {
    /// The analyzed terms of the two words.
    pub first: String,
    pub second: String,
    /// The analyzed term of the one word.
    pub word: String,
}

/// The [`JoinedWord`]s of `text`; `in_brain` tells whether a term is in the
/// brain's passages.
pub fn joined_words(text: &str, in_brain: impl Fn(&str) -> bool) -> Vec<JoinedWord> {
    let text = crate::brain::parse::nfc(text);
    let mut joined: Vec<JoinedWord> = Vec::new();
    for pair in joinable_pairs(&text) {
        for (_, word) in pair.words {
            if !joined.iter().any(|j| j.word == word) && in_brain(&word) {
                joined.push(JoinedWord {
                    first: pair.first.clone(),
                    second: pair.second.clone(),
                    word,
                });
            }
        }
    }
    joined
}

/// `text` (composed) with each two adjacent words that `other` writes as
/// one word written as that word: "What time zone is Maria in?" as "What
/// timezone is Maria in?" beside "Maria's timezone?", so that two
/// questions that differ only in it read the same.
pub fn written_as_one(text: &str, other: &str) -> String {
    let text = crate::brain::parse::nfc(text);
    let other = crate::brain::parse::nfc(other);
    let other: HashSet<String> = with_analyzer(|a| analyze(a, &other))
        .into_iter()
        .map(|t| t.text)
        .collect();
    let mut written = String::with_capacity(text.len());
    let mut copied = 0;
    for pair in joinable_pairs(&text) {
        if pair.span.start < copied {
            continue;
        }
        if let Some((one, _)) = pair.words.iter().find(|(_, word)| other.contains(word)) {
            written.push_str(&text[copied..pair.span.start]);
            written.push_str(one);
            copied = pair.span.end;
        }
    }
    written.push_str(&text[copied..]);
    written
}

/// Two adjacent words that may be written as one ([`JoinedWord`]).
struct JoinablePair {
    /// Where the two stand in the text, from the first's start to the
    /// second's end.
    span: std::ops::Range<usize>,
    /// Their analyzed terms.
    first: String,
    second: String,
    /// The one word as the two are written, then of their stems, each
    /// with its analyzed term (that one analyzes to a single term).
    words: Vec<(String, String)>,
}

/// The pairs of adjacent words of `text` (composed) that are words of
/// Latin letters, not the same word twice and not two stop words.
fn joinable_pairs(text: &str) -> Vec<JoinablePair> {
    let tokens = with_analyzer(|a| analyze(a, text));
    let raw = |t: &tantivy::tokenizer::Token| &text[t.offset_from..t.offset_to];
    let word_like = |t: &tantivy::tokenizer::Token| raw(t).len() > 1 && raw(t).is_ascii();
    let mut pairs = Vec::new();
    for pair in tokens.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if !adjacent(text, a, b)
            || !word_like(a)
            || !word_like(b)
            || a.text == b.text
            || (is_stopword(&a.text) && is_stopword(&b.text))
        {
            continue;
        }
        let written = format!("{}{}", raw(a), raw(b));
        let stems = format!("{}{}", a.text, b.text);
        let words = [written, stems]
            .into_iter()
            .filter_map(|word| {
                let analyzed = with_analyzer(|an| analyze(an, &word));
                let [one] = analyzed.as_slice() else {
                    return None;
                };
                Some((word, one.text.clone()))
            })
            .collect();
        pairs.push(JoinablePair {
            span: a.offset_from..b.offset_to,
            first: a.text.clone(),
            second: b.text.clone(),
            words,
        });
    }
    pairs
}

/// The word pairs of a query or question ([`word_pairs`]) but those of two
/// stop words ("how are"), which say nothing about what is asked.
pub fn query_pairs(text: &str) -> Vec<(String, String)> {
    let text = crate::brain::parse::nfc(text);
    let mut pairs = with_analyzer(|a| word_pairs(a, &text));
    pairs.retain(|(a, b)| !(is_stopword(a) && is_stopword(b)));
    pairs
}

/// Narrows a search to part of the brain.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// A folder relative to the brain ("Harbor/Decisions"); notes beneath it match.
    pub folder: Option<String>,
    /// A tag, with or without `#`, any case; its nested tags
    /// (`project/alpha` for `project`) match too ([`has_tag`]).
    pub tag: Option<String>,
    /// Only notes of this kind ("note", "project-context").
    pub kind: Option<&'static str>,
}

/// A folder as the index names it: relative to the brain, `/`-separated,
/// without empty or `.` parts, so `./Harbor/`, `/Harbor` and `Harbor\Runbooks`
/// name what `Harbor` and `Harbor/Runbooks` do. Empty for the whole brain.
pub fn folder_key(folder: &str) -> String {
    folder
        .trim()
        .split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// A stored passage (one section of a note) with what is known of its note.
#[derive(Debug, Clone, Default)]
pub struct Passage {
    pub path: String,
    pub title: String,
    pub heading: String,
    pub text: String,
    /// Seconds since the Unix epoch.
    pub modified: i64,
    /// The note's own date, `YYYY-MM-DD`, or empty.
    pub created: String,
    pub kind: String,
    pub tags: Vec<String>,
    pub ord: u64,
    /// The note says it no longer holds (`status: superseded`, …).
    pub stale: bool,
    /// Names the stored passage while it is in the index; `None` for text
    /// that does not come from the index.
    pub key: Option<PassageKey>,
}

/// Names one stored passage. Segments never change, so a key always means
/// the same text; an edited note gets new keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PassageKey {
    segment: SegmentId,
    doc: DocId,
}

/// One matching passage and its score.
#[derive(Debug, Clone)]
pub struct SectionHit {
    pub passage: Arc<Passage>,
    pub score: f32,
}

impl SectionHit {
    pub fn new(passage: Passage, score: f32) -> SectionHit {
        SectionHit {
            passage: Arc::new(passage),
            score,
        }
    }
}

impl std::ops::Deref for SectionHit {
    type Target = Passage;

    fn deref(&self) -> &Passage {
        &self.passage
    }
}

/// Passages most kept in memory; beyond it the cache starts over.
pub(super) const CACHED_PASSAGES: usize = 50_000;

/// Passages read from the store. Reading one means decompressing a block
/// and copying its fields, and research reads the same few passages for many
/// questions.
pub(super) type PassageCache = CappedMap<PassageKey, Passage>;

/// BM25 statistics of the current searcher generation. Every term query
/// needs its term's document frequency, which tantivy would otherwise look
/// up in every segment's term dictionary each time.
pub(super) type StatisticsCache = PerGeneration<Statistics>;

#[derive(Default)]
pub(super) struct Statistics {
    doc_freqs: HashMap<Term, u64>,
    tokens: HashMap<Field, u64>,
}

/// A searcher's statistics, through the cache.
pub(super) struct CachedStatistics<'a> {
    searcher: &'a Searcher,
    cache: &'a StatisticsCache,
}

impl CachedStatistics<'_> {
    /// The cache, if it is of the searcher's generation.
    fn statistics(&self) -> Option<MutexGuard<'_, Generation<Statistics>>> {
        self.cache.of(self.searcher.generation().generation_id())
    }
}

impl Bm25StatisticsProvider for CachedStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if let Some(n) = self
            .statistics()
            .and_then(|s| s.tokens.get(&field).copied())
        {
            return Ok(n);
        }
        let n = self.searcher.total_num_tokens(field)?;
        if let Some(mut statistics) = self.statistics() {
            statistics.tokens.insert(field, n);
        }
        Ok(n)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        self.searcher.total_num_docs()
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(n) = self
            .statistics()
            .and_then(|s| s.doc_freqs.get(term).copied())
        {
            return Ok(n);
        }
        let n = self.searcher.doc_freq(term)?;
        if let Some(mut statistics) = self.statistics() {
            statistics.doc_freqs.insert(term.clone(), n);
        }
        Ok(n)
    }
}

/// Reorders a query's lexical passages with another signal: the semantic
/// module installs one ([`Index::set_reranker`]) once its model is loaded.
pub trait Reranker: Send + Sync {
    /// The best `limit` passages for `query`, from the lexical ones (best
    /// first) and whatever else the reranker finds within `filter`.
    fn rerank(
        &self,
        index: &Index,
        query: &str,
        filter: &SearchFilter,
        lexical: Vec<SectionHit>,
        limit: usize,
    ) -> Vec<SectionHit>;
}

/// One note in a search result: its best passage.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Hit {
    pub path: String,
    pub title: String,
    pub heading: String,
    /// HTML: matches in `<mark>`, everything else escaped.
    pub snippet: String,
    pub score: f32,
    /// RFC 3339.
    pub modified: String,
    /// How the note was found: `words` when it holds words of the query,
    /// `meaning` when only the semantic model found it. The model finds a
    /// nearest passage for any query, even one that means nothing; a result
    /// of `meaning` hits alone says that no note holds the query's words.
    pub matched: Matched,
}

/// How a search found a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Matched {
    Words,
    Meaning,
}

/// Formats seconds since the epoch as RFC 3339 (UTC).
pub fn rfc3339(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Index {
    pub(crate) fn searcher(&self) -> Searcher {
        self.inner.reader.searcher()
    }

    pub(crate) fn fields(&self) -> &Fields {
        &self.inner.fields
    }

    pub(super) fn tantivy_err(&self, source: tantivy::TantivyError) -> Error {
        Error::Tantivy {
            path: self.inner.index_dir.clone(),
            source,
        }
    }

    /// Analyzed, de-duplicated query terms; stop words are dropped unless
    /// nothing else is left.
    pub fn query_terms(&self, text: &str) -> Vec<String> {
        let text = crate::brain::parse::nfc(text);
        let text = text.as_ref();
        let mut seen = HashSet::new();
        let all: Vec<String> = with_analyzer(|a| analyze(a, text))
            .into_iter()
            .map(|t| t.text)
            .filter(|t| seen.insert(t.clone()))
            .collect();
        let content: Vec<String> = all.iter().filter(|t| !is_stopword(t)).cloned().collect();
        if content.is_empty() {
            all
        } else {
            content
        }
    }

    /// Number of passages containing `term` in their text, and passages in all.
    pub fn doc_freq(&self, term: &str) -> (u64, u64) {
        let searcher = self.searcher();
        let df = self
            .statistics(&searcher)
            .doc_freq(&Term::from_field_text(self.fields().text, term))
            .unwrap_or(0);
        (df, searcher.num_docs())
    }

    pub(super) fn statistics<'a>(&'a self, searcher: &'a Searcher) -> CachedStatistics<'a> {
        CachedStatistics {
            searcher,
            cache: &self.inner.statistics,
        }
    }

    /// Number of passages in notes under `folder` (relative to the brain).
    pub fn folder_sections(&self, folder: &str) -> u64 {
        let folder = folder_key(folder);
        let folder = folder.as_str();
        let mut sections = 0;
        for segment in self.searcher().segment_readers() {
            let counted = segment
                .inverted_index(self.fields().path)
                .and_then(|paths| {
                    Ok(rank::paths_under(&paths, folder, |info| {
                        sections += u64::from(info.doc_freq);
                        Ok(())
                    })?)
                });
            if let Err(error) = counted {
                tracing::warn!(%error, "cannot count the passages of a folder");
            }
        }
        sections
    }

    /// The best `limit` passages for the given analyzed terms.
    pub fn search_sections(
        &self,
        terms: &[String],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error> {
        // A filter alone would list the whole folder: search needs terms.
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let terms = capped_terms(self, terms);
        let searcher = self.searcher();
        let clauses = self.filter_clauses(filter);
        let top = if clauses.is_empty() {
            self.top_by_impacts(&searcher, &terms, &self.scored_fields(), None, limit.max(1))?
        } else {
            let table = self.note_table(&searcher)?;
            let allowed = self.allowed_notes(&searcher, &table, &clauses)?;
            let keep = |doc: u32| {
                let note = table.note_of_doc[doc as usize];
                allowed.get(note as usize).copied().unwrap_or(false)
            };
            self.top_by_impacts(
                &searcher,
                &terms,
                &self.scored_fields(),
                Some(&keep),
                limit.max(1),
            )?
        };
        top.into_iter()
            .map(|(score, address)| self.section_hit(&searcher, address, score))
            .collect()
    }

    /// The fields a search scores, with their boosts.
    /// (Only a query's lone CJK character can match the field of characters.)
    pub(super) fn scored_fields(&self) -> [(Field, f32); 4] {
        let f = self.fields();
        [
            (f.text, 1.0),
            (f.title, TITLE_BOOST),
            (f.heading, HEADING_BOOST),
            (f.chars, 1.0),
        ]
    }

    /// The conditions a filter sets; none for an empty filter.
    fn filter_clauses(&self, filter: &SearchFilter) -> Vec<rank::Clause> {
        let f = *self.fields();
        let mut clauses = Vec::new();
        if let Some(folder) = filter.folder.as_deref().map(folder_key) {
            if !folder.is_empty() {
                clauses.push(rank::Clause::Under(folder));
            }
        }
        if let Some(tag) = filter
            .tag
            .as_deref()
            .and_then(crate::brain::parse::normalize_tag)
        {
            clauses.push(rank::Clause::Tag(f.tags, tag));
        }
        if let Some(kind) = filter.kind {
            clauses.push(rank::Clause::Has(f.kind, kind.to_string()));
        }
        clauses
    }

    /// The ranked notes of [`Index::search`], before their passages are read.
    fn ranked_notes(
        &self,
        searcher: &Searcher,
        terms: &[String],
        pairs: &[(String, String)],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<rank::RankedNote>, Error> {
        let clauses = self.filter_clauses(filter);
        if clauses.is_empty() {
            return self.top_notes(searcher, terms, pairs, None, limit);
        }
        let table = self.note_table(searcher)?;
        let allowed = self.allowed_notes(searcher, &table, &clauses)?;
        self.top_notes(searcher, terms, pairs, Some(&allowed), limit)
    }

    /// Passage scores as a tantivy query: the disjunction of the terms in
    /// every scored field, within the filters. The reference the cached
    /// impacts are tested against.
    #[cfg(test)]
    pub(super) fn top_by_query(
        &self,
        searcher: &Searcher,
        terms: &[String],
        mut filters: Vec<(tantivy::query::Occur, Box<dyn tantivy::query::Query>)>,
        limit: usize,
    ) -> Result<Vec<(f32, DocAddress)>, Error> {
        use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query};
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for term in terms {
            for (field, boost) in self.scored_fields() {
                let query = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(query), boost)),
                ));
            }
        }
        let query = if filters.is_empty() {
            BooleanQuery::new(should)
        } else {
            filters.insert(0, (Occur::Must, Box::new(BooleanQuery::new(should))));
            BooleanQuery::new(filters)
        };
        searcher
            .search_with_statistics_provider(
                &query,
                &TopDocs::with_limit(limit).order_by_score(),
                &self.statistics(searcher),
            )
            .map_err(|e| self.tantivy_err(e))
    }

    /// Every passage of the notes of a kind (e.g. project context), in order.
    pub fn sections_of_kind(
        &self,
        kind: &'static str,
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error> {
        let f = *self.fields();
        let searcher = self.searcher();
        let query = TermQuery::new(
            Term::from_field_text(f.kind, kind),
            IndexRecordOption::Basic,
        );
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())
            .map_err(|e| self.tantivy_err(e))?;
        let mut hits = top
            .into_iter()
            .map(|(score, address)| self.section_hit(&searcher, address, score))
            .collect::<Result<Vec<_>, _>>()?;
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.ord.cmp(&b.ord)));
        Ok(hits)
    }

    pub(crate) fn section_hit(
        &self,
        searcher: &Searcher,
        address: DocAddress,
        score: f32,
    ) -> Result<SectionHit, Error> {
        let key = PassageKey {
            segment: searcher.segment_reader(address.segment_ord).segment_id(),
            doc: address.doc_id,
        };
        if let Some(passage) = self.inner.passages.get(&key) {
            return Ok(SectionHit { passage, score });
        }
        let f = self.fields();
        let doc: TantivyDocument = searcher.doc(address).map_err(|e| self.tantivy_err(e))?;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let passage = Arc::new(Passage {
            path: text(f.path),
            title: text(f.title),
            heading: text(f.heading),
            text: text(f.text),
            modified: doc
                .get_first(f.modified)
                .and_then(|v| v.as_i64())
                .unwrap_or(0),
            created: text(f.created),
            kind: text(f.kind),
            tags: doc
                .get_all(f.tags)
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            ord: doc.get_first(f.ord).and_then(|v| v.as_u64()).unwrap_or(0),
            stale: doc.get_first(f.stale).and_then(|v| v.as_u64()) == Some(1),
            key: Some(key),
        });
        self.inner.passages.insert(key, passage.clone());
        Ok(SectionHit { passage, score })
    }

    /// The passages to answer a question from: the best `limit` by BM25 over
    /// its `terms`, fused by reciprocal rank with the passages nearest to the
    /// `question` in meaning once the semantic model is loaded (the reranker
    /// of [`Index::search`]). Scores stay BM25 (0: found by meaning alone),
    /// which the decider reads as such.
    pub fn sections_by_meaning(
        &self,
        question: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error> {
        let filter = SearchFilter::default();
        let lexical = self.search_sections(terms, &filter, limit)?;
        let Some(reranker) = self.inner.reranker.get() else {
            return Ok(lexical);
        };
        let bm25: HashMap<(String, u64), f32> = lexical
            .iter()
            .map(|h| ((h.path.clone(), h.ord), h.score))
            .collect();
        let mut fused = reranker.rerank(self, question, &filter, lexical, limit);
        for hit in &mut fused {
            hit.score = bm25
                .get(&(hit.path.clone(), hit.ord))
                .copied()
                .unwrap_or(0.0);
        }
        Ok(fused)
    }

    /// The note whose title (not file name) is `title`, in any letter
    /// case: what a wikilink to a note's title leads to.
    pub fn note_titled(&self, title: &str) -> Option<String> {
        let wanted = title.trim().to_lowercase();
        self.search(title, &SearchFilter::default(), 5)
            .ok()?
            .into_iter()
            .find(|hit| hit.title.to_lowercase() == wanted)
            .map(|hit| hit.path)
    }

    /// Ranked notes for a user's query: the best passage of each note.
    pub fn search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<Hit>, Error> {
        let mut terms = self.query_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // "time zone" finds the notes that write "timezone" too.
        for joined in joined_words(query, |word| self.doc_freq(word).0 > 0) {
            if !terms.contains(&joined.word) {
                terms.push(joined.word);
            }
        }
        let terms = capped_terms(self, &terms);
        let searcher = self.searcher();
        let pairs = query_pairs(query);
        let ranked = self.ranked_notes(&searcher, &terms, &pairs, filter, limit)?;
        let mut sections = Vec::with_capacity(ranked.len());
        for note in ranked {
            sections.push(self.section_hit(&searcher, note.best_passage, note.score)?);
        }
        let by_words: HashSet<String> = sections.iter().map(|s| s.path.clone()).collect();
        if let Some(reranker) = self.inner.reranker.get() {
            sections = reranker.rerank(self, query, filter, sections, limit * 4 + 16);
        }
        let term_set: HashSet<&str> = terms.iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        let mut hits = Vec::with_capacity(limit);
        for section in sections {
            if hits.len() == limit {
                break;
            }
            // A reranker may bring several passages of one note: the first
            // stands for the note.
            if !seen.insert(section.path.clone()) {
                continue;
            }
            let source = if section.text.is_empty() {
                &section.heading
            } else {
                &section.text
            };
            let snippet = snippet(source, &term_set, SNIPPET_CHARS);
            // Below the words' own ranking, a passage the model brought
            // may still hold a word of the query: its snippet marks it.
            let matched = if by_words.contains(&section.path) || snippet.contains("<mark>") {
                Matched::Words
            } else {
                Matched::Meaning
            };
            hits.push(Hit {
                snippet,
                path: section.path.clone(),
                title: section.title.clone(),
                heading: section.heading.clone(),
                score: section.score,
                modified: rfc3339(section.modified),
                matched,
            });
        }
        Ok(hits)
    }
}

/// Most terms a query is searched with; a pasted paragraph keeps its rarest
/// terms, which carry nearly all of the ranking.
pub const MAX_QUERY_TERMS: usize = 32;

/// At most [`MAX_QUERY_TERMS`] of `terms`, the rarest (by passage frequency
/// in the text), in their first order.
fn capped_terms(index: &Index, terms: &[String]) -> Vec<String> {
    if terms.len() <= MAX_QUERY_TERMS {
        return terms.to_vec();
    }
    let mut by_rarity: Vec<(u64, usize)> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (index.doc_freq(t).0, i))
        .collect();
    by_rarity.sort_unstable();
    let mut kept: Vec<usize> = by_rarity[..MAX_QUERY_TERMS]
        .iter()
        .map(|&(_, i)| i)
        .collect();
    kept.sort_unstable();
    kept.into_iter().map(|i| terms[i].clone()).collect()
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Byte ranges of `text` whose token as found is one of `terms`, merged
/// where they overlap (CJK bigrams do; a one-character query marks the
/// character inside a run).
pub fn match_ranges(text: &str, terms: &HashSet<&str>) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for token in with_marking_analyzer(|a| analyze(a, text)) {
        if !terms.contains(token.text.as_str()) {
            continue;
        }
        match ranges.last_mut() {
            Some(last) if token.offset_from <= last.1 => last.1 = last.1.max(token.offset_to),
            _ => ranges.push((token.offset_from, token.offset_to)),
        }
    }
    ranges
}

/// Whether a note's (normalized) tags hold `tag` or a tag nested under it,
/// as Obsidian's tag search finds them: `project` matches `project/alpha`.
pub fn has_tag(tags: &[String], tag: &str) -> bool {
    tags.iter().any(|t| {
        t.strip_prefix(tag)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// A window of about `max_chars` of `text` around the densest matches, as
/// HTML with matches in `<mark>` and everything else escaped.
pub fn snippet(text: &str, terms: &HashSet<&str>, max_chars: usize) -> String {
    let ranges = match_ranges(text, terms);
    let char_offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let total_chars = char_offsets.len();
    let char_at = |byte: usize| char_offsets.partition_point(|&o| o < byte);
    let lead = max_chars / 6;

    // Start a little before the match that has the most matches after it.
    let mut start_char = 0;
    if total_chars > max_chars {
        let starts: Vec<usize> = ranges.iter().map(|r| char_at(r.0)).collect();
        let best = (0..starts.len())
            .max_by_key(|&i| {
                let count = starts[i..]
                    .iter()
                    .take_while(|&&s| s < starts[i] + max_chars - lead)
                    .count();
                (count, usize::MAX - i)
            })
            .map_or(0, |i| starts[i]);
        start_char = best.saturating_sub(lead).min(total_chars - max_chars);
        // Begin at a word boundary when one is near.
        if start_char > 0 {
            if let Some(space) = text[char_offsets[start_char]..]
                .char_indices()
                .take(20)
                .find(|(_, c)| c.is_whitespace())
            {
                start_char = char_at(char_offsets[start_char] + space.0 + 1);
            }
        }
    }
    let end_char = (start_char + max_chars).min(total_chars);
    let byte_of = |c: usize| char_offsets.get(c).copied().unwrap_or(text.len());
    let (from, to) = (byte_of(start_char), byte_of(end_char));

    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = from;
    for &(s, e) in &ranges {
        if e <= from || s >= to {
            continue;
        }
        let (s, e) = (s.max(from), e.min(to));
        out.push_str(&escape_html(&text[at..s]));
        out.push_str("<mark>");
        out.push_str(&escape_html(&text[s..e]));
        out.push_str("</mark>");
        at = e;
    }
    out.push_str(&escape_html(&text[at..to]));
    if to < text.len() {
        out.push('…');
    }
    crate::text::code_lines(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms<'a>(list: &[&'a str]) -> HashSet<&'a str> {
        list.iter().copied().collect()
    }

    #[test]
    fn two_words_join_as_written_and_of_their_stems() {
        let term = |word: &str| with_analyzer(|a| analyze(a, word))[0].text.clone();
        let brain: HashSet<String> = ["timezone", "rollback", "login"]
            .into_iter()
            .map(term)
            .collect();
        let words = |text: &str| -> Vec<String> {
            joined_words(text, |w| brain.contains(w))
                .into_iter()
                .map(|j| j.word)
                .collect()
        };
        assert_eq!(words("Which time zone do we use?"), vec![term("timezone")]);
        assert_eq!(
            words("What command rolls back payments?"),
            vec![term("rollback")]
        );
        // One of the two may be a stop word, not both.
        assert_eq!(words("How do I log in to the VPN?"), vec![term("login")]);
        // Not across a break, not of two words the brain does not join.
        assert!(words("time, zone").is_empty());
        assert!(words("roll over").is_empty());
        let joined = joined_words("rolled back", |w| brain.contains(w));
        assert_eq!(
            (joined[0].first.as_str(), joined[0].second.as_str()),
            ("roll", "back")
        );
    }

    #[test]
    fn two_words_are_written_as_one_where_the_other_text_does() {
        assert_eq!(
            written_as_one("What time zone is Maria in?", "Maria's timezone?"),
            "What timezone is Maria in?"
        );
        // Of their stems, and as often as the other text says it.
        assert_eq!(
            written_as_one("Who logs in and rolls back?", "login, rollback"),
            "Who login and rollback?"
        );
        // Not where the other text writes two words, or none.
        for other in ["time zone", "the zone of time", ""] {
            assert_eq!(
                written_as_one("What time zone is Maria in?", other),
                "What time zone is Maria in?"
            );
        }
    }

    #[test]
    fn snippets_mark_matches_and_escape_the_rest() {
        let got = snippet(
            "Use <b>Postgres</b> & deploy",
            &terms(&["postgr", "deploy"]),
            200,
        );
        assert_eq!(
            got,
            "Use &lt;b&gt;<mark>Postgres</mark>&lt;/b&gt; &amp; <mark>deploy</mark>"
        );
        let got = snippet("<script>alert(1)</script>", &terms(&["alert"]), 200);
        assert_eq!(got, "&lt;script&gt;<mark>alert</mark>(1)&lt;/script&gt;");
    }

    #[test]
    fn snippets_mark_a_lone_cjk_character_inside_a_run() {
        let got = snippet("타임아웃 값은 30초", &terms(&["값"]), 200);
        assert_eq!(got, "타임아웃 <mark>값</mark>은 30초");
    }

    #[test]
    fn snippets_mark_cjk_bigrams_as_one_span() {
        let got = snippet("노트를 두뇌에서 찾기", &terms(&["두뇌", "뇌에"]), 200);
        assert_eq!(got, "노트를 <mark>두뇌에</mark>서 찾기");
    }

    #[test]
    fn long_text_is_windowed_around_the_matches() {
        let text = format!(
            "{} the needle is here {}",
            "filler ".repeat(100),
            "tail ".repeat(100)
        );
        let got = snippet(&text, &terms(&["needl"]), 80);
        assert!(got.starts_with('…') && got.ends_with('…'), "{got}");
        assert!(got.contains("<mark>needle</mark>"));
        assert!(got.chars().count() < 80 + 30);
    }

    #[test]
    fn stopwords_are_recognised_after_analysis() {
        assert!(is_stopword("the"));
        assert!(is_stopword("what"));
        assert!(!is_stopword("databas"));
    }
}
