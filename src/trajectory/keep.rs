//! What a compaction should have kept: the concrete paths, error texts,
//! search results, tasks and request that the agent went back for, as
//! instructions to paste into an agent's compaction prompt, and as
//! `[working-context]` events (`tool_call`, `failure`, `goal`, `progress`,
//! `decision`, `user_message`) that seed a session with them.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::model::{cut, Call, CallKind, Task, Trajectory};
use super::patterns::{Finding, Pattern};
use crate::context::state::is_bare_reply;

/// Files named at most.
const PATHS: usize = 12;
/// Errors named at most.
const ERRORS: usize = 5;
/// Searches named at most.
const SEARCHES: usize = 5;
/// Tasks named at most.
const TASKS: usize = 20;
/// The longest request, plan or task text kept.
const TEXT_CHARS: usize = 500;

/// A file the agent worked with.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeptPath {
    pub path: String,
    pub reads: usize,
    pub writes: usize,
    /// The last call that touched it.
    pub last_call: usize,
}

/// A failure the agent met.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeptError {
    pub tool: String,
    /// The command (or file) that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub text: String,
    /// How often it failed like this.
    pub times: usize,
    /// `build`, `test` or `other`, as working-context failures are kinded.
    pub kind: &'static str,
    pub last_call: usize,
    /// The same command, or for a build or test any later build or test,
    /// succeeded after its last failure: kept because it failed more than
    /// once, but no open failure of the session.
    pub fixed: bool,
    /// A shell command failed (a build, a test, a script), as opposed to a
    /// read, search or edit that missed: only these seed a session.
    #[serde(skip)]
    pub shell: bool,
}

/// A search the agent ran and what it found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeptSearch {
    pub tool: String,
    pub pattern: String,
    pub times: usize,
    /// The first paths it found.
    pub results: Vec<String>,
    pub last_call: usize,
}

/// Everything worth keeping, and the same as text and as events.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Keep {
    /// Ready to paste into an agent's compaction prompt.
    pub instructions: String,
    pub paths: Vec<KeptPath>,
    pub errors: Vec<KeptError>,
    pub searches: Vec<KeptSearch>,
    pub tasks: Vec<Task>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The user's latest request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_request: Option<String>,
    /// `[working-context]` events, oldest first, to post to a session.
    pub events: Vec<Value>,
}

/// Works out what to keep from the trajectory and its findings.
pub fn what_to_keep(t: &Trajectory, findings: &[Finding]) -> Keep {
    let paths = kept_paths(t, findings);
    let errors = kept_errors(t);
    let searches = kept_searches(t, findings);
    let tasks: Vec<Task> = t
        .tasks
        .iter()
        .take(TASKS)
        .map(|task| Task {
            text: cut(&task.text, TEXT_CHARS),
            done: task.done,
        })
        .collect();
    let decision = t.plan.as_deref().map(|p| cut(p, TEXT_CHARS));
    // A bare reply ("y", "continue", "2") answers the agent: the request is
    // the latest message that asks something, when there is one.
    let user_request = t
        .user_messages
        .iter()
        .rev()
        .find(|m| !is_bare_reply(&m.text))
        .or(t.user_messages.last())
        .map(|m| cut(&m.text, TEXT_CHARS));
    let goal = t
        .user_messages
        .iter()
        .find(|m| !is_bare_reply(&m.text))
        .or(t.user_messages.first())
        .map(|m| cut(&m.text, TEXT_CHARS));
    let mut keep = Keep {
        instructions: String::new(),
        paths,
        errors,
        searches,
        tasks,
        decision,
        user_request,
        events: Vec::new(),
    };
    keep.instructions = instructions(&keep, !findings.is_empty());
    keep.events = events(&keep, goal);
    keep
}

/// Whether a path is a shell pattern (`logs/*.jsonl`) rather than a file.
fn is_pattern(path: &str) -> bool {
    path.contains(['*', '?'])
}

/// Files that were re-read (the agent needed them again) and files it
/// changed, the most used first; a pattern of files is no file in play.
fn kept_paths(t: &Trajectory, findings: &[Finding]) -> Vec<KeptPath> {
    let mut by_path: HashMap<&str, KeptPath> = HashMap::new();
    for call in &t.calls {
        // A file removed is out of play (until it is written again).
        if !call.is_error {
            for removed in &call.removes {
                by_path.remove(removed.trim_start_matches("./"));
            }
        }
        let Some(path) = call.path.as_deref().filter(|p| !is_pattern(p)) else {
            continue;
        };
        if !matches!(call.kind, CallKind::Read | CallKind::Write) {
            continue;
        }
        let entry = by_path
            .entry(path.trim_start_matches("./"))
            .or_insert(KeptPath {
                path: path.trim_start_matches("./").to_string(),
                reads: 0,
                writes: 0,
                last_call: 0,
            });
        if call.kind == CallKind::Read {
            entry.reads += 1;
        } else {
            entry.writes += 1;
        }
        entry.last_call = call.index;
    }
    let needed_again: Vec<&str> = findings
        .iter()
        .filter(|f| matches!(f.pattern, Pattern::Reread | Pattern::RereadAfterCompaction))
        .flat_map(|f| f.calls.iter().filter_map(|c| c.path.as_deref()))
        .map(|p| p.trim_start_matches("./"))
        .collect();
    let mut paths: Vec<KeptPath> = by_path
        .into_values()
        .filter(|p| p.writes > 0 || p.reads > 1 || needed_again.contains(&p.path.as_str()))
        .collect();
    paths.sort_by_key(|p| {
        (
            std::cmp::Reverse(p.reads + 2 * p.writes),
            std::cmp::Reverse(p.last_call),
        )
    });
    paths.truncate(PATHS);
    paths
}

/// The kind of a failure, as working-context failures are kinded.
fn failure_kind(call: &Call) -> &'static str {
    let subject = call.detail.as_deref().unwrap_or("").to_lowercase();
    let words: Vec<&str> = subject
        .split(|c: char| c.is_whitespace() || c == '&' || c == ';' || c == '|')
        .collect();
    let has = |w: &str| words.contains(&w);
    if has("test")
        || has("pytest")
        || has("jest")
        || has("vitest")
        || has("nextest")
        || has("rspec")
        || subject.contains("npm run test")
    {
        "test"
    } else if has("build")
        || has("check")
        || has("tsc")
        || has("make")
        || has("gcc")
        || has("clang")
        || has("javac")
        || has("mvn")
        || has("gradle")
        || has("clippy")
    {
        "build"
    } else {
        "other"
    }
}

/// Failures not followed by a success of the same command, and failures
/// that came again; the latest first.
fn kept_errors(t: &Trajectory) -> Vec<KeptError> {
    let mut by_subject: HashMap<(String, Option<String>), KeptError> = HashMap::new();
    let mut settled: Vec<(String, Option<String>)> = Vec::new();
    for call in &t.calls {
        let subject = call.detail.clone().or_else(|| call.path.clone());
        let key = (call.tool.clone(), subject.clone());
        if !call.is_error {
            if by_subject.contains_key(&key) {
                settled.push(key);
            }
            // A build or test that passes settles the failed ones of its
            // kind (`cargo test parse` failed, then `cargo test` passed).
            let kind = failure_kind(call);
            if call.kind == CallKind::Shell && kind != "other" {
                for (key, e) in &by_subject {
                    if e.shell && e.kind == kind && !settled.contains(key) {
                        settled.push(key.clone());
                    }
                }
            }
            continue;
        }
        settled.retain(|k| k != &key);
        let entry = by_subject.entry(key).or_insert_with(|| KeptError {
            tool: call.tool.clone(),
            subject,
            text: String::new(),
            times: 0,
            kind: failure_kind(call),
            last_call: 0,
            fixed: false,
            shell: call.kind == CallKind::Shell,
        });
        entry.times += 1;
        entry.last_call = call.index;
        entry.text = call
            .error
            .clone()
            .unwrap_or_else(|| "(no error text)".to_string());
    }
    let mut errors: Vec<KeptError> = by_subject
        .into_iter()
        .filter_map(|(key, mut e)| {
            e.fixed = settled.contains(&key);
            (e.times > 1 || !e.fixed).then_some(e)
        })
        .collect();
    errors.sort_by_key(|e| std::cmp::Reverse(e.last_call));
    errors.truncate(ERRORS);
    errors
}

/// Searches run more than once, or part of a finding, with their results.
fn kept_searches(t: &Trajectory, findings: &[Finding]) -> Vec<KeptSearch> {
    let in_findings: Vec<usize> = findings
        .iter()
        .filter(|f| matches!(f.pattern, Pattern::SearchesAfterError | Pattern::GrepHeavy))
        .flat_map(|f| f.calls.iter().map(|c| c.index))
        .collect();
    let mut by_pattern: HashMap<(&str, &str), KeptSearch> = HashMap::new();
    let mut flagged: Vec<(&str, &str)> = Vec::new();
    for call in t.calls.iter().filter(|c| c.kind == CallKind::Search) {
        let Some(pattern) = call.detail.as_deref() else {
            continue;
        };
        let key = (call.tool.as_str(), pattern);
        let entry = by_pattern.entry(key).or_insert_with(|| KeptSearch {
            tool: call.tool.clone(),
            pattern: pattern.to_string(),
            times: 0,
            results: Vec::new(),
            last_call: 0,
        });
        entry.times += 1;
        entry.last_call = call.index;
        if !call.results.is_empty() {
            entry.results = call.results.clone();
        }
        if in_findings.contains(&call.index) {
            flagged.push(key);
        }
    }
    let mut searches: Vec<KeptSearch> = by_pattern
        .into_iter()
        .filter(|(key, s)| s.times > 1 || flagged.contains(key))
        .map(|(_, s)| s)
        .collect();
    searches.sort_by_key(|s| (std::cmp::Reverse(s.times), std::cmp::Reverse(s.last_call)));
    searches.truncate(SEARCHES);
    searches
}

/// The text for an agent's compaction prompt: empty when there is nothing
/// to keep; it says the agent lost context only when a finding says so.
fn instructions(keep: &Keep, lost: bool) -> String {
    let mut out = String::new();
    if let Some(request) = &keep.user_request {
        out.push_str("\nThe user's latest request (keep it word for word):\n");
        for line in request.lines() {
            out.push_str(&format!("> {line}\n"));
        }
    }
    if !keep.paths.is_empty() {
        out.push_str(
            "\nFiles in play (keep each path and what you learned from it, so it need not be \
             read again):\n",
        );
        for p in &keep.paths {
            out.push_str(&format!(
                "- {} (read {}, changed {})\n",
                p.path,
                times(p.reads),
                times(p.writes)
            ));
        }
    }
    if !keep.errors.is_empty() {
        out.push_str("\nErrors (keep the exact text and the command that caused it):\n");
        for e in &keep.errors {
            let subject = e
                .subject
                .as_deref()
                .map(|s| format!(" `{}`", cut(s, 120)))
                .unwrap_or_default();
            let fixed = if e.fixed { ", then succeeded" } else { "" };
            out.push_str(&format!(
                "- {}{} failed {}{fixed}: {}\n",
                e.tool,
                subject,
                times(e.times),
                e.text
            ));
        }
    }
    if !keep.searches.is_empty() {
        out.push_str("\nSearch results (keep the pattern and where it matched):\n");
        for s in &keep.searches {
            let found = if s.results.is_empty() {
                "no paths recorded".to_string()
            } else {
                s.results.join(", ")
            };
            out.push_str(&format!(
                "- {} \"{}\" (run {}) → {}\n",
                s.tool,
                cut(&s.pattern, 120),
                times(s.times),
                found
            ));
        }
    }
    if !keep.tasks.is_empty() {
        out.push_str("\nTasks (keep their state):\n");
        for task in &keep.tasks {
            let mark = if task.done { "x" } else { " " };
            out.push_str(&format!("- [{mark}] {}\n", task.text));
        }
    }
    if let Some(decision) = &keep.decision {
        out.push_str("\nThe plan that was agreed:\n");
        for line in decision.lines() {
            out.push_str(&format!("> {line}\n"));
        }
    }
    if out.is_empty() {
        return out;
    }
    let why = if lost {
        " The agent lost it before and had to look it up again."
    } else {
        ""
    };
    format!("When you compact this conversation, keep the following.{why}\n{out}")
}

fn times(n: usize) -> String {
    match n {
        0 => "never".to_string(),
        1 => "once".to_string(),
        n => format!("{n} times"),
    }
}

/// The working-context events, in the order to post them: the goal first,
/// then the files touched (oldest first, so the most recent ends up first
/// in the session's ring), the failures still open (a command that failed
/// and then succeeded is no failure of the session), tasks, the decision
/// and, last, the latest user request.
fn events(keep: &Keep, goal: Option<String>) -> Vec<Value> {
    let mut events = Vec::new();
    if let Some(goal) = goal {
        events.push(json!({"type": "goal", "text": goal, "done": false}));
    }
    let mut paths: Vec<&KeptPath> = keep.paths.iter().collect();
    paths.sort_by_key(|p| p.last_call);
    for p in paths {
        let tool = if p.writes > 0 { "Edit" } else { "Read" };
        events.push(json!({"type": "tool_call", "tool": tool, "arguments": {"file_path": p.path}}));
    }
    // A session keeps the latest failure of each kind: the open ones of a
    // kind go as one failure, a line each, the latest last. A read, search
    // or edit that missed is no failure the session is left with.
    let mut errors: Vec<&KeptError> = keep.errors.iter().filter(|e| e.shell && !e.fixed).collect();
    errors.sort_by_key(|e| e.last_call);
    let mut by_kind: Vec<(&str, Vec<String>)> = Vec::new();
    for e in errors {
        let line = match &e.subject {
            Some(subject) => format!("{} `{}`: {}", e.tool, cut(subject, 200), e.text),
            None => format!("{}: {}", e.tool, e.text),
        };
        match by_kind.iter_mut().find(|(kind, _)| *kind == e.kind) {
            Some((_, lines)) => lines.push(line),
            None => by_kind.push((e.kind, vec![line])),
        }
    }
    for (kind, lines) in by_kind {
        events.push(json!({"type": "failure", "kind": kind, "text": lines.join("\n")}));
    }
    for task in &keep.tasks {
        events.push(json!({"type": "progress", "text": task.text, "done": task.done}));
    }
    if let Some(decision) = &keep.decision {
        events.push(json!({"type": "decision", "text": decision}));
    }
    if let Some(request) = &keep.user_request {
        events.push(json!({"type": "user_message", "text": request}));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::model::Format;
    use crate::trajectory::patterns::{find_patterns, Thresholds};

    fn trajectory() -> Trajectory {
        let mut t = Trajectory::new(Format::ToolList);
        t.push_user_message("Make the parser accept tabs");
        let calls = [
            ("Read", json!({"file_path": "src/parse.rs"}), None),
            (
                "Bash",
                json!({"command": "cargo test parse"}),
                Some("error[E0308]: mismatched types"),
            ),
            ("Grep", json!({"pattern": "fn tokenize"}), None),
            ("Read", json!({"file_path": "src/parse.rs"}), None),
            ("Edit", json!({"file_path": "src/parse.rs"}), None),
            ("Grep", json!({"pattern": "fn tokenize"}), None),
            (
                "Bash",
                json!({"command": "cargo build"}),
                Some("linker `cc` not found"),
            ),
            ("Bash", json!({"command": "cargo build"}), None),
        ];
        for (tool, arguments, error) in calls {
            let i = t.push_call(tool, &arguments);
            let output = error.unwrap_or("src/lex.rs:3:fn tokenize()");
            t.calls[i].set_result(error.is_some(), output);
        }
        t.tasks = vec![
            Task {
                text: "Accept tabs".into(),
                done: true,
            },
            Task {
                text: "Run the tests".into(),
                done: false,
            },
        ];
        t
    }

    #[test]
    fn what_to_keep_names_paths_errors_searches_and_tasks() {
        let t = trajectory();
        let findings = find_patterns(&t, &Thresholds::default());
        let keep = what_to_keep(&t, &findings);
        assert_eq!(keep.paths.len(), 1);
        assert_eq!(
            (
                keep.paths[0].path.as_str(),
                keep.paths[0].reads,
                keep.paths[0].writes
            ),
            ("src/parse.rs", 2, 1)
        );
        // The build failure was fixed by the next build; the test failure stays.
        assert_eq!(keep.errors.len(), 1, "{:?}", keep.errors);
        assert_eq!(keep.errors[0].kind, "test");
        assert_eq!(keep.errors[0].text, "error[E0308]: mismatched types");
        assert_eq!(keep.searches.len(), 1);
        assert_eq!(keep.searches[0].pattern, "fn tokenize");
        assert_eq!(keep.searches[0].results, ["src/lex.rs"]);
        for needle in [
            "src/parse.rs (read 2 times, changed once)",
            "`cargo test parse` failed once: error[E0308]: mismatched types",
            "Grep \"fn tokenize\" (run 2 times) → src/lex.rs",
            "- [x] Accept tabs",
            "- [ ] Run the tests",
            "> Make the parser accept tabs",
        ] {
            assert!(
                keep.instructions.contains(needle),
                "{needle:?} in\n{}",
                keep.instructions
            );
        }
    }

    #[test]
    fn events_have_the_working_context_shapes() {
        let t = trajectory();
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        let types: Vec<&str> = keep
            .events
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "goal",
                "tool_call",
                "failure",
                "progress",
                "progress",
                "user_message"
            ]
        );
        assert_eq!(keep.events[1]["arguments"]["file_path"], "src/parse.rs");
        assert_eq!(keep.events[1]["tool"], "Edit");
        assert_eq!(keep.events[2]["kind"], "test");
        assert_eq!(
            keep.events[3],
            json!({"type": "progress", "text": "Accept tabs", "done": true})
        );
        assert_eq!(keep.events[5]["text"], "Make the parser accept tabs");
    }

    #[test]
    fn a_failure_fixed_later_is_kept_but_seeds_no_open_failure() {
        let mut t = Trajectory::new(Format::ToolList);
        t.push_user_message("Add serde");
        for (command, error) in [
            (
                "cargo build",
                Some("error[E0432]: unresolved import `serde_yaml`"),
            ),
            (
                "cargo build",
                Some("error[E0432]: unresolved import `serde_yaml`"),
            ),
            ("cargo build", None),
        ] {
            let i = t.push_call("Bash", &json!({ "command": command }));
            t.calls[i].set_result(error.is_some(), error.unwrap_or("Finished"));
        }
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        assert_eq!(keep.errors.len(), 1, "{:?}", keep.errors);
        assert!(keep.errors[0].fixed);
        assert!(
            keep.instructions
                .contains("`cargo build` failed 2 times, then succeeded: error[E0432]"),
            "{}",
            keep.instructions
        );
        assert!(
            keep.events.iter().all(|e| e["type"] != "failure"),
            "{:?}",
            keep.events
        );
    }

    #[test]
    fn only_shell_failures_still_open_seed_the_session() {
        let mut t = Trajectory::new(Format::ToolList);
        for (tool, arguments, error) in [
            (
                "Read",
                json!({"file_path": "src/gone.rs"}),
                Some("File does not exist."),
            ),
            (
                "Bash",
                json!({"command": "ls node_modules/x"}),
                Some("ls: cannot access 'node_modules/x': No such file or directory"),
            ),
            (
                "Bash",
                json!({"command": "cargo test parse"}),
                Some("test parse::tabs ... FAILED"),
            ),
            ("Bash", json!({"command": "cargo test"}), None),
        ] {
            let i = t.push_call(tool, &arguments);
            t.calls[i].set_result(error.is_some(), error.unwrap_or("ok"));
        }
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        // The compaction prompt still names the missing file.
        assert!(
            keep.instructions.contains("File does not exist."),
            "{}",
            keep.instructions
        );
        // The tests passed after the failure: nothing is left open.
        assert!(
            keep.events.iter().all(|e| e["type"] != "failure"),
            "{:?}",
            keep.events
        );
    }

    #[test]
    fn a_pattern_of_files_is_no_file_and_a_bare_reply_no_request() {
        let mut t = Trajectory::new(Format::ToolList);
        t.push_user_message("Summarise the logs");
        t.push_user_message(" d ");
        for _ in 0..2 {
            let i = t.push_call("Bash", &json!({"command": "head -3 logs/*.jsonl"}));
            t.calls[i].set_result(false, "{}");
        }
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        assert!(keep.paths.is_empty(), "{:?}", keep.paths);
        assert_eq!(keep.user_request.as_deref(), Some("Summarise the logs"));
        // Only bare replies: the latest is all there is.
        let mut replies = Trajectory::new(Format::ToolList);
        replies.push_user_message("y");
        let keep = what_to_keep(&replies, &[]);
        assert_eq!(keep.user_request.as_deref(), Some("y"));
    }

    #[test]
    fn nothing_in_play_is_nothing_to_keep_and_no_loss_is_claimed_without_a_finding() {
        let mut t = Trajectory::new(crate::trajectory::model::Format::ToolList);
        let i = t.push_call("Bash", &json!({"command": "ls"}));
        t.calls[i].set_result(false, "a.rs");
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        assert_eq!(keep.instructions, "");
        // A request to keep, but nothing was lost.
        t.push_user_message("Add a refund button");
        let findings = find_patterns(&t, &Thresholds::default());
        assert!(findings.is_empty());
        let keep = what_to_keep(&t, &findings);
        assert!(
            keep.instructions
                .starts_with("When you compact this conversation, keep the following.\n"),
            "{}",
            keep.instructions
        );
        assert!(!keep.instructions.contains("lost it before"));
    }

    #[test]
    fn open_failures_of_one_kind_go_as_one_failure() {
        let mut t = Trajectory::new(Format::ToolList);
        for (command, error) in [
            ("jq .x a.json", "jq: parse error: Invalid numeric literal"),
            (
                "xargs cat",
                "xargs: command line cannot be assembled, too long",
            ),
        ] {
            let i = t.push_call("Bash", &json!({ "command": command }));
            t.calls[i].set_result(true, error);
        }
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        let failures: Vec<&Value> = keep
            .events
            .iter()
            .filter(|e| e["type"] == "failure")
            .collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0]["kind"], "other");
        assert_eq!(
            failures[0]["text"],
            "Bash `jq .x a.json`: jq: parse error: Invalid numeric literal\n\
             Bash `xargs cat`: xargs: command line cannot be assembled, too long"
        );
    }

    #[test]
    fn a_removed_file_is_out_of_play() {
        let mut t = Trajectory::new(Format::ToolList);
        for (tool, arguments) in [
            ("Write", json!({"file_path": "tmp.md"})),
            ("Write", json!({"file_path": "DESIGN.md"})),
            ("Write", json!({"file_path": "src/lib.rs"})),
            ("Bash", json!({"command": "rm -f tmp.md ./DESIGN.md"})),
        ] {
            let i = t.push_call(tool, &arguments);
            t.calls[i].set_result(false, "");
        }
        let keep = what_to_keep(&t, &find_patterns(&t, &Thresholds::default()));
        let paths: Vec<&str> = keep.paths.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["src/lib.rs"]);
        assert!(
            keep.events
                .iter()
                .all(|e| e["arguments"]["file_path"] != "tmp.md"),
            "{:?}",
            keep.events
        );
    }
}
