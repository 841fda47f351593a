//! OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Newer rollouts wrap every item: `{"timestamp", "type": "response_item",
//! "payload": {...}}`, with `event_msg` lines beside them (`exec_command_end`
//! carries a command's exit code, `patch_apply_end` whether a patch applied,
//! `user_message` what the user typed) and `compacted` lines where the
//! context was compacted. Older rollouts (mid 2025) have the items bare,
//! after a header line and `{"record_type": "state"}` markers. Calls are
//! `function_call` (arguments as a JSON string), `custom_tool_call`
//! (`apply_patch` with the patch as input), `local_shell_call` and
//! `web_search_call`; results are `function_call_output` and
//! `custom_tool_call_output`, matched by `call_id`.
//!
//! `write_stdin` calls that send nothing only wait for more output of a
//! command already started; they are not counted as calls of their own.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::classify::{error_text, found_nothing, result_paths};
use super::model::{parse_time, CallKind, Trajectory};
use super::parse::text_of;

/// Wrapper types of newer rollouts.
const WRAPPERS: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// Item types of older rollouts, which have no wrapper.
const BARE_ITEMS: [&str; 9] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "compacted",
];

/// Whether `line` is one a Codex rollout holds.
pub fn is_line(line: &Map<String, Value>) -> bool {
    match line.get("type").and_then(Value::as_str) {
        Some(t) => {
            (WRAPPERS.contains(&t) && line.get("payload").is_some_and(Value::is_object))
                || BARE_ITEMS.contains(&t)
        }
        // The header of an older rollout, and its state markers.
        None => {
            line.contains_key("record_type")
                || (line.contains_key("id") && line.contains_key("timestamp"))
        }
    }
}

/// What is carried from line to line.
#[derive(Default)]
pub struct Reader {
    /// Calls waiting for their output, by `call_id`.
    pending: HashMap<String, usize>,
    /// Every call by `call_id`, for events that arrive after the output.
    calls: HashMap<String, usize>,
    /// `write_stdin` polls whose output is not a call's result.
    polls: HashSet<String>,
}

impl Reader {
    pub fn read_line(&mut self, t: &mut Trajectory, line: &Map<String, Value>) {
        let time = line.get("timestamp");
        let Some(kind) = line.get("type").and_then(Value::as_str) else {
            return;
        };
        match (kind, line.get("payload")) {
            ("response_item", Some(payload)) => self.read_item(t, payload, time),
            ("event_msg", Some(payload)) => self.read_event(t, payload),
            ("compacted", _) => t.push_compaction(time.and_then(parse_time).map(|(_, at)| at)),
            ("session_meta" | "turn_context", _) => {}
            // An older, bare item.
            _ => self.read_item(t, &Value::Object(line.clone()), time),
        }
    }

    fn read_item(&mut self, t: &mut Trajectory, item: &Value, time: Option<&Value>) {
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    return;
                };
                let arguments = match item.get("arguments") {
                    Some(Value::String(s)) => {
                        serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                    }
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                let sends_nothing = arguments
                    .get("chars")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty);
                if name == "write_stdin" && sends_nothing {
                    if let Some(id) = call_id {
                        self.polls.insert(id);
                    }
                    return;
                }
                self.push(t, name, &arguments, time, call_id);
                if name == "update_plan" {
                    super::claude::read_tasks(t, &arguments);
                }
            }
            Some("custom_tool_call") => {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    return;
                };
                let input = item.get("input").cloned().unwrap_or(Value::Null);
                self.push(t, name, &input, time, call_id);
            }
            Some("local_shell_call") => {
                let command = item
                    .get("action")
                    .and_then(|a| a.get("command"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let arguments = serde_json::json!({ "command": command });
                self.push(t, "local_shell", &arguments, time, call_id);
            }
            Some("web_search_call") => {
                let query = item
                    .get("action")
                    .and_then(|a| a.get("query"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let arguments = serde_json::json!({ "query": query });
                self.push(t, "web_search", &arguments, time, None);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let Some(id) = call_id else { return };
                if self.polls.remove(&id) {
                    return;
                }
                if let Some(index) = self.pending.remove(&id) {
                    let (is_error, text) = read_output(item.get("output").unwrap_or(&Value::Null));
                    t.calls[index].set_result(is_error, &text);
                    t.result_seen(index);
                }
            }
            Some("message") if item.get("role").and_then(Value::as_str) == Some("user") => {
                let text = item.get("content").map(text_of).unwrap_or_default();
                if is_typed(&text) {
                    t.push_user_message(&text);
                }
            }
            Some("compacted") => t.push_compaction(time.and_then(parse_time).map(|(_, at)| at)),
            _ => {}
        }
    }

    fn push(
        &mut self,
        t: &mut Trajectory,
        name: &str,
        arguments: &Value,
        time: Option<&Value>,
        call_id: Option<String>,
    ) {
        let index = t.push_call(name, arguments);
        t.calls[index].set_time(time);
        if let Some(id) = call_id {
            self.pending.insert(id.clone(), index);
            self.calls.insert(id, index);
        }
    }

    fn read_event(&mut self, t: &mut Trajectory, event: &Value) {
        let call = event
            .get("call_id")
            .and_then(Value::as_str)
            .and_then(|id| self.calls.get(id).copied());
        match event.get("type").and_then(Value::as_str) {
            Some("exec_command_end") => {
                let Some(index) = call else { return };
                t.result_seen(index);
                let call = &mut t.calls[index];
                // The first of these outputs that says something.
                let output_of = |keys: &[&str]| {
                    keys.iter()
                        .filter_map(|k| event.get(*k).and_then(Value::as_str))
                        .find(|s| !s.trim().is_empty())
                        .unwrap_or("")
                };
                if let Some(code) = event.get("exit_code").and_then(Value::as_i64) {
                    let output =
                        output_of(&["stderr", "aggregated_output", "formatted_output", "stdout"]);
                    // A text search that matched nothing exits with 1.
                    call.is_error = code != 0 && !(call.grep && found_nothing(output, Some(code)));
                    call.error = if call.is_error {
                        error_text(output).or_else(|| Some(format!("exit code {code}")))
                    } else {
                        None
                    };
                }
                // Codex's own reading of the command says what it did.
                if call.kind == CallKind::Shell {
                    reclassify(call, event.get("parsed_cmd"));
                }
                // Where a search matched: the paths its output names.
                if call.kind == CallKind::Search && !call.is_error {
                    call.results = result_paths(output_of(&[
                        "aggregated_output",
                        "stdout",
                        "formatted_output",
                    ]));
                }
            }
            Some("patch_apply_end") => {
                let Some(index) = call else { return };
                if event.get("success") == Some(&Value::Bool(false)) {
                    let stderr = event.get("stderr").and_then(Value::as_str).unwrap_or("");
                    t.calls[index].set_result(true, stderr);
                }
                t.result_seen(index);
            }
            Some("user_message") => {
                if let Some(text) = event.get("message").and_then(Value::as_str) {
                    if is_typed(text) {
                        t.push_user_message(text);
                    }
                }
            }
            Some("context_compacted") => t.push_compaction(None),
            _ => {}
        }
    }
}

/// Applies Codex's `parsed_cmd` (`[{type: read|search|list_files, path}]`).
fn reclassify(call: &mut super::model::Call, parsed: Option<&Value>) {
    let Some(first) = parsed.and_then(Value::as_array).and_then(|a| a.first()) else {
        return;
    };
    let path = first
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string);
    match first.get("type").and_then(Value::as_str) {
        Some("read") => {
            call.kind = CallKind::Read;
            call.path = path.or(call.path.take());
        }
        Some("search" | "list_files") => {
            call.kind = CallKind::Search;
            call.path = path.or(call.path.take());
        }
        _ => {}
    }
}

/// Whether a command's output says it failed, and the output itself.
///
/// Outputs come as `{"output", "metadata": {"exit_code"}}` JSON text, as
/// text headed `Exit code: N` or holding `Process exited with code N`
/// (before an `Output:` line), or as `{content, success}`.
fn read_output(output: &Value) -> (bool, String) {
    match output {
        Value::Object(o) => {
            let text = o.get("content").map(text_of).unwrap_or_default();
            (o.get("success") == Some(&Value::Bool(false)), text)
        }
        Value::String(s) => {
            if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(s) {
                if let Some(code) = o
                    .get("metadata")
                    .and_then(|m| m.get("exit_code"))
                    .and_then(Value::as_i64)
                {
                    let text = o.get("output").map(text_of).unwrap_or_default();
                    return (code != 0, text);
                }
            }
            let (head, body) = match s.split_once("\nOutput:\n") {
                Some((head, body)) => (head, body),
                None => (s.as_str(), s.as_str()),
            };
            let code = head.lines().find_map(|l| {
                let l = l.trim();
                l.strip_prefix("Process exited with code ")
                    .or_else(|| l.strip_prefix("Exit code: "))
                    .and_then(|c| c.trim().parse::<i64>().ok())
            });
            let failed = match code {
                Some(code) => code != 0,
                None => s
                    .lines()
                    .next()
                    .map(str::to_lowercase)
                    .is_some_and(|l| l.contains(" failed:") || l.starts_with("error:")),
            };
            (failed, body.to_string())
        }
        other => (false, text_of(other)),
    }
}

/// Whether a user item is what the user typed rather than the instructions
/// and environment Codex puts in front of a session.
fn is_typed(text: &str) -> bool {
    let text = text.trim_start();
    !text.is_empty()
        && ![
            "<environment_context>",
            "<user_instructions>",
            "# AGENTS.md",
            "<permissions",
            "<INSTRUCTIONS>",
            "<turn_aborted>",
        ]
        .iter()
        .any(|p| text.starts_with(p))
}

#[cfg(test)]
mod tests {
    use crate::trajectory::model::{CallKind, Format};
    use crate::trajectory::parse::read_trajectory;

    /// A rollout of Codex CLI 0.125 (wrapped items, unified exec).
    const WRAPPED: &str = r#"{"timestamp":"2026-05-11T08:27:17.490Z","type":"session_meta","payload":{"id":"s","cwd":"/r"}}
{"timestamp":"2026-05-11T08:27:17.495Z","type":"event_msg","payload":{"type":"user_message","message":"make the test pass"}}
{"timestamp":"2026-05-11T08:27:17.495Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"make the test pass"}]}}
{"timestamp":"2026-05-11T08:27:17.496Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/r</cwd></environment_context>"}]}}
{"timestamp":"2026-05-11T08:27:22.479Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"npm test\", \"workdir\": \"/r\"}","call_id":"c1"}}
{"timestamp":"2026-05-11T08:27:23.709Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n"}}
{"timestamp":"2026-05-11T08:27:24.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":7,\"chars\":\"\"}","call_id":"c2"}}
{"timestamp":"2026-05-11T08:27:25.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Process exited with code 1\nOutput:\nFAIL src/a.test.ts\nTypeError: x is not a function"}}
{"timestamp":"2026-05-11T08:27:25.100Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1","exit_code":1,"aggregated_output":"FAIL src/a.test.ts\nTypeError: x is not a function"}}
{"timestamp":"2026-05-11T08:27:26.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"nl -ba src/a.ts\"}","call_id":"c3"}}
{"timestamp":"2026-05-11T08:27:26.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"Chunk ID: b\nProcess exited with code 0\nOutput:\n1 export const x = 1"}}
{"timestamp":"2026-05-11T08:27:26.600Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c3","exit_code":0,"parsed_cmd":[{"type":"read","cmd":"nl -ba src/a.ts","name":"a.ts","path":"src/a.ts"}]}}
{"timestamp":"2026-05-11T08:27:27.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"c4","name":"apply_patch","input":"*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const x = 1\n+export const x = () => 1\n*** End Patch\n"}}
{"timestamp":"2026-05-11T08:27:27.500Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c4","output":"{\"output\":\"Success. Updated the following files:\\nM src/a.ts\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}}
{"timestamp":"2026-05-11T08:27:28.000Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[{\"step\":\"Fix x\",\"status\":\"completed\"},{\"step\":\"Run tests\",\"status\":\"pending\"}]}","call_id":"c5"}}
{"timestamp":"2026-05-11T08:27:29.000Z","type":"compacted","payload":{"message":"summary"}}
{"timestamp":"2026-05-11T08:27:29.000Z","type":"event_msg","payload":{"type":"token_count","info":null}}
"#;

    #[test]
    fn a_wrapped_codex_rollout_is_read() {
        let t = read_trajectory(WRAPPED.as_bytes()).expect("a rollout");
        assert_eq!(t.format, Format::Codex);
        assert_eq!(t.skipped_lines, 0);
        let tools: Vec<&str> = t.calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(
            tools,
            ["exec_command", "exec_command", "apply_patch", "update_plan"],
            "polls are not calls"
        );
        assert_eq!(t.calls[0].kind, CallKind::Shell);
        assert!(t.calls[0].is_error, "exit code 1 from exec_command_end");
        assert_eq!(
            t.calls[0].error.as_deref(),
            Some("TypeError: x is not a function")
        );
        assert_eq!(t.calls[1].kind, CallKind::Read);
        assert_eq!(t.calls[1].path.as_deref(), Some("src/a.ts"));
        assert!(!t.calls[1].is_error);
        assert_eq!(t.calls[2].kind, CallKind::Write);
        assert_eq!(t.calls[2].path.as_deref(), Some("src/a.ts"));
        assert!(!t.calls[2].is_error);
        assert_eq!(t.calls[2].at.as_deref(), Some("2026-05-11T08:27:27Z"));
        assert_eq!(t.user_messages.len(), 1, "typed once, written twice");
        assert_eq!(t.user_messages[0].text, "make the test pass");
        assert_eq!(t.tasks.len(), 2);
        assert_eq!(t.compactions.len(), 1);
        assert_eq!(t.compactions[0].before_call, 4);
    }

    /// A rollout of mid-2025 Codex CLI (bare items, `shell` with an argv).
    const BARE: &str = r#"{"id":"c27a914d","timestamp":"2025-08-20T13:20:47.060Z","instructions":null,"git":{"branch":"main"}}
{"record_type":"state"}
{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"why does the build fail?"}]}
{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"opaque"}
{"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo build\"]}","call_id":"call_1"}
{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"error[E0432]: unresolved import `crate::x`\\n\",\"metadata\":{\"exit_code\":101,\"duration_seconds\":2.5}}"}
{"type":"function_call","id":"fc_2","name":"shell","arguments":"{\"command\":[\"rg\",\"-n\",\"mod x\",\"src\"]}","call_id":"call_2"}
{"type":"function_call_output","call_id":"call_2","output":"{\"output\":\"src/lib.rs:3:mod y;\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}
{"type":"local_shell_call","call_id":"call_3","status":"completed","action":{"type":"exec","command":["cat","src/lib.rs"]}}
{"record_type":"state"}
"#;

    #[test]
    fn a_bare_codex_rollout_is_read() {
        let t = read_trajectory(BARE.as_bytes()).expect("a rollout");
        assert_eq!(t.format, Format::Codex);
        assert_eq!(t.skipped_lines, 0);
        assert_eq!(t.calls.len(), 3);
        assert_eq!(t.calls[0].kind, CallKind::Shell);
        assert_eq!(t.calls[0].detail.as_deref(), Some("cargo build"));
        assert!(t.calls[0].is_error);
        assert_eq!(
            t.calls[0].error.as_deref(),
            Some("error[E0432]: unresolved import `crate::x`")
        );
        assert_eq!(t.calls[1].kind, CallKind::Search);
        assert!(t.calls[1].grep);
        assert_eq!(t.calls[1].results, ["src/lib.rs"]);
        assert_eq!(t.calls[2].kind, CallKind::Read);
        assert_eq!(t.calls[2].path.as_deref(), Some("src/lib.rs"));
        assert_eq!(t.user_messages[0].text, "why does the build fail?");
    }
}
