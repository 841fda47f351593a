//! The working context of one session: the events folded into what matters
//! now, small enough to store whole and render at once.
//!
//! Folding happens when an event arrives, not when the block is rendered, so
//! rendering reads one row however long the session ran. Every list has a
//! cap (see the constants in [`super`]); what falls off is the oldest and,
//! where items can be done, the oldest finished one first.

use serde::{Deserialize, Serialize};

use super::events::{Event, FailureKind, FoundPath};
use super::{
    CUT_MARKER, MAX_DECISIONS, MAX_FAILURE_CHARS, MAX_GOALS, MAX_PROGRESS, MAX_QUESTIONS,
    RECENT_FILES,
};

/// A goal or a progress item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Item {
    pub text: String,
    pub done: bool,
}

/// The latest failure of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    pub kind: FailureKind,
    /// The failure's text; a long one keeps its start and its end, with a
    /// line of "…" where its middle was cut.
    pub text: String,
    /// True when `text` was cut.
    pub cut: bool,
    /// When it was reported, RFC 3339.
    pub at: String,
    /// Earlier failures of this kind it replaced.
    pub superseded: u32,
}

/// A file the session touched recently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecentFile {
    pub path: String,
    /// True once a tool wrote or edited it (while it stayed in the ring).
    pub changed: bool,
    /// The tool that touched it last.
    pub tool: String,
}

/// An answer the user confirmed in this session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Confirmed {
    pub question: String,
    pub answer: String,
}

/// Everything a session keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkingContext {
    pub last_user_query: Option<String>,
    pub goals: Vec<Item>,
    /// At most one per kind, the latest first.
    pub failures: Vec<Failure>,
    /// Most recent first, at most [`RECENT_FILES`], no path twice.
    pub recent_files: Vec<RecentFile>,
    pub progress: Vec<Item>,
    pub decisions: Vec<String>,
    /// Questions research left for the user, oldest first.
    #[serde(default)]
    pub open_questions: Vec<String>,
    /// What the user answered, oldest first.
    #[serde(default)]
    pub confirmed: Vec<Confirmed>,
}

/// What applying an event did that the caller should hear about.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Note {
    /// The event, numbered from 1 within its request.
    pub event: usize,
    /// `path-dropped`, `nothing-to-resolve`, `failure-cut`.
    pub kind: &'static str,
    pub detail: String,
}

impl WorkingContext {
    /// True when there is nothing to render.
    pub fn is_empty(&self) -> bool {
        self.last_user_query.is_none()
            && self.goals.is_empty()
            && self.failures.is_empty()
            && self.recent_files.is_empty()
            && self.progress.is_empty()
            && self.decisions.is_empty()
            && self.open_questions.is_empty()
            && self.confirmed.is_empty()
    }

    /// Folds one event in; `number` names it in the notes returned.
    pub fn apply(&mut self, number: usize, event: &Event, at: &str) -> Vec<Note> {
        let mut notes = Vec::new();
        match event {
            Event::UserMessage { text } => {
                // A bare reply ("continue", "y", "2") answers the agent; the
                // request before it stays the one the session works on.
                let keep = is_bare_reply(text)
                    && self
                        .last_user_query
                        .as_deref()
                        .is_some_and(|q| !is_bare_reply(q));
                if !keep {
                    self.last_user_query = Some(text.clone());
                }
            }
            Event::ToolCall {
                tool,
                path,
                writes,
                is_error,
            } => match path {
                Some(FoundPath::Path(path)) => {
                    // A failed write changed nothing.
                    self.touch_file(path, tool, *writes && !*is_error)
                }
                Some(FoundPath::Dropped { path, reason }) => notes.push(Note {
                    event: number,
                    kind: "path-dropped",
                    detail: format!("{reason}: {path:?}"),
                }),
                None => {}
            },
            Event::Goal { text, done } => upsert(&mut self.goals, text, *done, MAX_GOALS),
            Event::Progress { text, done } => upsert(&mut self.progress, text, *done, MAX_PROGRESS),
            Event::Failure { kind, text } => {
                let (text, cut) = cut_middle(text, MAX_FAILURE_CHARS);
                if let Some((head, tail)) = cut {
                    notes.push(Note {
                        event: number,
                        kind: "failure-cut",
                        detail: format!(
                            "kept the first {head} and the last {tail} characters \
                             of {MAX_FAILURE_CHARS} at most"
                        ),
                    });
                }
                let superseded = match self.failures.iter().position(|f| f.kind == *kind) {
                    Some(i) => self.failures.remove(i).superseded + 1,
                    None => 0,
                };
                self.failures.insert(
                    0,
                    Failure {
                        kind: *kind,
                        text,
                        cut: cut.is_some(),
                        at: at.to_string(),
                        superseded,
                    },
                );
            }
            Event::Resolved { kind } => {
                let before = self.failures.len();
                self.failures.retain(|f| f.kind != *kind);
                if self.failures.len() == before {
                    notes.push(Note {
                        event: number,
                        kind: "nothing-to-resolve",
                        detail: format!("no {} failure was open", kind.as_str()),
                    });
                }
            }
            Event::Decision { text } => {
                self.decisions.retain(|d| d != text);
                self.decisions.push(text.clone());
                if self.decisions.len() > MAX_DECISIONS {
                    self.decisions.remove(0);
                }
            }
        }
        notes
    }

    fn touch_file(&mut self, path: &str, tool: &str, writes: bool) {
        let changed = match self.recent_files.iter().position(|f| f.path == path) {
            Some(i) => self.recent_files.remove(i).changed,
            None => false,
        };
        self.recent_files.insert(
            0,
            RecentFile {
                path: path.to_string(),
                changed: changed || writes,
                tool: tool.to_string(),
            },
        );
        self.recent_files.truncate(RECENT_FILES);
    }

    /// Records a research of this session: what it left open is open, what
    /// it answered is not.
    pub fn record_research(&mut self, answered: &[String], unanswered: &[String]) {
        self.open_questions
            .retain(|q| !answered.iter().any(|a| same_question(a, q)));
        for question in unanswered {
            if !self
                .open_questions
                .iter()
                .any(|q| same_question(q, question))
            {
                self.open_questions.push(question.clone());
            }
        }
        trim_front(&mut self.open_questions, MAX_QUESTIONS);
    }

    /// Records answers the user confirmed: they are no longer open.
    pub fn record_answers(&mut self, confirmed: &[Confirmed]) {
        for entry in confirmed {
            self.open_questions
                .retain(|q| !same_question(q, &entry.question));
            self.confirmed
                .retain(|c| !same_question(&c.question, &entry.question));
            self.confirmed.push(entry.clone());
        }
        trim_front(&mut self.confirmed, MAX_QUESTIONS);
    }
}

/// A user message of one short word: a choice or a go-ahead ("continue",
/// "y", "2"), not a request.
pub fn is_bare_reply(text: &str) -> bool {
    let text = text.trim();
    !text.contains(char::is_whitespace) && text.chars().count() <= BARE_REPLY_CHARS
}

/// The longest one-word message taken as a bare reply ("continue").
const BARE_REPLY_CHARS: usize = 10;

/// Cuts `text` to at most `max_chars` characters by leaving out its middle:
/// the start of a build log says what ran, its end how it failed (a test
/// summary, the last error after pages of progress). The cut falls between
/// lines where one is near, and a line of "…" marks it. Returns the text
/// and, when cut, how many characters of the start and of the end it kept.
pub fn cut_middle(text: &str, max_chars: usize) -> (String, Option<(usize, usize)>) {
    let total = text.chars().count();
    if total <= max_chars {
        return (text.to_string(), None);
    }
    let mark = format!("\n{CUT_MARKER}\n");
    let room = max_chars.saturating_sub(mark.chars().count());
    if room < 2 {
        let (cut, _) = super::cut_chars(text, max_chars);
        let kept = cut.chars().count().saturating_sub(1);
        return (cut, Some((kept, 0)));
    }
    // A quarter for the start, the rest for the end.
    let head_chars = room / 4;
    let tail_chars = room - head_chars;
    let byte_at = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    let head_end = byte_at(head_chars);
    let tail_start = byte_at(total - tail_chars);
    // Whole lines, when a line ends in the latter half of the start or
    // begins in the former half of the end.
    let head = &text[..head_end];
    let head = match head.rfind('\n') {
        Some(i) if head[..i].chars().count() * 2 >= head_chars => &head[..i],
        _ => head,
    };
    let tail = &text[tail_start..];
    let tail = match tail.find('\n') {
        Some(i) if tail[..i].chars().count() * 2 <= tail_chars => &tail[i + 1..],
        _ => tail,
    };
    let (head, tail) = (head.trim_end(), tail.trim_start_matches('\n'));
    let kept = (head.chars().count(), tail.chars().count());
    (format!("{head}{mark}{tail}"), Some(kept))
}

/// Two questions are one when they differ only in case, spacing, Unicode
/// normalization and their closing punctuation ("who pays for hosting" is
/// "Who pays for hosting?"): the one rule for closing an open question, for
/// the card and for a duplicate answer.
pub fn same_question(a: &str, b: &str) -> bool {
    let words = |s: &str| {
        let s = crate::brain::parse::nfc(s);
        let s = s.trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, '?' | '.' | '!' | '？' | '。' | '！')
        });
        s.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    };
    words(a) == words(b)
}

fn trim_front<T>(list: &mut Vec<T>, max: usize) {
    if list.len() > max {
        list.drain(..list.len() - max);
    }
}

/// Adds an item or updates the one with the same text; over `max`, the
/// oldest finished item goes first, else the oldest.
fn upsert(items: &mut Vec<Item>, text: &str, done: bool, max: usize) {
    match items.iter_mut().find(|i| i.text == text) {
        Some(item) => item.done = done,
        None => items.push(Item {
            text: text.to_string(),
            done,
        }),
    }
    if items.len() > max {
        let victim = items.iter().position(|i| i.done).unwrap_or(0);
        items.remove(victim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_the_same_up_to_case_spacing_and_its_mark() {
        assert!(same_question(
            "what colour is  the refund button",
            "What colour is the refund button?"
        ));
        assert!(same_question("배포는 언제 하나요？", "배포는 언제 하나요"));
        assert!(!same_question("What colour is it?", "What colour was it?"));
    }

    fn tool(path: &str, tool: &str) -> Event {
        Event::ToolCall {
            tool: tool.into(),
            path: Some(FoundPath::Path(path.into())),
            writes: tool == "Edit",
            is_error: false,
        }
    }

    #[test]
    fn recent_files_are_a_ring_without_repeats() {
        let mut c = WorkingContext::default();
        for i in 0..11 {
            c.apply(1, &tool(&format!("f{i}"), "Read"), "t");
        }
        assert_eq!(c.recent_files.len(), RECENT_FILES);
        assert_eq!(c.recent_files[0].path, "f10");
        assert!(c.recent_files.iter().all(|f| f.path != "f0"));
        c.apply(1, &tool("f5", "Edit"), "t");
        c.apply(1, &tool("f3", "Read"), "t");
        c.apply(1, &tool("f5", "Read"), "t");
        let paths: Vec<&str> = c.recent_files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(&paths[..3], ["f5", "f3", "f10"]);
        assert_eq!(paths.len(), RECENT_FILES);
        assert!(c.recent_files[0].changed, "an edit stays marked");
        assert!(!c.recent_files[1].changed);
    }

    #[test]
    fn the_latest_failure_of_a_kind_wins_until_resolved() {
        let mut c = WorkingContext::default();
        let fail = |kind, text: &str| Event::Failure {
            kind,
            text: text.into(),
        };
        c.apply(1, &fail(FailureKind::Build, "E0308 first"), "t1");
        c.apply(2, &fail(FailureKind::Test, "test a failed"), "t2");
        c.apply(3, &fail(FailureKind::Build, "E0599 second"), "t3");
        assert_eq!(c.failures.len(), 2);
        assert_eq!(c.failures[0].text, "E0599 second");
        assert_eq!(c.failures[0].superseded, 1);
        let notes = c.apply(
            4,
            &Event::Resolved {
                kind: FailureKind::Build,
            },
            "t4",
        );
        assert!(notes.is_empty());
        assert_eq!(c.failures.len(), 1);
        let notes = c.apply(
            5,
            &Event::Resolved {
                kind: FailureKind::Build,
            },
            "t5",
        );
        assert_eq!(notes[0].kind, "nothing-to-resolve");
    }

    #[test]
    fn long_failures_are_cut_at_the_limit() {
        let mut c = WorkingContext::default();
        let text = "é".repeat(MAX_FAILURE_CHARS + 10);
        let notes = c.apply(
            1,
            &Event::Failure {
                kind: FailureKind::Other,
                text,
            },
            "t",
        );
        assert_eq!(notes[0].kind, "failure-cut");
        assert!(c.failures[0].text.chars().count() <= MAX_FAILURE_CHARS);
        assert!(c.failures[0].text.contains("\n…\n"));
        assert!(c.failures[0].cut);
        // A build log: pages of progress, then the error at its end.
        let mut log: String = (0..400)
            .map(|i| format!("   Compiling crate{i} v0.1.{i}\n"))
            .collect();
        log.push_str("error[E0425]: cannot find value `fee`\n --> src/refund.rs:42:9\nerror: could not compile `app`");
        let notes = c.apply(
            2,
            &Event::Failure {
                kind: FailureKind::Build,
                text: log,
            },
            "t",
        );
        let kept = &c.failures[0].text;
        assert!(kept.chars().count() <= MAX_FAILURE_CHARS, "{}", kept.len());
        assert!(kept.starts_with("   Compiling crate0 v0.1.0\n"), "{kept}");
        assert!(kept.ends_with("error: could not compile `app`"), "{kept}");
        assert!(kept.contains("E0425"), "{kept}");
        // Cut between whole lines.
        let whole = |line: &str| match line.strip_prefix("   Compiling crate") {
            Some(rest) => rest.split_once(" v0.1.").is_some_and(|(a, b)| a == b),
            None => !line.contains("Compiling"),
        };
        assert!(kept.lines().all(whole), "{kept}");
        assert!(notes[0].detail.contains("the last"), "{}", notes[0].detail);
    }

    #[test]
    fn cutting_the_middle_keeps_the_ends_within_the_limit() {
        for max in [0, 1, 2, 3, 4, 5, 8, 20, 101] {
            for text in ["x".repeat(200), "ab\n".repeat(80), "한글 줄\n".repeat(50)] {
                let (cut, kept) = cut_middle(&text, max);
                assert!(cut.chars().count() <= max, "{max}: {cut:?}");
                assert!(kept.is_some());
            }
        }
        assert_eq!(cut_middle("short", 5), ("short".to_string(), None));
    }

    #[test]
    fn a_bare_reply_does_not_replace_the_request() {
        let mut c = WorkingContext::default();
        let say = |text: &str| Event::UserMessage { text: text.into() };
        c.apply(1, &say("y"), "t");
        assert_eq!(
            c.last_user_query.as_deref(),
            Some("y"),
            "nothing better yet"
        );
        c.apply(2, &say("Add a refund button to checkout"), "t");
        c.apply(3, &say("continue"), "t");
        c.apply(4, &say(" 2 "), "t");
        assert_eq!(
            c.last_user_query.as_deref(),
            Some("Add a refund button to checkout")
        );
        c.apply(5, &say("Now the receipts"), "t");
        assert_eq!(c.last_user_query.as_deref(), Some("Now the receipts"));
    }

    #[test]
    fn items_update_in_place_and_finished_ones_go_first() {
        let mut items = Vec::new();
        upsert(&mut items, "a", false, 2);
        upsert(&mut items, "b", true, 2);
        upsert(&mut items, "a", true, 2);
        assert_eq!(items.len(), 2);
        assert!(items[0].done);
        upsert(&mut items, "c", false, 2);
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(texts, ["b", "c"]);
    }

    #[test]
    fn research_and_answers_move_questions() {
        let mut c = WorkingContext::default();
        c.record_research(&[], &["q1".into(), "q2".into()]);
        c.record_research(&["q1".into()], &["q3".into()]);
        assert_eq!(c.open_questions, ["q2", "q3"]);
        c.record_answers(&[Confirmed {
            question: "q2".into(),
            answer: "yes".into(),
        }]);
        assert_eq!(c.open_questions, ["q3"]);
        assert_eq!(c.confirmed.len(), 1);
        // The same question in other case or spacing is one question.
        c.record_research(&[], &["What colour is the logo?".into()]);
        c.record_research(&[], &["what colour is  the logo?".into()]);
        assert_eq!(c.open_questions, ["q3", "What colour is the logo?"]);
        c.record_answers(&[Confirmed {
            question: "WHAT colour is the logo?".into(),
            answer: "teal".into(),
        }]);
        assert_eq!(c.open_questions, ["q3"]);
    }
}
