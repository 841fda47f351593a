//! The index schema: one tantivy document per passage of a note.

use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, STORED,
};

use super::analyzer::{ANALYZER_NAME, CHARS_ANALYZER_NAME};

/// Bumped whenever the schema, the analysis or what parsing stores changes;
/// an index of another version is rebuilt from the brain.
pub const SCHEMA_VERSION: u32 = 23;

/// Name of the fast field that numbers a passage's note.
pub const NOTE_FIELD: &str = "note";

/// Handles to the fields of [`build_schema`].
#[derive(Clone, Copy)]
pub struct Fields {
    /// Note path relative to the brain; the delete key of a note, and
    /// what the folder filter reads (the paths under a folder).
    pub path: Field,
    /// Note title and aliases.
    pub title: Field,
    /// Heading path of the passage.
    pub heading: Field,
    pub tags: Field,
    pub text: Field,
    /// The CJK characters of the title, heading and text that stand in runs
    /// (not stored): what a query of one such character finds.
    pub chars: Field,
    /// File modification time, seconds since the Unix epoch.
    pub modified: Field,
    /// The note's own date (`YYYY-MM-DD`), empty when it has none.
    pub created: Field,
    /// "note" or "project-context".
    pub kind: Field,
    /// Position of the passage in its note.
    pub ord: Field,
    /// A hash of the note's path, the same for all its passages: the fast
    /// field by which note-level ranking groups passages into notes.
    pub note: Field,
    /// 1 when the note says it no longer holds (stored only, and only then).
    pub stale: Field,
}

pub fn build_schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let analyzed = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER_NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
        .set_stored();
    // Exact values for filters and deletes: matched, never scored, so they
    // keep no field norms.
    let exact = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::Basic)
            .set_fieldnorms(false),
    );
    let chars = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(CHARS_ANALYZER_NAME)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path: builder.add_text_field("path", exact.clone() | STORED),
        title: builder.add_text_field("title", analyzed.clone()),
        heading: builder.add_text_field("heading", analyzed.clone()),
        tags: builder.add_text_field("tags", exact.clone() | STORED),
        text: builder.add_text_field("text", analyzed),
        chars: builder.add_text_field("chars", chars),
        modified: builder.add_i64_field("modified", STORED),
        created: builder.add_text_field("created", STORED),
        kind: builder.add_text_field("kind", exact | STORED),
        ord: builder.add_u64_field("ord", STORED),
        note: builder.add_u64_field(NOTE_FIELD, FAST),
        stale: builder.add_u64_field("stale", STORED),
    };
    (builder.build(), fields)
}
