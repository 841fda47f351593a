//! The narrow interface research reads the brain through.
//!
//! Research needs six things of an index: the brain's folder, a text's
//! analyzed terms, a term's document frequency, the best passages for some
//! terms, how many sections a folder holds, and the sections of a kind
//! (project-context notes). [`Corpus`] names exactly those, so that a second
//! backend — a distributed engine for a brain that outgrows one machine —
//! can be added by implementing it, without touching research (see
//! `docs/architecture.md`). [`Index`] is the one implementation today.

use std::path::Path;

use super::{Error, Index, SearchFilter, SectionHit};

/// What research reads of an index of sections.
pub trait Corpus: Send + Sync {
    /// The brain's folder (for notes given by path).
    fn brain(&self) -> &Path;
    /// `text` analyzed as the index analyzes it, stop words dropped unless
    /// nothing else is left, each term once.
    fn query_terms(&self, text: &str) -> Vec<String>;
    /// (sections containing `term`, all sections).
    fn doc_freq(&self, term: &str) -> (u64, u64);
    /// Sections under a folder of the brain.
    fn folder_sections(&self, folder: &str) -> u64;
    /// The best `limit` passages for analyzed `terms`.
    fn search_sections(
        &self,
        terms: &[String],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error>;
    /// The best `limit` passages to answer `question` from: by BM25 over its
    /// analyzed `terms`, fused with the passages nearest to it in meaning
    /// when the semantic model is loaded. A passage's `score` is its BM25
    /// score (0 for one found by meaning alone).
    fn sections_by_meaning(
        &self,
        question: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error>;
    /// Whether [`Corpus::sections_by_meaning`] reads by meaning (the
    /// semantic model is loaded).
    fn reads_meaning(&self) -> bool;
    /// Up to `limit` sections of notes of a kind (e.g. `project-context`).
    fn sections_of_kind(&self, kind: &'static str, limit: usize) -> Result<Vec<SectionHit>, Error>;
}

impl Corpus for Index {
    fn brain(&self) -> &Path {
        Index::brain(self)
    }
    fn query_terms(&self, text: &str) -> Vec<String> {
        Index::query_terms(self, text)
    }
    fn doc_freq(&self, term: &str) -> (u64, u64) {
        Index::doc_freq(self, term)
    }
    fn folder_sections(&self, folder: &str) -> u64 {
        Index::folder_sections(self, folder)
    }
    fn search_sections(
        &self,
        terms: &[String],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error> {
        Index::search_sections(self, terms, filter, limit)
    }
    fn sections_by_meaning(
        &self,
        question: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<SectionHit>, Error> {
        Index::sections_by_meaning(self, question, terms, limit)
    }
    fn reads_meaning(&self) -> bool {
        self.has_reranker()
    }
    fn sections_of_kind(&self, kind: &'static str, limit: usize) -> Result<Vec<SectionHit>, Error> {
        Index::sections_of_kind(self, kind, limit)
    }
}
