//! Ranking notes: note-level BM25 combined with the note's best passage.
//!
//! The index holds one document per passage, which makes evidence precise
//! but, scored alone, loses what the note says as a whole: a note whose
//! sections together cover a question loses to one with a single lucky
//! passage, and a long abstract cut in two halves scores as two weak
//! halves. So a search ranks notes by BM25 over the whole note (title once
//! plus the text of every passage, as if the note were one document),
//! plus a share of its best passage's score (text, title and heading, see
//! [`super::impacts`]), which keeps a note with one precise section ahead of
//! a long note that mentions everything once, plus how much of the note's
//! title the query covers, which finds a note by its name.
//!
//! The note-level statistics are not indexed twice: passages of a note carry
//! the note's id in a fast field, and a term's note-level frequencies are
//! summed from its passage postings when it is first asked for, then kept
//! for the searcher generation like the passage impacts. Every posting of a
//! query's terms is visited (no top-k pruning): on a brain of notes that is
//! a few tens of thousands of postings, cheaper than one stored passage
//! read, and the cached lists make a repeated term free.
//!
//! Words alone do not see order: "breast cancer" in a claim is evidence
//! for an abstract that says "breast cancer", less for one that speaks of
//! cancer and, elsewhere, of the breast. So the best [`PHRASE_DEPTH`] notes
//! are then reordered by the query's word pairs
//! ([`super::search::query_pairs`]) that their best passages (at most
//! [`PHRASE_PASSAGES`] each) say in the same order, each pair weighted by
//! how few of those notes say it: a pair all of them share tells nothing.
//! The index keeps no positions, so those passages are read and analyzed
//! again; they are cached, as the passages a search shows are.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::{Postings, SegmentPostings, TermInfo};
use tantivy::schema::{Field, IndexRecordOption, Term};
use tantivy::{DocAddress, DocSet, InvertedIndexReader, Searcher, TERMINATED};

use super::analyzer::{analyze, pairs_of, with_analyzer};
use super::impacts::{doc_address, keep_best, GlobalDoc};
use super::{Error, Index};
use crate::cache::PerGeneration;

/// BM25 parameters, the passage's share and the title coverage's weight
/// were chosen on half of the SciFact train claims (even ids) among the
/// settings that keep every Obsidian help question's note where it was (in
/// the top three, and at rank 1 as often) and the search tests passing, and
/// judged on the other half:
/// `scripts/rank-sweep.sh`, which sets them through `NOGGIN_RANK_PARAMS`.
/// See README → The index.
///
/// BM25 term-frequency saturation of the note-level score.
const NOTE_K1: f32 = 0.9;
/// BM25 length normalisation of the note-level score.
const NOTE_B: f32 = 0.9;
/// A title word counts as this many words of text at note level.
const NOTE_TITLE_WEIGHT: f32 = 1.0;
/// Share of the best passage's score added to the note-level score: it
/// keeps a note with one precise section ahead of a long note that mentions
/// everything once. More favours short passages and ranks SciFact worse
/// (0.5: nDCG@10 0.688 on the whole train set, 1.0: 0.675); less (0.2)
/// ranks it better but puts "Obsidian 확장/커뮤니티 디렉터리" ahead of the
/// command palette's note for "명령 팔레트를 여는 단축키는 무엇인가요?".
const PASSAGE_WEIGHT: f32 = 0.3;
/// Weight of the title's coverage: the IDF of the query terms found in the
/// note's title, times the square of the share of the title they make up. A
/// note whose name the question states ("Which keyboard shortcut opens
/// Search?" → Search) ranks high even when its text says little; a long
/// title that shares a word or two with the question gains almost nothing.
const TITLE_COVER_WEIGHT: f32 = 1.5;

/// Notes the phrase score may reorder: the best by the score above. Chosen
/// with [`PHRASE_WEIGHT`] on the fit half of the SciFact train claims, by
/// nDCG@10 (0.679 without phrases): depth 10 at weight 1.0 0.681, 20 at
/// 1.0 0.685, 15 at 1.5 0.686, **20 at 1.5 0.687**, 30 at 1.5 0.685, 20 at
/// 2.0 0.687, 20 at 2.5 0.683 (measured before pairs stopped at
/// punctuation; as they are now, 0.687). The held-out half goes from 0.716
/// to 0.724 and the Obsidian help recall stays as it was.
const PHRASE_DEPTH: usize = 20;
/// Weight of a note's phrase score against its note score.
const PHRASE_WEIGHT: f32 = 1.5;
/// Saturation of a pair's count in a note, as BM25's k1.
const PHRASE_K1: f32 = 1.2;
/// Passages of a note (its best by passage score) whose pairs are counted.
const PHRASE_PASSAGES: usize = 4;

/// Note-level term entries most kept (summed over all cached terms); beyond
/// it the cache starts over. At 12 bytes each this is 24 MB.
const CACHED_NOTE_ENTRIES: usize = 2_000_000;

/// A note numbered across the whole searcher.
pub(super) type GlobalNote = u32;

/// Marks a deleted passage in [`NoteTable::note_of_doc`].
const NO_NOTE: GlobalNote = GlobalNote::MAX;

/// Which note each passage belongs to and how long each note is, for one
/// searcher generation.
pub(super) struct NoteTable {
    /// First global passage number of each segment.
    pub bases: Vec<GlobalDoc>,
    /// The note of every passage; [`NO_NOTE`] for a deleted one.
    pub note_of_doc: Vec<GlobalNote>,
    /// Words of text of each note (all its passages).
    text_len: Vec<u32>,
    /// Words of the note's title (and aliases).
    title_len: Vec<u32>,
    /// Notes with at least one live passage.
    live_notes: u32,
    /// Mean note length in words (text plus weighted title) over live notes.
    average_len: f32,
}

/// A term's note-level frequencies: (note, in its text, in its title).
type NoteTermList = Arc<[(GlobalNote, f32, f32)]>;

#[derive(Default)]
pub(super) struct NoteCache {
    table: Option<Arc<NoteTable>>,
    terms: HashMap<String, NoteTermList>,
    entries: usize,
}

pub(super) type NoteCacheByGeneration = PerGeneration<NoteCache>;

/// The parameters of a note ranking: the constants above.
#[derive(Debug, Clone, Copy)]
pub(super) struct RankParams {
    pub k1: f32,
    pub b: f32,
    pub title_weight: f32,
    pub passage_weight: f32,
    pub title_cover_weight: f32,
}

impl Default for RankParams {
    fn default() -> Self {
        *RANK_PARAMS
    }
}

/// The constants above, or for tuning
/// `NOGGIN_RANK_PARAMS="k1,b,title,passage,title_cover"`.
static RANK_PARAMS: std::sync::LazyLock<RankParams> = std::sync::LazyLock::new(|| {
    let constants = RankParams {
        k1: NOTE_K1,
        b: NOTE_B,
        title_weight: NOTE_TITLE_WEIGHT,
        passage_weight: PASSAGE_WEIGHT,
        title_cover_weight: TITLE_COVER_WEIGHT,
    };
    let Ok(value) = std::env::var("NOGGIN_RANK_PARAMS") else {
        return constants;
    };
    let parsed: Vec<f32> = value
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    match parsed[..] {
        [k1, b, title_weight, passage_weight, title_cover_weight] => RankParams {
            k1,
            b,
            title_weight,
            passage_weight,
            title_cover_weight,
        },
        _ => {
            tracing::warn!(
                %value,
                "NOGGIN_RANK_PARAMS is not k1,b,title,passage,title_cover; ignored"
            );
            constants
        }
    }
});

/// A ranked note: its score and its best passage.
#[derive(Debug, Clone, Copy)]
pub(super) struct RankedNote {
    pub score: f32,
    pub best_passage: DocAddress,
}

thread_local! {
    /// Per-note scratch of one query: note-level score, best passage score
    /// and its passage, and the notes touched; kept per thread so a query
    /// allocates little.
    static NOTE_SCRATCH: std::cell::RefCell<NoteScratch> = Default::default();
}

#[derive(Default)]
struct NoteScratch {
    note_score: Vec<f32>,
    /// Query terms found in the note's title, and the sum of their IDF.
    title_hits: Vec<(f32, f32)>,
    best: Vec<(f32, GlobalDoc)>,
    touched: Vec<GlobalNote>,
}

impl NoteTable {
    fn build(
        searcher: &Searcher,
        text: Field,
        title: Field,
        params: &RankParams,
    ) -> tantivy::Result<NoteTable> {
        let mut table = NoteTable {
            bases: Vec::with_capacity(searcher.segment_readers().len()),
            note_of_doc: Vec::new(),
            text_len: Vec::new(),
            title_len: Vec::new(),
            live_notes: 0,
            average_len: 1.0,
        };
        for segment in searcher.segment_readers() {
            table.bases.push(table.note_of_doc.len() as GlobalDoc);
            let notes = segment.fast_fields().u64(super::schema::NOTE_FIELD)?;
            let text_norms = segment.fieldnorms_readers().get_field(text)?;
            let title_norms = segment.fieldnorms_readers().get_field(title)?;
            let norm = |norms: &Option<FieldNormReader>, doc| {
                norms.as_ref().map_or(1, |n| n.fieldnorm(doc))
            };
            let alive = segment.alive_bitset();
            // Passages of a note are added in one batch, so they share a
            // segment; the map only makes the numbering dense.
            let mut ids: HashMap<u64, GlobalNote> = HashMap::new();
            for doc in 0..segment.max_doc() {
                if !alive.is_none_or(|a| a.is_alive(doc)) {
                    table.note_of_doc.push(NO_NOTE);
                    continue;
                }
                let key = notes.first(doc).unwrap_or(u64::MAX);
                let note = *ids.entry(key).or_insert_with(|| {
                    table.text_len.push(0);
                    table.title_len.push(norm(&title_norms, doc));
                    (table.text_len.len() - 1) as GlobalNote
                });
                table.note_of_doc.push(note);
                table.text_len[note as usize] += norm(&text_norms, doc);
            }
        }
        table.live_notes = table.text_len.len() as u32;
        let total: f64 = (0..table.text_len.len())
            .map(|n| table.note_len(n as GlobalNote, params) as f64)
            .sum();
        table.average_len = (total / f64::from(table.live_notes.max(1))).max(1.0) as f32;
        Ok(table)
    }

    fn note_len(&self, note: GlobalNote, params: &RankParams) -> f32 {
        self.text_len[note as usize] as f32
            + params.title_weight * self.title_len[note as usize] as f32
    }

    pub fn notes(&self) -> usize {
        self.text_len.len()
    }

    pub fn address(&self, doc: GlobalDoc) -> DocAddress {
        doc_address(&self.bases, doc)
    }
}

impl Index {
    /// The note table of the searcher's generation, from the cache or built.
    pub(super) fn note_table(&self, searcher: &Searcher) -> Result<Arc<NoteTable>, Error> {
        let generation = searcher.generation().generation_id();
        if let Some(table) = self
            .inner
            .notes
            .of(generation)
            .and_then(|cache| cache.table.clone())
        {
            return Ok(table);
        }
        let f = self.fields();
        let table = Arc::new(
            NoteTable::build(searcher, f.text, f.title, &RankParams::default())
                .map_err(|e| self.tantivy_err(e))?,
        );
        if let Some(mut cache) = self.inner.notes.of(generation) {
            cache.table = Some(table.clone());
        }
        Ok(table)
    }

    /// A term's note-level frequencies, from the cache or summed from its
    /// passage postings.
    fn note_term(
        &self,
        searcher: &Searcher,
        table: &NoteTable,
        text: &str,
    ) -> Result<NoteTermList, Error> {
        let generation = searcher.generation().generation_id();
        if let Some(list) = self
            .inner
            .notes
            .of(generation)
            .and_then(|cache| cache.terms.get(text).cloned())
        {
            return Ok(list);
        }
        let f = self.fields();
        let list: NoteTermList = note_frequencies(searcher, table, f.text, f.title, text)
            .map_err(|e| self.tantivy_err(e))?
            .into();
        if let Some(mut cache) = self.inner.notes.of(generation) {
            if cache.entries + list.len() > CACHED_NOTE_ENTRIES {
                cache.terms.clear();
                cache.entries = 0;
            }
            let added = list.len();
            if let Entry::Vacant(slot) = cache.terms.entry(text.to_string()) {
                slot.insert(list.clone());
                cache.entries += added;
            }
        }
        Ok(list)
    }

    /// The best `limit` notes for the analyzed `terms`, best first, each
    /// with its best passage; `allowed` (by note) narrows them. The query's
    /// word `pairs` (see [`super::search::query_pairs`]) reorder the best of them.
    pub(super) fn top_notes(
        &self,
        searcher: &Searcher,
        terms: &[String],
        pairs: &[(String, String)],
        allowed: Option<&[bool]>,
        limit: usize,
    ) -> Result<Vec<RankedNote>, Error> {
        let params = RankParams::default();
        let table = self.note_table(searcher)?;
        let passages = self.passage_scores(searcher, &table.bases, terms, &self.scored_fields())?;
        let mut lists = Vec::with_capacity(terms.len());
        for term in terms {
            lists.push(self.note_term(searcher, &table, term)?);
        }
        let notes = table.notes();
        let live = table.live_notes.max(1) as f32;
        let mut top: Vec<(f32, GlobalNote, GlobalDoc)> = NOTE_SCRATCH.with_borrow_mut(|scratch| {
            scratch.note_score.resize(notes, 0.0);
            scratch.title_hits.resize(notes, (0.0, 0.0));
            scratch.best.resize(notes, (0.0, 0));
            for list in &lists {
                let df = list.len() as f32;
                let idf = (1.0 + (live - df + 0.5) / (df + 0.5)).ln();
                for &(note, in_text, in_title) in list.iter() {
                    let tf = in_text + params.title_weight * in_title;
                    if tf <= 0.0 {
                        continue;
                    }
                    let len = table.note_len(note, &params);
                    let norm = params.k1 * (1.0 - params.b + params.b * len / table.average_len);
                    let score = &mut scratch.note_score[note as usize];
                    if *score == 0.0 {
                        scratch.touched.push(note);
                    }
                    *score += idf * tf * (params.k1 + 1.0) / (tf + norm);
                    if in_title > 0.0 {
                        let hits = &mut scratch.title_hits[note as usize];
                        hits.0 += 1.0;
                        hits.1 += idf;
                    }
                }
            }
            for &(doc, score) in &passages {
                let note = table.note_of_doc[doc as usize];
                if note == NO_NOTE {
                    continue;
                }
                let best = &mut scratch.best[note as usize];
                if best.0 == 0.0 && scratch.note_score[note as usize] == 0.0 {
                    // A heading-only match: no note-level score.
                    scratch.touched.push(note);
                }
                if score > best.0 || (score == best.0 && doc < best.1) {
                    *best = (score, doc);
                }
            }
            let mut top = Vec::with_capacity(scratch.touched.len());
            for &note in &scratch.touched {
                let (passage, doc) = scratch.best[note as usize];
                let allowed =
                    allowed.is_none_or(|a| a.get(note as usize).copied().unwrap_or(false));
                if allowed && passage > 0.0 {
                    let (hits, idf_sum) = scratch.title_hits[note as usize];
                    let title_len = table.title_len[note as usize].max(1) as f32;
                    let coverage = (hits / title_len).min(1.0);
                    let score = scratch.note_score[note as usize]
                        + params.passage_weight * passage
                        + params.title_cover_weight * coverage * coverage * idf_sum;
                    top.push((score, note, doc));
                }
                scratch.note_score[note as usize] = 0.0;
                scratch.title_hits[note as usize] = (0.0, 0.0);
                scratch.best[note as usize] = (0.0, 0);
            }
            scratch.touched.clear();
            top
        });
        let order = |a: &(f32, GlobalNote, GlobalDoc), b: &(f32, GlobalNote, GlobalDoc)| {
            b.0.total_cmp(&a.0).then(a.2.cmp(&b.2))
        };
        if pairs.is_empty() {
            keep_best(&mut top, limit, order);
        } else {
            keep_best(&mut top, limit.max(PHRASE_DEPTH), order);
            let depth = top.len().min(PHRASE_DEPTH);
            self.add_phrase_scores(searcher, &table, &passages, pairs, &mut top[..depth])?;
            keep_best(&mut top, limit, order);
        }
        Ok(top
            .into_iter()
            .map(|(score, _, doc)| RankedNote {
                score,
                best_passage: table.address(doc),
            })
            .collect())
    }

    /// Adds to each note's score its phrase score: for every query pair its
    /// best passages hold in order, the pair's rarity among `top` times its
    /// saturated count.
    fn add_phrase_scores(
        &self,
        searcher: &Searcher,
        table: &NoteTable,
        passages: &[(GlobalDoc, f32)],
        pairs: &[(String, String)],
        top: &mut [(f32, GlobalNote, GlobalDoc)],
    ) -> Result<(), Error> {
        let mut of_note: HashMap<GlobalNote, Vec<(f32, GlobalDoc)>> =
            top.iter().map(|&(_, note, _)| (note, Vec::new())).collect();
        for &(doc, score) in passages {
            if let Some(list) = of_note.get_mut(&table.note_of_doc[doc as usize]) {
                list.push((score, doc));
            }
        }
        let pair_index: HashMap<(&str, &str), usize> = pairs
            .iter()
            .enumerate()
            .map(|(i, (a, b))| ((a.as_str(), b.as_str()), i))
            .collect();
        let mut counts = vec![0u32; top.len() * pairs.len()];
        for (slot, &(_, note, _)) in top.iter().enumerate() {
            let Some(list) = of_note.get_mut(&note) else {
                continue;
            };
            keep_best(list, PHRASE_PASSAGES, |a, b| {
                b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
            });
            let counts = &mut counts[slot * pairs.len()..(slot + 1) * pairs.len()];
            let mut count = |text: &str| {
                let tokens = with_analyzer(|a| analyze(a, text));
                for pair in pairs_of(text, &tokens) {
                    if let Some(&i) = pair_index.get(&pair) {
                        counts[i] += 1;
                    }
                }
            };
            let mut headings = Vec::new();
            for (n, &(_, doc)) in list.iter().enumerate() {
                let passage = self.section_hit(searcher, table.address(doc), 0.0)?;
                if n == 0 {
                    count(&passage.title);
                }
                if !headings.contains(&passage.heading) {
                    count(&passage.heading);
                    headings.push(passage.heading.clone());
                }
                count(&passage.text);
            }
        }
        let depth = top.len() as f32;
        for pair in 0..pairs.len() {
            let holding = (0..top.len())
                .filter(|slot| counts[slot * pairs.len() + pair] > 0)
                .count() as f32;
            if holding == 0.0 {
                continue;
            }
            let idf = (1.0 + (depth - holding + 0.5) / (holding + 0.5)).ln();
            for (slot, entry) in top.iter_mut().enumerate() {
                let tf = counts[slot * pairs.len() + pair] as f32;
                if tf > 0.0 {
                    entry.0 += PHRASE_WEIGHT * idf * tf / (tf + PHRASE_K1);
                }
            }
        }
        Ok(())
    }

    /// Which notes pass the filter `clauses`; all must hold.
    pub(super) fn allowed_notes(
        &self,
        searcher: &Searcher,
        table: &NoteTable,
        clauses: &[Clause],
    ) -> Result<Vec<bool>, Error> {
        let mut hits = vec![0u8; table.notes()];
        let path = self.fields().path;
        for clause in clauses {
            let mut marked = vec![false; table.notes()];
            for (segment, &base) in searcher.segment_readers().iter().zip(&table.bases) {
                let mut mark = |mut postings: SegmentPostings| {
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        let note = table.note_of_doc[(base + doc) as usize];
                        if note != NO_NOTE {
                            marked[note as usize] = true;
                        }
                        doc = postings.advance();
                    }
                };
                // A value of a field, the values under one (`tag/…`), or both.
                let (field, exact, under): (Field, Option<&str>, Option<&str>) = match clause {
                    Clause::Has(field, value) => (*field, Some(value), None),
                    Clause::Tag(field, tag) => (*field, Some(tag), Some(tag)),
                    Clause::Under(folder) => (path, None, Some(folder)),
                };
                let inverted = segment
                    .inverted_index(field)
                    .map_err(|e| self.tantivy_err(e))?;
                if let Some(value) = exact {
                    let term = Term::from_field_text(field, value);
                    if let Some(postings) = inverted
                        .read_postings(&term, IndexRecordOption::Basic)
                        .map_err(|e| self.tantivy_err(e.into()))?
                    {
                        mark(postings);
                    }
                }
                if let Some(parent) = under {
                    let each = |info: &TermInfo| {
                        mark(inverted.read_postings_from_terminfo(info, IndexRecordOption::Basic)?);
                        Ok(())
                    };
                    match clause {
                        Clause::Under(_) => paths_under(&inverted, parent, each),
                        _ => terms_under(&inverted, parent, each),
                    }
                    .map_err(|e| self.tantivy_err(e.into()))?;
                }
            }
            for (hit, marked) in hits.iter_mut().zip(marked) {
                *hit += u8::from(marked);
            }
        }
        Ok(hits
            .into_iter()
            .map(|h| h as usize == clauses.len())
            .collect())
    }
}

/// One condition of a search filter.
pub(super) enum Clause {
    /// A passage of the note has this value in this (exact) field.
    Has(Field, String),
    /// The note has this tag or one nested under it (`project` for
    /// `project/alpha`), as Obsidian's tag search finds them.
    Tag(Field, String),
    /// The note lies under this folder (relative, no slash at either end).
    Under(String),
}

/// Calls `each` with the term of every note path under `folder`, in a
/// segment's index of the path field: the paths that start with "folder/",
/// which sort between it and "folder0" ('0' follows '/'). The index keeps
/// no folder field: the ancestors of every passage cost a cold index 4–7%
/// of its CPU on a brain of nested folders. A folder is looked for written
/// composed (NFC) and decomposed (NFD, as macOS names files), so `Café`
/// typed finds the notes of a folder synced from a Mac, and the other way
/// round.
pub(super) fn paths_under(
    paths: &InvertedIndexReader,
    folder: &str,
    mut each: impl FnMut(&TermInfo) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use unicode_normalization::UnicodeNormalization;
    let composed: String = folder.nfc().collect();
    let decomposed: String = folder.nfd().collect();
    let forms = if composed == decomposed {
        vec![composed]
    } else {
        vec![composed, decomposed]
    };
    for form in forms {
        terms_under(paths, &form, &mut each)?;
    }
    Ok(())
}

/// Calls `each` with every term of a field that starts with `parent/`:
/// they sort between it and "parent0" ('0' follows '/').
fn terms_under(
    inverted: &InvertedIndexReader,
    parent: &str,
    mut each: impl FnMut(&TermInfo) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let from = format!("{parent}/");
    let to = format!("{parent}0");
    let mut under = inverted
        .terms()
        .range()
        .ge(from.as_bytes())
        .lt(to.as_bytes())
        .into_stream()?;
    while under.advance() {
        each(under.value())?;
    }
    Ok(())
}

/// Sums a term's passage frequencies per note: text over every passage,
/// title once.
fn note_frequencies(
    searcher: &Searcher,
    table: &NoteTable,
    text_field: Field,
    title_field: Field,
    text: &str,
) -> tantivy::Result<Vec<(GlobalNote, f32, f32)>> {
    let mut in_text: Vec<(GlobalNote, f32)> = Vec::new();
    let mut in_title: Vec<(GlobalNote, f32)> = Vec::new();
    for (field, out) in [(text_field, &mut in_text), (title_field, &mut in_title)] {
        let term = Term::from_field_text(field, text);
        for (segment, &base) in searcher.segment_readers().iter().zip(&table.bases) {
            let Some(mut postings) = segment
                .inverted_index(field)?
                .read_postings(&term, IndexRecordOption::WithFreqs)?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                let note = table.note_of_doc[(base + doc) as usize];
                if note != NO_NOTE {
                    let tf = postings.term_freq() as f32;
                    match out.last_mut() {
                        // Passages of a note are neighbours in the postings.
                        Some(last) if last.0 == note => {
                            if field == text_field {
                                last.1 += tf;
                            }
                        }
                        _ => out.push((note, tf)),
                    }
                }
                doc = postings.advance();
            }
        }
        // Should a note's passages ever not be neighbours, merge them.
        if out.windows(2).any(|w| w[0].0 >= w[1].0) {
            out.sort_by_key(|e| e.0);
            out.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    if field == text_field {
                        kept.1 += later.1;
                    }
                    true
                } else {
                    false
                }
            });
        }
    }
    // Merge the two lists, both ordered by note.
    let mut merged = Vec::with_capacity(in_text.len().max(in_title.len()));
    let (mut i, mut j) = (0, 0);
    while i < in_text.len() || j < in_title.len() {
        let a = in_text.get(i).map_or(GlobalNote::MAX, |e| e.0);
        let b = in_title.get(j).map_or(GlobalNote::MAX, |e| e.0);
        if a == b {
            merged.push((a, in_text[i].1, in_title[j].1));
            i += 1;
            j += 1;
        } else if a < b {
            merged.push((a, in_text[i].1, 0.0));
            i += 1;
        } else {
            merged.push((b, 0.0, in_title[j].1));
            j += 1;
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SearchFilter;

    fn ranked(index: &Index, query: &str) -> Vec<String> {
        index
            .search(query, &SearchFilter::default(), 10)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect()
    }

    /// A brain of the given notes (path, markdown) among a dozen notes about
    /// other things, so that the words of the tests are rare; indexed.
    fn indexed_among_filler(notes: &[(&str, &str)]) -> (tempfile::TempDir, Index) {
        let filler: Vec<(String, String)> = (0..12)
            .map(|n| {
                (
                    format!("other/{n}.md"),
                    format!("# Other {n}\n\nThe kitchen rota, lunch orders and the plant watering plan {n}.\n"),
                )
            })
            .collect();
        let mut all: Vec<(&str, &str)> = filler
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        all.extend_from_slice(notes);
        crate::index::indexed_brain(&all)
    }

    #[test]
    fn evidence_spread_over_sections_beats_one_lucky_passage() {
        // Each section of the storage note holds one asked-for word; the
        // lucky passage holds three of the five.
        let spread = "# Storage\n\n## One\n\nA nightly backup goes to the cold store.\n\n\
            ## Two\n\nThe retention is thirty days.\n\n## Three\n\nA snapshot is taken hourly.\n\n\
            ## Four\n\nA restore takes an hour.\n\n## Five\n\nA drill runs every quarter.\n";
        let lucky = "# Misc\n\n## Notes\n\nThe backup of the wiki, the restore of the printer \
            queue and the fire drill were discussed at lunch.\n";
        let (_temp, index) = indexed_among_filler(&[("storage.md", spread), ("misc.md", lucky)]);
        let got = ranked(&index, "backup retention snapshot restore drill");
        assert_eq!(
            got.first().map(String::as_str),
            Some("storage.md"),
            "{got:?}"
        );
    }

    #[test]
    fn a_precise_section_beats_a_long_note_that_names_everything_once() {
        let precise =
            "# Deploys\n\n## Window\n\nWe deploy the payments service on Tuesday mornings.\n";
        let mut long = String::from("# Handbook\n\n");
        for (n, word) in ["deploy", "payments", "service", "tuesday"]
            .iter()
            .enumerate()
        {
            long.push_str(&format!(
                "## Part {n}\n\nThis part is about {word} and many other things: the office, the \
                 coffee machine, the parking rules, the holiday calendar, the library, the garden, \
                 the bicycles, the lockers and the fire drill.\n\n"
            ));
        }
        let (_temp, index) =
            indexed_among_filler(&[("deploys.md", precise), ("handbook.md", &long)]);
        let got = ranked(&index, "When do we deploy the payments service on Tuesday?");
        assert_eq!(
            got.first().map(String::as_str),
            Some("deploys.md"),
            "{got:?}"
        );
        assert!(got.contains(&"handbook.md".to_string()), "{got:?}");
    }

    #[test]
    fn words_in_the_query_order_beat_the_same_words_scattered() {
        // The clinic note has more of the words; the programme note has them
        // as the query says them.
        let scattered = "# Clinic\n\nCancer care of every kind. The breast clinic does \
            screening, cancer screening and more screening.\n";
        let ordered = "# Programme\n\nThe breast cancer screening programme starts in May.\n";
        let (_temp, index) =
            indexed_among_filler(&[("clinic.md", scattered), ("programme.md", ordered)]);
        assert_eq!(
            ranked(&index, "Is there breast cancer screening?"),
            ["programme.md", "clinic.md"]
        );
        // Without pairs the words alone decide, and they favour the clinic.
        let searcher = index.searcher();
        let terms = index.query_terms("Is there breast cancer screening?");
        let top = index.top_notes(&searcher, &terms, &[], None, 2).unwrap();
        let first = index
            .section_hit(&searcher, top[0].best_passage, 0.0)
            .unwrap();
        assert_eq!(first.path, "clinic.md");
    }

    #[test]
    fn query_pairs_are_adjacent_tokens_once_without_two_stop_words() {
        let pairs = |text: &str| -> Vec<String> {
            crate::index::search::query_pairs(text)
                .into_iter()
                .map(|(a, b)| format!("{a} {b}"))
                .collect()
        };
        assert_eq!(
            pairs("Is the breast cancer screening of the breast cancer clinic?"),
            [
                "the breast",
                "breast cancer",
                "cancer screen",
                "screen of",
                "cancer clinic"
            ]
        );
        // Bigrams of one Korean word overlap: only pairs across words count.
        assert_eq!(pairs("암호화된 압축 파일"), ["화된 압축", "압축 파일"]);
        // Punctuation and line breaks end a pair.
        assert_eq!(
            pairs("the Tuesday deploy.\n- Tuesday: deploy, (rollback) plan"),
            ["the tuesday", "tuesday deploy"]
        );
        // Nor across heading levels, dashes or a word too long to index.
        let long_word = "a".repeat(45);
        assert_eq!(
            pairs(&format!(
                "Setup › Database — backups; commit {long_word} fixed it"
            )),
            ["fix it"]
        );
    }

    #[test]
    fn note_frequencies_count_text_of_all_passages_and_the_title_once() {
        let note =
            "# Zebra facts\n\n## One\n\nA zebra runs.\n\n## Two\n\nA zebra and a zebra sleep.\n\n\
            ## Three\n\nNothing here.\n";
        let (_temp, index) =
            indexed_among_filler(&[("zebra.md", note), ("plain.md", "# Plain\n\nOne zebra.\n")]);
        let searcher = index.searcher();
        let table = index.note_table(&searcher).unwrap();
        assert_eq!(table.notes(), 14);
        let list = index.note_term(&searcher, &table, "zebra").unwrap();
        let mut counts: Vec<(f32, f32)> =
            list.iter().map(|&(_, text, title)| (text, title)).collect();
        counts.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(counts, [(1.0, 0.0), (3.0, 1.0)]);
    }

    #[test]
    fn an_edited_note_counts_only_as_it_is_now() {
        let (temp, index) = indexed_among_filler(&[(
            "edit.md",
            "# Edit\n\n## A\n\nzebra zebra\n\n## B\n\nzebra\n",
        )]);
        std::fs::write(
            temp.path().join("brain/edit.md"),
            "# Edit\n\nOne zebra only.\n",
        )
        .unwrap();
        index.reconcile_blocking(None).unwrap();
        let searcher = index.searcher();
        let table = index.note_table(&searcher).unwrap();
        assert_eq!(table.notes(), 13, "deleted passages still count as a note");
        let list = index.note_term(&searcher, &table, "zebra").unwrap();
        let counts: Vec<f32> = list.iter().map(|&(_, text, _)| text).collect();
        assert_eq!(counts, [1.0]);
        assert_eq!(ranked(&index, "zebra"), ["edit.md"]);
    }

    #[test]
    fn filters_narrow_notes() {
        let (_temp, index) = indexed_among_filler(&[
            ("a/deploy.md", "# Deploy\n\nDeploy on Tuesday.\n"),
            (
                "b/deploy.md",
                "---\ntags: [ops]\n---\n# Deploy\n\nDeploy on Friday.\n",
            ),
        ]);
        let search = |filter: SearchFilter| -> Vec<String> {
            index
                .search("deploy", &filter, 10)
                .unwrap()
                .into_iter()
                .map(|h| h.path)
                .collect()
        };
        assert_eq!(search(SearchFilter::default()).len(), 2);
        let folder = SearchFilter {
            folder: Some("a".into()),
            ..SearchFilter::default()
        };
        assert_eq!(search(folder), ["a/deploy.md"]);
        let tag = SearchFilter {
            tag: Some("#Ops".into()),
            ..SearchFilter::default()
        };
        assert_eq!(search(tag), ["b/deploy.md"]);
        let both = SearchFilter {
            folder: Some("a".into()),
            tag: Some("ops".into()),
            ..SearchFilter::default()
        };
        assert!(search(both).is_empty());
    }

    #[test]
    fn a_folder_holds_the_notes_beneath_it_and_no_folder_that_starts_alike() {
        let note = "# Deploy\n\nDeploy on Tuesday.\n";
        let (_temp, index) = indexed_among_filler(&[
            ("a/deploy.md", note),
            ("a/b/deploy.md", note),
            (
                "a/b/c/deploy.md",
                "# Deploy\n\nDeploy.\n\n## Later\n\nDeploy again.\n",
            ),
            ("ab/deploy.md", note),
            ("a b/deploy.md", note),
            ("a.md", note),
            // Named decomposed (NFD), as a Mac names files.
            ("Cafe\u{301}/deploy.md", note),
            ("\u{1112}\u{1161}\u{11ab}/deploy.md", note),
        ]);
        let under = |folder: &str| -> Vec<String> {
            let filter = SearchFilter {
                folder: Some(folder.into()),
                ..SearchFilter::default()
            };
            let mut paths: Vec<String> = index
                .search("deploy", &filter, 10)
                .unwrap()
                .into_iter()
                .map(|h| h.path)
                .collect();
            paths.sort();
            paths
        };
        assert_eq!(
            under("a"),
            ["a/b/c/deploy.md", "a/b/deploy.md", "a/deploy.md"]
        );
        assert_eq!(under("/a/b/"), ["a/b/c/deploy.md", "a/b/deploy.md"]);
        // A folder written as a shell writes it names the same folder.
        assert_eq!(under("./a/b"), ["a/b/c/deploy.md", "a/b/deploy.md"]);
        assert_eq!(under("a//./b"), ["a/b/c/deploy.md", "a/b/deploy.md"]);
        assert_eq!(under("a\\b"), ["a/b/c/deploy.md", "a/b/deploy.md"]);
        assert_eq!(under("./").len(), 8);
        // Typed composed, they find the folders named decomposed.
        assert_eq!(under("Caf\u{e9}"), ["Cafe\u{301}/deploy.md"]);
        assert_eq!(under("\u{d55c}"), ["\u{1112}\u{1161}\u{11ab}/deploy.md"]);
        assert_eq!(index.folder_sections("Caf\u{e9}"), 1);
        assert_eq!(under("a b"), ["a b/deploy.md"]);
        assert!(under("a/b/c/deploy.md").is_empty());
        assert!(under("nowhere").is_empty());
        assert_eq!(index.folder_sections("a"), 4);
        assert_eq!(index.folder_sections("a/b/"), 3);
        assert_eq!(index.folder_sections("./a/b"), 3);
        assert_eq!(index.folder_sections("ab"), 1);
        assert_eq!(index.folder_sections("other"), 12);
        assert_eq!(index.folder_sections("a/d"), 0);
    }
}
