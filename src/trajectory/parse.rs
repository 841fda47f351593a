//! Reading a trajectory from bytes, whatever wrote it. The format is told
//! by the content, never by a file name: a JSON document starting with `[`
//! (or an object holding such a list under `calls`) is a list of
//! `{tool, arguments, is_error, at}`; anything else is read as JSONL, line
//! by line, each line handed to the Claude Code or the Codex reader by its
//! shape. A line that is not JSON or of no known shape is counted and
//! skipped; only an input of which no call at all can be read is refused.

use serde_json::{Map, Value};

use super::model::{parse_time, Format, Trajectory};
use super::{claude, codex, Error};

/// Reads `bytes` into a trajectory; see the module documentation.
pub fn read_trajectory(bytes: &[u8]) -> Result<Trajectory, Error> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .ok_or(Error::Empty)?;
    // JSON text never holds a raw NUL byte; binary files nearly always do.
    if bytes.contains(&0) {
        return Err(Error::Binary);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let trajectory = match bytes.get(start) {
        Some(b'[') => read_tool_list_document(bytes)?,
        Some(b'{') => match listed_calls(bytes) {
            Some(list) => read_tool_list(list),
            None => read_jsonl(bytes),
        },
        _ => read_jsonl(bytes),
    };
    if trajectory.calls.is_empty() {
        return Err(Error::NoCalls {
            lines: trajectory.lines,
            skipped: trajectory.skipped_lines,
        });
    }
    Ok(trajectory)
}

/// A whole JSON list; a broken or cut-short one is refused as a whole,
/// since nothing says where its entries would resume.
fn read_tool_list_document(bytes: &[u8]) -> Result<Trajectory, Error> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(entries)) => Ok(read_tool_list(entries)),
        Ok(_) => Err(Error::NoCalls {
            lines: 1,
            skipped: 1,
        }),
        Err(error) => Err(Error::BrokenJson {
            line: error.line(),
            column: error.column(),
            cut_short: error.is_eof(),
            message: error.to_string(),
        }),
    }
}

/// `{"calls": [...]}` (or `tool_calls`, `trajectory`): the list inside.
fn listed_calls(bytes: &[u8]) -> Option<Vec<Value>> {
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(bytes) else {
        return None;
    };
    ["calls", "tool_calls", "trajectory"]
        .iter()
        .find_map(|key| match object.remove(*key) {
            Some(Value::Array(list)) => Some(list),
            _ => None,
        })
}

/// A list of `{tool, arguments, is_error, at}` (also `name`, `input`,
/// `args`, `timestamp`, and `error`/`output` text); an entry
/// `{"compaction": true}` or `{"type": "compaction"}` marks a compaction.
fn read_tool_list(entries: Vec<Value>) -> Trajectory {
    let mut t = Trajectory::new(Format::ToolList);
    for entry in entries {
        t.lines += 1;
        let Value::Object(entry) = entry else {
            t.skipped_lines += 1;
            continue;
        };
        let at = ["at", "timestamp", "time"]
            .iter()
            .find_map(|k| entry.get(*k));
        if entry.get("compaction") == Some(&Value::Bool(true))
            || entry.get("type").and_then(Value::as_str) == Some("compaction")
        {
            t.push_compaction(at.and_then(parse_time).map(|(_, text)| text));
            continue;
        }
        let Some(tool) = ["tool", "name", "tool_name"]
            .iter()
            .find_map(|k| entry.get(*k).and_then(Value::as_str))
            .filter(|s| !s.trim().is_empty())
        else {
            t.skipped_lines += 1;
            continue;
        };
        let arguments = arguments_of(&entry);
        let index = t.push_call(tool.trim(), &arguments);
        let call = &mut t.calls[index];
        call.set_time(at);
        let error_text = entry.get("error").and_then(Value::as_str);
        let output = error_text
            .or_else(|| {
                ["output", "result"]
                    .iter()
                    .find_map(|k| entry.get(*k).and_then(Value::as_str))
            })
            .unwrap_or("");
        let is_error = entry
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| error_text.is_some_and(|e| !e.trim().is_empty()));
        call.set_result(is_error, output);
        if tool == "TodoWrite" || tool == "update_plan" {
            claude::read_tasks(&mut t, &arguments);
        }
    }
    t
}

/// The arguments of a listed call; a JSON string holding an object is
/// read as that object.
fn arguments_of(entry: &Map<String, Value>) -> Value {
    let raw = ["arguments", "args", "input", "params", "parameters"]
        .iter()
        .find_map(|k| entry.get(*k))
        .cloned()
        .unwrap_or(Value::Null);
    match raw {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        other => other,
    }
}

/// JSONL: each line to the reader that knows its shape.
fn read_jsonl(bytes: &[u8]) -> Trajectory {
    let mut t = Trajectory::new(Format::ClaudeCode);
    let mut claude = claude::Reader::default();
    let mut codex = codex::Reader::default();
    let (mut claude_lines, mut codex_lines) = (0usize, 0usize);
    for line in bytes.split(|b| *b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        t.lines += 1;
        let Ok(Value::Object(value)) = serde_json::from_slice::<Value>(line) else {
            t.skipped_lines += 1;
            continue;
        };
        if claude::is_line(&value) {
            claude.read_line(&mut t, &value);
            claude_lines += 1;
        } else if codex::is_line(&value) {
            codex.read_line(&mut t, &value);
            codex_lines += 1;
        } else {
            t.skipped_lines += 1;
        }
    }
    if codex_lines > claude_lines {
        t.format = Format::Codex;
    }
    t
}

/// The text of a string, or of the `text` parts of a list of content
/// blocks (`[{"type": "text", "text": ..}]`), joined by newlines.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                _ => p.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::model::CallKind;

    #[test]
    fn a_tool_list_is_read_with_its_errors_times_and_compactions() {
        let input = br#"[
          {"tool": "Read", "arguments": {"file_path": "src/a.rs"}, "is_error": false, "at": "2026-11-23T10:00:00Z"},
          {"tool": "Bash", "arguments": "{\"command\": \"cargo test\"}", "is_error": true, "error": "error[E0425]: cannot find value `x`", "at": 1795428005},
          {"compaction": true},
          {"name": "Grep", "input": {"pattern": "fn x"}, "output": "src/a.rs:3:fn x()"},
          {"arguments": {}},
          42
        ]"#;
        let t = read_trajectory(input).expect("a tool list");
        assert_eq!(t.format, Format::ToolList);
        assert_eq!((t.lines, t.skipped_lines), (6, 2));
        let kinds: Vec<CallKind> = t.calls.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [CallKind::Read, CallKind::Shell, CallKind::Search]);
        assert_eq!(t.calls[0].at.as_deref(), Some("2026-11-23T10:00:00Z"));
        assert_eq!(t.calls[1].detail.as_deref(), Some("cargo test"));
        assert!(t.calls[1].is_error);
        assert_eq!(
            t.calls[1].error.as_deref(),
            Some("error[E0425]: cannot find value `x`")
        );
        assert!(t.calls[1].at_ms.is_some());
        assert_eq!(t.calls[2].results, ["src/a.rs"]);
        assert_eq!(t.compactions.len(), 1);
        assert_eq!(t.compactions[0].before_call, 2);
    }

    #[test]
    fn a_list_under_calls_is_read_too() {
        let t = read_trajectory(br#"{"calls": [{"tool": "Read", "arguments": {"path": "x"}}]}"#)
            .expect("calls");
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.calls[0].path.as_deref(), Some("x"));
    }

    #[test]
    fn bad_inputs_are_refused_with_the_reason() {
        assert!(matches!(read_trajectory(b" \n "), Err(Error::Empty)));
        assert!(matches!(
            read_trajectory(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Err(Error::Binary)
        ));
        let cut = br#"[{"tool": "Read", "arguments": {"file_path": "a"#;
        match read_trajectory(cut) {
            Err(Error::BrokenJson { cut_short, .. }) => assert!(cut_short),
            other => panic!("a cut-short list: {other:?}"),
        }
        match read_trajectory(b"hello\nworld\n{\"a\": 1}\n") {
            Err(Error::NoCalls { lines, skipped }) => assert_eq!((lines, skipped), (3, 3)),
            other => panic!("no calls: {other:?}"),
        }
        assert!(matches!(
            read_trajectory(b"[]"),
            Err(Error::NoCalls { lines: 0, .. })
        ));
        assert!(matches!(
            read_trajectory(b"[1, 2]"),
            Err(Error::NoCalls {
                lines: 2,
                skipped: 2
            })
        ));
    }

    #[test]
    fn broken_and_unknown_lines_are_counted_and_skipped() {
        let input = concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}}]}}"#,
            "\nnot json\n\u{FFFD}\u{FFFD}\n",
            r#"{"something":"else"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_p"#,
        );
        let t = read_trajectory(input.as_bytes()).expect("one call is readable");
        assert_eq!(t.calls.len(), 1);
        assert_eq!((t.lines, t.skipped_lines), (5, 4));
    }
}
