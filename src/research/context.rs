//! Phase 1: the project context.
//!
//! Project-context notes (frontmatter `noggin: project-context`, a file given
//! with `--project-context`, or text sent with the request) describe the
//! project as a whole. Their text is the first evidence for every question and
//! goes back to the caller, capped on a sentence boundary with a visible "…".

use std::path::Path;

use crate::brain::parse::parse_note;
use crate::index::{Corpus, Passage, SectionHit};

use super::sentences::sentence_spans;

/// Marks text that was cut.
pub const CUT_MARKER: &str = "…";

/// Where the project context of one request comes from.
pub enum ContextSource<'a> {
    /// Text sent with the request.
    Request(&'a str),
    /// A note file named on the command line.
    File(&'a Path),
    /// The brain's project-context notes.
    Brain,
}

/// The project context: its passages (as evidence) and its capped text.
#[derive(Debug, Default)]
pub struct ProjectContext {
    pub sections: Vec<SectionHit>,
    pub text: Option<String>,
}

/// Pseudo path of evidence that came from the request's own project context.
pub const REQUEST_CONTEXT_PATH: &str = "(project context)";

/// Loads the project context; failures are logged and give none.
pub fn load_project_context(
    index: &dyn Corpus,
    source: ContextSource<'_>,
    cap_chars: usize,
) -> ProjectContext {
    let sections = match source {
        ContextSource::Request(text) => {
            text_sections(REQUEST_CONTEXT_PATH, "Project context", text)
        }
        ContextSource::File(path) => match std::fs::read(path) {
            Ok(bytes) => {
                let src = String::from_utf8_lossy(&bytes);
                let rel = path
                    .strip_prefix(index.brain())
                    .unwrap_or(path)
                    .to_string_lossy()
                    .replace('\\', "/");
                let note = parse_note(&rel, &src);
                note.sections
                    .into_iter()
                    .enumerate()
                    .map(|(ord, s)| {
                        let passage = Passage {
                            path: note.path.clone(),
                            title: note.title.clone(),
                            heading: s.heading,
                            text: s.text,
                            kind: "project-context".into(),
                            ord: ord as u64,
                            ..Passage::default()
                        };
                        SectionHit::new(passage, 0.0)
                    })
                    .collect()
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read the project context");
                Vec::new()
            }
        },
        ContextSource::Brain => match index.sections_of_kind("project-context", 500) {
            Ok(sections) => sections,
            Err(error) => {
                tracing::warn!(%error, "cannot read the project-context notes");
                Vec::new()
            }
        },
    };
    // A note of a title alone has one passage with nothing in it.
    let sections: Vec<_> = sections
        .into_iter()
        .filter(|s| !(s.heading.is_empty() && s.text.trim().is_empty()))
        .collect();
    if sections.is_empty() {
        return ProjectContext::default();
    }
    let mut full = String::new();
    for section in &sections {
        if !full.is_empty() {
            full.push_str("\n\n");
        }
        if !section.heading.is_empty() {
            full.push_str(&section.heading);
            full.push('\n');
        }
        full.push_str(&section.text);
    }
    ProjectContext {
        sections,
        text: Some(cap_on_sentence(&full, cap_chars)),
    }
}

fn text_sections(path: &str, title: &str, text: &str) -> Vec<SectionHit> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let passage = Passage {
        path: path.into(),
        title: title.into(),
        text: text.trim().to_string(),
        kind: "project-context".into(),
        ..Passage::default()
    };
    vec![SectionHit::new(passage, 0.0)]
}

/// `text` cut to at most `cap_chars` characters (the marker included) at the
/// end of a sentence, or at a word when the first sentence is already too
/// long; "…" marks the cut.
pub fn cap_on_sentence(text: &str, cap_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= cap_chars {
        return text.to_string();
    }
    let room = cap_chars.saturating_sub(CUT_MARKER.chars().count());
    let mut end = 0;
    for (_, sentence_end) in sentence_spans(text) {
        if text[..sentence_end].chars().count() > room {
            break;
        }
        end = sentence_end;
    }
    if end == 0 {
        end = word_cut(text, room);
    }
    format!("{}{CUT_MARKER}", text[..end].trim_end())
}

/// `text` in at most `max_chars` characters, "…" included, cut at a word
/// when one is near the end; and whether it was cut.
pub fn cut_on_word(text: &str, max_chars: usize) -> (String, bool) {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return (text.to_string(), false);
    }
    let room = max_chars.saturating_sub(CUT_MARKER.chars().count());
    let end = word_cut(text, room);
    let kept = text[..end].trim_end_matches(|c: char| c.is_whitespace() || ",;:–—-".contains(c));
    (format!("{kept}{CUT_MARKER}"), true)
}

/// Byte index of the last word boundary within `room` characters.
pub fn word_cut(text: &str, room: usize) -> usize {
    let limit = text.char_indices().nth(room).map_or(text.len(), |(i, _)| i);
    text[..limit]
        .rfind(char::is_whitespace)
        .filter(|&i| i > limit / 2)
        .unwrap_or(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capping_cuts_on_a_sentence_and_marks_it() {
        let text = "One two three. Four five six. Seven eight nine.";
        assert_eq!(cap_on_sentence(text, 100), text);
        assert_eq!(cap_on_sentence(text, 31), "One two three. Four five six.…");
        assert_eq!(cap_on_sentence(text, 16), "One two three.…");
        let long = "word ".repeat(100);
        let cut = cap_on_sentence(&long, 20);
        assert!(cut.ends_with('…') && cut.chars().count() <= 20, "{cut}");
    }
}
