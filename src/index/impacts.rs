//! Ranking passages from cached term impacts.
//!
//! An unfiltered search is a sum of BM25 term scores over text, title and
//! heading. Research asks twenty such queries per request, and building a
//! tantivy query for each (a weight, a term lookup and a posting list per
//! term, field and segment) costs more than scoring does. So each term's
//! impacts (its boosted BM25 score in every passage that has it, computed
//! with tantivy's own [`Bm25Weight`]) are kept for the current searcher
//! generation, and a query adds up the lists of its terms. The scores are
//! the ones tantivy's query gives, up to the rounding of a sum taken in
//! another order (a test holds the two together); any commit starts the
//! cache over.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use tantivy::postings::Postings;
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::{Field, IndexRecordOption, Term};
use tantivy::{DocAddress, DocSet, Searcher, TERMINATED};

use super::{Error, Index};
use crate::cache::PerGeneration;

/// Impacts most kept (passages summed over all cached terms); beyond it the
/// cache starts over. At 8 bytes each this is 32 MB.
const CACHED_IMPACTS: usize = 4_000_000;

/// A passage numbered across segments: its segment's first number plus its
/// id in the segment.
pub(super) type GlobalDoc = u32;

/// Where a global passage number lies: its segment (the last whose first
/// number is not above it, in `bases`) and its id there.
pub(super) fn doc_address(bases: &[GlobalDoc], doc: GlobalDoc) -> DocAddress {
    let segment = bases.partition_point(|&b| b <= doc) - 1;
    DocAddress::new(segment as u32, doc - bases[segment])
}

/// Keeps the best `limit` of `items`, sorted best first by `order`, without
/// sorting the rest.
pub(super) fn keep_best<T>(
    items: &mut Vec<T>,
    limit: usize,
    order: impl Fn(&T, &T) -> std::cmp::Ordering + Copy,
) {
    if items.len() > limit {
        items.select_nth_unstable_by(limit, order);
        items.truncate(limit);
    }
    items.sort_unstable_by(order);
}

/// A term's impacts in one field: each passage that has it, with its score.
type ImpactList = Arc<[(GlobalDoc, f32)]>;

pub(super) type ImpactCache = PerGeneration<Impacts>;

#[derive(Default)]
pub(super) struct Impacts {
    /// By field, boost (as bits) and term.
    lists: HashMap<(Field, u32, String), ImpactList>,
    entries: usize,
}

thread_local! {
    /// Score per passage while one query is summed, and which passages it
    /// touched; kept per thread so a query allocates nothing.
    static SUMS: std::cell::RefCell<(Vec<f32>, Vec<GlobalDoc>)> = Default::default();
}

/// The first global passage number of each segment of the searcher.
pub(super) fn segment_bases(searcher: &Searcher) -> Vec<GlobalDoc> {
    searcher
        .segment_readers()
        .iter()
        .scan(0, |next, segment| {
            let base = *next;
            *next += segment.max_doc();
            Some(base)
        })
        .collect()
}

impl Index {
    /// The best `limit` passages for a disjunction of `(field, boost)`
    /// term queries over `terms`, best first; ties go to the earlier
    /// passage. `keep` (by global passage number) narrows them.
    pub(super) fn top_by_impacts(
        &self,
        searcher: &Searcher,
        terms: &[String],
        fields: &[(Field, f32)],
        keep: Option<&dyn Fn(GlobalDoc) -> bool>,
        limit: usize,
    ) -> Result<Vec<(f32, DocAddress)>, Error> {
        let bases = segment_bases(searcher);
        let mut top = self.passage_scores(searcher, &bases, terms, fields)?;
        if let Some(keep) = keep {
            top.retain(|&(doc, _)| keep(doc));
        }
        keep_best(&mut top, limit, |a, b| {
            b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
        });
        Ok(top
            .into_iter()
            .map(|(doc, score)| (score, doc_address(&bases, doc)))
            .collect())
    }

    /// Every passage that matches any of `terms` in any of `fields`, with
    /// its summed score, in no particular order.
    pub(super) fn passage_scores(
        &self,
        searcher: &Searcher,
        bases: &[GlobalDoc],
        terms: &[String],
        fields: &[(Field, f32)],
    ) -> Result<Vec<(GlobalDoc, f32)>, Error> {
        let total = searcher
            .segment_readers()
            .iter()
            .map(|s| s.max_doc() as usize)
            .sum();
        let mut lists = Vec::with_capacity(terms.len() * fields.len());
        for term in terms {
            for &(field, boost) in fields {
                lists.push(self.impacts(searcher, bases, field, boost, term)?);
            }
        }
        Ok(SUMS.with_borrow_mut(|(sums, touched)| {
            sums.resize(total, 0.0);
            for list in &lists {
                for &(doc, score) in list.iter() {
                    let sum = &mut sums[doc as usize];
                    if *sum == 0.0 {
                        touched.push(doc);
                    }
                    *sum += score;
                }
            }
            let scores = touched.iter().map(|&d| (d, sums[d as usize])).collect();
            for &d in touched.iter() {
                sums[d as usize] = 0.0;
            }
            touched.clear();
            scores
        }))
    }

    /// One term's impacts in one field, from the cache or worked out.
    fn impacts(
        &self,
        searcher: &Searcher,
        bases: &[GlobalDoc],
        field: Field,
        boost: f32,
        text: &str,
    ) -> Result<ImpactList, Error> {
        let generation = searcher.generation().generation_id();
        let key = (field, boost.to_bits(), text.to_string());
        if let Some(list) = self
            .inner
            .impacts
            .of(generation)
            .and_then(|cache| cache.lists.get(&key).cloned())
        {
            return Ok(list);
        }
        let list: ImpactList = self
            .score_postings(searcher, bases, field, boost, text)
            .map_err(|e| self.tantivy_err(e))?
            .into();
        if let Some(mut cache) = self.inner.impacts.of(generation) {
            if cache.entries + list.len() > CACHED_IMPACTS {
                cache.lists.clear();
                cache.entries = 0;
            }
            let added = list.len();
            if let Entry::Vacant(slot) = cache.lists.entry(key) {
                slot.insert(list.clone());
                cache.entries += added;
            }
        }
        Ok(list)
    }

    /// Every live passage that has the term, with the score tantivy's
    /// boosted term query gives it.
    fn score_postings(
        &self,
        searcher: &Searcher,
        bases: &[GlobalDoc],
        field: Field,
        boost: f32,
        text: &str,
    ) -> tantivy::Result<Vec<(GlobalDoc, f32)>> {
        let term = Term::from_field_text(field, text);
        let statistics = self.statistics(searcher);
        let doc_freq = statistics.doc_freq(&term)?;
        if doc_freq == 0 {
            return Ok(Vec::new());
        }
        let docs = statistics.total_num_docs()?;
        let average_norm = statistics.total_num_tokens(field)? as f32 / docs.max(1) as f32;
        let weight = Bm25Weight::for_one_term(doc_freq, docs, average_norm).boost_by(boost);
        let mut list = Vec::new();
        for (segment, &base) in searcher.segment_readers().iter().zip(bases) {
            let Some(mut postings) = segment
                .inverted_index(field)?
                .read_postings(&term, IndexRecordOption::WithFreqs)?
            else {
                continue;
            };
            let norms = segment.fieldnorms_readers().get_field(field)?;
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    let norm = norms.as_ref().map_or(1, |n| n.fieldnorm_id(doc));
                    list.push((base + doc, weight.score(norm, postings.term_freq())));
                }
                doc = postings.advance();
            }
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::IndexOptions;

    /// Notes of varied length that share words at varied rates, so that
    /// scores differ by term frequency, passage length and field.
    fn write_notes(brain: &std::path::Path, from: usize, to: usize) {
        const WORDS: &[&str] = &[
            "deploy", "backup", "tuesday", "postgres", "owner", "payments", "rotation", "window",
            "staging", "alert", "budget", "review",
        ];
        for n in from..to {
            let title = WORDS[n % WORDS.len()];
            let mut text = format!("---\ntags: [t{}]\n---\n# {title} notes {n}\n", n % 3);
            for s in 0..(1 + n % 4) {
                text.push_str(&format!(
                    "\n## {} section {s}\n\n",
                    WORDS[(n + s) % WORDS.len()]
                ));
                for w in 0..(3 + (n * 7 + s) % 11) {
                    text.push_str(WORDS[(n * 3 + w * w + s) % WORDS.len()]);
                    text.push(' ');
                }
                text.push_str(".\n");
            }
            std::fs::write(brain.join(format!("note-{n}.md")), text).unwrap();
        }
    }

    #[test]
    fn impacts_rank_as_the_tantivy_query_does() {
        let temp = tempfile::tempdir().unwrap();
        let brain = temp.path().join("brain");
        std::fs::create_dir(&brain).unwrap();
        write_notes(&brain, 0, 40);
        let index = Index::open(IndexOptions {
            brain: brain.clone(),
            data_dir: None,
            max_note_bytes: 1 << 20,
            read_only: false,
        })
        .unwrap();
        index.reconcile_blocking(None).unwrap();
        // A second commit: edited notes leave deleted passages behind, and
        // new notes land in a second segment.
        write_notes(&brain, 30, 50);
        std::fs::remove_file(brain.join("note-3.md")).unwrap();
        index.reconcile_blocking(None).unwrap();

        let searcher = index.searcher();
        assert!(searcher.segment_readers().len() > 1, "one segment only");
        assert!(
            searcher
                .segment_readers()
                .iter()
                .any(|s| s.num_deleted_docs() > 0),
            "no deleted passages"
        );
        let fields = index.scored_fields();
        for query in [
            "deploy",
            "backup tuesday",
            "postgres owner payments",
            "window staging alert budget review rotation",
            "notes section",
            "missingword",
        ] {
            let terms = index.query_terms(query);
            let by_query = |limit| {
                let filters = Vec::new();
                index
                    .top_by_query(&searcher, &terms, filters, limit)
                    .unwrap()
            };
            let by_impacts = |limit| {
                index
                    .top_by_impacts(&searcher, &terms, &fields, None, limit)
                    .unwrap()
            };
            // Everything that matches: the same passages with the same
            // scores.
            let all: HashMap<DocAddress, f32> =
                by_query(10_000).into_iter().map(|(s, a)| (a, s)).collect();
            let ours = by_impacts(10_000);
            assert_eq!(ours.len(), all.len(), "{query}: how many match");
            for (score, address) in &ours {
                let theirs = all
                    .get(address)
                    .unwrap_or_else(|| panic!("{query}: {address:?}"));
                assert!(
                    (score - theirs).abs() < 1e-4,
                    "{query}: {score} vs {theirs}"
                );
            }
            // The top three: the same scores in the same order.
            let top: Vec<f32> = by_query(3).into_iter().map(|(s, _)| s).collect();
            let ours: Vec<f32> = by_impacts(3).into_iter().map(|(s, _)| s).collect();
            assert_eq!(top.len(), ours.len(), "{query}");
            for (a, b) in top.iter().zip(&ours) {
                assert!((a - b).abs() < 1e-4, "{query}: top {top:?} vs {ours:?}");
            }
        }
    }
}
