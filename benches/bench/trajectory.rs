//! `cargo bench --bench bench -- trajectory [CALLS]`: how long noggin takes
//! to analyse a long agent run.
//!
//! Writes a Claude Code session of CALLS tool calls (default 10,000) the way
//! a long run looks: reads, edits, greps and shell commands over a few
//! hundred files, with results of a few hundred bytes, failures and
//! compactions now and then. Then it times, over several rounds, reading
//! and analysing it (what `POST /v1/trajectories/analyze` does before it
//! answers) and drawing its page, and prints the median and the slowest.

use std::time::{Duration, Instant};

use noggin::trajectory::{analyze, render, Thresholds};
use serde_json::json;

/// Rounds timed after one warm-up.
const ROUNDS: usize = 10;

/// A Claude Code session of `calls` tool calls.
pub fn session(calls: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(calls * 700);
    let mut line = |value: serde_json::Value| {
        out.extend_from_slice(value.to_string().as_bytes());
        out.push(b'\n');
    };
    line(json!({"type": "user", "timestamp": "2026-11-23T08:00:00Z",
        "message": {"role": "user", "content": "Move the billing module to the new fee model and keep the tests green"}}));
    let start = 1_795_420_800_000_i64;
    // A small deterministic generator: the same session every run.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for i in 0..calls {
        let at = chrono::DateTime::from_timestamp_millis(start + i as i64 * 4_000)
            .expect("a valid time")
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let file = format!("/work/app/src/module_{}/file_{}.rs", next(20), next(15));
        let (name, input, result, failed) = match next(10) {
            0..=3 => ("Read", json!({"file_path": file}), "x".repeat(400), false),
            4..=5 => (
                "Edit",
                json!({"file_path": file, "old_string": "a", "new_string": "b"}),
                "ok".to_string(),
                false,
            ),
            6 => (
                "Grep",
                json!({"pattern": format!("fn handler_{}", next(40)), "path": "/work/app/src"}),
                format!("{file}:12:fn handler()\n{file}:40:handler()"),
                false,
            ),
            7 => (
                "Glob",
                json!({"pattern": "**/*.rs"}),
                format!("{file}\n"),
                false,
            ),
            _ => {
                let failed = next(4) == 0;
                let out = if failed {
                    "Exit code 101\nerror[E0308]: mismatched types".to_string()
                } else {
                    "ok".to_string()
                };
                (
                    "Bash",
                    json!({"command": if next(2) == 0 { "cargo test -p billing" } else { "cargo build" }}),
                    out,
                    failed,
                )
            }
        };
        let id = format!("toolu_{i}");
        line(
            json!({"type": "assistant", "timestamp": at, "message": {"role": "assistant",
            "content": [{"type": "text", "text": "Next step."}, {"type": "tool_use", "id": id, "name": name, "input": input}]}}),
        );
        line(
            json!({"type": "user", "timestamp": at, "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": failed}]}}),
        );
        if i % 2_000 == 1_999 {
            line(
                json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "timestamp": at}),
            );
            line(
                json!({"type": "user", "isCompactSummary": true, "timestamp": at,
                "message": {"role": "user", "content": "This session is being continued from a previous conversation."}}),
            );
        }
    }
    out
}

pub fn bench_trajectory(calls: usize) -> anyhow::Result<()> {
    let bytes = session(calls);
    let thresholds = Thresholds::default();
    println!(
        "trajectory: a Claude Code session of {calls} calls, {:.1} MB",
        bytes.len() as f64 / 1e6
    );
    let analysis = analyze(&bytes, &thresholds)?;
    println!(
        "  {} calls read, {} failed, {} compactions, {} findings, {} events to keep",
        analysis.calls,
        analysis.errors,
        analysis.compactions.len(),
        analysis.findings.len(),
        analysis.keep.events.len()
    );
    let mut analysing = Vec::with_capacity(ROUNDS);
    let mut drawing = Vec::with_capacity(ROUNDS);
    let mut page_bytes = 0;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let analysis = analyze(&bytes, &thresholds)?;
        analysing.push(started.elapsed());
        let started = Instant::now();
        let page = render::html_page(&analysis, render::StyleLink::Served);
        drawing.push(started.elapsed());
        page_bytes = page.len();
    }
    let report = |what: &str, times: &mut Vec<Duration>| {
        times.sort();
        println!(
            "  {what}: median {:.1} ms, slowest {:.1} ms ({ROUNDS} rounds)",
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3
        );
    };
    report("read and analyse", &mut analysing);
    report("draw the page", &mut drawing);
    println!("  page: {:.1} MB", page_bytes as f64 / 1e6);
    Ok(())
}
