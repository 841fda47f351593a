//! The `noggin` command as a person at a terminal (or a script) runs it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{wait_for_exit, TestBrain};

/// How long a command may take before the test gives up on it.
const DEADLINE: Duration = Duration::from_secs(30);

/// `noggin` with none of the caller's `NOGGIN_*` settings.
fn noggin() -> Command {
    clean(Command::new(env!("CARGO_BIN_EXE_noggin")))
}

/// A command that sees none of the settings of the environment the tests
/// run in (`NOGGIN_*`, `RUST_LOG`).
fn clean(mut command: Command) -> Command {
    // The model, when installed, is for the tests that ask for it.
    command.env("NOGGIN_NO_MODEL", "1");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("NOGGIN_") {
            command.env_remove(name);
        }
    }
    command.env_remove("RUST_LOG");
    command.stdin(Stdio::null());
    command
}

fn run(command: &mut Command) -> Output {
    command.output().expect("run noggin")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn path_arg(brain: &TestBrain) -> &str {
    brain.path().to_str().expect("temp paths are UTF-8")
}

/// What the index leaves out, or reads only in part, is counted in its
/// summary, and each is named on stderr: a link not followed, a note's
/// frontmatter that is no YAML.
#[test]
fn index_says_what_it_left_out() {
    let brain = TestBrain::empty();
    brain.write("a.md", "# A\n\nalpha\n");
    brain.write(
        "broken.md",
        "---\ntitle: Broken: yes: no\ntags: [x]\n---\nbody\n",
    );
    std::os::unix::fs::symlink(brain.path().join("a.md"), brain.path().join("link.md")).unwrap();
    let output = run(noggin().args(["index", "--brain", path_arg(&brain)]));
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    assert!(
        summary.contains("1 symbolic links not followed, 1 with frontmatter that is no YAML"),
        "{summary}"
    );
    assert!(stderr(&output).contains("broken.md"), "{}", stderr(&output));
    let output = run(noggin().args(["index", "--json", "--brain", path_arg(&brain)]));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("JSON summary");
    assert_eq!(report["skipped_links"], 1, "{report}");
}

#[test]
fn index_prints_a_summary() {
    let brain = TestBrain::sample();
    let output = run(noggin().args(["index", "--brain", path_arg(&brain)]));
    assert!(output.status.success(), "{}", stderr(&output));
    // Nothing went wrong, so nothing is logged.
    assert_eq!(stderr(&output), "");
    let summary = stdout(&output);
    let line = regex::Regex::new(
        r"^indexed 42 notes, (\d+) sections in \d+\.\d\d s \(42 re-parsed, 0 unchanged, 0 removed\)\n$",
    )
    .unwrap();
    let sections: usize = line
        .captures(&summary)
        .unwrap_or_else(|| panic!("unexpected summary: {summary:?}"))[1]
        .parse()
        .unwrap();
    assert!(sections > 42, "{summary}");
    assert!(brain.data_dir().join("index/meta.json").is_file());
    assert_eq!(
        std::fs::read_to_string(brain.data_dir().join(".gitignore")).unwrap(),
        "*\n"
    );

    // Again, as JSON: nothing needs reading twice.
    let output = run(noggin().args(["index", "--json", "--brain", path_arg(&brain)]));
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("JSON summary");
    assert_eq!(report["notes"], 42, "{report}");
    assert_eq!(report["sections"], sections, "{report}");
    assert_eq!(report["reparsed"], 0, "{report}");
    assert_eq!(report["unchanged"], 42, "{report}");
    assert!(report["seconds"].as_f64().is_some(), "{report}");

    // Notes over the size limit are counted in the summary too.
    let output = run(noggin().args([
        "index",
        "--brain",
        path_arg(&brain),
        "--max-note-bytes",
        "1000",
    ]));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        regex::Regex::new(r", \d+ skipped as over --max-note-bytes\)\n$")
            .unwrap()
            .is_match(&stdout(&output)),
        "{}",
        stdout(&output)
    );
    // Each skipped note is a warning on stderr, without a terminal's
    // colour codes when stderr is a pipe.
    let warnings = stderr(&output);
    assert!(warnings.contains("WARN"), "{warnings}");
    assert!(!warnings.contains('\x1b'), "{warnings:?}");
}

#[test]
fn with_a_data_dir_index_and_search_leave_the_brain_untouched() {
    let brain = TestBrain::sample();
    let data = tempfile::tempdir().unwrap();
    let data_arg = data.path().to_str().unwrap();
    let output = run(noggin().args(["index", "--brain", path_arg(&brain), "--data-dir", data_arg]));
    assert!(output.status.success(), "{}", stderr(&output));
    let output = run(noggin().args([
        "search",
        "--brain",
        path_arg(&brain),
        "--data-dir",
        data_arg,
        "payments",
    ]));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Jonas Weber"),
        "{}",
        stdout(&output)
    );
    assert!(data.path().join("index/meta.json").is_file());
    assert!(
        !brain.path().join(".noggin").exists(),
        "noggin wrote into the brain although --data-dir points elsewhere"
    );
}

#[test]
fn a_data_dir_holding_the_users_files_loses_none_of_them() {
    let brain = TestBrain::sample();
    // A folder of the user's where noggin would put its index.
    let data = tempfile::tempdir().unwrap();
    let data_arg = data.path().to_str().unwrap();
    std::fs::create_dir(data.path().join("index")).unwrap();
    std::fs::write(data.path().join("index/thesis.txt"), "chapter one").unwrap();
    let output = run(noggin().args(["index", "--brain", path_arg(&brain), "--data-dir", data_arg]));
    assert!(!output.status.success(), "indexed over the user's folder");
    assert!(
        stderr(&output).contains("thesis.txt"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(data.path().join("index/thesis.txt")).unwrap(),
        "chapter one"
    );
    // Not noggin's folder, so not marked for git to ignore.
    assert!(!data.path().join(".gitignore").exists());

    // The brain itself as the data folder: refused, nothing written.
    let before: Vec<_> = std::fs::read_dir(brain.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let output = run(noggin().args([
        "index",
        "--brain",
        path_arg(&brain),
        "--data-dir",
        path_arg(&brain),
    ]));
    assert!(
        !output.status.success(),
        "used the brain as its data folder"
    );
    assert!(
        stderr(&output).contains("is the brain itself"),
        "{}",
        stderr(&output)
    );
    let after: Vec<_> = std::fs::read_dir(brain.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
    // An empty brain as well: it stays empty.
    let empty = TestBrain::empty();
    let output = run(noggin().args([
        "index",
        "--brain",
        path_arg(&empty),
        "--data-dir",
        path_arg(&empty),
    ]));
    assert!(
        !output.status.success(),
        "used the empty brain as its data folder"
    );
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);

    // A folder of noggin's own is still rebuilt when its index is broken.
    let own = tempfile::tempdir().unwrap();
    let own_arg = own.path().join("data");
    let own_arg = own_arg.to_str().unwrap();
    let index = |args: &[&str]| {
        run(noggin()
            .args(["index", "--brain", path_arg(&brain)])
            .args(args))
    };
    assert!(index(&["--data-dir", own_arg]).status.success());
    assert!(own.path().join("data/.gitignore").is_file());
    std::fs::write(own.path().join("data/index/meta.json"), "{ broken").unwrap();
    let output = index(&["--data-dir", own_arg, "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("\"reparsed\":42"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn an_unreadable_brain_is_an_error_and_the_index_keeps_its_notes() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // Root reads every folder whatever its mode: as root, noggin runs as
    // `nobody` (setpriv), from a copy of the binary that user can reach.
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    let temp = tempfile::tempdir().unwrap();
    chmod(temp.path(), 0o755);
    let bin = temp.path().join("noggin");
    std::fs::copy(env!("CARGO_BIN_EXE_noggin"), &bin).unwrap();
    let brain = TestBrain::sample();
    let copy = temp.path().join("brain");
    let copied = run(Command::new("cp").arg("-r").arg(brain.path()).arg(&copy));
    assert!(copied.status.success(), "{}", stderr(&copied));
    let data = temp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    chmod(&data, 0o777);
    let as_user = || {
        if as_root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin);
            clean(c)
        } else {
            clean(Command::new(&bin))
        }
    };
    if as_root && !run(as_user().arg("--version")).status.success() {
        // A container that cannot switch users: nothing to learn here.
        eprintln!("skipped: setpriv cannot run noggin as nobody on this machine");
        return;
    }
    let index = || {
        let mut command = as_user();
        command
            .args(["index", "--json", "--brain"])
            .arg(&copy)
            .arg("--data-dir")
            .arg(&data);
        run(&mut command)
    };
    let first = index();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stdout(&first).contains("\"notes\":42"),
        "{}",
        stdout(&first)
    );

    chmod(&copy, 0o000);
    let refused = index();
    chmod(&copy, 0o755);
    assert!(
        !refused.status.success(),
        "an unreadable brain indexed as an empty one"
    );
    assert!(
        stderr(&refused).contains("left as it was"),
        "{}",
        stderr(&refused)
    );
    let again = index();
    assert!(again.status.success(), "{}", stderr(&again));
    let report = stdout(&again);
    assert!(
        report.contains("\"notes\":42") && report.contains("\"unchanged\":42"),
        "the index lost notes: {report}"
    );

    // A data folder the user cannot write (a snapshot, a read-only mount):
    // its index is searched as it is, and `index` says why it cannot run.
    let chmod_all = |mode_dir: u32, mode_file: u32| {
        let mut folders = vec![data.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else {
                    chmod(&path, mode_file);
                }
            }
            chmod(&folder, mode_dir);
        }
    };
    chmod_all(0o555, 0o444);
    let search = run(as_user()
        .args(["search", "--json", "--brain"])
        .arg(&copy)
        .arg("--data-dir")
        .arg(&data)
        .arg("deploy"));
    let refused = index();
    chmod_all(0o777, 0o666);
    assert!(search.status.success(), "{}", stderr(&search));
    assert!(
        stdout(&search).contains("Harbor/Runbooks/Deploy.md"),
        "{}{}",
        stdout(&search),
        stderr(&search)
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("cannot be written"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_trajectory_over_the_limit_names_the_flag_that_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    std::fs::write(
        &file,
        r#"[{"tool": "Read", "arguments": {"file_path": "a.rs"}}]"#,
    )
    .unwrap();
    let output = run(noggin().args(["analyze", "--max-bytes", "10"]).arg(&file));
    assert_eq!(output.status.code(), Some(1));
    let said = stderr(&output);
    assert!(
        said.contains("over the limit of 10 bytes (--max-bytes takes a larger one)"),
        "{said}"
    );
}

#[test]
fn a_failure_says_its_cause_once() {
    let output = run(noggin().args(["analyze", "/no/such/trajectory.jsonl"]));
    assert_eq!(output.status.code(), Some(1));
    let said = stderr(&output);
    assert!(said.starts_with("noggin: cannot read"), "{said}");
    assert_eq!(
        said.matches("No such file or directory").count(),
        1,
        "{said}"
    );
}

#[test]
fn search_prints_hits_for_people_and_scripts() {
    let brain = TestBrain::sample();
    let output = run(noggin().args(["search", "--brain", path_arg(&brain), "--json", "deploy"]));
    assert!(output.status.success(), "{}", stderr(&output));
    let body: Value = serde_json::from_str(&stdout(&output)).expect("JSON hits");
    let hits = body["hits"].as_array().expect("hits is an array");
    assert_eq!(hits[0]["path"], "Harbor/Runbooks/Deploy.md", "{body}");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("<mark>"));

    let output = run(noggin().args([
        "search",
        "--brain",
        path_arg(&brain),
        "--limit",
        "2",
        "--folder",
        "Harbor/Decisions",
        "deploy",
        "on",
        "Fly",
    ]));
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("Harbor/Decisions/ADR-003 Deploy on Fly.io.md"),
        "{text}"
    );
    assert!(!text.contains("Harbor/Runbooks/"), "{text}");
    assert!(
        !text.contains("<mark>"),
        "terminal output shows HTML: {text}"
    );

    let output = run(noggin().args(["search", "--brain", path_arg(&brain), "xylophone"]));
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "no notes match\n");
}

#[test]
fn a_missing_brain_is_a_clear_error() {
    let output = run(noggin().args(["index", "--brain", "/no/such/brain"]));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("/no/such/brain"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_input_is_refused_in_the_words_of_the_flags_and_makes_no_index() {
    let brain = TestBrain::sample();
    let long = "y".repeat(10_001);
    let cases: [(&[&str], &str); 4] = [
        (&["search", ""], "the search query is empty"),
        (
            &["remember", "--prompt", "p", "-q", "x?", "-a", &long],
            "the answer to question 1 is 10001 characters long",
        ),
        (
            &[
                "remember",
                "--prompt",
                "p",
                "-q",
                "a\tb?",
                "-a",
                "an answer long enough",
            ],
            "question 1 contains a control character",
        ),
        (
            &["analyze", "/no/such/file", "--read-share", "2"],
            "--read-share must be between 0 and 1",
        ),
    ];
    for (args, said) in cases {
        let output = run(noggin()
            .args(&args[..1])
            .args(
                ["--brain", path_arg(&brain)]
                    .iter()
                    .filter(|_| args[0] != "analyze"),
            )
            .args(&args[1..]));
        assert!(!output.status.success(), "{args:?}");
        assert!(
            stderr(&output).contains(said),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            !brain.path().join(".noggin").exists(),
            "{args:?} made an index"
        );
    }
}

#[test]
fn an_answer_saved_into_a_note_over_the_size_limit_is_not_called_searchable() {
    let brain = TestBrain::sample();
    let answer = "The capybara enclosure opens at nine, after the keepers clean it. ".repeat(4);
    let output = run(noggin().args([
        "remember",
        "--brain",
        path_arg(&brain),
        "--max-note-bytes",
        "300",
        "--prompt",
        "Zoo",
        "-q",
        "When does the enclosure open?",
        "-a",
        &answer,
    ]));
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stdout(&output);
    assert!(
        said.contains("not indexed yet") && said.contains("(--max-note-bytes)"),
        "{said}"
    );
    assert!(!said.contains("searchable now"), "{said}");
}

#[test]
fn the_project_context_flag_takes_a_note_of_the_brain_and_nothing_else() {
    let brain = TestBrain::sample();
    let outside = tempfile::NamedTempFile::new().expect("a file outside the brain");
    std::fs::write(outside.path(), "# Secret\n\nroot:x:0:0\n").expect("write it");
    let research = |context: &str| {
        run(noggin().args([
            "research",
            "--brain",
            path_arg(&brain),
            "--project-context",
            context,
            "--json",
            "-q",
            "When do we deploy?",
        ]))
    };
    let refusals = [
        (
            outside.path().to_str().expect("UTF-8"),
            "not a note of the brain",
        ),
        ("../outside.md", "No such file"),
        ("Harbor/Nope.md", "No such file"),
        ("Harbor", "not a note of the brain"),
    ];
    for (given, says) in refusals {
        let output = research(given);
        assert!(!output.status.success(), "{given}");
        assert!(
            stderr(&output).contains(says),
            "{given}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("--project-context"),
            "{}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "");
    }
    let output = research("Harbor/Project Context.md");
    assert!(output.status.success(), "{}", stderr(&output));
    let answer: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert!(
        answer["project_context"]
            .as_str()
            .is_some_and(|c| c.contains("booking boat slips")),
        "{answer}"
    );
}

#[test]
fn serve_refuses_a_public_address_without_a_token() {
    let brain = TestBrain::sample();
    let mut child = noggin()
        .args(["serve", "--brain", path_arg(&brain), "--addr", "0.0.0.0:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start noggin serve");
    let status = wait_for_exit(&mut child, DEADLINE);
    let err = read_all(child.stderr.take());
    assert!(!status.success(), "served on 0.0.0.0 without a token");
    assert!(
        err.contains("without a token") && err.contains("--token"),
        "{err}"
    );
}

/// An input that ends before any client says hello (a probe, `< /dev/null`)
/// is a clean end of `noggin mcp`, as the end of its input is later.
#[test]
fn mcp_whose_input_ends_at_once_ends_cleanly() {
    let brain = TestBrain::sample();
    let mut child = noggin()
        .args(["mcp", "--brain", path_arg(&brain)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin mcp");
    let status = wait_for_exit(&mut child, DEADLINE);
    let out = read_all(child.stdout.take());
    assert!(status.success(), "{status:?}");
    assert_eq!(out, "", "nothing but MCP on stdout");
}

#[test]
fn serve_stops_cleanly_on_sigterm() {
    let brain = TestBrain::sample();
    let mut serve = Serve::start(
        noggin()
            .args(["serve", "--brain", path_arg(&brain)])
            .args(["--addr", "127.0.0.1:0"]),
    );
    let (status, body) = serve.get("/healthz", None);
    assert_eq!(status, 200, "{body}");
    let (status, body) = serve.get("/v1/search?q=deploy", None);
    assert_eq!(status, 200, "{body}");
    let status = serve.terminate();
    assert!(status.success(), "exit after SIGTERM: {status:?}");
}

/// An MCP client that starts `noggin mcp` on a brain a server holds hears
/// why in the answer to its `initialize`, where it only saw the connection
/// close: the host shows the reason, and the way to share the brain.
#[test]
fn mcp_beside_a_server_answers_the_clients_first_request_with_why() {
    let brain = TestBrain::sample();
    let mut serve = Serve::start(
        noggin()
            .args(["serve", "--brain", path_arg(&brain), "--no-model"])
            .args(["--addr", "127.0.0.1:0"]),
    );
    let mut mcp = noggin()
        .args(["mcp", "--brain", path_arg(&brain), "--no-model"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start noggin mcp");
    let mut input = mcp.stdin.take().expect("stdin is piped");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":"hello","method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(mcp.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(answer["id"], "hello", "{answer}");
    let why = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("`noggin serve` (pid") && why.contains("its /mcp"),
        "{answer}"
    );
    drop(input);
    assert!(!wait_for_exit(&mut mcp, DEADLINE).success());
    assert!(serve.terminate().success());
}

#[test]
fn beside_a_server_that_does_not_follow_the_brain_remember_and_index_say_so() {
    let brain = TestBrain::sample();
    let mut serve = Serve::start(
        noggin()
            .args(["serve", "--brain", path_arg(&brain), "--no-model"])
            .args(["--addr", "127.0.0.1:0", "--watch", "off"]),
    );
    let output = run(noggin().args([
        "remember",
        "--brain",
        path_arg(&brain),
        "--prompt",
        "Unwatched",
        "-q",
        "Who waters the plants?",
        "-a",
        "Mira, every Monday morning.",
    ]));
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stdout(&output);
    assert!(
        said.contains("not indexed yet")
            && said.contains("does not follow the brain (--watch off)")
            && !said.contains("within a second"),
        "{said}"
    );
    let output = run(noggin().args(["index", "--brain", path_arg(&brain)]));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("does not follow the brain (--watch off)"),
        "{}",
        stderr(&output)
    );
    // A second server on the brain says who serves it, without waiting for
    // a server to let go.
    let output = run(noggin()
        .args(["serve", "--brain", path_arg(&brain), "--no-model"])
        .args(["--addr", "127.0.0.1:0"]));
    assert!(!output.status.success());
    let said = stderr(&output);
    assert!(
        said.contains("`noggin serve` (pid") && said.contains("holds the index"),
        "{said}"
    );
    assert!(!said.contains("waiting for it"), "{said}");
    assert!(serve.terminate().success());
}

#[test]
fn serve_stops_cleanly_on_sigterm_sent_as_soon_as_it_says_where_it_serves() {
    // The moment a supervisor can know the server is up is the moment it may
    // stop it: the signal must be heard from then on, not from the accept
    // loop's first turn.
    let brain = TestBrain::sample();
    for _ in 0..3 {
        let mut serve = Serve::start(
            noggin()
                .args(["serve", "--brain", path_arg(&brain)])
                .args(["--addr", "127.0.0.1:0"]),
        );
        let status = serve.terminate();
        assert!(status.success(), "exit after SIGTERM: {status:?}");
    }
}

#[test]
fn serve_reads_its_settings_from_the_environment() {
    let brain = TestBrain::sample();
    let data = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(
        noggin()
            .arg("serve")
            .env("NOGGIN_BRAIN", brain.path())
            .env("NOGGIN_DATA_DIR", data.path())
            .env("NOGGIN_ADDR", "127.0.0.1:0")
            .env("NOGGIN_TOKEN", "s3cret")
            .env("NOGGIN_WATCH", "poll")
            .env("NOGGIN_POLL_INTERVAL_MS", "1234")
            .env("NOGGIN_MAX_NOTE_BYTES", "1000000")
            .env("NOGGIN_MAX_BODY_BYTES", "2048")
            .env("NOGGIN_DECIDER", "learned"),
    );
    let (status, _) = serve.get("/v1/status", None);
    assert_eq!(status, 401, "NOGGIN_TOKEN is ignored");
    let (status, body) = serve.get("/v1/status", Some("s3cret"));
    assert_eq!(status, 200, "{body}");
    let status: Value = serde_json::from_str(&body).expect("JSON status");
    let canonical = std::fs::canonicalize(brain.path()).unwrap();
    assert_eq!(status["brain"], canonical.to_str().unwrap(), "{status}");
    assert_eq!(
        status["data_dir"],
        data.path().to_str().unwrap(),
        "{status}"
    );
    assert_eq!(status["watcher"]["state"], "polling", "{status}");
    assert_eq!(status["watcher"]["poll_interval_ms"], 1234, "{status}");
    // The learned decider, at its own default threshold.
    assert_eq!(status["local_decider"], "learned", "{status}");
    let threshold = status["answer_threshold"].as_f64().unwrap_or_default();
    assert!((threshold - 0.75).abs() < 1e-6, "{status}");
    assert!(serve.terminate().success());
    assert!(
        !brain.data_dir().join("index").exists(),
        "the index went into the brain instead of NOGGIN_DATA_DIR"
    );
}

#[test]
fn index_reads_its_settings_from_the_environment() {
    let brain = TestBrain::sample();
    let output = run(noggin()
        .args(["index", "--json"])
        .env("NOGGIN_BRAIN", brain.path())
        .env("NOGGIN_MAX_NOTE_BYTES", "2000"));
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("JSON summary");
    let skipped = report["skipped_too_large"].as_u64().unwrap_or_default();
    assert!(skipped > 0, "NOGGIN_MAX_NOTE_BYTES is ignored: {report}");
    assert_eq!(report["notes"].as_u64(), Some(42 - skipped), "{report}");

    let output = run(noggin()
        .args(["serve"])
        .env("NOGGIN_BRAIN", brain.path())
        .env("NOGGIN_POLL_INTERVAL_MS", "0"));
    assert!(
        !output.status.success(),
        "NOGGIN_POLL_INTERVAL_MS is ignored"
    );
    assert!(
        stderr(&output).contains("poll-interval"),
        "{}",
        stderr(&output)
    );

    let output = run(noggin()
        .args(["serve"])
        .env("NOGGIN_BRAIN", brain.path())
        .env("NOGGIN_ADDR", "0.0.0.0:0"));
    assert!(!output.status.success(), "NOGGIN_ADDR is ignored");
}

#[test]
fn a_bad_value_from_the_environment_names_its_variable() {
    let brain = TestBrain::sample();
    for (args, variable, value) in [
        (&["search", "deploy"][..], "NOGGIN_MAX_NOTE_BYTES", ""),
        (&["mcp"][..], "NOGGIN_NO_MODEL", "yes please"),
    ] {
        let output = run(noggin()
            .args(args)
            .args(["--brain", path_arg(&brain)])
            .env(variable, value));
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains(variable),
            "the error does not say where the value came from: {}",
            stderr(&output)
        );
    }
    // Typed on the command line, the flag is what is wrong.
    let output = run(noggin()
        .args(["search", "--brain", path_arg(&brain)])
        .args(["--max-note-bytes", "lots", "deploy"])
        .env("NOGGIN_MAX_NOTE_BYTES", "1000"));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--max-note-bytes"));
    assert!(
        !stderr(&output).contains("NOGGIN_MAX_NOTE_BYTES"),
        "{}",
        stderr(&output)
    );
    // A value refused after parsing names its variable too.
    let output = run(noggin()
        .args(["serve"])
        .env("NOGGIN_BRAIN", brain.path())
        .env("NOGGIN_POLL_INTERVAL_MS", "0"));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("NOGGIN_POLL_INTERVAL_MS"),
        "{}",
        stderr(&output)
    );
}

/// All a child's piped output, once it has ended.
fn read_all(pipe: Option<impl Read>) -> String {
    let mut text = String::new();
    pipe.expect("the output is piped")
        .read_to_string(&mut text)
        .expect("read the child's output");
    text
}

/// A running `noggin serve`, found through the address it prints.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    /// Starts the command and waits until it says where it serves.
    fn start(command: &mut Command) -> Serve {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start noggin serve");
        let (lines_tx, lines) = mpsc::channel();
        let err = child.stderr.take().expect("stderr is piped");
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        let url = regex::Regex::new(r"at http://(\S+)/").unwrap();
        let until = Instant::now() + DEADLINE;
        let mut seen = Vec::new();
        let addr = loop {
            let left = until.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(found) = url.captures(&line) {
                        break found[1].to_string();
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!("noggin serve never said where it serves: {seen:#?}");
                }
            }
        };
        Serve { child, addr }
    }

    /// A plain HTTP/1.0 GET; (status, body).
    fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect to noggin");
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "GET {path} HTTP/1.0\r\nHost: {}\r\n{auth}\r\n",
            self.addr
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// Sends SIGTERM and waits for the exit.
    fn terminate(&mut self) -> ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on this test's own child, which has not been waited
        // for, so the pid cannot have been reused.
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
        assert_eq!(sent, 0, "kill -TERM failed");
        wait_for_exit(&mut self.child, DEADLINE)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        // Only this test's own child, and only if it is still running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `noggin search` reads the index a server keeps, also while that server
/// commits answers and merges segments away under it: never an empty
/// result for a brain that has the words.
#[tokio::test(flavor = "multi_thread")]
async fn search_beside_a_committing_server_reads_the_index() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let brain = TestBrain::sample();
    let server = crate::helpers::TestServer::start(&brain).await;
    let done = AtomicBool::new(false);
    let answers = async {
        let mut i = 0;
        while !done.load(Ordering::Relaxed) {
            i += 1;
            let body = serde_json::json!({"prompt": format!("Beside {i}"), "qa": [
                {"question": format!("Question {i}?"), "answer": "An answer long enough to keep."}
            ]});
            let (status, reply) = server.post_json("/v1/answers", &body).await;
            assert!(status.is_success(), "{reply}");
        }
        i
    };
    let searches = async {
        let brain_dir = path_arg(&brain).to_string();
        let mut empty = Vec::new();
        for round in 0..120 {
            let dir = brain_dir.clone();
            let output = tokio::task::spawn_blocking(move || {
                run(noggin().args(["search", "--brain", &dir, "--json", "deploy"]))
            })
            .await
            .expect("the search ran");
            let hits: Value = serde_json::from_str(&stdout(&output)).unwrap_or(Value::Null);
            if hits["hits"].as_array().is_none_or(Vec::is_empty) {
                empty.push(format!("round {round}: {}", stderr(&output)));
            }
        }
        done.store(true, Ordering::Relaxed);
        empty
    };
    let (committed, empty) = tokio::join!(answers, searches);
    server.stop().await;
    assert!(
        committed > 5,
        "only {committed} commits beside the searches"
    );
    assert!(empty.is_empty(), "{}", empty.join("\n"));
}

/// A command for one brain, pointed at a data folder where a server keeps
/// another brain's index, refuses it: it neither answers from the other
/// brain's notes nor writes an answer that server would never index.
#[tokio::test(flavor = "multi_thread")]
async fn a_data_folder_kept_for_another_brain_is_refused() {
    let served = TestBrain::sample();
    let server = crate::helpers::TestServer::start(&served).await;
    let other = TestBrain::empty();
    other.write(
        "walrus.md",
        "# Walrus\n\nThe keeper feeds the walrus at noon.",
    );
    let data = served.data_dir();
    let brain = path_arg(&other).to_string();
    let data = data.to_str().expect("UTF-8 temp path").to_string();
    let outputs = tokio::task::spawn_blocking(move || {
        let with = |args: &[&str]| {
            let mut command = noggin();
            command
                .args(args)
                .args(["--brain", &brain, "--data-dir", &data]);
            run(&mut command)
        };
        [
            with(&["search", "deploy"]),
            with(&["research", "-q", "When do we deploy?"]),
            with(&[
                "remember",
                "--prompt",
                "Walrus",
                "-q",
                "Who feeds it?",
                "-a",
                "The keeper, at noon.",
            ]),
        ]
    })
    .await
    .expect("the commands ran");
    let served_path = std::fs::canonicalize(served.path()).unwrap();
    for output in &outputs {
        assert!(!output.status.success(), "{}", stdout(output));
        let said = stderr(output);
        assert!(said.contains("for another brain"), "{said}");
        assert!(said.contains(served_path.to_str().unwrap()), "{said}");
    }
    assert!(
        !other.path().join("Alignment Knowledge").exists(),
        "no answer was written in the other brain"
    );

    // Its own brain's `index` names the server that keeps the index.
    let served_dir = path_arg(&served).to_string();
    let output =
        tokio::task::spawn_blocking(move || run(noggin().args(["index", "--brain", &served_dir])))
            .await
            .expect("the command ran");
    let said = stderr(&output);
    assert!(!output.status.success(), "{said}");
    let holder = format!("(pid {}) holds the index", std::process::id());
    assert!(
        said.contains(&holder) && said.contains("keeps it up to date"),
        "{said}"
    );
    server.stop().await;
}

/// A command beside a holder that has not committed its first index yet
/// (a cold `noggin index` or `serve` of a large brain) says that the index
/// is still being made, instead of a plain "no notes match".
#[test]
fn a_command_beside_a_first_index_being_made_says_so() {
    let brain = TestBrain::sample();
    let holder = noggin::index::Index::open(noggin::index::IndexOptions {
        brain: std::fs::canonicalize(brain.path()).unwrap(),
        data_dir: None,
        max_note_bytes: 5 << 20,
        read_only: false,
    })
    .expect("the index opens as its holder");
    let search = || run(noggin().args(["search", "--brain", path_arg(&brain), "deploy"]));
    let research = || {
        run(noggin().args([
            "research",
            "--brain",
            path_arg(&brain),
            "-q",
            "When do we deploy?",
        ]))
    };

    let (found, asked) = (search(), research());
    assert!(found.status.success(), "{}", stderr(&found));
    assert_eq!(stdout(&found).trim(), "no notes match yet");
    for output in [&found, &asked] {
        assert!(
            stderr(output).contains("still indexing this brain"),
            "{}",
            stderr(output)
        );
    }
    assert!(stdout(&asked).contains("Still open"), "{}", stdout(&asked));

    holder.reconcile_blocking(None).expect("the holder indexes");
    let (found, asked) = (search(), research());
    assert!(stdout(&found).contains("deploy"), "{}", stdout(&found));
    for output in [&found, &asked] {
        assert!(
            !stderr(output).contains("still indexing"),
            "{}",
            stderr(output)
        );
    }
}
