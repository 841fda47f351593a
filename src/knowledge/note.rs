//! The text of a knowledge note: rendering it, reading it back, appending.
//!
//! A knowledge note is ordinary markdown the user may edit:
//!
//! ```text
//! ---
//! created: 2026-11-22
//! tags: [alignment-knowledge]
//! ---
//! # <first 50 characters of the prompt>
//!
//! > Provided by the user while clarifying a request on 2026-11-22.
//!
//! ## Original request
//! <prompt>
//!
//! ## Confirmed information
//! ### Q. <question>
//! <answer>
//! ```
//!
//! User text must never forge structure. A line of an answer (or of the
//! prompt) that would open a heading (ATX or setext), a code fence, an HTML
//! block or a frontmatter fence gets a backslash before its first significant
//! character, also inside block quotes, list items and footnotes; a line that
//! already has backslashes there gets one more, so reading back removes exactly
//! one and gives the original text. A question that ends in `#`s (which
//! markdown would drop as a closing sequence) is escaped the same way. A `%`
//! that would start an Obsidian comment mark (`%%`, which hides the rest of
//! the note) outside inline code is written `&#37;`, which markdown shows as
//! `%`.
//!
//! Reading uses pulldown-cmark with the options the index uses, so a heading
//! here is a heading for [`crate::brain::parse_note`] too.

use std::ops::Range;

use chrono::NaiveDate;
use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use unicode_normalization::UnicodeNormalization;

use crate::brain::parse::{
    escape_comment_marks, markdown_options, split_frontmatter, unescape_comment_marks,
};

/// Characters of the prompt that make up the note's title.
pub const TITLE_CHARS: usize = 50;

/// Heading of the section that holds the prompt.
pub const REQUEST_HEADING: &str = "Original request";

/// The tag of every note of answers noggin writes.
pub const KNOWLEDGE_TAG: &str = "alignment-knowledge";

/// Heading of the section that holds the questions and answers.
pub const CONFIRMED_HEADING: &str = "Confirmed information";

/// Prefix of a question heading's text.
const QUESTION_PREFIX: &str = "Q.";

/// One question and the user's answer, as the note holds them (unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub question: String,
    pub answer: String,
}

impl Entry {
    /// True when both are the same answer to the same question: the texts
    /// the same up to whitespace, the questions also up to case and their
    /// closing punctuation ("who pays for hosting" is "Who pays for
    /// hosting?").
    pub fn same_as(&self, other: &Entry) -> bool {
        self.same_question(other) && comparable(&self.answer) == comparable(&other.answer)
    }

    fn same_question(&self, other: &Entry) -> bool {
        crate::context::state::same_question(&self.question, &other.question)
    }

    /// True when this entry, read from a note, holds `given`: the same
    /// question, and an answer that is `given`'s or starts with it. What the
    /// user wrote after an answer (more lines at the end of the note) reads
    /// as part of it, and the answer is still there.
    pub fn holds(&self, given: &Entry) -> bool {
        if !self.same_question(given) {
            return false;
        }
        let (held, answer) = (comparable(&self.answer), comparable(&given.answer));
        held.strip_prefix(answer.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    }
}

/// Text as it is compared: NFC, whitespace runs collapsed.
pub fn comparable(text: &str) -> String {
    let nfc: String = text.nfc().collect();
    nfc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cleans multi-line user text (a prompt or an answer): line endings become
/// `\n`, terminal escapes (an answer pasted from a coloured terminal) and
/// control characters other than newline and tab are dropped, leading
/// blank lines and trailing whitespace are trimmed.
pub fn clean_block(text: &str) -> String {
    let kept = crate::text::plain_text(text);
    let trimmed = kept.trim_end();
    let first_text = trimmed.find(|c: char| !c.is_whitespace()).unwrap_or(0);
    let line_start = trimmed[..first_text].rfind('\n').map_or(0, |i| i + 1);
    trimmed[line_start..].to_string()
}

/// The new note for `prompt` with its first entries. `prompt` and the
/// entries are already cleaned ([`clean_block`]).
pub fn render_note(date: NaiveDate, prompt: &str, entries: &[Entry]) -> String {
    let date = date.format("%Y-%m-%d");
    format!(
        "---\ncreated: {date}\ntags: [{KNOWLEDGE_TAG}]\n---\n# {title}\n\n\
         > Provided by the user while clarifying a request on {date}.\n\n\
         ## {REQUEST_HEADING}\n{request}\n\n## {CONFIRMED_HEADING}\n{entries}",
        title = escape_heading_text(&escape_comment_marks(&title(prompt))),
        request = escape_comment_marks(&escape_block(prompt)),
        entries = render_entries(entries),
    )
}

/// The note's title: the first [`TITLE_CHARS`] characters of the prompt on
/// one line.
pub fn title(prompt: &str) -> String {
    let one_line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    let head: String = one_line.chars().take(TITLE_CHARS).collect();
    head.trim_end().to_string()
}

/// `### Q. …` entries separated by blank lines, ending in a newline.
fn render_entries(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| {
            format!(
                "### {QUESTION_PREFIX} {}\n{}\n",
                escape_heading_text(&escape_comment_marks(&e.question)),
                escape_comment_marks(&escape_block(&e.answer))
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends entries to an existing note: at the end of its "Confirmed
/// information" section, or at the end of the file if the user removed that
/// heading. Every byte of `existing` is kept, in order.
pub fn append_entries(existing: &str, entries: &[Entry]) -> String {
    let doc = Document::read(existing);
    let confirmed = doc.section(2, CONFIRMED_HEADING);
    let (at, right_after_heading) = match &confirmed {
        Some(section) if existing[section.body.clone()].trim().is_empty() => {
            (section.body.start, true)
        }
        Some(section) => (section.body.end, false),
        None => (existing.len(), false),
    };
    let before = &existing[..at];
    let mut insert = String::new();
    if right_after_heading {
        if !before.is_empty() && !before.ends_with('\n') {
            insert.push('\n');
        }
    } else if !before.trim().is_empty() {
        let trailing = &before[before.trim_end().len()..];
        match trailing.matches('\n').count() {
            0 => insert.push_str("\n\n"),
            1 => insert.push('\n'),
            _ => {}
        }
    }
    insert.push_str(&render_entries(entries));
    if at < existing.len() {
        // A blank line before the heading that follows.
        insert.push('\n');
    }
    if existing.contains("\r\n") {
        insert = insert.replace('\n', "\r\n");
    }
    let mut out = String::with_capacity(existing.len() + insert.len());
    out.push_str(before);
    out.push_str(&insert);
    out.push_str(&existing[at..]);
    out
}

/// Every `### Q.` entry of a note, in order, unescaped.
pub fn read_entries(src: &str) -> Vec<Entry> {
    let doc = Document::read(src);
    let mut entries = Vec::new();
    for (i, heading) in doc.headings.iter().enumerate() {
        if heading.level != 3 {
            continue;
        }
        let line = &src[heading.lines.clone()];
        let text = if line.trim_start().starts_with('#') {
            atx_text(line)
        } else {
            heading.text.trim().to_string()
        };
        let Some(question) = text.strip_prefix(QUESTION_PREFIX) else {
            continue;
        };
        let end = doc
            .headings
            .get(i + 1)
            .map_or(src.len(), |next| next.lines.start);
        entries.push(Entry {
            question: unescape_comment_marks(question.trim()).into_owned(),
            answer: unescape_comment_marks(&unescape_block(&src[heading.lines.end..end]))
                .into_owned(),
        });
    }
    entries
}

/// The prompt kept under "Original request", unescaped; `None` if the user
/// removed that section.
pub fn read_request(src: &str) -> Option<String> {
    let doc = Document::read(src);
    doc.section(2, REQUEST_HEADING)
        .map(|section| unescape_comment_marks(&unescape_block(&src[section.body])).into_owned())
}

/// A heading of a note with the byte range of its source lines.
struct Heading {
    level: u8,
    /// Text as markdown renders it.
    text: String,
    /// From the start of its first line to just after its last newline.
    lines: Range<usize>,
}

/// A heading's section: from after the heading to the next heading of the
/// same or a higher level.
struct Section {
    body: Range<usize>,
}

/// The headings of a note, found the way the index finds them.
struct Document {
    headings: Vec<Heading>,
    len: usize,
}

impl Document {
    fn read(src: &str) -> Document {
        let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
        let (_, body) = split_frontmatter(&src[bom..]);
        let offset = src.len() - body.len();
        let mut headings = Vec::new();
        let mut open: Option<(u8, String, usize)> = None;
        for (event, range) in Parser::new_ext(body, markdown_options()).into_offset_iter() {
            match event {
                Event::Start(Tag::Heading { level, .. }) => {
                    open = Some((level as u8, String::new(), range.start));
                }
                Event::End(TagEnd::Heading(_)) => {
                    if let Some((level, text, start)) = open.take() {
                        let end = range.end.max(start + 1);
                        headings.push(Heading {
                            level,
                            text,
                            lines: line_span(src, offset + start, offset + end),
                        });
                    }
                }
                Event::Text(t) | Event::Code(t) => {
                    if let Some((_, text, _)) = open.as_mut() {
                        text.push_str(&t);
                    }
                }
                _ => {}
            }
        }
        Document {
            headings,
            len: src.len(),
        }
    }

    /// The first section whose heading has `level` and `name` (ignoring case
    /// and spacing).
    fn section(&self, level: u8, name: &str) -> Option<Section> {
        let wanted = comparable(name).to_lowercase();
        let i = self
            .headings
            .iter()
            .position(|h| h.level == level && comparable(&h.text).to_lowercase() == wanted)?;
        let start = self.headings[i].lines.end;
        let end = self.headings[i + 1..]
            .iter()
            .find(|h| h.level <= level)
            .map_or(self.len, |h| h.lines.start);
        Some(Section {
            body: start..end.max(start),
        })
    }
}

/// Widens `start..end` to whole lines, including the last line's newline.
fn line_span(src: &str, start: usize, end: usize) -> Range<usize> {
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let last = end.saturating_sub(1).max(start).min(src.len());
    let line_end = src[last..].find('\n').map_or(src.len(), |i| last + i + 1);
    line_start..line_end
}

/// The raw text of an ATX heading line: markers, closing sequence and our
/// escape of trailing `#`s removed.
fn atx_text(line: &str) -> String {
    let line = line.trim_end_matches(['\n', '\r']);
    let rest = line.trim_start().trim_start_matches('#');
    let mut text = rest.trim();
    // A closing sequence: `#`s at the end, preceded by whitespace.
    let without_hashes = text.trim_end_matches('#');
    if without_hashes.len() < text.len()
        && (without_hashes.is_empty() || without_hashes.ends_with([' ', '\t']))
    {
        text = without_hashes.trim_end();
    }
    unescape_heading_text(text)
}

/// Escapes a trailing run of `#`s that markdown would read as a closing
/// sequence.
pub fn escape_heading_text(text: &str) -> String {
    match trailing_hash_run(text) {
        Some(at) => format!("{}\\{}", &text[..at], &text[at..]),
        None => text.to_string(),
    }
}

fn unescape_heading_text(text: &str) -> String {
    match trailing_hash_run(text) {
        Some(at) if text[..at].ends_with('\\') => {
            format!("{}{}", &text[..at - 1], &text[at..])
        }
        _ => text.to_string(),
    }
}

/// Start of a trailing `#` run that follows whitespace (or nothing), possibly
/// with backslashes in between.
fn trailing_hash_run(text: &str) -> Option<usize> {
    let hashes_at = text.trim_end_matches('#').len();
    if hashes_at == text.len() {
        return None;
    }
    let before = text[..hashes_at].trim_end_matches('\\');
    (before.is_empty() || before.ends_with(char::is_whitespace)).then_some(hashes_at)
}

/// Escapes every line of a block of user text.
pub fn escape_block(text: &str) -> String {
    text.split('\n')
        .map(|line| match structure_at(line) {
            Some(at) => format!("{}\\{}", &line[..at], &line[at..]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads back a block written by [`escape_block`] (possibly surrounded by
/// blank lines or edited by the user).
fn unescape_block(raw: &str) -> String {
    let unescaped = raw
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            match structure_at(line) {
                Some(at) if line[at..].starts_with('\\') => {
                    format!("{}{}", &line[..at], &line[at + 1..])
                }
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    clean_block(&unescaped)
}

/// Where a line would start a structure-forging block, after any block quote
/// markers, list markers and footnote labels: the byte index to escape.
fn structure_at(line: &str) -> Option<usize> {
    let mut at = 0;
    loop {
        at += line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len();
        let rest = &line[at..];
        if forges_structure(rest.trim_start_matches('\\')) {
            return Some(at);
        }
        let container = if let Some(after) = rest.strip_prefix('>') {
            Some(rest.len() - after.len())
        } else {
            list_marker_len(rest).or_else(|| footnote_label_len(rest))
        };
        match container {
            Some(len) => at += len,
            None => return None,
        }
    }
}

/// True when a line (its indentation and containers removed) opens a heading,
/// a setext underline, a frontmatter fence, a code fence or an HTML block.
fn forges_structure(rest: &str) -> bool {
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        let after = &rest[hashes..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            return true;
        }
    }
    let bare = rest.trim_end();
    if !bare.is_empty() && (bare.chars().all(|c| c == '=') || bare.chars().all(|c| c == '-')) {
        return true;
    }
    rest.starts_with("```") || rest.starts_with("~~~") || rest.starts_with('<')
}

/// Length of a list marker (`-`, `+`, `*`, `1.`, `1)`) followed by a space,
/// a tab or the end of the line.
fn list_marker_len(rest: &str) -> Option<usize> {
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = if digits == 0 {
        rest.starts_with(['-', '+', '*']).then_some(1)?
    } else if digits <= 9 && rest[digits..].starts_with(['.', ')']) {
        digits + 1
    } else {
        return None;
    };
    let after = &rest[marker..];
    (after.is_empty() || after.starts_with([' ', '\t'])).then_some(marker)
}

/// Length of a footnote definition label `[^name]:`.
fn footnote_label_len(rest: &str) -> Option<usize> {
    let inner = rest.strip_prefix("[^")?;
    let close = inner.find("]:")?;
    (!inner[..close].contains(['[', ']'])).then_some(2 + close + 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::parse_note;

    fn date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 22).unwrap()
    }

    fn entry(q: &str, a: &str) -> Entry {
        Entry {
            question: q.to_string(),
            answer: a.to_string(),
        }
    }

    #[test]
    fn a_new_note_has_the_exact_format() {
        let note = render_note(
            date(),
            "Add a cancellation fee to transient bookings",
            &[
                entry(
                    "How much should the fee be?",
                    "A flat 15 percent of the total.",
                ),
                entry("When is it free?", "More than 7 days ahead.\nAlways."),
            ],
        );
        assert_eq!(
            note,
            "---\ncreated: 2026-11-22\ntags: [alignment-knowledge]\n---\n\
             # Add a cancellation fee to transient bookings\n\n\
             > Provided by the user while clarifying a request on 2026-11-22.\n\n\
             ## Original request\nAdd a cancellation fee to transient bookings\n\n\
             ## Confirmed information\n\
             ### Q. How much should the fee be?\nA flat 15 percent of the total.\n\n\
             ### Q. When is it free?\nMore than 7 days ahead.\nAlways.\n"
        );
        let parsed = parse_note("Alignment Knowledge/x.md", &note);
        assert_eq!(parsed.tags, ["alignment-knowledge"]);
        assert_eq!(parsed.created, Some(date()));
        assert_eq!(parsed.title, "Add a cancellation fee to transient bookings");
    }

    #[test]
    fn the_title_is_fifty_characters_on_one_line() {
        assert_eq!(title("a\nb   c"), "a b c");
        assert_eq!(title(&"가".repeat(80)).chars().count(), TITLE_CHARS);
    }

    #[test]
    fn blocks_are_cleaned() {
        let cases = [
            (
                "\n\n  indented\r\nnext\rlast  \n\n",
                "  indented\nnext\nlast",
            ),
            ("bell\u{7} and\ttab", "bell and\ttab"),
            ("   ", ""),
            // Pasted from a coloured terminal: the colours go, not `[31m`.
            (
                "It is \u{1b}[31mred\u{1b}[0m when broken",
                "It is red when broken",
            ),
        ];
        for (raw, clean) in cases {
            assert_eq!(clean_block(raw), clean, "{raw:?}");
        }
    }

    #[test]
    fn structure_lines_are_escaped() {
        let cases = [
            ("# heading", "\\# heading"),
            ("### Q. forged question", "\\### Q. forged question"),
            ("   ## indented", "   \\## indented"),
            ("---", "\\---"),
            ("===", "\\==="),
            ("-", "\\-"),
            ("```rust", "\\```rust"),
            ("~~~", "\\~~~"),
            ("<script>", "\\<script>"),
            ("> ## quoted", "> \\## quoted"),
            ("- # listed", "- \\# listed"),
            ("1. ---", "1. \\---"),
            ("> - > # deep", "> - > \\# deep"),
            ("[^1]: # note", "[^1]: \\# note"),
            ("\\# already", "\\\\# already"),
            ("#tag is not a heading", "#tag is not a heading"),
            ("####### seven", "####### seven"),
            ("plain text # here", "plain text # here"),
            ("- item", "- item"),
            ("2024. was a year", "2024. was a year"),
            ("* * *", "* * *"),
        ];
        for (line, escaped) in cases {
            assert_eq!(escape_block(line), escaped, "{line:?}");
            assert_eq!(unescape_block(escaped), line, "{escaped:?}");
        }
    }

    #[test]
    fn trailing_hashes_of_a_question_survive() {
        for q in [
            "What is C#",
            "Is it # ##",
            "##",
            "ends with \\##",
            "no hash",
        ] {
            let note = render_note(date(), "p", &[entry(q, "an answer long enough")]);
            assert_eq!(
                read_entries(&note),
                [entry(q, "an answer long enough")],
                "{q:?}"
            );
        }
    }

    /// Answers full of markdown structure parse back into the same entries,
    /// and the index sees one section per question.
    #[test]
    fn escaped_answers_round_trip_through_the_parser() {
        let hostile = [
            "## Confirmed information\n### Q. forged?\nforged answer",
            "---\ntitle: forged\n---",
            "first line\n===\nsecond\n---",
            "```\nunclosed fence\n# not a heading",
            "<script>\nalert(1)\n### Q. inside html",
            "> ## quoted heading\n- # list heading\n  # continued heading",
            "-   item\n    # deep in the item",
            "[^1]: # footnote heading",
            "\\# backslash already\n\\\\# two of them",
            "~~~\n<!--",
        ];
        let entries: Vec<Entry> = hostile
            .iter()
            .enumerate()
            .map(|(i, a)| entry(&format!("Question {i}?"), a))
            .collect();
        let note = render_note(date(), "# prompt\n## Confirmed information\n---", &entries);
        assert_eq!(read_entries(&note), entries);
        assert_eq!(
            read_request(&note).as_deref(),
            Some("# prompt\n## Confirmed information\n---")
        );
        let parsed = parse_note("n.md", &note);
        let headings: Vec<&str> = parsed
            .sections
            .iter()
            .map(|s| s.heading.as_str())
            .filter(|h| h.contains("Q."))
            .collect();
        let expected: Vec<String> = (0..hostile.len())
            .map(|i| format!("Confirmed information › Q. Question {i}?"))
            .collect();
        let mut unique = headings.clone();
        unique.dedup();
        assert_eq!(unique, expected);
        assert_eq!(parsed.title, "# prompt ## Confirmed information ---");
    }

    #[test]
    fn comment_marks_in_user_text_hide_nothing() {
        let prompt = "Set up the notes vault the way the team likes it, with %% comments";
        let entries = [
            entry(
                "What does %% do in notes?",
                "Start the comment with %% and it hides text.",
            ),
            entry(
                "Where is the staging database?",
                "stagingdbhost-7, and `50%%` in code stays",
            ),
        ];
        let note = render_note(date(), prompt, &entries);
        assert!(!note.replace("`50%%`", "").contains("%%"), "{note}");
        assert_eq!(read_entries(&note), entries);
        assert_eq!(read_request(&note).as_deref(), Some(prompt));
        let parsed = parse_note("n.md", &note);
        let text: String = parsed
            .sections
            .iter()
            .map(|s| format!("{} | {}\n", s.heading, s.text))
            .collect();
        assert!(
            text.contains(
                "Q. What does %% do in notes? | Start the comment with %% and it hides text."
            ),
            "{text}"
        );
        assert!(
            text.contains("stagingdbhost-7, and `50%%` in code stays")
                || text.contains("stagingdbhost-7, and 50%% in code stays"),
            "{text}"
        );
        let appended = append_entries(&note, &[entry("Is %% a comment?", "Yes, %% starts one.")]);
        assert_eq!(read_entries(&appended).len(), 3);
        assert!(parse_note("n.md", &appended)
            .sections
            .iter()
            .any(|s| s.text.contains("Yes, %% starts one.")));
    }

    /// Random lines built from markdown's structural pieces: whatever the
    /// answer, the note reads back into exactly the entries written.
    #[test]
    fn random_markdown_answers_round_trip() {
        let pieces = [
            "#", "##", "###", "Q.", " ", "  ", "    ", "\t", ">", "-", "+", "*", "1.", "2)", "=",
            "---", "```", "~~~", "<", "<div>", "<!--", "-->", "\\", "[^x]:", "text", "|",
            "[[link]]", "`", "%%", "%", "\n", "\n", "\n",
        ];
        const ROUNDS: usize = 2000;
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..ROUNDS {
            let len = 1 + next(14);
            let raw: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            let answer = clean_block(&format!("answer {round}\n{raw}"));
            let entries = [entry("first?", &answer), entry("second?", "plain answer")];
            let note = render_note(date(), "prompt", &entries);
            assert_eq!(
                read_entries(&note),
                entries,
                "answer {answer:?}\nnote:\n{note}"
            );
            let allowed = [
                "Original request",
                "Confirmed information",
                "Confirmed information › Q. first?",
                "Confirmed information › Q. second?",
            ];
            let sections = parse_note("n.md", &note).sections;
            // No comment mark of the answer hides what follows it.
            assert!(
                sections.iter().any(|s| s.text.contains("plain answer")),
                "answer {answer:?}\nnote:\n{note}"
            );
            for section in sections {
                assert!(
                    section.heading.is_empty() || allowed.contains(&section.heading.as_str()),
                    "forged heading {:?} from answer {answer:?}",
                    section.heading
                );
            }
            let appended = append_entries(&note, &[entry("third?", &answer)]);
            assert_eq!(read_entries(&appended).len(), 3, "note:\n{appended}");
        }
    }

    #[test]
    fn appending_keeps_every_byte_of_the_note() {
        let original = render_note(date(), "p", &[entry("one?", "first answer")]);
        let edited = original.replace("first answer", "first answer, edited by hand")
            + "\n## My own notes\nkeep this\n";
        let appended = append_entries(&edited, &[entry("two?", "second answer")]);
        assert_eq!(
            appended,
            edited.replace(
                "edited by hand\n\n## My own",
                "edited by hand\n\n### Q. two?\nsecond answer\n\n## My own"
            )
        );
        assert_eq!(
            read_entries(&appended),
            [
                entry("one?", "first answer, edited by hand"),
                entry("two?", "second answer")
            ]
        );
    }

    #[test]
    fn appending_without_the_section_goes_to_the_end() {
        let cases = [
            (
                "# Mine\nno trailing newline",
                "# Mine\nno trailing newline\n\n### Q. q?\na\n",
            ),
            ("# Mine\ntext\n", "# Mine\ntext\n\n### Q. q?\na\n"),
            ("# Mine\ntext\n\n\n", "# Mine\ntext\n\n\n### Q. q?\na\n"),
            ("", "### Q. q?\na\n"),
            (
                "## Confirmed information\n",
                "## Confirmed information\n### Q. q?\na\n",
            ),
            (
                "## Confirmed information\n## Next\n",
                "## Confirmed information\n### Q. q?\na\n\n## Next\n",
            ),
            ("a\r\nb\r\n", "a\r\nb\r\n\r\n### Q. q?\r\na\r\n"),
        ];
        for (existing, expected) in cases {
            assert_eq!(
                append_entries(existing, &[entry("q?", "a")]),
                expected,
                "{existing:?}"
            );
        }
    }

    #[test]
    fn entries_compare_up_to_whitespace() {
        assert!(entry("What  is it?", "A\nthing ").same_as(&entry("What is it?", "A thing")));
        assert!(!entry("What is it?", "A thing").same_as(&entry("What is it?", "Another")));
        assert!(
            entry("who pays for hosting", "Ops").same_as(&entry("Who pays for Hosting?", "Ops"))
        );
        assert!(!entry("Who pays?", "Ops").same_as(&entry("Who pays?", "ops")));
        // Lines the user added after an answer: the answer is still held.
        let grown = entry("What is it?", "A thing.\n\nUSERLINE 1\n");
        assert!(grown.holds(&entry("What is it?", "A thing.")));
        assert!(!grown.holds(&entry("What is it?", "A thin")));
        assert!(!grown.holds(&entry("What is this?", "A thing.")));
    }

    #[test]
    fn the_request_is_read_back() {
        let note = render_note(date(), "line one\n\n# line two", &[]);
        assert_eq!(
            read_request(&note).as_deref(),
            Some("line one\n\n# line two")
        );
        assert_eq!(read_request("# no sections\n"), None);
    }
}
