//! Turning one markdown note into plain-text sections.
//!
//! Frontmatter is split off first and read with serde-saphyr; the body is
//! walked once with pulldown-cmark. Headings open sections named by their
//! heading path ("Setup › Database"); markdown syntax is dropped while link
//! text, wikilink text, code and callout text are kept. Long sections are cut
//! into passages of about a paragraph so that evidence can be precise even in a
//! note without headings.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use chrono::NaiveDate;
use pulldown_cmark::{Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};
use regex::Regex;
use serde_json::Value;

use super::html::{HtmlText, Piece};
use crate::text::CODE_LINE_BREAK;

/// Separator between the parts of a heading path.
pub const HEADING_SEPARATOR: &str = " › ";

/// A passage grows to about this many characters before a new one starts.
const PASSAGE_TARGET_CHARS: usize = 900;

/// A single block longer than this is cut at sentence boundaries.
const PASSAGE_MAX_CHARS: usize = 1500;

/// What a note is for, as declared by its frontmatter `noggin:` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoteKind {
    #[default]
    Plain,
    /// `noggin: project-context`: first source of evidence for research.
    ProjectContext,
}

impl NoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Plain => "note",
            NoteKind::ProjectContext => "project-context",
        }
    }
}

/// A parsed note: metadata and its passages in document order.
#[derive(Debug, Clone, Default)]
pub struct Note {
    /// Path relative to the brain, with `/` separators.
    pub path: String,
    pub title: String,
    pub aliases: Vec<String>,
    /// Lower-cased, without `#`, frontmatter and inline tags together.
    pub tags: Vec<String>,
    /// Frontmatter `date`/`created`, else a `YYYY-MM-DD` prefix of the file name.
    pub created: Option<NaiveDate>,
    pub kind: NoteKind,
    /// The note says it no longer holds (frontmatter `status: superseded`,
    /// `deprecated`, `obsolete`, `outdated`, `archived`): still searched,
    /// never answered from.
    pub stale: bool,
    /// Its frontmatter could not be read, so its properties are unknown (a
    /// warning said why).
    pub frontmatter_unread: bool,
    pub sections: Vec<Section>,
}

/// One passage of a note under its heading path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Heading path such as "Setup › Database"; empty before the first heading.
    pub heading: String,
    pub text: String,
}

/// What follows a callout's title in a passage: a blank line, which no other
/// line of a passage has after it.
pub const CALLOUT_TITLE_END: &str = "\n\n";

/// What marks struck-through text in a passage (`~~gone~~`), as markdown
/// writes it.
pub const STRUCK: &str = "~~";

/// Options used for every markdown parse in noggin, so the index and the
/// rendered notes agree on what the syntax means.
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
}

/// Splits a leading YAML frontmatter block (`---` … `---` or `...`) off `src`.
pub fn split_frontmatter(src: &str) -> (Option<&str>, &str) {
    let Some(rest) = src
        .strip_prefix("---\n")
        .or_else(|| src.strip_prefix("---\r\n"))
    else {
        return (None, src);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, src)
}

/// `text` in Unicode's composed form (NFC), as most editors write it:
/// macOS names files, and some editors save text, decomposed (NFD), where
/// a Korean syllable is three letters, so "정리" would not find "정리" written
/// the other way. Borrowed when it is composed already (all ASCII text is).
pub fn nfc(text: &str) -> Cow<'_, str> {
    use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
    // Every note is read through here: only text with the first byte of a
    // combining accent (U+0300–U+037F), a Hangul letter or another mark
    // of U+1000–U+1FFF, or kana's voicing marks (U+3099) is looked at
    // closely.
    // Looked for a few dozen bytes at a time: a check of every byte of a
    // run without stopping at the first is one the compiler makes in
    // vector instructions.
    let may_compose = |line: &str| {
        line.as_bytes().chunks(64).any(|run| {
            run.iter().fold(false, |found, &b| {
                found | matches!(b, 0xCC | 0xCD | 0xE1 | 0xE3)
            })
        })
    };
    if !may_compose(text) {
        return Cow::Borrowed(text);
    }
    // Nothing composes across a line break (a starter that composes with
    // nothing), so only the lines that may change are normalized: a long
    // note with one decomposed word is not rebuilt a character at a time.
    let mut composed: Option<String> = None;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        if may_compose(line) && is_nfc_quick(line.chars()) != IsNormalized::Yes {
            let out = composed.get_or_insert_with(|| {
                let mut out = String::with_capacity(text.len());
                out.push_str(&text[..start]);
                out
            });
            out.extend(line.nfc());
        } else if let Some(out) = composed.as_mut() {
            out.push_str(line);
        }
        start = end;
    }
    composed.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// How a passage's text starts a task item, open or done, as Obsidian
/// shows its box.
pub const OPEN_TASK: &str = "[ ] ";
const DONE_TASK: &str = "[x] ";

/// Obsidian's comment marks: `%%hidden%%` inline, or around whole lines.
pub const COMMENT: &str = "%%";

/// The body without its Obsidian comments (`%%…%%`, within a line or
/// across lines; one left open hides the rest of the note, as in Obsidian),
/// which Obsidian never shows: they are not searched, quoted or rendered.
/// Marks inside code (fenced blocks, inline code) are text. The newlines of
/// a comment stay, so the blocks around it stay apart.
pub fn strip_comments(body: &str) -> Cow<'_, str> {
    if !body.contains(COMMENT) {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let mut in_comment = false;
    // The fence (its character and length) of the code block being read.
    let mut fence: Option<(u8, usize)> = None;
    for line in body.split_inclusive('\n') {
        let opener = line.trim_start();
        let run = |c: u8| opener.bytes().take_while(|&b| b == c).count();
        if !in_comment {
            let (ticks, tildes) = (run(b'`'), run(b'~'));
            let found = if ticks >= 3 {
                Some((b'`', ticks))
            } else if tildes >= 3 {
                Some((b'~', tildes))
            } else {
                None
            };
            match (fence, found) {
                (None, Some(f)) => {
                    fence = Some(f);
                    out.push_str(line);
                    continue;
                }
                (Some((c, n)), Some((fc, fnum))) if c == fc && fnum >= n => {
                    fence = None;
                    out.push_str(line);
                    continue;
                }
                (Some(_), _) => {
                    out.push_str(line);
                    continue;
                }
                (None, None) => {}
            }
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        // The length of the backtick run that opened the code span being read.
        let mut code_span: Option<usize> = None;
        while i < bytes.len() {
            if in_comment {
                match line[i..].find(COMMENT) {
                    Some(at) => {
                        i += at + COMMENT.len();
                        in_comment = false;
                    }
                    None => {
                        if line.ends_with('\n') {
                            out.push('\n');
                        }
                        i = bytes.len();
                    }
                }
                continue;
            }
            match bytes[i] {
                b'`' => {
                    let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                    code_span = match code_span {
                        None if line[i + n..].contains(&line[i..i + n]) => Some(n),
                        Some(open) if open == n => None,
                        other => other,
                    };
                    out.push_str(&line[i..i + n]);
                    i += n;
                }
                b'%' if code_span.is_none() && line[i..].starts_with(COMMENT) => {
                    in_comment = true;
                    i += COMMENT.len();
                }
                _ => {
                    // Both marks are ASCII, so never inside a character.
                    let next = bytes[i + 1..]
                        .iter()
                        .position(|&b| b == b'`' || b == b'%')
                        .map_or(bytes.len(), |at| i + 1 + at);
                    out.push_str(&line[i..next]);
                    i = next;
                }
            }
        }
    }
    Cow::Owned(out)
}

/// How user text writes a `%` that would start a comment mark: a markdown
/// character reference, shown and indexed as `%`, never a comment.
pub const ESCAPED_PERCENT: &str = "&#37;";

/// `text` (lines without code fences: the knowledge notes escape those)
/// with every `%` that starts a comment mark outside inline code written
/// [`ESCAPED_PERCENT`], so that no `%%` of it hides the rest of the note.
pub fn escape_comment_marks(text: &str) -> Cow<'_, str> {
    if !text.contains(COMMENT) {
        return Cow::Borrowed(text);
    }
    map_outside_code(text, |piece, out| {
        let mut chars = piece.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '%' && chars.peek() == Some(&'%') {
                out.push_str(ESCAPED_PERCENT);
            } else {
                out.push(c);
            }
        }
    })
}

/// Reads back [`escape_comment_marks`]: [`ESCAPED_PERCENT`] outside inline
/// code is a `%`, as markdown shows it.
pub fn unescape_comment_marks(text: &str) -> Cow<'_, str> {
    if !text.contains(ESCAPED_PERCENT) {
        return Cow::Borrowed(text);
    }
    map_outside_code(text, |piece, out| {
        out.push_str(&piece.replace(ESCAPED_PERCENT, "%"));
    })
}

/// `text` with `f` applied to what lies outside inline code spans (read as
/// [`strip_comments`] reads them: a backtick run opens a span when the same
/// run follows on its line).
fn map_outside_code(text: &str, mut f: impl FnMut(&str, &mut String)) -> Cow<'static, str> {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let bytes = line.as_bytes();
        let mut code_span: Option<usize> = None;
        let mut plain_from = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            match code_span {
                None if line[i + n..].contains(&line[i..i + n]) => {
                    f(&line[plain_from..i], &mut out);
                    code_span = Some(n);
                    plain_from = i;
                }
                Some(open) if open == n => {
                    out.push_str(&line[plain_from..i + n]);
                    code_span = None;
                    plain_from = i + n;
                }
                _ => {}
            }
            i += n;
        }
        match code_span {
            Some(_) => out.push_str(&line[plain_from..]),
            None => f(&line[plain_from..], &mut out),
        }
    }
    Cow::Owned(out)
}

/// Parses a note's source text; `path` is its path relative to the brain.
pub fn parse_note(path: &str, src: &str) -> Note {
    let src = nfc(src.strip_prefix('\u{feff}').unwrap_or(src));
    // A terminal's escape sequences (colours pasted with a log) are no
    // words of the note: searched, quoted and answered without them.
    let src = if src.as_bytes().contains(&0x1b) {
        Cow::Owned(crate::text::plain_text(&src).into_owned())
    } else {
        src
    };
    let src = src.as_ref();
    let (frontmatter, body) = split_frontmatter(src);
    let (meta, frontmatter_unread) = match frontmatter.map(read_frontmatter) {
        Some(Ok(meta)) => (meta, false),
        Some(Err(why)) => {
            // Its title, tags and aliases are lost: said, with the note.
            tracing::warn!(path, %why, "the note's frontmatter cannot be read; its title, tags and aliases are not");
            (Frontmatter::default(), true)
        }
        None => (Frontmatter::default(), false),
    };
    let walked = walk_body(&strip_comments(body));

    let file_stem = nfc(file_stem(path));
    let file_stem = file_stem.as_ref();
    let title = meta
        .title
        .clone()
        .or_else(|| walked.first_h1.clone())
        .unwrap_or_else(|| file_stem.to_string());
    let mut tags: BTreeSet<String> = meta.tags.iter().cloned().collect();
    tags.extend(walked.inline_tags);

    let drop_h1 = meta.title.is_none() && walked.first_h1.is_some();
    let mut sections = Vec::new();
    for raw in walked.sections {
        let heading_parts: Vec<&str> = raw
            .headings
            .iter()
            .filter(|(level, text)| !(drop_h1 && *level == 1 && *text == title))
            .map(|(_, text)| text.as_str())
            .collect();
        let heading = heading_parts.join(HEADING_SEPARATOR);
        let passages = split_passages(&raw.blocks);
        if passages.is_empty() {
            if !heading.is_empty() {
                sections.push(Section {
                    heading,
                    text: String::new(),
                });
            }
            continue;
        }
        for text in passages {
            sections.push(Section {
                heading: heading.clone(),
                text,
            });
        }
    }
    // A note of a title alone (a heading, frontmatter, or only its file
    // name) is still a note: one empty passage carries its title, aliases
    // and tags into the index, where a search for them finds it.
    if sections.is_empty() {
        sections.push(Section {
            heading: String::new(),
            text: String::new(),
        });
    }

    Note {
        path: path.to_string(),
        title,
        aliases: meta.aliases,
        tags: tags.into_iter().collect(),
        created: meta.created.or_else(|| date_prefix(file_stem)),
        kind: meta.kind,
        stale: meta.stale,
        frontmatter_unread,
        sections,
    }
}

/// A note's file name without its folder and its extension.
pub fn file_stem(path: &str) -> &str {
    super::scan::without_extension(path.rsplit('/').next().unwrap_or(path))
}

/// Reads a `YYYY-MM-DD` date at the start of `text`.
pub fn date_prefix(text: &str) -> Option<NaiveDate> {
    let head = text.get(..10)?;
    NaiveDate::parse_from_str(head, "%Y-%m-%d").ok()
}

/// A date as notes' properties write it: `2024-03-05` (with a time or not,
/// `2024-3-5`, or a link to a daily note, `[[2024-03-05]]`), `2024/03/05`,
/// `2024.03.05`, `March 5, 2024`, `Mar 5, 2024` or `5 March 2024`. A date with the day and month both in numbers but not the year
/// first (`05/03/2024`) is read either way round in the world: not read.
fn frontmatter_date(text: &str) -> Option<NaiveDate> {
    // A daily note's link (`[[2024-03-05]]`) names its date.
    let text = text
        .trim()
        .strip_prefix("[[")
        .and_then(|t| t.strip_suffix("]]"))
        .unwrap_or(text)
        .trim();
    date_prefix(text)
        .or_else(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .or_else(|| {
            let head = text.get(..10)?;
            ["%Y/%m/%d", "%Y.%m.%d"]
                .iter()
                .find_map(|format| NaiveDate::parse_from_str(head, format).ok())
        })
        .or_else(|| {
            ["%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y"]
                .iter()
                .find_map(|format| NaiveDate::parse_from_str(text, format).ok())
        })
}

#[derive(Default)]
struct Frontmatter {
    title: Option<String>,
    aliases: Vec<String>,
    tags: Vec<String>,
    created: Option<NaiveDate>,
    kind: NoteKind,
    stale: bool,
}

/// Whether a note's frontmatter says it no longer holds ([`Note::stale`]),
/// read without parsing the rest of the note.
pub fn says_stale(src: &str) -> bool {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    split_frontmatter(src)
        .0
        .and_then(|yaml| read_frontmatter(yaml).ok())
        .is_some_and(|meta| meta.stale)
}

/// Values of a note's `status` that say it no longer holds.
const STALE_STATUSES: &[&str] = &[
    "superseded",
    "deprecated",
    "obsolete",
    "outdated",
    "archived",
    "replaced",
    "retired",
];

/// The note's properties; `Err` with why when its frontmatter is no YAML
/// mapping (a `title: a: b`, a key given twice).
fn read_frontmatter(yaml: &str) -> Result<Frontmatter, String> {
    let value: Value = serde_saphyr::from_str(yaml).map_err(|error| error.to_string())?;
    let map = match value {
        Value::Object(map) => map,
        // An empty block (`---\n---`) holds no properties and is no mistake.
        Value::Null => return Ok(Frontmatter::default()),
        _ => return Err("it is not a list of properties".to_string()),
    };
    let string = |key: &str| map.get(key).and_then(scalar_string);
    Ok(Frontmatter {
        title: string("title")
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty()),
        // An alias may have spaces ("aliases: Payments Owner"); a tag cannot.
        aliases: map
            .get("aliases")
            .map(|v| string_list(v, &[',']))
            .unwrap_or_default(),
        tags: map
            .get("tags")
            .map(|v| string_list(v, &[',', ' ']))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|t| normalize_tag(&t))
            .collect(),
        // The first of the two keys that holds a date.
        created: ["date", "created"]
            .iter()
            .find_map(|key| string(key).and_then(|d| frontmatter_date(d.trim()))),
        kind: match string("noggin").as_deref() {
            Some("project-context") => NoteKind::ProjectContext,
            _ => NoteKind::Plain,
        },
        // `status: superseded by ADR-9`, `Status: Deprecated.`: the first
        // word of a value says it.
        stale: map
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case("status"))
            .flat_map(|(_, v)| string_list(v, &[',']))
            .any(|status| {
                let first = status.split_whitespace().next().unwrap_or("");
                let word = first
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                STALE_STATUSES.contains(&word.as_str())
            }),
    })
}

fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A YAML list of scalars, or one string of items separated by any of
/// `separators`.
fn string_list(value: &Value, separators: &[char]) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(scalar_string)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Value::String(s) => s
            .split(separators)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Lower-cases a tag and strips its `#`; `None` for an empty tag.
pub fn normalize_tag(tag: &str) -> Option<String> {
    let tag = tag.trim().trim_start_matches('#').trim_matches('/');
    (!tag.is_empty()).then(|| tag.to_lowercase())
}

struct RawSection {
    headings: Vec<(u8, String)>,
    blocks: Vec<String>,
}

#[derive(Default)]
struct Walked {
    first_h1: Option<String>,
    inline_tags: BTreeSet<String>,
    sections: Vec<RawSection>,
}

static INLINE_TAG: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"(?:^|[\s(\[,])#([\p{L}\p{N}_/-]*[\p{L}_][\p{L}\p{N}_/-]*)").unwrap()
});

/// A heading's id written after it, which renders as nothing: Pandoc's,
/// Hugo's and Docusaurus' `{#custom-id}` (with classes), MDX's comment
/// `{/*custom-id*/}` (its stars read as emphasis by then).
static HEADING_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s*\{(?:#[\w-]+(?:\s+[.#][\w-]+)*|/\*?[^{}]*?\*?/)\}\s*$").expect("static regex")
});

/// Where a heading's id written after it begins in the heading's text
/// (with the space before it), if it has one.
pub fn heading_id_start(heading: &str) -> Option<usize> {
    HEADING_ID.find(heading).map(|m| m.start())
}

/// A definition's line under its term ("Dunning\n: The process of …"), as
/// Markdown Extra and pandoc write them: read as "Dunning: The process …".
static DEFINITION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"\n[ \t]*:[ \t]+").unwrap()
});

static CALLOUT_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"\[!([A-Za-z][\w-]*)\][+-]?\s*").unwrap()
});

/// `text` with the matches of `pattern` replaced by `with`, looked for
/// only when `marker`, which every match holds, is in it: most text has
/// none, and is borrowed as it is.
pub fn replace_marked<'a>(
    text: &'a str,
    marker: &str,
    pattern: &Regex,
    with: &str,
) -> Cow<'a, str> {
    if text.contains(marker) {
        pattern.replace_all(text, with)
    } else {
        Cow::Borrowed(text)
    }
}

/// An embed's size (`![[diagram.png|400]]`, `|640x480`): not text.
static EMBED_SIZE: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"^\s*\d+(?:x\d+)?\s*$").unwrap()
});

/// Obsidian's highlight, `==text==`: the text, without its marks.
pub static HIGHLIGHT: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"==([^\s=](?:[^=]*[^\s=])?)==").unwrap()
});

/// A block id at the end of a line (`… ^mon1`), which renders as nothing.
pub static BLOCK_ID: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"(?m)[ \t]+\^[A-Za-z0-9-]+[ \t]*$").unwrap()
});

/// How Obsidian shows a wikilink without an alias: `[[Runbook#Rollback]]`
/// as "Runbook > Rollback", a link to a block (`#^id`) as its note alone.
pub fn wikilink_text(target: &str) -> String {
    let (note, heading) = target.split_once('#').unwrap_or((target, ""));
    let headings = heading
        .split('#')
        .map(str::trim)
        .filter(|h| !h.is_empty() && !h.starts_with('^'));
    let mut shown: Vec<&str> = Vec::new();
    if !note.trim().is_empty() {
        shown.push(note.trim());
    }
    shown.extend(headings);
    shown.join(" > ")
}

/// True when an embed's alias is its size, not words to show.
pub fn is_embed_size(text: &str) -> bool {
    EMBED_SIZE.is_match(text)
}

fn heading_level(level: HeadingLevel) -> u8 {
    level as u8
}

fn walk_body(body: &str) -> Walked {
    let mut walked = Walked::default();
    let mut headings: Vec<(u8, String)> = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    let mut block = String::new();
    let mut heading: Option<(u8, String)> = None;
    let mut code_depth = 0usize;
    // The state of the HTML block being read (a tag may span its lines).
    let mut html_block = HtmlText::default();
    // The wikilink being read: whether it has an alias, its target, its text.
    let mut wikilink: Option<(bool, String, String)> = None;

    let flush_block = |block: &mut String, blocks: &mut Vec<String>| {
        let push = |blocks: &mut Vec<String>, text: &str| {
            let text = replace_marked(text, "\n:", &DEFINITION_LINE, ": ");
            let text = replace_marked(&text, "^", &BLOCK_ID, "");
            let text = replace_marked(&text, "[!", &CALLOUT_MARKER, "");
            let text = text.as_ref();
            let before = blocks.len();
            if one_fact_a_line(text) {
                blocks.extend(
                    text.lines()
                        .map(collapse_whitespace)
                        .filter(|l| !l.is_empty()),
                );
            } else {
                let text = collapse_whitespace(text);
                if !text.is_empty() {
                    blocks.push(text);
                }
            }
            blocks.len() > before
        };
        // A callout's title ("> [!important] Deploy windows") is a line of
        // its own, not the start of the callout's first sentence.
        let marker = block
            .contains("[!")
            .then(|| CALLOUT_MARKER.find(block))
            .flatten();
        match marker {
            Some(marker) if block[..marker.start()].trim().is_empty() => {
                // The title is the rest of the marker's own line (the
                // marker's trailing whitespace may run past the line's end).
                let rest = &block[marker.start()..];
                let (title, body) = rest.split_once('\n').unwrap_or((rest, ""));
                let titled = push(blocks, title);
                let title_block = blocks.len().saturating_sub(1);
                // A blank line after a titled callout's title: the one
                // place a passage has one, so research can tell the title
                // from the callout's text (`CALLOUT_TITLE_END`).
                if push(blocks, body) && titled {
                    blocks[title_block].push('\n');
                }
            }
            _ => {
                push(blocks, block);
            }
        }
        block.clear();
    };

    for (event, range) in Parser::new_ext(body, markdown_options()).into_offset_iter() {
        // Text outside code, where highlights and tags are markup.
        let prose = code_depth == 0 && matches!(event, Event::Text(_));
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                flush_block(&mut block, &mut blocks);
                heading = Some((heading_level(level), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                let Some((level, text)) = heading.take() else {
                    continue;
                };
                // A heading's id and a block id at its end render as nothing.
                let text = HEADING_ID.replace(&text, "");
                let text = collapse_whitespace(BLOCK_ID.replace(&text, "").as_ref());
                walked.sections.push(RawSection {
                    headings: headings.clone(),
                    blocks: std::mem::take(&mut blocks),
                });
                if level == 1 && walked.first_h1.is_none() && !text.is_empty() {
                    walked.first_h1 = Some(text.clone());
                }
                headings.retain(|(l, _)| *l < level);
                headings.push((level, text));
            }
            Event::Start(Tag::CodeBlock(_)) => {
                flush_block(&mut block, &mut blocks);
                code_depth += 1;
            }
            Event::End(TagEnd::CodeBlock) => {
                code_depth = code_depth.saturating_sub(1);
                let code = code_block_text(&block);
                if !code.is_empty() {
                    blocks.push(code);
                }
                block.clear();
            }
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::TableHead
                | TagEnd::TableRow
                | TagEnd::BlockQuote(_)
                | TagEnd::FootnoteDefinition,
            ) => flush_block(&mut block, &mut blocks),
            Event::End(TagEnd::HtmlBlock) => {
                html_block = HtmlText::default();
                flush_block(&mut block, &mut blocks);
            }
            Event::Start(Tag::Item) => flush_block(&mut block, &mut blocks),
            Event::End(TagEnd::TableCell) => block.push_str(" | "),
            Event::Html(_) | Event::InlineHtml(_) => {
                let pieces = match event {
                    Event::Html(html) => html_block.feed(&html),
                    Event::InlineHtml(html) => HtmlText::inline(&html),
                    _ => unreachable!("matched above"),
                };
                for piece in pieces {
                    match (piece, heading.as_mut()) {
                        (Piece::Text(text), Some((_, h))) => h.push_str(&text),
                        (Piece::Text(text), None) => block.push_str(&text),
                        (_, Some((_, h))) => h.push(' '),
                        (Piece::LineBreak, None) => block.push('\n'),
                        (Piece::Break, None) => flush_block(&mut block, &mut blocks),
                    }
                }
            }
            Event::Start(
                Tag::Link {
                    link_type: LinkType::WikiLink { has_pothole },
                    dest_url,
                    ..
                }
                | Tag::Image {
                    link_type: LinkType::WikiLink { has_pothole },
                    dest_url,
                    ..
                },
            ) => wikilink = Some((has_pothole, dest_url.to_string(), String::new())),
            Event::End(TagEnd::Link | TagEnd::Image) if wikilink.is_some() => {
                let Some((aliased, target, text)) = wikilink.take() else {
                    continue;
                };
                let shown = if aliased && !is_embed_size(&text) {
                    text
                } else {
                    wikilink_text(&target)
                };
                match heading.as_mut() {
                    Some((_, h)) => h.push_str(&shown),
                    None => block.push_str(&shown),
                }
            }
            Event::Text(text) | Event::Code(text) if wikilink.is_some() => {
                if let Some((_, _, shown)) = wikilink.as_mut() {
                    shown.push_str(&text);
                }
            }
            Event::Text(text) | Event::Code(text) => {
                let target = match heading.as_mut() {
                    Some((_, h)) => h,
                    None => &mut block,
                };
                let highlighted;
                let text = if prose {
                    highlighted = replace_marked(&text, "==", &HIGHLIGHT, "$1");
                    highlighted.as_ref()
                } else {
                    text.as_ref()
                };
                // Tags are words of prose, not of code (`#codetag`); an
                // escaped `\#word` is text (its text starts right after the
                // `\`).
                if prose && text.contains('#') {
                    // (An odd run of `\` before it: in `\\#`, the `\` is escaped.)
                    let backslashes = body.as_bytes()[..range.start]
                        .iter()
                        .rev()
                        .take_while(|&&b| b == b'\\')
                        .count();
                    let escaped = backslashes % 2 == 1;
                    for cap in INLINE_TAG.captures_iter(text) {
                        if escaped && cap.get(0).is_some_and(|m| m.start() == 0) {
                            continue;
                        }
                        if let Some(tag) = normalize_tag(&cap[1]) {
                            walked.inline_tags.insert(tag);
                        }
                    }
                }
                target.push_str(text);
            }
            Event::SoftBreak | Event::HardBreak => match heading.as_mut() {
                Some((_, h)) => h.push(' '),
                None => block.push('\n'),
            },
            Event::TaskListMarker(done) => block.push_str(if done { DONE_TASK } else { OPEN_TASK }),
            // Struck-through text stays searchable, marked as struck: what a
            // note strikes out is no longer so (research never answers with
            // it).
            Event::Start(Tag::Strikethrough) | Event::End(TagEnd::Strikethrough)
                if heading.is_none() =>
            {
                block.push_str(STRUCK)
            }
            Event::Rule => flush_block(&mut block, &mut blocks),
            _ => {}
        }
    }
    flush_block(&mut block, &mut blocks);
    walked.sections.push(RawSection { headings, blocks });
    walked
}

/// A code block as one block of its passage: its lines as written (a
/// tab as four spaces, no trailing blanks, no blank lines at either end),
/// joined by [`CODE_LINE_BREAK`], so that a command or a config keeps its
/// lines where the passage's blocks are lines.
fn code_block_text(code: &str) -> String {
    let lines: Vec<String> = code
        .lines()
        .map(|line| {
            line.chars()
                .filter(|&c| c == '\t' || !c.is_control())
                .collect::<String>()
                .replace('\t', "    ")
                .trim_end()
                .to_string()
        })
        .collect();
    let first = lines.iter().position(|l| !l.is_empty());
    let last = lines.iter().rposition(|l| !l.is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join(&CODE_LINE_BREAK.to_string()),
        _ => String::new(),
    }
}

/// True for a paragraph of facts one a line, unpunctuated, as Obsidian
/// shows them (its line breaks are kept): "Production host is web-prod-3⏎
/// Staging host is web-stage-1". Each line after the first starts with a
/// capital and none ends like a sentence or a clause, which a paragraph
/// wrapped mid-sentence does not do ("… form, O⏎2 molecules"): its lines
/// are one text.
fn one_fact_a_line(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    let open = |line: &str| {
        !line.ends_with([
            '.', '!', '?', ',', ';', ':', '-', '(', '[', '"', '。', '！', '？', '，', '、',
        ])
    };
    // A line that ends on a word that needs what follows ("… is on")
    // breaks a sentence.
    let whole = |line: &str| {
        let last = line.rsplit(' ').next().unwrap_or(line).to_lowercase();
        !LEADING_WORDS.contains(&last.as_str())
    };
    let (mut before, mut more) = (first, false);
    for line in lines {
        let starts = line.chars().next().is_some_and(char::is_uppercase);
        if !starts || !open(line) || !open(before) || !whole(before) {
            return false;
        }
        (before, more) = (line, true);
    }
    more
}

/// Words a line broken mid-sentence ends on: they lean on the next line.
const LEADING_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "by", "from", "into", "onto",
    "over", "under", "and", "or", "nor", "but", "is", "are", "was", "were", "be", "been", "as",
    "that", "than", "which", "who", "whose", "where", "when", "if", "its", "their", "our", "your",
    "his", "her", "my", "this", "these", "those", "via", "per", "about", "after", "before",
];

/// Collapses runs of whitespace and control characters to single spaces.
fn collapse_whitespace(text: &str) -> String {
    let bytes = text.as_bytes();
    if single_separated(bytes) {
        // Most blocks: a line break is all there is to change.
        let spaced = bytes
            .iter()
            .map(|&b| if b == b'\n' { b' ' } else { b })
            .collect();
        return String::from_utf8(spaced).expect("printable ASCII stays UTF-8");
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Each word (a run of other characters) is copied whole; printable
    // ASCII (most of any note's bytes) is passed over by its byte, the rest
    // is judged by its character.
    let separates_at = |i: usize| -> Option<(bool, usize)> {
        let &byte = bytes.get(i)?;
        Some(if byte.is_ascii() {
            (byte <= b' ' || byte == 0x7f, 1)
        } else {
            let c = text[i..].chars().next().expect("i is at a character");
            (c.is_whitespace() || c.is_control(), c.len_utf8())
        })
    };
    loop {
        while let Some((true, len)) = separates_at(i) {
            i += len;
        }
        if i == bytes.len() {
            return out;
        }
        // Words joined by one ASCII space are copied in one piece.
        let start = i;
        loop {
            i += bytes[i..]
                .iter()
                .position(|&b| !(b'!'..=b'~').contains(&b))
                .unwrap_or(bytes.len() - i);
            if bytes.get(i) == Some(&b' ')
                && bytes.get(i + 1).is_some_and(|b| (b'!'..=b'~').contains(b))
            {
                i += 2;
                continue;
            }
            match separates_at(i) {
                Some((false, len)) => i += len,
                _ => break,
            }
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&text[start..i]);
    }
}

/// True when `bytes` are printable ASCII words, each two separated by one
/// space or one line break and nothing else: collapsing only turns the line
/// breaks into spaces. The folds do not stop early, so they run a block
/// at a time rather than a byte at a time.
fn single_separated(bytes: &[u8]) -> bool {
    let separator = |b: u8| b == b' ' || b == b'\n';
    match (bytes.first(), bytes.last()) {
        (None, _) | (_, None) => return true,
        (Some(&first), Some(&last)) if separator(first) || separator(last) => return false,
        _ => {}
    }
    let plain = bytes.iter().fold(true, |ok, &b| {
        ok & ((b' '..=b'~').contains(&b) | (b == b'\n'))
    });
    let doubled = bytes
        .iter()
        .zip(&bytes[1..])
        .fold(false, |doubled, (&a, &b)| {
            doubled | (separator(a) & separator(b))
        });
    plain && !doubled
}

/// Groups blocks into passages of about [`PASSAGE_TARGET_CHARS`]. A block
/// that opens what follows ("To search a pipe's input:", a list's lead-in)
/// stays in one passage with the next one while both fit in
/// [`PASSAGE_MAX_CHARS`]: the answer is the pair.
fn split_passages(blocks: &[String]) -> Vec<String> {
    let mut passages = Vec::new();
    // Each passage is made with room for what is left of the blocks, up to
    // the most characters a passage is let grow to before it ends (more
    // room would be held unused by the passages of a long note).
    let mut left: usize = blocks.iter().map(|b| b.len() + 1).sum();
    let room = |left: usize| left.min(PASSAGE_MAX_CHARS);
    let mut current = String::with_capacity(room(left));
    let mut current_chars = 0;
    let mut add = |piece: &str| {
        let piece_chars = piece.chars().count();
        let grown = current_chars + piece_chars;
        let opens_next = current.trim_end().ends_with([':', '：']);
        if current_chars > 0
            && grown > PASSAGE_TARGET_CHARS
            && !(opens_next && grown < PASSAGE_MAX_CHARS)
        {
            passages.push(std::mem::replace(
                &mut current,
                String::with_capacity(room(left)),
            ));
            current_chars = 0;
        }
        if current_chars > 0 {
            current.push('\n');
            current_chars += 1;
        }
        current.push_str(piece);
        current_chars += piece_chars;
        left = left.saturating_sub(piece.len() + 1);
    };
    for block in blocks {
        // Most blocks are short: the one piece `split_long_block` would
        // make of them, without making its list (no more bytes than the
        // limit is no more characters).
        if block.len() <= PASSAGE_MAX_CHARS {
            if !block.is_empty() {
                add(block);
            }
            continue;
        }
        for piece in split_long_block(block) {
            add(&piece);
        }
    }
    if !current.is_empty() {
        passages.push(current);
    }
    passages
}

/// Cuts a block longer than [`PASSAGE_MAX_CHARS`] after a code line, else
/// after sentence ends, else at spaces, else anywhere (a huge line without
/// spaces). Where a piece goes on in the next, both say so with [`CUT`],
/// so that nothing quoted from one reads as the whole.
fn split_long_block(block: &str) -> Vec<Cow<'_, str>> {
    let mut pieces: Vec<Cow<'_, str>> = Vec::new();
    let mut rest = block;
    // No more bytes than the limit is no more characters: not counted.
    while rest.len() > PASSAGE_MAX_CHARS && rest.chars().count() > PASSAGE_MAX_CHARS {
        let limit = rest
            .char_indices()
            .nth(PASSAGE_TARGET_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        let window = &rest[..limit];
        let cut = window
            .rfind(CODE_LINE_BREAK)
            .filter(|&i| i > limit / 2)
            .or_else(|| {
                window
                    .rmatch_indices(['.', '!', '?', '。', '！', '？'])
                    .map(|(i, m)| i + m.len())
                    .find(|&i| i > limit / 2)
            })
            .or_else(|| window.rfind(' ').filter(|&i| i > limit / 2))
            .unwrap_or(limit);
        pieces.push(Cow::Borrowed(rest[..cut].trim_end()));
        // The next code line keeps its indentation.
        rest = match rest[cut..].strip_prefix(CODE_LINE_BREAK) {
            Some(line) => line,
            None => rest[cut..].trim_start(),
        };
    }
    if !rest.is_empty() {
        pieces.push(Cow::Borrowed(rest));
    }
    let last = pieces.len().saturating_sub(1);
    for (i, piece) in pieces.iter_mut().enumerate() {
        match (i > 0, i < last) {
            (false, false) => {}
            (true, false) => *piece = Cow::Owned(format!("{CUT} {piece}")),
            (false, true) => *piece = Cow::Owned(format!("{piece} {CUT}")),
            (true, true) => *piece = Cow::Owned(format!("{CUT} {piece} {CUT}")),
        }
    }
    pieces
}

/// Marks where a block was cut between passages.
const CUT: char = '…';

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The byte-wise collapse is the plain definition: the words between
        /// whitespace and control characters, joined by single spaces.
        #[test]
        fn collapse_whitespace_joins_the_words(text in "[ a-zé\t\n\r\u{0}\u{7f}\u{85}\u{a0}\u{3000}두뇌]{0,40}") {
            let words: Vec<&str> = text
                .split(|c: char| c.is_whitespace() || c.is_control())
                .filter(|w| !w.is_empty())
                .collect();
            proptest::prop_assert_eq!(collapse_whitespace(&text), words.join(" "));
        }

        /// Composing line by line is composing the whole text: decomposed
        /// Hangul, accents (also at the start of a line, after a line break)
        /// and kana voicing marks, among composed lines.
        #[test]
        fn nfc_by_lines_is_nfc_of_the_whole(parts in proptest::collection::vec(
            "[a-z \n]{0,6}|정리|한국어|café|ガ|\u{301}|\u{3099}|\n\u{301}|\u{1100}\u{1161}", 0..12),
            decompose in proptest::collection::vec(proptest::bool::ANY, 12)) {
            use unicode_normalization::UnicodeNormalization;
            let text: String = parts
                .iter()
                .zip(&decompose)
                .map(|(part, &d)| if d { part.nfd().collect() } else { part.clone() })
                .collect();
            let whole: String = text.nfc().collect();
            let by_lines = nfc(&text);
            proptest::prop_assert_eq!(by_lines.as_ref(), whole.as_str());
        }

        /// The same for text made of what the shortcut for printable ASCII
        /// passes over: words, single and double spaces and line breaks.
        #[test]
        fn comments_go_and_the_rest_stays(text in "[ a-z%`~\n두뇌é]{0,60}") {
            let stripped = strip_comments(&text);
            // What is left is the text less some of it, lines kept.
            proptest::prop_assert!(stripped.len() <= text.len());
            proptest::prop_assert_eq!(stripped.matches('\n').count(), text.matches('\n').count());
            if !text.contains("%%") {
                proptest::prop_assert_eq!(stripped.as_ref(), text.as_str());
            }
        }

        #[test]
        fn collapse_whitespace_joins_ascii_words(text in "[ a-z~!\n]{0,40}") {
            let words: Vec<&str> = text.split([' ', '\n']).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(collapse_whitespace(&text), words.join(" "));
        }
    }

    #[test]
    fn frontmatter_is_split_off() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            ("---\ntitle: A\n---\nbody", Some("title: A\n"), "body"),
            (
                "---\r\ntitle: A\r\n---\r\nbody",
                Some("title: A\r\n"),
                "body",
            ),
            ("---\ntitle: A\n...\nbody", Some("title: A\n"), "body"),
            ("---\n---\nbody", Some(""), "body"),
            ("---\nno end", None, "---\nno end"),
            ("body\n---\nx: 1\n---\n", None, "body\n---\nx: 1\n---\n"),
            ("", None, ""),
        ];
        for (src, fm, body) in cases {
            assert_eq!(split_frontmatter(src), (*fm, *body), "src {src:?}");
        }
    }

    #[test]
    fn title_comes_from_frontmatter_then_h1_then_file_name() {
        let cases = [
            ("---\ntitle: From FM\n---\n# Heading\n", "From FM"),
            ("# The *H1*\n\ntext", "The H1"),
            ("text only", "file name"),
            ("---\ntitle: \"\"\n---\n# H\n", "H"),
        ];
        for (src, title) in cases {
            assert_eq!(parse_note("dir/file name.md", src).title, title, "{src:?}");
        }
    }

    #[test]
    fn frontmatter_fields_are_read() {
        let note = parse_note(
            "n.md",
            "---\ntags: [Rust, \"#Search\"]\naliases:\n  - Other name\ncreated: 2026-11-02\nnoggin: project-context\n---\nBody #inline-tag and #2026 not a tag.\n",
        );
        assert_eq!(note.tags, ["inline-tag", "rust", "search"]);
        assert_eq!(note.aliases, ["Other name"]);
        assert_eq!(note.created, NaiveDate::from_ymd_opt(2026, 11, 2));
        assert_eq!(note.kind, NoteKind::ProjectContext);
        let note = parse_note("n.md", "---\ntags: a, b\n---\n");
        assert_eq!(note.tags, ["a", "b"]);
        let note = parse_note(
            "n.md",
            "---\ntitle: >\n  Folded\n  title here\naliases: Payments Owner, Billing lead\ntags: x y\n---\n",
        );
        assert_eq!(note.title, "Folded title here");
        assert_eq!(note.aliases, ["Payments Owner", "Billing lead"]);
        assert_eq!(note.tags, ["x", "y"]);
    }

    #[test]
    fn broken_frontmatter_does_not_stop_parsing() {
        let note = parse_note("n.md", "---\ntitle: [unclosed\n---\n# Title\nBody text\n");
        assert_eq!(note.title, "Title");
        assert_eq!(note.sections[0].text, "Body text");
        // It is said, for the index's summary.
        assert!(note.frontmatter_unread);
        for unread in ["title: Broken: yes: no", "tags: [a]\ntags: [b]", "- a\n- b"] {
            let note = parse_note("n.md", &format!("---\n{unread}\n---\nx\n"));
            assert!(note.frontmatter_unread, "{unread}");
        }
        for read in ["title: Fine", ""] {
            let note = parse_note("n.md", &format!("---\n{read}\n---\nx\n"));
            assert!(!note.frontmatter_unread, "{read}");
        }
    }

    #[test]
    fn terminal_escapes_are_no_words_of_a_note() {
        let note = parse_note(
            "n.md",
            "# Printer\n\nThe printer name is \u{1b}[31mRED\u{1b}[0m printer \u{1b}]0;pwned\u{7}on floor 3.\n",
        );
        assert_eq!(
            note.sections[0].text,
            "The printer name is RED printer on floor 3."
        );
    }

    #[test]
    fn a_status_says_whether_a_note_still_holds() {
        let stale = |yaml: &str| parse_note("n.md", &format!("---\n{yaml}\n---\nx\n")).stale;
        for yaml in [
            "status: superseded",
            "status: superseded by ADR-9",
            "Status: Deprecated.",
            "status: [draft, Archived]",
            "status: \"#obsolete\"",
        ] {
            assert!(stale(yaml), "{yaml}");
        }
        for yaml in [
            "status: accepted",
            "status: draft",
            "state: superseded",
            "title: x",
        ] {
            assert!(!stale(yaml), "{yaml}");
        }
    }

    #[test]
    fn dates_are_read_as_notes_write_them() {
        let created = |yaml: &str| parse_note("n.md", &format!("---\n{yaml}\n---\nx\n")).created;
        let march_5 = NaiveDate::from_ymd_opt(2024, 3, 5);
        for yaml in [
            "date: 2024-03-05",
            "date: 2024-03-05T10:00:00Z",
            "date: 2024/03/05",
            "date: 2024.03.05",
            "date: March 5, 2024",
            "date: Mar 5, 2024",
            "date: 5 March 2024",
            "date: 2024-3-5",
            "date: \"[[2024-03-05]]\"",
            // A date that cannot be read leaves the other key to say it.
            "date: sometime in spring\ncreated: 2024-03-05",
        ] {
            assert_eq!(created(yaml), march_5, "{yaml}");
        }
        assert_eq!(created("date: 05/03/2024"), None);
    }

    #[test]
    fn date_comes_from_file_name_when_frontmatter_has_none() {
        let note = parse_note("Alignment Knowledge/2026-11-02 Add a fee.md", "x");
        assert_eq!(note.created, NaiveDate::from_ymd_opt(2026, 11, 2));
    }

    #[test]
    fn a_heading_id_is_not_part_of_the_heading() {
        let note = parse_note(
            "n.md",
            "# Guide {#guide}\n## Setup {#setup .wide}\nsetup text\n## 사용법 {/*usage*/}\nuse it\n## Sets {a}\nbraces stay\n## Heading with block ^hid1\nblock text\n",
        );
        let headings: Vec<&str> = note.sections.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(
            headings,
            ["Setup", "사용법", "Sets {a}", "Heading with block"]
        );
        assert_eq!(note.title, "Guide");
    }

    #[test]
    fn sections_carry_heading_paths() {
        let note = parse_note(
            "n.md",
            "# Guide\nintro\n## Setup\nsetup text\n### Database\ndb text\n## Usage\nuse it\n",
        );
        let got: Vec<(&str, &str)> = note
            .sections
            .iter()
            .map(|s| (s.heading.as_str(), s.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("", "intro"),
                ("Setup", "setup text"),
                ("Setup › Database", "db text"),
                ("Usage", "use it"),
            ]
        );
    }

    #[test]
    fn links_wikilinks_and_aliases_keep_their_text() {
        let note = parse_note(
            "n.md",
            "See [the docs](http://x.y), [[Architecture]], [[ADR-001 Postgres|our database decision]] and ![[diagram.png]].",
        );
        assert_eq!(
            note.sections[0].text,
            "See the docs, Architecture, our database decision and diagram.png."
        );
        // As Obsidian shows them: a heading after its note, a block link
        // as its note, an embed's size as nothing, highlights and block
        // ids without their marks, a tag in code as no tag.
        let note = parse_note(
            "n.md",
            "Follow [[Runbook#Rollback steps]], [[Runbook#^abc123]] and [[#Setup]]. \
             The diagram is ![[arch-v2.png|400]] and ![[map.png|640x480]]. \
             The host is ==kestrel-02== now, `a == b==c` stays. ^mon1\n\n\
             Run `#codetag` and tag #real, not \\#escaped.\n",
        );
        assert_eq!(
            note.sections[0].text,
            "Follow Runbook > Rollback steps, Runbook and Setup. \
             The diagram is arch-v2.png and map.png. \
             The host is kestrel-02 now, a == b==c stays.\n\
             Run #codetag and tag #real, not #escaped."
        );
        assert_eq!(note.tags, ["real"]);
    }

    #[test]
    fn callouts_code_and_tasks_are_kept_as_text() {
        let note = parse_note(
            "n.md",
            "> [!warning] Careful\n> Never deploy on Friday.\n\n```sh\nfly deploy\n```\n\n- [x] done item\n- [ ] open item\n",
        );
        let texts: Vec<&str> = note.sections[0].text.lines().collect();
        assert_eq!(
            texts,
            [
                "Careful",
                "",
                "Never deploy on Friday.",
                "fly deploy",
                "[x] done item",
                "[ ] open item"
            ]
        );
        // A code block is one block that keeps its lines and indentation.
        let note = parse_note(
            "n.md",
            "To deploy run:\n\n```bash\n\ncd /srv/app\ngit  pull\n\n```\n\n```yaml\nserver:\n\tport: 8080   \n```\n",
        );
        let texts: Vec<&str> = note.sections[0].text.split('\n').collect();
        assert_eq!(
            texts,
            [
                "To deploy run:",
                "cd /srv/app\u{2028}git  pull",
                "server:\u{2028}    port: 8080"
            ]
        );
    }

    #[test]
    fn unpunctuated_facts_keep_their_lines_wrapped_prose_does_not() {
        let cases = [
            (
                "Production host is web-prod-3\nStaging host is web-stage-1\nBackups run nightly at 2am\n",
                "Production host is web-prod-3\nStaging host is web-stage-1\nBackups run nightly at 2am",
            ),
            (
                "Harbor is a monolith: one Rust workspace, one\nPostgreSQL database.\n",
                "Harbor is a monolith: one Rust workspace, one PostgreSQL database.",
            ),
            (
                "The deploy window is on\nTuesday after the review\n",
                "The deploy window is on Tuesday after the review",
            ),
            ("We deploy\nwith a script\n", "We deploy with a script"),
            (
                "In the triplet form, O\n2 molecules are paramagnetic\n",
                "In the triplet form, O 2 molecules are paramagnetic",
            ),
            ("배포는 화요일\n점검은 목요일\n", "배포는 화요일 점검은 목요일"),
        ];
        for (src, expected) in cases {
            let note = parse_note("n.md", src);
            assert_eq!(note.sections[0].text, expected, "{src:?}");
        }
    }

    #[test]
    fn obsidian_comments_are_neither_text_nor_tags() {
        let cases = [
            (
                "The password is %%not shown%% public.",
                "The password is  public.",
            ),
            ("a %%one\ntwo%% b", "a \n b"),
            (
                "%%\nThe key is in the red envelope.\n%%\nShown.",
                "\n\n\nShown.",
            ),
            ("Open %%to the end\nof the note", "Open \n"),
            ("`50%%` and `%%` stay", "`50%%` and `%%` stay"),
            ("``a ` %%b%%`` c %%d%%", "``a ` %%b%%`` c "),
            ("```\n%%code%%\n```\n%%x%%y", "```\n%%code%%\n```\ny"),
            (
                "~~~~\n```\n%%code%%\n~~~~\n%%x%%",
                "~~~~\n```\n%%code%%\n~~~~\n",
            ),
            ("100% sure, 5% off", "100% sure, 5% off"),
        ];
        for (src, expected) in cases {
            assert_eq!(strip_comments(src), expected, "{src:?}");
        }
        let note = parse_note(
            "n.md",
            "# Plan %%draft%%\n\nShip it. %%#secret the key is hunter2%%\n\n%%\nHidden block #hiddentag\n\nstill hidden\n%%\n\nVisible #shown\n",
        );
        assert_eq!(note.title, "Plan");
        assert_eq!(note.tags, ["shown"]);
        let text: Vec<&str> = note.sections.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text, ["Ship it.\nVisible #shown"]);
    }

    #[test]
    fn struck_text_is_marked_and_definitions_join_their_term() {
        let note = parse_note(
            "n.md",
            "~~We will use RabbitMQ.~~ NATS replaced it.\n\nDunning\n: The process of retrying failed payments.\n",
        );
        let texts: Vec<&str> = note.sections[0].text.lines().collect();
        assert_eq!(
            texts,
            [
                "~~We will use RabbitMQ.~~ NATS replaced it.",
                "Dunning: The process of retrying failed payments."
            ]
        );
    }

    #[test]
    fn an_untitled_callout_keeps_its_body_together() {
        for source in [
            "> [!note]\n> Never deploy\n> on Friday.\n",
            "> [!note] \n> Never deploy\n> on Friday.\n",
        ] {
            let note = parse_note("n.md", source);
            assert_eq!(
                note.sections[0].text, "Never deploy on Friday.",
                "{source:?}"
            );
        }
    }

    #[test]
    fn html_gives_its_text_not_its_markup() {
        let note = parse_note(
            "n.md",
            "Beware <script>alert(1)</script> <b>here</b>, <kbd>Ctrl</kbd>+<kbd>P</kbd> <name>.",
        );
        assert_eq!(
            note.sections[0].text,
            "Beware <script>alert(1)</script> here, Ctrl+P <name>."
        );
        let note = parse_note("n.md", "<script>\nalert(1)\n</script>\n\nText.");
        assert_eq!(note.sections[0].text, "Text.");
        let src = "Intro.\n\n<dl>\n<dt class=\"option-term\"><code>--vcs</code> <em>vcs</em></dt>\n<dd class=\"option-desc\"><p>Defaults to <code>git</code>.\nSee <a href=\"x.html\">this</a>.</p>\n</dd>\n</dl>\n\nAfter.";
        let note = parse_note("n.md", src);
        let text = &note.sections[0].text;
        assert_eq!(
            text,
            "Intro.\n--vcs vcs\nDefaults to git. See this.\nAfter."
        );
    }

    #[test]
    fn long_sections_become_paragraph_sized_passages() {
        let paragraph = "This sentence has some words in it. ".repeat(15);
        let src = [paragraph.trim(); 6].join("\n\n");
        let note = parse_note("n.md", &src);
        assert!(note.sections.len() >= 3, "got {}", note.sections.len());
        for section in &note.sections {
            assert!(section.text.chars().count() <= PASSAGE_MAX_CHARS);
        }
        let huge = "x".repeat(10_000);
        let note = parse_note("n.md", &huge);
        assert!(note
            .sections
            .iter()
            .all(|s| s.text.chars().count() <= PASSAGE_MAX_CHARS));
        // Every x is kept, and each cut is marked on both sides.
        let text: String = note.sections.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text.matches('x').count(), 10_000);
        let cuts = note.sections.len() - 1;
        assert_eq!(text.matches(CUT).count(), 2 * cuts);
        // A long code block is cut between its lines.
        let lines: Vec<String> = (0..60)
            .map(|i| format!("  --flag-number-{i}=value{i} \\"))
            .collect();
        let note = parse_note(
            "n.md",
            &format!("```sh\nmigrate \\\n{}\n```\n", lines.join("\n")),
        );
        assert!(note.sections.len() >= 2, "{:?}", note.sections);
        let first = &note.sections[0].text;
        assert!(first.ends_with(&format!("\\ {CUT}")), "{first:?}");
        assert!(
            note.sections[1]
                .text
                .starts_with(&format!("{CUT}   --flag-number-")),
            "{:?}",
            note.sections[1].text
        );
        assert!(
            !first.contains(&format!("{CODE_LINE_BREAK} {CUT}")),
            "{first:?}"
        );
    }

    #[test]
    fn a_lead_in_stays_with_what_it_opens() {
        // Each list item is a block; the passage would reach its target
        // size with the lead-in "Search stdin for lines that do not match:"
        // and end there, leaving the command to the next passage.
        let filler = "Print lines that match patterns in files, one item of many. ".repeat(3);
        let mut src = String::new();
        for _ in 0..4 {
            src.push_str(&format!("- {}\n\n", filler.trim()));
        }
        src.push_str("- Search stdin for lines that do not match:\n\n");
        src.push_str(
            "`cat path/to/file | grep --invert-match --line-number --with-filename \
             --ignore-case --binary-files=without-match --color=always \"pattern\"`\n",
        );
        let note = parse_note("grep.md", &src);
        let lead_in = note
            .sections
            .iter()
            .find(|s| s.text.contains("do not match:"))
            .unwrap();
        assert!(
            lead_in.text.contains("--invert-match"),
            "{:?}",
            note.sections
        );
    }

    #[test]
    fn binary_and_empty_notes_parse() {
        let bytes = [0u8, 159, 146, 150, b'#', b' ', b'h', 0xff, b'\n', 1, 2, 3];
        let src = String::from_utf8_lossy(&bytes);
        let note = parse_note("bin.md", &src);
        assert_eq!(note.path, "bin.md");
        let note = parse_note("empty.md", "");
        assert_eq!(note.title, "empty");
        assert_eq!(
            note.sections,
            [Section {
                heading: String::new(),
                text: String::new()
            }]
        );
    }
}
