//! The events a session is fed, read from JSON and checked before anything
//! is stored.
//!
//! Events are parsed by hand from `serde_json::Value` rather than by a
//! derived enum so that every refusal has its own code and names the event
//! and field at fault ("event 3: `failure` needs `kind`"), which a caller can
//! act on. A request is checked as a whole: one bad event refuses them all.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    MAX_EVENTS_PER_REQUEST, MAX_EVENT_BYTES, MAX_ITEM_CHARS, MAX_PATH_CHARS, MAX_USER_MESSAGE_CHARS,
};

/// The event types a session takes.
pub fn event_types() -> [&'static str; 7] {
    EVENT_FIELDS.map(|(kind, _)| kind)
}

/// Argument fields that name a file, in the order they are tried.
pub const PATH_FIELDS: [&str; 10] = [
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "fileName",
    "notebook_path",
    "absolute_path",
    "target_file",
    "targetFile",
];

/// Where a patch in an argument (`apply_patch`'s `input`) names the file it
/// changes, each at the start of a line.
const PATCH_FILE_LINES: [&str; 3] = ["*** Update File: ", "*** Add File: ", "*** Delete File: "];

/// Words of a tool's name that say it searches or lists: the `path` it
/// is given is where it looks, a folder unless it names a file.
const LOOKING_WORDS: [&str; 8] = [
    "ls", "list", "glob", "grep", "search", "find", "tree", "dir",
];

/// How deep into nested arguments a file path is looked for.
const PATH_SEARCH_DEPTH: usize = 4;

/// The kind of a failure; the latest of each kind supersedes older ones.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    Build,
    Test,
    Other,
}

impl FailureKind {
    fn parse(s: &str) -> Option<FailureKind> {
        match s {
            "build" => Some(FailureKind::Build),
            "test" => Some(FailureKind::Test),
            "other" => Some(FailureKind::Other),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Build => "build",
            FailureKind::Test => "test",
            FailureKind::Other => "other",
        }
    }
}

/// A file path found in a tool call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum FoundPath {
    /// A usable path.
    Path(String),
    /// A path that is not kept, with the reason.
    Dropped { path: String, reason: &'static str },
}

/// One checked event.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    UserMessage {
        text: String,
    },
    ToolCall {
        tool: String,
        /// The file the call was about, if its arguments name one.
        path: Option<FoundPath>,
        /// Whether the call writes or edits that file.
        writes: bool,
        is_error: bool,
    },
    Goal {
        text: String,
        done: bool,
    },
    Progress {
        text: String,
        done: bool,
    },
    Failure {
        kind: FailureKind,
        text: String,
    },
    Resolved {
        kind: FailureKind,
    },
    Decision {
        text: String,
    },
}

/// Why a request's events were refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvalidEvent {
    #[error("the body must be one event object or a list of them")]
    NotAnEvent,
    /// MCP's `session_events` arguments posted as the body.
    #[error(
        "the body must be one event object or a list of them, not {{\"events\": [...]}} \
         (the session is in the path)"
    )]
    WrappedEvents,
    #[error("the list of events is empty")]
    NoEvents,
    #[error("at most {MAX_EVENTS_PER_REQUEST} events per request (got {0})")]
    TooManyEvents(usize),
    #[error("event {index} is {bytes} bytes; at most {MAX_EVENT_BYTES} are taken")]
    TooLarge { index: usize, bytes: usize },
    #[error("event {0} has no `type`")]
    MissingType(usize),
    #[error("event {index} has the unknown type {kind:?}; known are {known}", known = event_types().join(", "))]
    UnknownType { index: usize, kind: String },
    #[error("event {index}: `{kind}` needs `{field}`")]
    MissingField {
        index: usize,
        kind: &'static str,
        field: &'static str,
    },
    #[error("event {index}: `{field}` must be {expected}")]
    WrongType {
        index: usize,
        field: &'static str,
        expected: &'static str,
    },
    #[error("event {index}: `{field}` must not be empty")]
    Empty { index: usize, field: &'static str },
    #[error("event {index}: `{field}` is longer than {max} characters")]
    TooLong {
        index: usize,
        field: &'static str,
        max: usize,
    },
    #[error("event {index}: `kind` must be build, test or other (got {kind:?})")]
    UnknownKind { index: usize, kind: String },
    #[error("event {index}: `{kind}` takes no `{field}`; it takes {known}")]
    UnknownField {
        index: usize,
        kind: &'static str,
        field: String,
        known: String,
    },
}

impl InvalidEvent {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            InvalidEvent::NotAnEvent | InvalidEvent::WrappedEvents => "invalid-event",
            InvalidEvent::NoEvents => "no-events",
            InvalidEvent::TooManyEvents(_) => "too-many-events",
            InvalidEvent::TooLarge { .. } => "event-too-large",
            InvalidEvent::MissingType(_) => "missing-type",
            InvalidEvent::UnknownType { .. } => "unknown-event-type",
            InvalidEvent::MissingField { .. } => "missing-field",
            InvalidEvent::WrongType { .. } => "wrong-type",
            InvalidEvent::Empty { .. } => "empty-field",
            InvalidEvent::TooLong { .. } => "field-too-long",
            InvalidEvent::UnknownKind { .. } => "unknown-failure-kind",
            InvalidEvent::UnknownField { .. } => "unknown-field",
        }
    }

    /// True when the refusal is about size (answered with 413).
    pub fn is_too_large(&self) -> bool {
        matches!(self, InvalidEvent::TooLarge { .. })
    }
}

/// Reads one event or a list of them; events are numbered from 1.
pub fn parse_events(body: &Value) -> Result<Vec<Event>, InvalidEvent> {
    let list: Vec<&Value> = match body {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) if map.contains_key("events") && !map.contains_key("type") => {
            return Err(InvalidEvent::WrappedEvents)
        }
        Value::Object(_) => vec![body],
        _ => return Err(InvalidEvent::NotAnEvent),
    };
    if list.is_empty() {
        return Err(InvalidEvent::NoEvents);
    }
    if list.len() > MAX_EVENTS_PER_REQUEST {
        return Err(InvalidEvent::TooManyEvents(list.len()));
    }
    list.iter()
        .enumerate()
        .map(|(i, value)| parse_event(i + 1, value))
        .collect()
}

/// Reads one event, `index` naming it in errors.
pub fn parse_event(index: usize, value: &Value) -> Result<Event, InvalidEvent> {
    let bytes = serde_json::to_string(value).map_or(0, |s| s.len());
    if bytes > MAX_EVENT_BYTES {
        return Err(InvalidEvent::TooLarge { index, bytes });
    }
    let Some(object) = value.as_object() else {
        return Err(InvalidEvent::NotAnEvent);
    };
    let kind = match object.get("type") {
        None | Some(Value::Null) => return Err(InvalidEvent::MissingType(index)),
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => {
            return Err(InvalidEvent::WrongType {
                index,
                field: "type",
                expected: "a string",
            })
        }
    };
    let fields = Fields { index, object };
    fields.only_known(kind)?;
    Ok(match kind {
        "user_message" => Event::UserMessage {
            text: fields.text("user_message", "text", MAX_USER_MESSAGE_CHARS)?,
        },
        "tool_call" => {
            let tool = fields.text("tool_call", "tool", MAX_ITEM_CHARS)?;
            let arguments = object.get("arguments").unwrap_or(&Value::Null);
            let is_error = fields.flag("is_error")?;
            Event::ToolCall {
                writes: tool_writes(&tool, arguments),
                path: find_path(&tool, arguments),
                tool,
                is_error,
            }
        }
        "goal" => Event::Goal {
            text: fields.text("goal", "text", MAX_ITEM_CHARS)?,
            done: fields.flag("done")?,
        },
        "progress" => Event::Progress {
            text: fields.text("progress", "text", MAX_ITEM_CHARS)?,
            done: fields.flag("done")?,
        },
        "failure" => Event::Failure {
            kind: fields.kind("failure")?,
            // Kept in full up to a limit when stored; any length is taken
            // here, within the event size limit.
            text: fields.text("failure", "text", usize::MAX)?,
        },
        "resolved" => Event::Resolved {
            kind: fields.kind("resolved")?,
        },
        "decision" => Event::Decision {
            text: fields.text("decision", "text", MAX_ITEM_CHARS)?,
        },
        other => {
            return Err(InvalidEvent::UnknownType {
                index,
                kind: other.chars().take(100).collect(),
            })
        }
    })
}

struct Fields<'a> {
    index: usize,
    object: &'a serde_json::Map<String, Value>,
}

/// The types of event a session takes, and the fields each takes besides
/// `type`: any other is refused, as a misspelt optional field (`is_eror`)
/// would otherwise be dropped without a word.
pub const EVENT_FIELDS: [(&str, &[&str]); 7] = [
    ("user_message", &["text"]),
    ("tool_call", &["tool", "arguments", "is_error"]),
    ("goal", &["text", "done"]),
    ("progress", &["text", "done"]),
    ("failure", &["kind", "text"]),
    ("resolved", &["kind"]),
    ("decision", &["text"]),
];

impl Fields<'_> {
    /// Refuses a field the event's type does not take (an unknown type is
    /// refused by its type).
    fn only_known(&self, kind: &str) -> Result<(), InvalidEvent> {
        let Some(&(kind, known)) = EVENT_FIELDS.iter().find(|(k, _)| *k == kind) else {
            return Ok(());
        };
        match self
            .object
            .keys()
            .find(|key| *key != "type" && !known.contains(&key.as_str()))
        {
            None => Ok(()),
            Some(field) => Err(InvalidEvent::UnknownField {
                index: self.index,
                kind,
                field: field.chars().take(100).collect(),
                known: known
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn text(
        &self,
        kind: &'static str,
        field: &'static str,
        max: usize,
    ) -> Result<String, InvalidEvent> {
        let index = self.index;
        match self.object.get(field) {
            None | Some(Value::Null) => Err(InvalidEvent::MissingField { index, kind, field }),
            Some(Value::String(s)) => {
                // Kept without terminal escapes or control characters: build
                // output keeps its words, not its colours.
                let s = crate::text::terminal_text(s);
                if s.trim().is_empty() {
                    Err(InvalidEvent::Empty { index, field })
                } else if max != usize::MAX && s.chars().count() > max {
                    Err(InvalidEvent::TooLong { index, field, max })
                } else {
                    // "Ship it " is the goal "Ship it".
                    Ok(s.trim_end().to_string())
                }
            }
            Some(_) => Err(InvalidEvent::WrongType {
                index,
                field,
                expected: "a string",
            }),
        }
    }

    /// An optional boolean, false when absent.
    fn flag(&self, field: &'static str) -> Result<bool, InvalidEvent> {
        match self.object.get(field) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(InvalidEvent::WrongType {
                index: self.index,
                field,
                expected: "true or false",
            }),
        }
    }

    fn kind(&self, kind: &'static str) -> Result<FailureKind, InvalidEvent> {
        let text = self.text(kind, "kind", 100)?;
        FailureKind::parse(&text).ok_or(InvalidEvent::UnknownKind {
            index: self.index,
            kind: text,
        })
    }
}

/// The file a tool call's arguments name: the first of [`PATH_FIELDS`] at the
/// shallowest level, looking into nested objects and into strings that hold
/// JSON (OpenAI sends `arguments` as a JSON string), else the first file a
/// patch in them changes. A folder, a pattern of files or a search tool's
/// scope is no file ([`is_no_file`]).
pub fn find_path(tool: &str, arguments: &Value) -> Option<FoundPath> {
    let looks = words(tool)
        .iter()
        .any(|w| LOOKING_WORDS.contains(&w.as_str()));
    let levels = argument_levels(arguments);
    let found = path_field(&levels).or_else(|| patched_file(&levels))?;
    let path = found.trim_matches(|c: char| c.is_ascii_whitespace());
    if path.is_empty() || is_no_file(path, looks) {
        return None;
    }
    Some(check_path(path))
}

/// Whether a path names no one file: a folder (`src/`, `.`, `..`, `~`), a
/// pattern of files (`**/*.rs`), or, for a tool that searches or lists, a
/// name without an extension (`/home/me/app/src`).
fn is_no_file(path: &str, looks: bool) -> bool {
    let last = path.rsplit(['/', '\\']).next().unwrap_or(path);
    path.ends_with(['/', '\\'])
        || matches!(last, "." | ".." | "~")
        || path.contains(['*', '?'])
        || (path.contains('[') && path.contains(']'))
        || (looks && !last.contains('.'))
}

/// The values of a tool call's arguments level by level, at most
/// [`PATH_SEARCH_DEPTH`] levels deep; a string that holds a JSON object or
/// list (OpenAI sends `arguments` so) is read as what it holds.
fn argument_levels(arguments: &Value) -> Vec<Vec<Value>> {
    let mut levels: Vec<Vec<Value>> = Vec::new();
    let mut level = vec![arguments.clone()];
    for _ in 0..PATH_SEARCH_DEPTH {
        let read: Vec<Value> = level
            .into_iter()
            .map(|value| match value {
                Value::String(s) => match serde_json::from_str::<Value>(&s) {
                    Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
                    _ => Value::String(s),
                },
                other => other,
            })
            .collect();
        let next: Vec<Value> = read
            .iter()
            .flat_map(|value| match value {
                Value::Object(map) => map.values().cloned().collect(),
                Value::Array(items) => items.clone(),
                _ => Vec::new(),
            })
            .collect();
        levels.push(read);
        if next.is_empty() {
            break;
        }
        level = next;
    }
    levels
}

/// The first of [`PATH_FIELDS`] at the shallowest level of the arguments.
fn path_field(levels: &[Vec<Value>]) -> Option<String> {
    levels.iter().flatten().find_map(|value| {
        let map = value.as_object()?;
        PATH_FIELDS.iter().find_map(|field| match map.get(*field) {
            Some(Value::String(path)) if !path.trim().is_empty() => Some(path.clone()),
            _ => None,
        })
    })
}

/// The first file a patch in the arguments changes (`apply_patch`'s
/// `*** Update File: src/a.rs`).
fn patched_file(levels: &[Vec<Value>]) -> Option<String> {
    levels.iter().flatten().find_map(|value| {
        value.as_str()?.lines().find_map(|line| {
            PATCH_FILE_LINES
                .iter()
                .find_map(|start| line.strip_prefix(start))
                .map(str::to_string)
        })
    })
}

fn check_path(path: &str) -> FoundPath {
    // A path that reads as another one names no file safely.
    let unsafe_character = if path.chars().any(char::is_control) {
        Some("control-character")
    } else if path.chars().any(crate::text::is_reordering) {
        Some("reordering-character")
    } else {
        None
    };
    if let Some(reason) = unsafe_character {
        return FoundPath::Dropped {
            path: path.chars().take(MAX_PATH_CHARS).collect(),
            reason,
        };
    }
    if path.chars().count() > MAX_PATH_CHARS {
        return FoundPath::Dropped {
            path: path.chars().take(200).collect(),
            reason: "too-long",
        };
    }
    // `./a.rs` and `a.rs` are one file.
    let relative = path.trim_start_matches("./");
    FoundPath::Path(if relative.is_empty() { path } else { relative }.to_string())
}

/// Words in a tool's name (or its `command` argument) that mean it changes
/// the file it names.
const WRITING_WORDS: [&str; 10] = [
    "write", "edit", "create", "patch", "replace", "insert", "delete", "remove", "rename", "move",
];

/// What may stand before a writing word in one word of a tool's name.
const WRITING_PREFIXES: [&str; 4] = ["over", "re", "multi", "batch"];

/// Whether a tool call writes or edits its file. No allow-list of tool names:
/// any tool whose name (or `command`/`mode` argument, as editors with one tool
/// for viewing and editing have) says so.
pub fn tool_writes(tool: &str, arguments: &Value) -> bool {
    // By whole words of the name (`write_file`, `MultiEdit`, `overwrite`),
    // so that `view_created_items` is no writer.
    let says_write = |s: &str| {
        words(s).iter().any(|word| {
            let word = word.strip_suffix('s').unwrap_or(word);
            // `rewrite`, `multiedit`; not `credit` or `prewrite`.
            let word = WRITING_PREFIXES
                .iter()
                .find_map(|p| word.strip_prefix(p))
                .unwrap_or(word);
            WRITING_WORDS.contains(&word)
        })
    };
    let arguments = match arguments {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let operations: Vec<&str> = ["command", "mode", "action", "operation"]
        .iter()
        .filter_map(|f| arguments.get(f).and_then(Value::as_str))
        .collect();
    // An editor's "view" only reads, whatever the tool is called.
    let only_reads = |op: &&str| READING_OPERATIONS.contains(&op.trim().to_lowercase().as_str());
    if !operations.is_empty() && operations.iter().all(only_reads) {
        return false;
    }
    says_write(tool) || operations.into_iter().any(says_write)
}

/// The words of a tool's name or operation, lower case: split at anything
/// but letters and digits, and where a capital follows a small letter.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if (!c.is_alphanumeric() || (c.is_uppercase() && last_lower)) && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        last_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Operations of an editor tool (its `command`, `mode` …) that only read.
const READING_OPERATIONS: [&str; 6] = ["view", "read", "show", "open", "cat", "list"];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path_of(arguments: Value) -> Option<FoundPath> {
        find_path("Read", &arguments)
    }

    #[test]
    fn every_path_field_is_probed() {
        for field in PATH_FIELDS {
            assert_eq!(
                path_of(json!({ field: "src/a.rs" })),
                Some(FoundPath::Path("src/a.rs".into())),
                "{field}"
            );
        }
        assert_eq!(path_of(json!({"pattern": "x"})), None);
        assert_eq!(path_of(json!("not json")), None);
        assert_eq!(path_of(json!({"path": ""})), None);
        assert_eq!(
            path_of(json!({"path": "./w.rs"})),
            Some(FoundPath::Path("w.rs".into()))
        );
    }

    #[test]
    fn a_folder_is_no_file_in_play() {
        assert_eq!(path_of(json!({"pattern": "fee", "path": "src/"})), None);
        assert_eq!(path_of(json!({"pattern": "fee", "path": "."})), None);
        assert_eq!(
            path_of(json!({"pattern": "fee", "path": "src/lib.rs"})),
            Some(FoundPath::Path("src/lib.rs".into()))
        );
    }

    #[test]
    fn folders_patterns_and_search_scopes_are_no_files() {
        let path = |tool: &str, arguments: Value| find_path(tool, &arguments);
        let file = |p: &str| Some(FoundPath::Path(p.into()));
        for scope in [
            "..",
            "~",
            "src/.",
            "src/**/*.rs",
            "*.ts",
            "C:\\Users\\me\\app\\",
            "a[0-9].md",
        ] {
            assert_eq!(path("Read", json!({"path": scope})), None, "{scope}");
        }
        // What a search or list tool is given is where it looks.
        for tool in ["Grep", "Glob", "LS", "list_dir", "file_search"] {
            assert_eq!(
                path(
                    tool,
                    json!({"pattern": "fn main", "path": "/home/me/app/src"})
                ),
                None,
                "{tool}"
            );
            assert_eq!(
                path(tool, json!({"path": "src/main.rs"})),
                file("src/main.rs"),
                "{tool}"
            );
        }
        assert_eq!(
            path("Read", json!({"file_path": "Makefile"})),
            file("Makefile")
        );
        // Blanks that are part of a name stay; a control character drops it.
        assert_eq!(path("Read", json!({"file_path": " f.rs "})), file("f.rs"));
        assert_eq!(
            path("Read", json!({"file_path": "g.rs\u{a0}"})),
            file("g.rs\u{a0}")
        );
        assert!(matches!(
            path("Read", json!({"file_path": "\u{85}nel.txt"})),
            Some(FoundPath::Dropped { .. })
        ));
    }

    #[test]
    fn notebooks_patches_and_other_agents_name_their_files() {
        let path = |tool: &str, arguments: Value| find_path(tool, &arguments);
        let file = |p: &str| Some(FoundPath::Path(p.into()));
        assert_eq!(
            path("NotebookEdit", json!({"notebook_path": "a.ipynb"})),
            file("a.ipynb")
        );
        assert_eq!(
            path("read_file", json!({"absolute_path": "/r/b.py"})),
            file("/r/b.py")
        );
        let patch = "*** Begin Patch\n*** Update File: src/patched.rs\n@@\n-a\n+b\n*** End Patch";
        assert_eq!(
            path("apply_patch", json!({"input": patch})),
            file("src/patched.rs")
        );
        assert_eq!(
            path("shell", json!({"command": ["apply_patch", patch]})),
            file("src/patched.rs")
        );
        assert_eq!(path("shell", json!({"command": ["ls"]})), None);
    }

    #[test]
    fn paths_are_found_in_json_strings_and_nested_objects() {
        let nested = json!(r#"{"input": {"fileName": "web/card.js"}}"#);
        assert_eq!(path_of(nested), Some(FoundPath::Path("web/card.js".into())));
        let in_string = json!({"args": "{\"file_path\": \"/tmp/x.md\"}"});
        assert_eq!(
            path_of(in_string),
            Some(FoundPath::Path("/tmp/x.md".into()))
        );
        // The shallowest match wins over a deeper one.
        let both = json!({"inner": {"path": "deep"}, "file": "top"});
        assert_eq!(path_of(both), Some(FoundPath::Path("top".into())));
    }

    #[test]
    fn control_characters_drop_the_path() {
        let found = path_of(json!({"path": "a\u{1b}[31mb"}));
        assert!(matches!(
            found,
            Some(FoundPath::Dropped {
                reason: "control-character",
                ..
            })
        ));
        let found = path_of(json!({"path": "docs/\u{202e}txt.exe"}));
        assert!(matches!(
            found,
            Some(FoundPath::Dropped {
                reason: "reordering-character",
                ..
            })
        ));
    }

    #[test]
    fn writing_tools_are_recognized_without_a_list() {
        assert!(tool_writes("Edit", &json!({})));
        assert!(tool_writes("MultiEdit", &json!({})));
        assert!(tool_writes("overwrite_file", &json!({})));
        assert!(tool_writes("apply_patch", &json!({})));
        assert!(!tool_writes("view_created_items", &json!({"path": "a"})));
        assert!(!tool_writes("list_deleted_branches", &json!({})));
        assert!(tool_writes("write_file", &json!({})));
        assert!(tool_writes("fs", &json!(r#"{"command": "create"}"#)));
        assert!(!tool_writes("Read", &json!({"path": "a"})));
        assert!(!tool_writes("grep", &json!({"pattern": "edit"})));
        assert!(!tool_writes("Credit", &json!({"path": "a"})));
        assert!(!tool_writes("Prewrite_lint", &json!({"path": "a"})));
        assert!(tool_writes("rewrite", &json!({})));
        assert!(tool_writes("NotebookEdit", &json!({})));
        assert!(tool_writes("edits", &json!({})));
        // An editor tool that views a file does not change it.
        assert!(!tool_writes(
            "str_replace_based_edit_tool",
            &json!({"command": "view", "path": "a.rs"})
        ));
        assert!(tool_writes(
            "str_replace_based_edit_tool",
            &json!({"command": "str_replace", "path": "a.rs"})
        ));
    }

    #[test]
    fn text_is_kept_without_terminal_escapes() {
        let event = parse_event(
            0,
            &json!({"type": "failure", "kind": "build", "text": "\u{1b}[31merror\u{1b}[0m: no `fee`\r\n"}),
        )
        .unwrap();
        assert!(matches!(event, Event::Failure { ref text, .. } if text == "error: no `fee`"));
        // Nothing but escapes is nothing.
        let empty = parse_event(0, &json!({"type": "goal", "text": "\u{1b}[2K\u{7}"}));
        assert_eq!(empty.unwrap_err().code(), "empty-field");
    }

    #[test]
    fn bad_events_are_named() {
        let cases: Vec<(Value, &str)> = vec![
            (json!({"type": "nope"}), "unknown-event-type"),
            (json!({"text": "x"}), "missing-type"),
            (json!({"type": "goal"}), "missing-field"),
            (json!({"type": "goal", "text": 3}), "wrong-type"),
            (json!({"type": "goal", "text": " "}), "empty-field"),
            (
                json!({"type": "goal", "text": "x", "done": "yes"}),
                "wrong-type",
            ),
            (
                json!({"type": "failure", "kind": "lint", "text": "x"}),
                "unknown-failure-kind",
            ),
            (json!({"type": "resolved"}), "missing-field"),
            (
                json!({"type": "tool_call", "tool": "edit", "is_eror": true}),
                "unknown-field",
            ),
            (
                json!({"type": "resolved", "kind": "test", "text": "x"}),
                "unknown-field",
            ),
            (json!([]), "no-events"),
            (json!(3), "invalid-event"),
            (
                json!({"type": "decision", "text": "x".repeat(MAX_ITEM_CHARS + 1)}),
                "field-too-long",
            ),
            (
                json!({"type": "failure", "kind": "build", "text": "x".repeat(MAX_EVENT_BYTES)}),
                "event-too-large",
            ),
        ];
        for (body, code) in cases {
            let error =
                parse_events(&body).expect_err(&body.to_string()[..40.min(body.to_string().len())]);
            assert_eq!(error.code(), code, "{error}");
        }
    }

    #[test]
    fn the_arguments_of_the_mcp_tool_are_no_event() {
        let body = json!({"session": "s", "events": [{"type": "goal", "text": "g"}]});
        let refused = parse_events(&body).unwrap_err();
        assert_eq!(refused, InvalidEvent::WrappedEvents);
        assert_eq!(refused.code(), "invalid-event");
        assert!(refused.to_string().contains("session is in the path"));
    }

    #[test]
    fn one_event_or_a_list() {
        let one = parse_events(&json!({"type": "resolved", "kind": "test"})).unwrap();
        assert_eq!(
            one,
            vec![Event::Resolved {
                kind: FailureKind::Test
            }]
        );
        let list = parse_events(&json!([
            {"type": "goal", "text": "ship", "done": true},
            {"type": "tool_call", "tool": "Read", "arguments": {"path": "a.rs"}, "is_error": true}
        ]))
        .unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[1],
            Event::ToolCall {
                tool: "Read".into(),
                path: Some(FoundPath::Path("a.rs".into())),
                writes: false,
                is_error: true
            }
        );
    }
}
