//! Showing an analysis: as a report for the terminal, and as a page with
//! the run drawn as a timeline (inline SVG: one mark per call coloured by
//! kind, errors and compactions marked, re-reads of one file joined by
//! arcs) beside the findings and what to keep.
//!
//! The page runs no script and loads nothing but its style sheet (inline
//! when written to a file, `/trajectory.css` when served, as the server's
//! content security policy forbids inline styles). Everything taken from
//! the transcript is escaped: a transcript is hostile input.

use std::fmt::Write as _;

use super::model::{cut, Call, CallKind};
use super::patterns::{Finding, Pattern};
use super::Analysis;
use crate::index::search::escape_html;

/// The page's style sheet, served as `/trajectory.css`.
pub const STYLE: &str = include_str!("../../web/trajectory.css");

/// How the page gets its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StyleLink {
    /// A `<style>` element: a page that stands alone as a file.
    Inline,
    /// `<link href="/trajectory.css">`: a page noggin serves.
    Served,
}

/// Findings drawn as arcs at most (the most severe re-reads).
const ARC_FINDINGS: usize = 20;

// Timeline geometry, in SVG user units.
const CELL_W: usize = 12;
const CELL_H: usize = 18;
const STEP: usize = 14;
const ROW_H: usize = 40;
const LEFT: usize = 44;
const TOP: usize = 16;

/// The report for a terminal.
pub fn text_report(analysis: &Analysis) -> String {
    let mut out = String::new();
    let k = &analysis.kinds;
    let _ = writeln!(
        out,
        "{}: {} ({} read, {} write, {} search, {} shell, {} other), {} failed, {}; {}, {} skipped",
        analysis.format.describe(),
        plural(analysis.calls, "call"),
        k.read,
        k.write,
        k.search,
        k.shell,
        k.other,
        analysis.errors,
        plural(analysis.compactions.len(), "compaction"),
        plural(analysis.lines, "line"),
        analysis.skipped_lines,
    );
    if let (Some(started), Some(ended)) = (&analysis.started, &analysis.ended) {
        let _ = writeln!(out, "from {started} to {ended}");
    }
    out.push('\n');
    if analysis.findings.is_empty() {
        out.push_str("No signs of lost context.\n");
    } else {
        out.push_str("Findings, most severe first:\n");
    }
    for finding in &analysis.findings {
        let lost: Vec<&str> = finding.lost.iter().map(|l| l.describe()).collect();
        let _ = writeln!(
            out,
            "\n{:>2}/10  {} (lost: {})\n        {}",
            finding.severity,
            finding.pattern.title(),
            lost.join(", "),
            finding.summary
        );
        for call in finding.calls.iter().take(8) {
            let _ = writeln!(
                out,
                "        #{} {} {}",
                call.index + 1,
                clock(call.at.as_deref()),
                call.describe()
            );
        }
        let more = finding.calls.len().saturating_sub(8) + finding.more_calls;
        if more > 0 {
            let _ = writeln!(out, "        … and {more} more");
        }
    }
    if analysis.keep.instructions.is_empty() {
        out.push_str("\nNothing to keep: no request, file, error, search or task in play.\n");
    } else {
        out.push_str("\nWhat to keep (paste into the agent's compaction prompt):\n\n");
        for line in analysis.keep.instructions.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    let _ = writeln!(
        out,
        "\n{} working-context events to seed a session (--json shows them).",
        analysis.keep.events.len()
    );
    crate::text::plain_text(&out).into_owned()
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `HH:MM:SS` of an RFC 3339 time, or nothing.
fn clock(at: Option<&str>) -> &str {
    at.and_then(|a| a.get(11..19)).unwrap_or("")
}

/// The page of an analysis.
pub fn html_page(analysis: &Analysis, style: StyleLink) -> String {
    let mut out = String::with_capacity(64 * 1024 + analysis.calls * 300);
    let style = match style {
        StyleLink::Inline => format!("<style>\n{STYLE}</style>"),
        StyleLink::Served => r#"<link rel="stylesheet" href="/trajectory.css">"#.to_string(),
    };
    let k = &analysis.kinds;
    let when = match (&analysis.started, &analysis.ended) {
        (Some(s), Some(e)) => format!(" · {} – {}", escape_html(s), escape_html(e)),
        _ => String::new(),
    };
    let skipped = if analysis.skipped_lines > 0 {
        format!(
            " · {} unreadable skipped",
            plural(analysis.skipped_lines, "line")
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Where the agent lost its context · noggin</title>
{style}
</head>
<body>
<header>
<h1>Where the agent lost its context</h1>
<p class="meta">{format} · {calls} · {errors} failed · {compactions}{when}{skipped}</p>
</header>
<main class="layout">
<section class="timeline" aria-labelledby="timeline-title">
<h2 id="timeline-title">The run, call by call</h2>
"#,
        format = analysis.format.describe(),
        calls = plural(analysis.calls, "call"),
        errors = analysis.errors,
        compactions = plural(analysis.compactions.len(), "compaction"),
    );
    let counts = [k.read, k.write, k.search, k.shell, k.other];
    out.push_str(r#"<ul class="legend">"#);
    for (kind, count) in CallKind::ALL.iter().zip(counts) {
        let _ = write!(
            out,
            r#"<li><svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true"><rect class="call k-{0}" width="12" height="12" rx="2"/></svg>{0} ({1})</li>"#,
            kind.name(),
            count
        );
    }
    out.push_str(concat!(
        r#"<li><svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true"><circle class="err-dot" cx="6" cy="6" r="4"/></svg>failed</li>"#,
        r#"<li><svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true"><line class="compaction" x1="6" y1="0" x2="6" y2="12"/></svg>compaction</li>"#,
        r#"<li><svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true"><path class="reread" d="M1 11 Q6 -3 11 11"/></svg>same file read again</li>"#,
        "</ul>\n"
    ));
    timeline_svg(&mut out, analysis);
    out.push_str("</section>\n");
    findings_section(&mut out, &analysis.findings);
    keep_section(&mut out, analysis);
    out.push_str(
        "</main>\n<footer>Made by noggin from the agent's transcript. Times are UTC.</footer>\n</body>\n</html>\n",
    );
    // Terminal escapes of the transcript mean nothing on a page, and a
    // saved page printed with `cat` must not drive the terminal.
    crate::text::plain_text(&out).into_owned()
}

/// Calls per row of the timeline: the picture is scaled to the width of
/// the screen, so short runs get large marks and long ones wrap.
fn per_row(calls: usize) -> usize {
    match calls {
        0..=500 => 25,
        501..=2500 => 50,
        _ => 100,
    }
}

/// Where a call's mark is: its left and top.
fn position(index: usize, per_row: usize) -> (usize, usize) {
    (
        LEFT + (index % per_row) * STEP,
        TOP + (index / per_row) * ROW_H,
    )
}

fn timeline_svg(out: &mut String, analysis: &Analysis) {
    let calls = &analysis.trajectory.calls;
    let per_row = per_row(calls.len());
    let rows = calls.len().div_ceil(per_row).max(1);
    let width = LEFT + per_row * STEP + 4;
    let height = TOP + rows * ROW_H;
    let _ = write!(
        out,
        r#"<svg class="tl" viewBox="0 0 {width} {height}" role="img" aria-label="{} calls in {rows} rows of {per_row}, coloured by kind">"#,
        calls.len()
    );
    // Each row is labelled with its first call's number, counted from #1
    // as everywhere else on the page.
    for row in 0..rows {
        let _ = write!(
            out,
            r#"<text class="row-label" x="{}" y="{}" text-anchor="end">{}</text>"#,
            LEFT - 6,
            TOP + row * ROW_H + CELL_H - 5,
            row * per_row + 1
        );
    }
    for call in calls {
        call_mark(out, call, per_row);
    }
    for compaction in &analysis.trajectory.compactions {
        let index = compaction.before_call;
        let (x, y) = if index > 0 && index % per_row == 0 {
            // The boundary after the last call of a row.
            let (x, y) = position(index - 1, per_row);
            (x + STEP, y)
        } else {
            position(index, per_row)
        };
        let x = x.saturating_sub((STEP - CELL_W) / 2 + 1);
        let at = compaction
            .at
            .as_deref()
            .map(|a| format!(" at {}", escape_html(a)))
            .unwrap_or_default();
        let _ = write!(
            out,
            r#"<line class="compaction" x1="{x}" y1="{}" x2="{x}" y2="{}"><title>compaction before call #{number}{at}</title></line>"#,
            y.saturating_sub(10),
            y + CELL_H + 6,
            number = index + 1,
        );
    }
    for finding in analysis
        .findings
        .iter()
        .filter(|f| f.pattern == Pattern::Reread)
        .take(ARC_FINDINGS)
    {
        reread_arcs(out, finding, per_row);
    }
    out.push_str("</svg>\n");
}

fn call_mark(out: &mut String, call: &Call, per_row: usize) {
    let (x, y) = position(call.index, per_row);
    let mut title = format!(
        "#{} {} {}",
        call.index + 1,
        clock(call.at.as_deref()),
        call.tool
    );
    if let Some(path) = &call.path {
        let _ = write!(title, " {}", cut(path, 200));
    }
    if let Some(detail) = &call.detail {
        let _ = write!(title, " — {}", cut(detail, 200));
    }
    if call.is_error {
        let _ = write!(
            title,
            " — failed: {}",
            cut(call.error.as_deref().unwrap_or("no error text"), 200)
        );
    }
    let _ = write!(
        out,
        r#"<rect id="c{i}" class="call k-{kind}{err}" x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" rx="2"><title>{title}</title></rect>"#,
        i = call.index,
        kind = call.kind.name(),
        err = if call.is_error { " err" } else { "" },
        title = escape_html(&title),
    );
    if call.is_error {
        let _ = write!(
            out,
            r#"<circle class="err-dot" cx="{}" cy="{}" r="3.5"/>"#,
            x + CELL_W / 2,
            y + CELL_H + 6
        );
    }
}

/// Arcs joining each read of a re-read file to the next.
fn reread_arcs(out: &mut String, finding: &Finding, per_row: usize) {
    let path = escape_html(finding.path.as_deref().unwrap_or(""));
    let _ = write!(
        out,
        r#"<g class="reread"><title>{path}: read {} times with no write in between</title>"#,
        finding.count
    );
    for pair in finding.calls.windows(2) {
        let (ax, ay) = position(pair[0].index, per_row);
        let (bx, by) = position(pair[1].index, per_row);
        let (ax, bx) = (ax + CELL_W / 2, bx + CELL_W / 2);
        let distance = ax.abs_diff(bx) + ay.abs_diff(by);
        let lift = (4 + distance / 6).min(TOP + 2);
        let control_y = ay.min(by).saturating_sub(lift);
        let _ = write!(
            out,
            r#"<path d="M{ax} {ay} Q{} {control_y} {bx} {by}"/>"#,
            (ax + bx) / 2
        );
    }
    out.push_str("</g>");
}

fn findings_section(out: &mut String, findings: &[Finding]) {
    out.push_str(
        "<section class=\"findings\" aria-labelledby=\"findings-title\">\n<h2 id=\"findings-title\">Where context was lost</h2>\n",
    );
    if findings.is_empty() {
        out.push_str("<p class=\"none\">No signs of lost context with these thresholds.</p>\n");
    } else {
        out.push_str("<ol>\n");
    }
    for finding in findings {
        let level = match finding.severity {
            7..=10 => "high",
            4..=6 => "mid",
            _ => "low",
        };
        let lost: Vec<&str> = finding.lost.iter().map(|l| l.describe()).collect();
        let _ = write!(
            out,
            r#"<li class="finding sev-{level}"><div class="sev" title="severity {s} of 10">{s}</div><div class="body"><h3>{title}</h3><p>{summary}</p><p class="lost">Lost: {lost}</p><details><summary>{calls}</summary><ul class="evidence">"#,
            s = finding.severity,
            title = finding.pattern.title(),
            summary = escape_html(&finding.summary),
            lost = lost.join(", "),
            calls = match finding.pattern {
                // Its evidence is the failed call, then the lookups counted.
                Pattern::SearchesAfterError => format!(
                    "the failed call and {} after it",
                    plural(finding.count, "lookup")
                ),
                _ => plural(finding.calls.len() + finding.more_calls, "call"),
            },
        );
        for call in &finding.calls {
            let _ = write!(
                out,
                r##"<li><a href="#c{i}">#{number}</a> <time>{at}</time> {tool} <code>{what}</code></li>"##,
                i = call.index,
                number = call.index + 1,
                at = clock(call.at.as_deref()),
                tool = escape_html(&call.tool),
                what = escape_html(
                    call.detail
                        .as_deref()
                        .or(call.path.as_deref())
                        .unwrap_or("")
                ),
            );
        }
        if finding.more_calls > 0 {
            let _ = write!(out, "<li>… and {} more</li>", finding.more_calls);
        }
        out.push_str("</ul></details></div></li>\n");
    }
    if !findings.is_empty() {
        out.push_str("</ol>\n");
    }
    out.push_str("</section>\n");
}

fn keep_section(out: &mut String, analysis: &Analysis) {
    let events = analysis
        .keep
        .events
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let _ = write!(
        out,
        r#"<section class="keep" aria-labelledby="keep-title">
<h2 id="keep-title">What the compaction should keep</h2>
{}
<details><summary>{} working-context events to seed a session</summary><pre class="events">{}</pre></details>
</section>
"#,
        if analysis.keep.instructions.is_empty() {
            "<p>Nothing to keep: no request, file, error, search or task in play.</p>".to_string()
        } else {
            format!(
                "<p>Paste this into the agent's compaction prompt:</p>\n<pre class=\"instructions\">{}</pre>",
                escape_html(&analysis.keep.instructions)
            )
        },
        analysis.keep.events.len(),
        escape_html(&events),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{analyze, Thresholds};

    const HOSTILE: &str = r#"[
      {"tool": "Read", "arguments": {"file_path": "<script>alert(1)</script>.rs"}},
      {"tool": "Bash", "arguments": {"command": "echo \"</title><img src=x onerror=alert(2)>\""}, "is_error": true, "error": "error: <b>bold</b> & \u001b[31mred\u001b[0m"},
      {"tool": "Read", "arguments": {"file_path": "<script>alert(1)</script>.rs"}},
      {"compaction": true, "at": "2026-11-23T10:00:00Z"},
      {"tool": "Read", "arguments": {"file_path": "<script>alert(1)</script>.rs"}}
    ]"#;

    #[test]
    fn the_page_escapes_everything_from_the_transcript() {
        let analysis = analyze(HOSTILE.as_bytes(), &Thresholds::default()).expect("analysed");
        for style in [StyleLink::Inline, StyleLink::Served] {
            let page = html_page(&analysis, style);
            assert!(!page.contains("<script>"), "{page}");
            assert!(!page.contains("<img"), "{page}");
            assert!(!page.contains("<b>bold"), "{page}");
            assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;.rs"));
            assert_eq!(page.matches("<rect id=\"c").count(), 4);
            assert!(page.contains("class=\"compaction\""));
            assert!(page.contains("<g class=\"reread\">"));
            assert!(page.contains("class=\"err-dot\""));
        }
        assert!(html_page(&analysis, StyleLink::Inline).contains("<style>"));
        assert!(html_page(&analysis, StyleLink::Served).contains("href=\"/trajectory.css\""));
    }

    #[test]
    fn the_report_shows_no_terminal_escapes() {
        let analysis = analyze(HOSTILE.as_bytes(), &Thresholds::default()).expect("analysed");
        let report = text_report(&analysis);
        assert!(!report.contains('\u{1b}'), "{report}");
        assert!(report.contains("the same file read again"), "{report}");
        assert!(report.contains("What to keep"));
    }

    #[test]
    fn calls_are_numbered_from_one_for_people() {
        let analysis = analyze(HOSTILE.as_bytes(), &Thresholds::default()).expect("analysed");
        // The reread's first call is the transcript's first (index 0).
        let report = text_report(&analysis);
        assert!(report.contains("        #1 "), "{report}");
        assert!(!report.contains("#0 "), "{report}");
        let page = html_page(&analysis, StyleLink::Inline);
        assert!(page.contains(r##"<a href="#c0">#1</a>"##), "{page}");
        assert!(page.contains("<title>#1 "), "{page}");
        assert!(page.contains("compaction before call #4"), "{page}");
        // The one row of the timeline is labelled with its first call, #1.
        assert!(page.contains(r#"text-anchor="end">1</text>"#), "{page}");
        assert!(!page.contains(r#"text-anchor="end">0</text>"#), "{page}");
    }

    #[test]
    fn long_runs_wrap_into_rows() {
        assert_eq!(per_row(3), 25);
        assert_eq!(per_row(500), 25);
        assert_eq!(per_row(501), 50);
        assert_eq!(per_row(10_000), 100);
        assert_eq!(position(0, 50), (LEFT, TOP));
        assert_eq!(position(51, 50), (LEFT + STEP, TOP + ROW_H));
        assert_eq!(position(26, 25), (LEFT + STEP, TOP + ROW_H));
    }
}
