//! The internal trajectory every input format is read into: a list of tool
//! calls (each of one kind, with the file it touched and the error it got),
//! the compaction boundaries between them, and what the user asked.
//!
//! Patterns, what-to-keep and the timeline only ever see this shape, so a
//! new agent format needs a parser and nothing else.

use serde::Serialize;

/// What a call did, as far as context is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallKind {
    /// Looked at a file's content.
    Read,
    /// Changed a file (write, edit, patch).
    Write,
    /// Looked for files or text (grep, glob, ls, find, web search).
    Search,
    /// Ran a command that is none of the above.
    Shell,
    /// Anything else (plans, sub-agents, browsers, MCP tools).
    Other,
}

impl CallKind {
    pub const ALL: [CallKind; 5] = [
        CallKind::Read,
        CallKind::Write,
        CallKind::Search,
        CallKind::Shell,
        CallKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CallKind::Read => "read",
            CallKind::Write => "write",
            CallKind::Search => "search",
            CallKind::Shell => "shell",
            CallKind::Other => "other",
        }
    }
}

/// Where lines counted from the end of a file are put in [`Call::lines`]:
/// past any line counted from the start, so that the first and the last
/// lines of a file are different parts of it.
pub const FROM_END: u64 = u64::MAX / 2;

/// One tool call of the agent.
#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// Position in the trajectory, from 0.
    pub index: usize,
    /// When it was made (RFC 3339), if the input says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// `at` in milliseconds since the epoch, for distances in time.
    #[serde(skip)]
    pub at_ms: Option<i64>,
    /// The tool's name as the agent called it.
    pub tool: String,
    pub kind: CallKind,
    /// The file (or folder, for a search) it was about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The command line or search pattern, cut short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub is_error: bool,
    /// The telling line(s) of the error, cut short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A text search (grep, rg, ag, git grep), as opposed to a listing.
    #[serde(skip)]
    pub grep: bool,
    /// For searches: the first paths the result named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<String>,
    /// For a read of part of a file: its lines, `[first, end)` from 1, or
    /// for the last lines of a file (`tail`) `[FROM_END - n, FROM_END)`.
    #[serde(skip)]
    pub lines: Option<(u64, u64)>,
    /// How many calls had been made when this one's result first came
    /// back: the calls from there on were made knowing it (the ones between
    /// were made beside it, in the same turn). `None`: right after it.
    #[serde(skip)]
    pub result_after: Option<usize>,
    /// The files a shell command removed.
    #[serde(skip)]
    pub removes: Vec<String>,
}

impl Call {
    /// A call of `tool` at `index`, classified from its arguments.
    pub fn new(index: usize, tool: &str, arguments: &serde_json::Value) -> Call {
        let class = super::classify::classify(tool, arguments);
        Call {
            index,
            at: None,
            at_ms: None,
            tool: tool.to_string(),
            kind: class.kind,
            path: class.path,
            detail: class.detail,
            is_error: false,
            error: None,
            grep: class.grep,
            lines: class.lines,
            results: Vec::new(),
            result_after: None,
            removes: class.removes,
        }
    }

    /// Sets the time from an RFC 3339 string or epoch seconds/milliseconds.
    pub fn set_time(&mut self, at: Option<&serde_json::Value>) {
        if let Some((ms, text)) = at.and_then(parse_time) {
            self.at_ms = Some(ms);
            self.at = Some(text);
        }
    }

    /// Records the outcome of the call from its result text.
    pub fn set_result(&mut self, is_error: bool, output: &str) {
        // A text search that matched nothing exits with 1: no failure.
        self.is_error = is_error && !(self.grep && super::classify::found_nothing(output, None));
        if is_error {
            self.error = super::classify::error_text(output);
        } else if self.kind == CallKind::Search {
            self.results = super::classify::result_paths(output);
        }
    }
}

/// 2000-01-01T00:00:00Z in milliseconds since the epoch: times before it
/// are ignored.
const EARLIEST_MS: i64 = 946_684_800_000;

/// A time given as RFC 3339 text or as seconds or milliseconds since the
/// epoch: milliseconds since the epoch and RFC 3339 text (UTC, seconds).
pub fn parse_time(at: &serde_json::Value) -> Option<(i64, String)> {
    let ms = match at {
        serde_json::Value::String(s) => chrono::DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|t| t.timestamp_millis()),
        serde_json::Value::Number(n) => n.as_f64().map(|x| {
            // Seconds and milliseconds since the epoch are both common;
            // no agent ran before 2001 (1e12 ms) or after 33658 (1e12 s).
            if x.abs() >= 1e12 {
                x as i64
            } else {
                (x * 1000.0) as i64
            }
        }),
        _ => None,
    }?;
    // A time before any agent ran (a negative epoch, 0) is no time of a call.
    if ms < EARLIEST_MS {
        return None;
    }
    let text = chrono::DateTime::from_timestamp_millis(ms)?
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Some((ms, text))
}

/// A compaction: the agent's context was summarised and started over.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Compaction {
    /// Index of the first call after it (the number of calls before it).
    pub before_call: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Something the user typed (not tool results, not injected instructions).
#[derive(Debug, Clone, Serialize)]
pub struct UserMessage {
    pub before_call: usize,
    pub text: String,
}

/// One item of the agent's own task list (TodoWrite, update_plan).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Task {
    pub text: String,
    pub done: bool,
}

/// Which input the trajectory was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A JSON list of `{tool, arguments, is_error, at}`.
    ToolList,
    /// A Claude Code session transcript (JSONL).
    ClaudeCode,
    /// An OpenAI Codex CLI rollout (JSONL).
    Codex,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::ToolList => "tool-call list",
            Format::ClaudeCode => "Claude Code session",
            Format::Codex => "Codex CLI rollout",
        }
    }
}

/// An agent run, read from any supported format.
#[derive(Debug, Clone)]
pub struct Trajectory {
    pub format: Format,
    pub calls: Vec<Call>,
    pub compactions: Vec<Compaction>,
    pub user_messages: Vec<UserMessage>,
    /// The latest task list the agent wrote.
    pub tasks: Vec<Task>,
    /// The latest plan the agent settled on (Claude Code's ExitPlanMode).
    pub plan: Option<String>,
    /// Lines (or list entries) read.
    pub lines: usize,
    /// Lines that were not JSON or not of a known shape.
    pub skipped_lines: usize,
}

impl Trajectory {
    pub fn new(format: Format) -> Trajectory {
        Trajectory {
            format,
            calls: Vec::new(),
            compactions: Vec::new(),
            user_messages: Vec::new(),
            tasks: Vec::new(),
            plan: None,
            lines: 0,
            skipped_lines: 0,
        }
    }

    /// Adds a call at the end and returns its index.
    pub fn push_call(&mut self, tool: &str, arguments: &serde_json::Value) -> usize {
        let index = self.calls.len();
        self.calls.push(Call::new(index, tool, arguments));
        index
    }

    /// Notes that the result of call `index` comes back now, after every
    /// call read so far (the first time it is told).
    pub fn result_seen(&mut self, index: usize) {
        let made = self.calls.len();
        if let Some(call) = self.calls.get_mut(index) {
            call.result_after.get_or_insert(made.max(index + 1));
        }
    }

    /// Marks a compaction before the next call; two markers of one
    /// compaction (a boundary line and its summary) count once.
    pub fn push_compaction(&mut self, at: Option<String>) {
        let before_call = self.calls.len();
        if self
            .compactions
            .last()
            .is_some_and(|c| c.before_call == before_call)
        {
            return;
        }
        self.compactions.push(Compaction { before_call, at });
    }

    pub fn push_user_message(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        // Codex writes what the user typed twice (as an item and an event).
        if self
            .user_messages
            .last()
            .is_some_and(|m| m.text == text && m.before_call == self.calls.len())
        {
            return;
        }
        self.user_messages.push(UserMessage {
            before_call: self.calls.len(),
            text: text.to_string(),
        });
    }

    /// Calls of each kind, in the order of [`CallKind::ALL`].
    pub fn counts(&self) -> [usize; 5] {
        let mut counts = [0; 5];
        for call in &self.calls {
            counts[call.kind as usize] += 1;
        }
        counts
    }
}

/// `text` cut to at most `max_chars` characters, with "…" when cut.
pub fn cut(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max_chars.saturating_sub(1)) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => {
            format!("{}…", text[..end].trim_end())
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_on_a_character_with_an_ellipsis() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("exactly10!", 10), "exactly10!");
        assert_eq!(cut("one two three", 5), "one…");
        assert_eq!(cut("두뇌에서 찾기", 3), "두뇌…");
    }

    #[test]
    fn times_are_read_from_strings_and_numbers() {
        let mut call = Call::new(0, "Read", &serde_json::json!({}));
        call.set_time(Some(&serde_json::json!("2026-01-07T20:58:27.907Z")));
        assert_eq!(call.at.as_deref(), Some("2026-01-07T20:58:27Z"));
        let ms = call.at_ms;
        call.set_time(Some(&serde_json::json!(1_767_819_507.907)));
        assert_eq!(call.at_ms, ms);
        call.set_time(Some(&serde_json::json!(1_767_819_507_907_i64)));
        assert_eq!(call.at_ms, ms);
        let mut other = Call::new(1, "Read", &serde_json::json!({}));
        other.set_time(Some(&serde_json::json!("yesterday")));
        assert_eq!((&other.at, other.at_ms), (&None, None));
        for before_agents in [
            serde_json::json!(-5),
            serde_json::json!(0),
            serde_json::json!("1969-12-31T23:59:55Z"),
        ] {
            other.set_time(Some(&before_agents));
            assert_eq!((&other.at, other.at_ms), (&None, None), "{before_agents}");
        }
    }

    #[test]
    fn one_compaction_is_counted_once() {
        let mut t = Trajectory::new(Format::ClaudeCode);
        t.push_call("Read", &serde_json::json!({"file_path": "a"}));
        t.push_compaction(None);
        t.push_compaction(None);
        t.push_call("Read", &serde_json::json!({"file_path": "a"}));
        t.push_compaction(None);
        assert_eq!(t.compactions.len(), 2);
        assert_eq!(t.compactions[0].before_call, 1);
    }
}
