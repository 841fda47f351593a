//! Claude Code session transcripts (`~/.claude/projects/<project>/<id>.jsonl`).
//!
//! Each line has a `type`: `assistant` lines carry `tool_use` blocks (the
//! calls), `user` lines carry `tool_result` blocks (matched to their call by
//! `tool_use_id`, with `is_error`) or what the user typed; a `system` line
//! with `subtype: compact_boundary` and the `user` line after it marked
//! `isCompactSummary` mark a compaction. Lines of sub-agents
//! (`isSidechain`) in a session are left out: they ran in a context of
//! their own. A sub-agent's own transcript (`agent-<id>.jsonl`, every line
//! a sidechain) is read as the run it is.
//! `TodoWrite` calls give the task list, `ExitPlanMode` the plan.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::model::{parse_time, Task, Trajectory};
use super::parse::text_of;

/// Line types Claude Code writes.
const TYPES: [&str; 8] = [
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "result",
];

/// Whether `line` is one Claude Code writes.
pub fn is_line(line: &Map<String, Value>) -> bool {
    !line.contains_key("payload")
        && line
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| TYPES.contains(&t))
}

/// What is carried from line to line: calls waiting for their result.
#[derive(Default)]
pub struct Reader {
    pending: HashMap<String, usize>,
    /// Whether the run read is a sub-agent's: the first message (a user or
    /// assistant line) decides.
    sidechain: Option<bool>,
}

impl Reader {
    pub fn read_line(&mut self, t: &mut Trajectory, line: &Map<String, Value>) {
        let kind = line.get("type").and_then(Value::as_str);
        if matches!(kind, Some("user" | "assistant")) {
            let sidechain = line.get("isSidechain") == Some(&Value::Bool(true));
            if *self.sidechain.get_or_insert(sidechain) != sidechain {
                return;
            }
        }
        let time = line.get("timestamp");
        let content = line.get("message").and_then(|m| m.get("content"));
        match line.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for block in content.and_then(Value::as_array).into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                        self.read_tool_use(t, block, time);
                    }
                }
            }
            Some("user") if line.get("isCompactSummary") == Some(&Value::Bool(true)) => {
                t.push_compaction(time.and_then(parse_time).map(|(_, at)| at));
            }
            Some("user") => {
                let meta = line.get("isMeta") == Some(&Value::Bool(true));
                match content {
                    Some(Value::String(text)) if !meta && is_typed(text) => {
                        t.push_user_message(text)
                    }
                    Some(Value::Array(blocks)) => {
                        for block in blocks {
                            match block.get("type").and_then(Value::as_str) {
                                Some("tool_result") => self.read_tool_result(t, block),
                                Some("text") if !meta => {
                                    let text = text_of(&Value::Array(vec![block.clone()]));
                                    if is_typed(&text) {
                                        t.push_user_message(&text);
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some("system")
                if line.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                t.push_compaction(time.and_then(parse_time).map(|(_, at)| at));
            }
            _ => {}
        }
    }

    fn read_tool_use(&mut self, t: &mut Trajectory, block: &Value, time: Option<&Value>) {
        let Some(name) = block.get("name").and_then(Value::as_str) else {
            return;
        };
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        let index = t.push_call(name, &input);
        t.calls[index].set_time(time);
        if let Some(id) = block.get("id").and_then(Value::as_str) {
            self.pending.insert(id.to_string(), index);
        }
        match name {
            "TodoWrite" => read_tasks(t, &input),
            "ExitPlanMode" => {
                if let Some(plan) = input.get("plan").and_then(Value::as_str) {
                    t.plan = Some(plan.trim().to_string());
                }
            }
            _ => {}
        }
    }

    fn read_tool_result(&mut self, t: &mut Trajectory, block: &Value) {
        let Some(index) = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .and_then(|id| self.pending.remove(id))
        else {
            return;
        };
        let is_error = block.get("is_error") == Some(&Value::Bool(true));
        let output = block.get("content").map(text_of).unwrap_or_default();
        t.calls[index].set_result(is_error, &output);
        t.result_seen(index);
    }
}

/// The task list of a `TodoWrite` (`todos: [{content, status}]`) or a
/// Codex `update_plan` (`plan: [{step, status}]`) call.
pub fn read_tasks(t: &mut Trajectory, arguments: &Value) {
    let Some(items) = ["todos", "plan"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_array))
    else {
        return;
    };
    t.tasks = items
        .iter()
        .filter_map(|item| {
            let text = ["content", "step", "text", "title"]
                .iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))?;
            let done = matches!(
                item.get("status").and_then(Value::as_str),
                Some("completed" | "done")
            );
            Some(Task {
                text: text.trim().to_string(),
                done,
            })
        })
        .filter(|task| !task.text.is_empty())
        .collect();
}

/// Whether a user line's text is something the user typed rather than
/// what Claude Code inserted (command echoes, reminders, interruptions).
fn is_typed(text: &str) -> bool {
    let text = text.trim_start();
    ![
        "<command-",
        "<local-command",
        "<system-reminder>",
        "Caveat:",
        "[Request interrupted",
        "This session is being continued",
    ]
    .iter()
    .any(|p| text.starts_with(p))
        && !text.is_empty()
}

#[cfg(test)]
mod tests {
    use crate::trajectory::model::{CallKind, Format};
    use crate::trajectory::parse::read_trajectory;

    const SESSION: &str = r#"{"type":"summary","summary":"Fix the parser","leafUuid":"x"}
{"type":"user","timestamp":"2026-01-07T20:00:00Z","message":{"role":"user","content":"Fix the failing parser test"}}
{"type":"assistant","timestamp":"2026-01-07T20:00:05Z","message":{"content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"/r/src/parse.rs"}},{"type":"tool_use","id":"b","name":"Bash","input":{"command":"cargo test parse"}}]}}
{"type":"user","timestamp":"2026-01-07T20:00:09Z","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"fn parse() {}"},{"type":"tool_result","tool_use_id":"b","is_error":true,"content":[{"type":"text","text":"Exit code 101\nerror[E0308]: mismatched types"}]}]}}
{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"tool_use","id":"s","name":"Read","input":{"file_path":"/r/other.rs"}}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c","name":"TodoWrite","input":{"todos":[{"content":"Fix types","status":"completed"},{"content":"Run tests","status":"in_progress"}]}}]}}
{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"2026-01-07T20:10:00Z"}
{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation..."}}
{"type":"user","message":{"content":"<command-name>/compact</command-name>"}}
{"type":"assistant","timestamp":"2026-01-07T20:10:05Z","message":{"content":[{"type":"tool_use","id":"d","name":"Grep","input":{"pattern":"fn parse","path":"/r/src"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"d","content":"/r/src/parse.rs\n/r/src/lib.rs"}]}}
{"type":"file-history-snapshot","snapshot":{}}
"#;

    #[test]
    fn a_claude_code_session_is_read() {
        let t = read_trajectory(SESSION.as_bytes()).expect("a session");
        assert_eq!(t.format, Format::ClaudeCode);
        assert_eq!(t.skipped_lines, 0);
        let tools: Vec<&str> = t.calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(
            tools,
            ["Read", "Bash", "TodoWrite", "Grep"],
            "sidechains are left out"
        );
        assert_eq!(t.calls[0].kind, CallKind::Read);
        assert_eq!(t.calls[0].path.as_deref(), Some("/r/src/parse.rs"));
        assert!(!t.calls[0].is_error);
        assert!(t.calls[1].is_error);
        assert_eq!(
            t.calls[1].error.as_deref(),
            Some("error[E0308]: mismatched types")
        );
        assert_eq!(t.calls[1].at.as_deref(), Some("2026-01-07T20:00:05Z"));
        assert_eq!(t.calls[3].results, ["/r/src/parse.rs", "/r/src/lib.rs"]);
        assert_eq!(
            t.compactions.len(),
            1,
            "boundary and summary are one compaction"
        );
        assert_eq!(t.compactions[0].before_call, 3);
        assert_eq!(t.compactions[0].at.as_deref(), Some("2026-01-07T20:10:00Z"));
        let typed: Vec<&str> = t.user_messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(typed, ["Fix the failing parser test"]);
        assert_eq!(t.tasks.len(), 2);
        assert!(t.tasks[0].done && !t.tasks[1].done);
    }

    #[test]
    fn a_sub_agents_own_transcript_is_read() {
        let agent = r#"{"isSidechain":true,"agentId":"a1","type":"user","timestamp":"2026-01-07T20:00:00Z","message":{"role":"user","content":"Review the CLI commands"}}
{"isSidechain":true,"agentId":"a1","type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Glob","input":{"pattern":"src/cli/**"}}]}}
{"isSidechain":true,"agentId":"a1","type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"src/cli/main.ts"}]}}
{"isSidechain":true,"agentId":"a1","type":"assistant","message":{"content":[{"type":"tool_use","id":"b","name":"Read","input":{"file_path":"src/cli/main.ts"}}]}}
"#;
        let t = read_trajectory(agent.as_bytes()).expect("a sub-agent's run");
        let tools: Vec<&str> = t.calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(tools, ["Glob", "Read"]);
        let typed: Vec<&str> = t.user_messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(typed, ["Review the CLI commands"]);
    }
}
