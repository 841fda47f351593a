//! Turning a tool call into what it did: its kind (read, write, search,
//! shell, other), the file it was about, the command or pattern, and, from
//! its result, the telling line of an error or the paths a search found.
//!
//! Agents name their tools differently (Claude Code's `Read` and `Bash`,
//! Codex's `exec_command` and `apply_patch`, MCP's `read_file`), and much of
//! the reading and searching happens through the shell (`cat`, `sed -n`,
//! `rg`), so shell commands are looked into as well.

use std::collections::HashSet;

use serde_json::Value;

use super::model::{cut, CallKind, FROM_END};

/// The longest command or pattern kept for a call.
const DETAIL_CHARS: usize = 200;
/// The longest error text kept for a call.
const ERROR_CHARS: usize = 300;
/// Paths kept from one search result.
const RESULT_PATHS: usize = 5;

/// What a call was, from its tool name and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    pub kind: CallKind,
    pub path: Option<String>,
    pub detail: Option<String>,
    pub grep: bool,
    /// For a read of part of a file: its lines, as [`Call::lines`] has them.
    ///
    /// [`Call::lines`]: super::model::Call::lines
    pub lines: Option<(u64, u64)>,
    /// The files a shell command removes ([`removed_paths`]).
    pub removes: Vec<String>,
}

/// Argument fields that name the file a call is about, most specific first.
const PATH_FIELDS: [&str; 10] = [
    "file_path",
    "filePath",
    "notebook_path",
    "target_file",
    "path",
    "file",
    "filename",
    "fileName",
    "relative_workspace_path",
    "dir_path",
];

/// Classifies a call of `tool` with `arguments`.
pub fn classify(tool: &str, arguments: &Value) -> Class {
    let name = bare_tool_name(tool);
    let path = path_argument(arguments);
    let pattern = string_field(arguments, &["pattern", "query", "regex", "glob"]);
    let class = |kind, detail: Option<String>, grep| Class {
        kind,
        path: path.clone(),
        detail: detail.map(|d| cut(&d, DETAIL_CHARS)),
        grep,
        lines: None,
        removes: Vec::new(),
    };
    match name.as_str() {
        "read" | "read_file" | "readfile" | "view" | "view_file" | "open_file" | "get_file"
        | "notebookread" | "cat" | "read_many_files" | "webfetch" | "fetch" => Class {
            lines: argument_lines(arguments),
            ..class(CallKind::Read, None, false)
        },
        "write" | "edit" | "multiedit" | "notebookedit" | "write_file" | "edit_file"
        | "create_file" | "str_replace" | "insert" | "replace" | "delete_file" => {
            class(CallKind::Write, None, false)
        }
        // Anthropic's text editor tool reads or writes depending on its command.
        "str_replace_based_edit_tool" | "str_replace_editor" | "text_editor" => {
            let command = string_field(arguments, &["command"]).unwrap_or_default();
            if command == "view" {
                Class {
                    lines: argument_lines(arguments),
                    ..class(CallKind::Read, None, false)
                }
            } else {
                class(CallKind::Write, None, false)
            }
        }
        "apply_patch" => {
            let patch = match arguments {
                Value::String(s) => Some(s.clone()),
                _ => string_field(arguments, &["input", "patch"]),
            };
            Class {
                path: path
                    .clone()
                    .or_else(|| patch.as_deref().and_then(patch_path)),
                ..class(CallKind::Write, None, false)
            }
        }
        "grep"
        | "ripgrep"
        | "grep_files"
        | "search_file_content"
        | "grep_search"
        | "codebase_search" => class(CallKind::Search, pattern, true),
        "glob" | "ls" | "list_dir" | "list_directory" | "list_files" | "find" | "file_search"
        | "find_files" | "search" | "websearch" | "web_search" | "toolsearch" => {
            class(CallKind::Search, pattern, false)
        }
        "bash" | "shell" | "exec_command" | "shell_command" | "local_shell"
        | "run_terminal_cmd" | "execute_command" | "run_command" | "terminal"
        | "run_shell_command" | "exec" => match command_argument(arguments) {
            Some(command) => classify_command(&command, path),
            None => class(CallKind::Shell, None, false),
        },
        _ => class(CallKind::Other, pattern, false),
    }
}

/// The lines a read tool asks for: `offset` and `limit` (Claude Code's
/// `Read`), or `view_range: [first, last]` (the text editor tool, `-1` for
/// the end). `None`: the whole file.
fn argument_lines(arguments: &Value) -> Option<(u64, u64)> {
    if let Some([first, last]) = arguments
        .get("view_range")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        let first = first.as_u64()?.max(1);
        let end = last.as_u64().map_or(u64::MAX, |l| l.saturating_add(1));
        return Some((first, end));
    }
    let offset = arguments.get("offset").and_then(Value::as_u64);
    let limit = arguments.get("limit").and_then(Value::as_u64);
    if offset.is_none() && limit.is_none() {
        return None;
    }
    let first = offset.unwrap_or(1).max(1);
    Some((first, limit.map_or(u64::MAX, |l| first.saturating_add(l))))
}

/// The lines `sed -n` prints: `'12p'` or `'1,80p'`.
fn sed_lines(script: &str) -> Option<(u64, u64)> {
    let range = script
        .trim_matches(|c| c == '\'' || c == '"')
        .strip_suffix('p')?;
    let (first, last) = range.split_once(',').unwrap_or((range, range));
    let first: u64 = first.trim().parse().ok()?;
    let last: u64 = last.trim().parse().ok()?;
    Some((first, last.saturating_add(1)))
}

/// The tool name without MCP or namespace prefixes, lower-cased:
/// `mcp__fs__read_file` and `functions.read_file` are `read_file`.
fn bare_tool_name(tool: &str) -> String {
    let tail = tool.rsplit("__").next().unwrap_or(tool);
    let tail = tail.rsplit('.').next().unwrap_or(tail);
    tail.trim().to_lowercase()
}

/// The first path-like argument, if any.
fn path_argument(arguments: &Value) -> Option<String> {
    let found = string_field(arguments, &PATH_FIELDS).or_else(|| {
        // `paths: [..]` (read_many_files and friends): the first one.
        arguments
            .get("paths")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_string)
    })?;
    clean_path(&found)
}

/// A path as shown and compared: trimmed, without control characters.
fn clean_path(path: &str) -> Option<String> {
    let path = path.trim().trim_matches(|c| c == '"' || c == '\'');
    if path.is_empty() || path.chars().any(char::is_control) || path.chars().count() > 1000 {
        return None;
    }
    Some(path.to_string())
}

fn string_field(arguments: &Value, fields: &[&str]) -> Option<String> {
    fields.iter().find_map(|field| {
        arguments
            .get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    })
}

/// The command line of a shell call: `command` or `cmd`, as a string or
/// as an argv (where `bash -lc "<script>"` means the script).
pub fn command_argument(arguments: &Value) -> Option<String> {
    let value = match arguments {
        Value::String(s) => return Some(s.clone()),
        _ => ["command", "cmd", "script"]
            .iter()
            .find_map(|f| arguments.get(f))?,
    };
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            let shell = parts.first().map(|p| p.rsplit('/').next().unwrap_or(p));
            let is_shell = shell.is_some_and(|s| matches!(s, "bash" | "sh" | "zsh" | "dash"));
            if is_shell && parts.len() >= 3 && parts[1].starts_with('-') && parts[1].contains('c') {
                Some(parts[2..].join(" "))
            } else {
                // An argv: quote what the shell would need quoted, so
                // that words are split back as they were.
                let quoted: Vec<String> = parts
                    .iter()
                    .map(|p| {
                        if p.contains(char::is_whitespace) && !p.contains('\'') {
                            format!("'{p}'")
                        } else {
                            p.to_string()
                        }
                    })
                    .collect();
                Some(quoted.join(" "))
            }
        }
        _ => None,
    }
}

/// Classifies a shell command line by the program that does the work:
/// `cd x && rg foo` is a grep, `sed -n 1,80p f` a read, `cargo test` shell.
pub fn classify_command(command: &str, argument_path: Option<String>) -> Class {
    let detail = Some(cut(command.trim(), DETAIL_CHARS));
    let shell = Class {
        kind: CallKind::Shell,
        path: argument_path.clone(),
        detail: detail.clone(),
        grep: false,
        lines: None,
        removes: removed_paths(command),
    };
    if command.trim_start().starts_with("apply_patch") {
        return Class {
            kind: CallKind::Write,
            path: argument_path.or_else(|| patch_path(command)),
            ..shell
        };
    }
    let Some(words) = first_working_segment(command) else {
        return shell;
    };
    let program = words[0].rsplit('/').next().unwrap_or(&words[0]);
    let args = &words[1..];
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let last_operand = || operands.last().and_then(|p| clean_path(p));
    match program {
        "head" | "tail" => {
            let (count, files) = head_tail_operands(args);
            Class {
                kind: CallKind::Read,
                path: files.first().and_then(|p| clean_path(p)),
                lines: count.map(|count| {
                    if program == "head" {
                        (1, count.saturating_add(1))
                    } else {
                        (FROM_END.saturating_sub(count), FROM_END)
                    }
                }),
                ..shell
            }
        }
        "cat" | "less" | "more" | "nl" | "bat" | "batcat" => Class {
            kind: CallKind::Read,
            path: operands.first().and_then(|p| clean_path(p)),
            ..shell
        },
        // `sed -n '1,80p' file` prints; `sed -i` edits.
        "sed" if args.iter().any(|a| a == "-n") && !args.iter().any(|a| a.starts_with("-i")) => {
            Class {
                kind: CallKind::Read,
                path: last_operand(),
                lines: operands.first().and_then(|script| sed_lines(script)),
                ..shell
            }
        }
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => Class {
            kind: CallKind::Search,
            path: operands.get(1).and_then(|p| clean_path(p)),
            grep: true,
            ..shell
        },
        "git" if args.first().is_some_and(|a| a == "grep") => Class {
            kind: CallKind::Search,
            grep: true,
            ..shell
        },
        // `wc` counts a file's lines without showing them: a look at the
        // files, as `ls` is, not a read of one.
        "find" | "fd" | "fdfind" | "ls" | "tree" | "locate" | "wc" => Class {
            kind: CallKind::Search,
            path: operands.first().and_then(|p| clean_path(p)),
            ..shell
        },
        _ => shell,
    }
}

/// The lines (`-n 20`, `-n20`, `-20`, `--lines=20`; 10 when none is
/// given) and the files of a `head` or `tail` command. A count of bytes
/// (`-c`) or one from the start (`tail -n +5`) counts no lines: `None`.
fn head_tail_operands(args: &[String]) -> (Option<u64>, Vec<&String>) {
    let mut count = Some(10);
    let mut files = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "-n" | "--lines" | "-c" | "--bytes" => args.next().map(String::as_str),
            a if a.starts_with("--lines=") => Some(&a["--lines=".len()..]),
            a if a.starts_with("-n") || a.starts_with("-c") => Some(&a[2..]),
            a if a.starts_with('-') && a.len() > 1 => Some(&a[1..]),
            _ => {
                files.push(arg);
                continue;
            }
        };
        let bytes = arg.starts_with("-c") || arg.starts_with("--bytes");
        count = value.filter(|_| !bytes).and_then(|v| v.parse().ok());
    }
    (count, files)
}

/// The files a shell command removes (`rm`, `unlink`, `git rm`): they are
/// no longer in play.
pub fn removed_paths(command: &str) -> Vec<String> {
    let Some(words) = first_working_segment(command) else {
        return Vec::new();
    };
    let program = words[0].rsplit('/').next().unwrap_or(&words[0]);
    let operands = match program {
        "rm" | "unlink" => &words[1..],
        "git" if words.get(1).is_some_and(|w| w == "rm") => &words[2..],
        _ => return Vec::new(),
    };
    operands
        .iter()
        .filter(|w| !w.starts_with('-'))
        .filter_map(|w| clean_path(w))
        .collect()
}

/// The words of the first segment of a command line that does work:
/// segments are split at `&&`, `||`, `;` and `|`; `cd`, `export` and
/// variable assignments are set-up, and `sudo`, `time`, `env` are wrappers.
fn first_working_segment(command: &str) -> Option<Vec<String>> {
    let words = shell_words(command);
    let mut segment: Vec<String> = Vec::new();
    let mut segments: Vec<Vec<String>> = Vec::new();
    for word in words {
        if matches!(word.as_str(), "&&" | "||" | ";" | "|") {
            segments.push(std::mem::take(&mut segment));
        } else {
            segment.push(word);
        }
    }
    segments.push(segment);
    segments.into_iter().find_map(|mut words| {
        while words
            .first()
            .is_some_and(|w| matches!(w.as_str(), "sudo" | "time" | "env" | "command" | "nice"))
            || words.first().is_some_and(|w| is_assignment(w))
        {
            words.remove(0);
        }
        let first = words.first()?;
        if matches!(
            first.as_str(),
            "cd" | "export" | "source" | "." | "set" | "pushd" | "popd"
        ) {
            return None;
        }
        Some(words)
    })
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Splits a command line into words, honouring single and double quotes
/// and keeping `&&`, `||`, `;` and `|` as words of their own. Good enough
/// to find the program and its operands; it does not expand anything.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                '\\' => {
                    if let Some(next) = chars.next() {
                        word.push(next);
                        in_word = true;
                    }
                }
                c if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                '&' | '|' | ';' => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                    let doubled = (c == '&' || c == '|') && chars.peek() == Some(&c);
                    if doubled {
                        chars.next();
                        words.push(format!("{c}{c}"));
                    } else if c == '&' {
                        // A lone `&` (background, `2>&1`) separates nothing we need.
                    } else {
                        words.push(c.to_string());
                    }
                }
                c => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The first file a patch in the `*** Update File: path` format touches.
pub fn patch_path(patch: &str) -> Option<String> {
    patch.lines().find_map(|line| {
        let line = line.trim();
        ["*** Update File:", "*** Add File:", "*** Delete File:"]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
            .and_then(clean_path)
    })
}

/// Words that mark the line of an output that says what went wrong.
const ERROR_WORDS: [&str; 12] = [
    "error",
    "failed",
    "failure",
    "cannot",
    "can't",
    "not found",
    "no such",
    "denied",
    "panicked",
    "exception",
    "traceback",
    "invalid",
];

/// The line of an error output that says what went wrong, cut short:
/// the first line naming an error, else the first three lines that are not
/// just an exit code.
pub fn error_text(output: &str) -> Option<String> {
    let lines: Vec<&str> = output
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("<tool_use_error>")
                .trim_end_matches("</tool_use_error>")
                .trim()
        })
        .filter(|l| !l.is_empty() && !is_exit_code_line(l))
        .collect();
    let telling = lines.iter().find(|l| {
        let lower = l.to_lowercase();
        ERROR_WORDS.iter().any(|w| lower.contains(w))
    });
    let text = match telling {
        Some(line) => line.to_string(),
        // No line says "error": the first few lines together say most, and
        // a "…" that there is more.
        None if !lines.is_empty() => {
            let mut first = lines
                .iter()
                .take(3)
                .copied()
                .collect::<Vec<_>>()
                .join(" · ");
            if lines.len() > 3 {
                first.push_str(" · …");
            }
            first
        }
        None => return None,
    };
    Some(cut(&text, ERROR_CHARS))
}

/// Whether a text search (grep, rg, ag, git grep) that exited non-zero only
/// found nothing: these exit with 1 and say nothing when no line matches,
/// and with 2 and a message when they fail. `code` is the exit code where
/// the trajectory gives it apart from the output.
pub fn found_nothing(output: &str, code: Option<i64>) -> bool {
    let stated = output.lines().find_map(|l| {
        let l = l.trim().to_lowercase();
        EXIT_CODE_PREFIXES
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .and_then(|rest| rest.trim_start_matches([':', ' ']).parse::<i64>().ok())
    });
    code.or(stated).is_none_or(|c| c == 1) && error_text(output).is_none()
}

/// How a line that only gives a command's exit code begins (lower case).
const EXIT_CODE_PREFIXES: [&str; 3] = ["exit code", "process exited with code", "exit status"];

fn is_exit_code_line(line: &str) -> bool {
    let lower = line.to_lowercase();
    EXIT_CODE_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p) && lower.len() < p.len() + 8)
}

/// The first few paths a search result names: each line's leading
/// `path` or `path:line:` part when it looks like a path. A context line of
/// `grep -C` (`path-12-text`) names the path of a matching line
/// (`path:12:text`) before its line number.
pub fn result_paths(output: &str) -> Vec<String> {
    let matched: HashSet<&str> = output
        .lines()
        .filter_map(|line| {
            let (path, rest) = line.trim().split_once(':')?;
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0 && rest.as_bytes().get(digits) == Some(&b':')).then_some(path)
        })
        .collect();
    let mut paths: Vec<String> = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        let candidate = line.split(':').next().unwrap_or("").trim();
        let candidate = grep_context_path(line)
            .filter(|path| matched.contains(path))
            .unwrap_or(candidate);
        let looks_like_path = !candidate.is_empty()
            && !candidate.contains(char::is_whitespace)
            && (candidate.contains('/') || candidate.contains('.'))
            && candidate.chars().count() <= 300
            && !candidate.chars().any(char::is_control);
        if looks_like_path && !paths.iter().any(|p| p == candidate) {
            paths.push(candidate.to_string());
            if paths.len() == RESULT_PATHS {
                break;
            }
        }
    }
    paths
}

/// What stands before a `-<digits>-` in a line: the path of a `grep -C`
/// context line (`src/a.rs-12-text`) if a matching line names it too.
fn grep_context_path(start: &str) -> Option<&str> {
    let bytes = start.as_bytes();
    let mut from = 0;
    while let Some(dash) = start[from..].find('-').map(|i| from + i) {
        let digits = bytes[dash + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = dash + 1 + digits;
        if dash > 0 && digits > 0 && bytes.get(end) == Some(&b'-') {
            return Some(&start[..dash]);
        }
        from = dash + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::model::Call;
    use serde_json::json;

    fn kind_path(tool: &str, arguments: Value) -> (CallKind, Option<String>, bool) {
        let c = classify(tool, &arguments);
        (c.kind, c.path, c.grep)
    }

    #[test]
    fn tools_are_classified_by_name_and_arguments() {
        use CallKind::*;
        type Expected = (CallKind, Option<&'static str>, bool);
        let cases: Vec<(&str, Value, Expected)> = vec![
            (
                "Read",
                json!({"file_path": "/p/a.rs"}),
                (Read, Some("/p/a.rs"), false),
            ),
            (
                "Edit",
                json!({"file_path": "a.rs"}),
                (Write, Some("a.rs"), false),
            ),
            (
                "MultiEdit",
                json!({"file_path": "a.rs"}),
                (Write, Some("a.rs"), false),
            ),
            (
                "Grep",
                json!({"pattern": "fn x", "path": "src"}),
                (Search, Some("src"), true),
            ),
            ("Glob", json!({"pattern": "**/*.rs"}), (Search, None, false)),
            (
                "mcp__fs__read_file",
                json!({"path": "b.md"}),
                (Read, Some("b.md"), false),
            ),
            (
                "str_replace_based_edit_tool",
                json!({"command": "view", "path": "c"}),
                (Read, Some("c"), false),
            ),
            (
                "str_replace_based_edit_tool",
                json!({"command": "create", "path": "c"}),
                (Write, Some("c"), false),
            ),
            (
                "apply_patch",
                json!("*** Begin Patch\n*** Update File: src/x.ts\n@@"),
                (Write, Some("src/x.ts"), false),
            ),
            ("TodoWrite", json!({"todos": []}), (Other, None, false)),
            (
                "Bash",
                json!({"command": "cargo test"}),
                (Shell, None, false),
            ),
            (
                "Bash",
                json!({"command": "cat README.md | head"}),
                (Read, Some("README.md"), false),
            ),
            (
                "Bash",
                json!({"command": "head -n 20 logs/app.log"}),
                (Read, Some("logs/app.log"), false),
            ),
            (
                "Bash",
                json!({"command": "tail -5 b.txt"}),
                (Read, Some("b.txt"), false),
            ),
            (
                "exec_command",
                json!({"cmd": "sed -n '1,80p' src/lib.rs"}),
                (Read, Some("src/lib.rs"), false),
            ),
            (
                "exec_command",
                json!({"cmd": "sed -i 's/a/b/' src/lib.rs"}),
                (Shell, None, false),
            ),
            (
                "shell",
                json!({"command": ["bash", "-lc", "cd /r && rg -n 'fn main' src"]}),
                (Search, Some("src"), true),
            ),
            (
                "shell",
                json!({"command": ["ls", "-la"]}),
                (Search, None, false),
            ),
            (
                "shell",
                json!({"command": ["bash", "-lc", "git grep foo"]}),
                (Search, None, true),
            ),
            (
                "shell",
                json!({"command": "FOO=1 sudo find . -name '*.md'"}),
                (Search, Some("."), false),
            ),
            (
                "shell",
                json!({"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.md\nEOF"}),
                (Write, Some("n.md"), false),
            ),
        ];
        for (tool, arguments, (kind, path, grep)) in cases {
            let got = kind_path(tool, arguments.clone());
            assert_eq!(
                got,
                (kind, path.map(str::to_string), grep),
                "{tool} {arguments}"
            );
        }
    }

    #[test]
    fn shell_words_honour_quotes_and_operators() {
        assert_eq!(
            shell_words(r#"rg -n "a b" 'c|d' src&&ls|wc -l; x 2>&1"#),
            ["rg", "-n", "a b", "c|d", "src", "&&", "ls", "|", "wc", "-l", ";", "x", "2>", "1"]
        );
    }

    #[test]
    fn the_telling_error_line_is_kept() {
        assert_eq!(
            error_text("Exit code 1\n\nOptions:\n  1. Codex requires compatible models").as_deref(),
            Some("Options: · 1. Codex requires compatible models")
        );
        assert_eq!(
            error_text("Exit code 5\njq: parse error: Invalid numeric literal").as_deref(),
            Some("jq: parse error: Invalid numeric literal")
        );
        assert_eq!(
            error_text("<tool_use_error>File does not exist.</tool_use_error>").as_deref(),
            Some("File does not exist.")
        );
        assert_eq!(error_text("Exit code 1\n"), None);
        // More lines than are kept: a "…" says so.
        assert_eq!(
            error_text("Options:\n1. a\n2. b\n3. Override: c").as_deref(),
            Some("Options: · 1. a · 2. b · …")
        );
        let long = format!("error: {}", "x".repeat(1000));
        assert_eq!(error_text(&long).map(|e| e.chars().count()), Some(300));
    }

    #[test]
    fn removed_files_are_named() {
        assert_eq!(removed_paths("rm -f a.md ./b.md"), ["a.md", "./b.md"]);
        assert_eq!(removed_paths("cd src && git rm old.rs"), ["old.rs"]);
        assert!(removed_paths("cat a.md").is_empty());
    }

    #[test]
    fn a_search_that_matched_nothing_did_not_fail() {
        assert!(found_nothing("Exit code 1", None));
        assert!(found_nothing("", Some(1)));
        assert!(found_nothing("", None));
        assert!(!found_nothing("", Some(2)));
        assert!(!found_nothing("Exit code 2", None));
        assert!(!found_nothing(
            "Exit code 2\nrg: src/nope: No such file or directory (os error 2)",
            None
        ));
        assert!(!found_nothing("grep: invalid option -- 'Q'", Some(1)));
        // A call of a text search that found nothing is no error; any other
        // failed call still is.
        let mut grep = Call::new(0, "Bash", &json!({"command": "rg -n 'mod fees' src"}));
        grep.set_result(true, "Exit code 1");
        assert!(!grep.is_error && grep.error.is_none());
        let mut missing = Call::new(1, "Bash", &json!({"command": "rg -n fees nope/"}));
        missing.set_result(true, "Exit code 2\nrg: nope/: No such file or directory");
        assert!(missing.is_error);
        let mut build = Call::new(2, "Bash", &json!({"command": "cargo build"}));
        build.set_result(true, "Exit code 1");
        assert!(build.is_error);
    }

    #[test]
    fn search_results_name_their_paths() {
        let output = "src/a.rs:12:fn parse()\nsrc/a.rs:40:parse()\nsrc/b.rs\nFound 3 matches\n";
        assert_eq!(result_paths(output), ["src/a.rs", "src/b.rs"]);
        // `grep -C 1`: context lines name the path before `-line-`, even
        // when the line itself is empty; a path with dashes stays whole.
        let context = "src/my-app/a.ts-11-\nsrc/my-app/a.ts:12:parse()\nsrc/my-app/a.ts-13-  }\n--\nsrc/b-2.ts-4-x\nsrc/b-2.ts:5:parse\n";
        assert_eq!(result_paths(context), ["src/my-app/a.ts", "src/b-2.ts"]);
        // A listing of files whose names hold `-1-` names them whole.
        assert_eq!(result_paths("docs/v-1-2.md\n"), ["docs/v-1-2.md"]);
    }
}
