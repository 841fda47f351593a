//! The patterns of lost context: signs in a trajectory that the agent no
//! longer had something it once knew and went to fetch it again.
//!
//! Each [`Finding`] names its pattern, the calls that show it, how severe it
//! is (1–10) and what kind of context was lost. The thresholds are one
//! struct, [`Thresholds`], which is both the CLI's flags and the HTTP
//! route's query parameters, with the defaults of SPEC §8.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::model::{cut, Call, CallKind, Trajectory};

/// At most this many calls are listed as a finding's evidence.
const EVIDENCE_CALLS: usize = 50;
/// At most this many files are reported as re-read (the most re-read).
const REREAD_FINDINGS: usize = 20;
/// At most this many failures are reported as repeated.
const FAILURE_FINDINGS: usize = 10;
/// At most this many distances between reads are told in a summary.
const SHOWN_GAPS: usize = 10;
/// At most this many runs of searches after an error are reported.
const ERROR_SEARCH_FINDINGS: usize = 10;
/// At most this many compactions followed by re-reads are reported.
const COMPACTION_FINDINGS: usize = 10;

/// When a pattern is reported.
#[derive(Debug, Clone, PartialEq, clap::Args, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Report a run whose read calls are more than this share of its calls (0–1).
    #[schemars(range(min = 0, max = 1))]
    #[arg(long, default_value_t = 0.4, value_name = "SHARE")]
    pub read_share: f64,

    /// ...in a run of more than this many calls.
    #[schemars(range(min = 0, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 10, value_name = "CALLS")]
    pub read_share_min_calls: usize,

    /// Report this many searches (read, glob, grep) or more right after an error.
    #[schemars(range(min = LEAST_SEARCHES_AFTER_ERROR, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 3, value_name = "CALLS")]
    pub searches_after_error: usize,

    /// Report more than this many grep calls.
    #[schemars(range(min = 0, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 5, value_name = "CALLS")]
    pub max_greps: usize,

    /// Report a file read this many times (or more) with no write to it in between.
    #[schemars(range(min = LEAST_SAME_FILE_READS, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 2, value_name = "READS")]
    pub same_file_reads: usize,

    /// Report a failing command (or error text) seen this many times or more.
    #[schemars(range(min = LEAST_REPEATED_FAILURES, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 2, value_name = "TIMES")]
    pub repeated_failures: usize,

    /// Reads within this many calls after a compaction of files read before it
    /// are re-reads after the compaction.
    #[schemars(range(min = LEAST_AFTER_COMPACTION_CALLS, max = MAX_THRESHOLD))]
    #[arg(long, default_value_t = 10, value_name = "CALLS")]
    pub after_compaction_calls: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            read_share: 0.4,
            read_share_min_calls: 10,
            searches_after_error: 3,
            max_greps: 5,
            same_file_reads: 2,
            repeated_failures: 2,
            after_compaction_calls: 10,
        }
    }
}

/// The largest count a threshold may be.
const MAX_THRESHOLD: usize = 1_000_000;
/// The smallest counts that make sense (the rest may be 0): a search after
/// an error, a second read, a second failure, one call after a compaction.
const LEAST_SEARCHES_AFTER_ERROR: usize = 1;
const LEAST_SAME_FILE_READS: usize = 2;
const LEAST_REPEATED_FAILURES: usize = 2;
const LEAST_AFTER_COMPACTION_CALLS: usize = 1;

impl Thresholds {
    /// Checks the thresholds make sense; the message names the one that
    /// does not as a query parameter (`max_greps`).
    pub fn validate(&self) -> Result<(), String> {
        self.check(|name| name.to_string())
    }

    /// [`Thresholds::validate`], naming the threshold as a flag (`--max-greps`).
    pub fn validate_flags(&self) -> Result<(), String> {
        self.check(|name| format!("--{}", name.replace('_', "-")))
    }

    fn check(&self, named: impl Fn(&str) -> String) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.read_share) {
            return Err(format!(
                "{} must be between 0 and 1, not {}",
                named("read_share"),
                self.read_share
            ));
        }
        let counts = [
            ("read_share_min_calls", self.read_share_min_calls, 0),
            (
                "searches_after_error",
                self.searches_after_error,
                LEAST_SEARCHES_AFTER_ERROR,
            ),
            ("max_greps", self.max_greps, 0),
            (
                "same_file_reads",
                self.same_file_reads,
                LEAST_SAME_FILE_READS,
            ),
            (
                "repeated_failures",
                self.repeated_failures,
                LEAST_REPEATED_FAILURES,
            ),
            (
                "after_compaction_calls",
                self.after_compaction_calls,
                LEAST_AFTER_COMPACTION_CALLS,
            ),
        ];
        for (name, value, least) in counts {
            if !(least..=MAX_THRESHOLD).contains(&value) {
                return Err(format!(
                    "{} must be between {least} and {MAX_THRESHOLD}, not {value}",
                    named(name)
                ));
            }
        }
        Ok(())
    }
}

/// The patterns noggin looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Most calls are reads.
    ReadHeavy,
    /// A burst of searching right after an error.
    SearchesAfterError,
    /// Many grep calls.
    GrepHeavy,
    /// The same file read again with no write to it in between.
    Reread,
    /// The same failing command or error again.
    RepeatedFailure,
    /// Files read before a compaction read again right after it.
    RereadAfterCompaction,
}

impl Pattern {
    pub fn title(self) -> &'static str {
        match self {
            Pattern::ReadHeavy => "mostly reading",
            Pattern::SearchesAfterError => "searching after an error",
            Pattern::GrepHeavy => "many greps",
            Pattern::Reread => "the same file read again",
            Pattern::RepeatedFailure => "the same failure again",
            Pattern::RereadAfterCompaction => "re-reading after a compaction",
        }
    }
}

/// The kind of context that was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Lost {
    FilePaths,
    ErrorDetails,
    SearchResults,
    Symbols,
    Decisions,
    Tasks,
}

impl Lost {
    pub fn describe(self) -> &'static str {
        match self {
            Lost::FilePaths => "file paths",
            Lost::ErrorDetails => "error details",
            Lost::SearchResults => "search results",
            Lost::Symbols => "symbols",
            Lost::Decisions => "decisions",
            Lost::Tasks => "tasks",
        }
    }
}

/// A call named as evidence.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CallRef {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The command line or search pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<&Call> for CallRef {
    fn from(call: &Call) -> Self {
        CallRef {
            index: call.index,
            at: call.at.clone(),
            tool: call.tool.clone(),
            path: call.path.clone(),
            detail: call.detail.as_deref().map(|d| cut(d, 120)),
        }
    }
}

impl CallRef {
    /// `Bash \`cargo test\`` or `Read src/a.rs`.
    pub fn describe(&self) -> String {
        match (self.detail.as_deref(), self.path.as_deref()) {
            (Some(detail), _) => format!("{} `{}`", self.tool, detail),
            (None, Some(path)) => format!("{} {}", self.tool, path),
            (None, None) => self.tool.clone(),
        }
    }
}

/// One sign of lost context.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub pattern: Pattern,
    /// 1 (a hint) to 10 (the agent clearly went round in circles).
    pub severity: u8,
    pub lost: Vec<Lost>,
    /// One sentence saying what happened.
    pub summary: String,
    /// The file, for the re-read patterns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How many calls (or reads, or failures) make the pattern.
    pub count: usize,
    /// For re-reads: calls between one read and the next.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apart_calls: Vec<usize>,
    /// For re-reads: seconds between one read and the next, when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apart_secs: Vec<i64>,
    /// The calls that show it (at most 50).
    pub calls: Vec<CallRef>,
    /// Calls that show it beyond those listed.
    pub more_calls: usize,
}

impl Finding {
    fn new(pattern: Pattern, severity: usize, lost: Vec<Lost>, summary: String) -> Finding {
        Finding {
            pattern,
            severity: severity.clamp(1, 10) as u8,
            lost,
            summary,
            path: None,
            count: 0,
            apart_calls: Vec::new(),
            apart_secs: Vec::new(),
            calls: Vec::new(),
            more_calls: 0,
        }
    }

    fn with_calls<'a>(mut self, calls: impl IntoIterator<Item = &'a Call>) -> Finding {
        let all: Vec<&Call> = calls.into_iter().collect();
        self.more_calls = all.len().saturating_sub(EVIDENCE_CALLS);
        self.calls = all
            .into_iter()
            .take(EVIDENCE_CALLS)
            .map(CallRef::from)
            .collect();
        self
    }
}

/// Every finding in `t`, most severe first.
pub fn find_patterns(t: &Trajectory, thresholds: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(read_heavy(t, thresholds));
    findings.extend(searches_after_error(t, thresholds));
    findings.extend(grep_heavy(t, thresholds));
    findings.extend(rereads(t, thresholds));
    findings.extend(repeated_failures(t, thresholds));
    findings.extend(rereads_after_compaction(t, thresholds));
    most_severe_first(&mut findings, usize::MAX);
    findings
}

/// Orders findings most severe first, the earliest first among equals, and
/// keeps at most `keep` of them.
fn most_severe_first(findings: &mut Vec<Finding>, keep: usize) {
    findings.sort_by_key(|f| {
        (
            std::cmp::Reverse(f.severity),
            f.calls.first().map_or(0, |c| c.index),
        )
    });
    findings.truncate(keep);
}

fn read_heavy(t: &Trajectory, th: &Thresholds) -> Option<Finding> {
    let total = t.calls.len();
    let reads: Vec<&Call> = t
        .calls
        .iter()
        .filter(|c| c.kind == CallKind::Read)
        .collect();
    let share = reads.len() as f64 / total.max(1) as f64;
    if total <= th.read_share_min_calls || share <= th.read_share {
        return None;
    }
    // From 3 at the threshold to 10 when every call is a read.
    let above = (share - th.read_share) / (1.0 - th.read_share).max(f64::EPSILON);
    let severity = 3 + (above * 7.0).round() as usize;
    let summary = format!(
        "{} of {} calls ({:.0}%) were reads, more than {:.0}%: the agent kept looking things up \
         instead of keeping what it had read",
        reads.len(),
        total,
        share * 100.0,
        th.read_share * 100.0
    );
    let mut finding = Finding::new(
        Pattern::ReadHeavy,
        severity,
        vec![Lost::FilePaths, Lost::Symbols],
        summary,
    )
    .with_calls(reads.iter().copied());
    finding.count = reads.len();
    Some(finding)
}

fn is_lookup(call: &Call) -> bool {
    matches!(call.kind, CallKind::Read | CallKind::Search)
}

/// What a lookup fetched: the file it read or the search it ran.
fn looked_up(call: &Call) -> Option<(CallKind, &str)> {
    match call.kind {
        CallKind::Read => call.path.as_deref().map(|p| (CallKind::Read, file_key(p))),
        CallKind::Search => call.detail.as_deref().map(|d| (CallKind::Search, d)),
        _ => None,
    }
}

/// A run of lookups after an error this long is one step more severe.
const LONG_RUN: usize = 6;

fn searches_after_error(t: &Trajectory, th: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    // The files read and the searches run before a call, and since then
    // not changed (a write makes a file new to read).
    let mut seen: HashSet<(CallKind, &str)> = HashSet::new();
    let mut seen_before = 0;
    let mut i = 0;
    while i < t.calls.len() {
        if !t.calls[i].is_error {
            i += 1;
            continue;
        }
        // The calls made beside the failed one, before its result came
        // back, did not know of the error.
        let known = t.calls[i].result_after.unwrap_or(i + 1).min(t.calls.len());
        let run = t.calls[known..].iter().take_while(|c| is_lookup(c)).count();
        if run < th.searches_after_error {
            i += 1;
            continue;
        }
        for call in &t.calls[seen_before..i] {
            if let Some(fetched) = looked_up(call) {
                seen.insert(fetched);
            } else if let (CallKind::Write, Some(path)) = (call.kind, call.path.as_deref()) {
                seen.remove(&(CallKind::Read, file_key(path)));
            }
        }
        seen_before = i;
        let lookups = &t.calls[known..known + run];
        let again = lookups
            .iter()
            .filter(|c| looked_up(c).is_some_and(|f| seen.contains(&f)))
            .count();
        let failed = &t.calls[i];
        let error = failed
            .error
            .as_deref()
            .map(|e| format!(" ({})", cut(e, 120)))
            .unwrap_or_default();
        // Fetching again what the agent had before the error is the
        // sign that its details were lost; new places alone are the agent
        // looking into the error, a weaker sign.
        let (why, severity) = match again {
            0 => (
                "none of them fetched again what the agent had seen before; it may have been \
                 looking into the error"
                    .to_string(),
                3 + usize::from(run >= LONG_RUN),
            ),
            n => (
                format!(
                    "{n} of them fetched again what the agent had seen before: the error's \
                     details were not at hand"
                ),
                4 + 2 * n.min(3) + usize::from(run >= LONG_RUN),
            ),
        };
        let summary = format!(
            "{run} searches and reads right after {} failed{error}; {why}",
            describe_call(failed)
        );
        let mut finding = Finding::new(
            Pattern::SearchesAfterError,
            severity,
            vec![Lost::ErrorDetails],
            summary,
        )
        .with_calls(std::iter::once(failed).chain(lookups));
        finding.count = run;
        findings.push(finding);
        i = (known + run).max(i + 1);
    }
    most_severe_first(&mut findings, ERROR_SEARCH_FINDINGS);
    findings
}

fn grep_heavy(t: &Trajectory, th: &Thresholds) -> Option<Finding> {
    let greps: Vec<&Call> = t.calls.iter().filter(|c| c.grep).collect();
    if greps.len() <= th.max_greps {
        return None;
    }
    let mut by_pattern: HashMap<&str, usize> = HashMap::new();
    for call in &greps {
        if let Some(pattern) = call.detail.as_deref() {
            *by_pattern.entry(pattern).or_default() += 1;
        }
    }
    let repeated = by_pattern.values().filter(|&&n| n > 1).count();
    let again = if repeated > 0 {
        format!(", {repeated} of them searched more than once")
    } else {
        String::new()
    };
    let summary = format!(
        "{} grep calls, more than {}{again}: what earlier searches found was not kept",
        greps.len(),
        th.max_greps
    );
    // 4 just above the default threshold, 10 at four times as many.
    let severity = 3 + (greps.len() * 2).div_ceil(th.max_greps.max(1) + 1) + repeated.min(2);
    let mut finding = Finding::new(
        Pattern::GrepHeavy,
        severity,
        vec![Lost::SearchResults, Lost::Symbols],
        summary,
    )
    .with_calls(greps.iter().copied());
    finding.count = greps.len();
    Some(finding)
}

/// A path as compared between calls: `./a` and `a` are one file.
fn file_key(path: &str) -> &str {
    path.trim_start_matches("./")
}

/// Groups of reads of one file with no write to it in between.
fn read_groups(t: &Trajectory) -> Vec<(String, Vec<usize>)> {
    let mut open: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut groups = Vec::new();
    for call in &t.calls {
        let Some(path) = call.path.as_deref() else {
            continue;
        };
        let key = file_key(path);
        match call.kind {
            CallKind::Read => open.entry(key).or_default().push(call.index),
            CallKind::Write => {
                if let Some(reads) = open.remove(key) {
                    groups.push((key.to_string(), reads));
                }
            }
            _ => {}
        }
    }
    groups.extend(open.into_iter().map(|(k, reads)| (k.to_string(), reads)));
    // Paging through a file (lines 1-200, then 201-400) reads nothing
    // again: a read counts only when it covers lines another read covers,
    // more than the seam of pages that share their edge (offset 120 and
    // limit 80, then offset 199).
    for (_, reads) in &mut groups {
        let lines: Vec<Option<(u64, u64)>> = reads.iter().map(|&i| t.calls[i].lines).collect();
        let overlaps = |a: Option<(u64, u64)>, b: Option<(u64, u64)>| match (a, b) {
            (Some((a0, a1)), Some((b0, b1))) => a1.min(b1).saturating_sub(a0.max(b0)) > PAGE_SEAM,
            _ => true,
        };
        *reads = (0..reads.len())
            .filter(|&i| (0..reads.len()).any(|j| j != i && overlaps(lines[i], lines[j])))
            .map(|i| reads[i])
            .collect();
    }
    groups
}

/// Lines two pages of a file may share and still be pages rather than a
/// read again: agents page on with the last line read, or the one after.
const PAGE_SEAM: u64 = 2;

fn rereads(t: &Trajectory, th: &Thresholds) -> Vec<Finding> {
    let mut findings: Vec<Finding> = read_groups(t)
        .into_iter()
        .filter(|(_, reads)| reads.len() >= th.same_file_reads)
        .map(|(path, reads)| {
            let apart_calls: Vec<usize> = reads.windows(2).map(|w| w[1] - w[0]).collect();
            let apart_secs: Vec<i64> = reads
                .windows(2)
                .filter_map(|w| Some((t.calls[w[1]].at_ms? - t.calls[w[0]].at_ms?) / 1000))
                .collect();
            let across_compaction = t.compactions.iter().any(|c| {
                reads.first().is_some_and(|&f| f < c.before_call)
                    && reads.last().is_some_and(|&l| l >= c.before_call)
            });
            let far = apart_calls.iter().any(|&d| d > 50);
            let severity = 1 + reads.len() + 2 * usize::from(across_compaction) + usize::from(far);
            let mut gaps = apart_calls
                .iter()
                .take(SHOWN_GAPS)
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            if apart_calls.len() > SHOWN_GAPS {
                gaps.push_str(", …");
            }
            let summary = format!(
                "{} read {} times with no write to it in between ({} {} apart){}",
                path,
                reads.len(),
                gaps,
                if apart_calls == [1] { "call" } else { "calls" },
                if across_compaction {
                    ", across a compaction"
                } else {
                    ""
                }
            );
            let mut finding = Finding::new(
                Pattern::Reread,
                severity,
                vec![Lost::FilePaths, Lost::Symbols],
                summary,
            )
            .with_calls(reads.iter().map(|&i| &t.calls[i]));
            finding.path = Some(path);
            finding.count = reads.len();
            finding.apart_calls = apart_calls;
            finding.apart_secs = apart_secs;
            finding
        })
        .collect();
    findings.sort_by_key(|f| (std::cmp::Reverse(f.count), f.calls[0].index));
    findings.truncate(REREAD_FINDINGS);
    findings
}

/// What makes two failures "the same": the command line for shell calls,
/// else the tool and its file; whitespace does not count.
fn failure_key(call: &Call) -> String {
    let subject = call
        .detail
        .as_deref()
        .or(call.path.as_deref())
        .unwrap_or("");
    format!(
        "{}\u{0}{}",
        call.tool,
        subject.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

fn repeated_failures(t: &Trajectory, th: &Thresholds) -> Vec<Finding> {
    let failures: Vec<&Call> = t.calls.iter().filter(|c| c.is_error).collect();
    let mut by_command: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut by_error: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for call in &failures {
        by_command
            .entry(failure_key(call))
            .or_default()
            .push(call.index);
        // A bare exit code says nothing about which error it was.
        if let Some(error) = call
            .error
            .as_deref()
            .filter(|e| !e.starts_with("exit code "))
        {
            let key = error.split_whitespace().collect::<Vec<_>>().join(" ");
            by_error
                .entry(key.to_lowercase())
                .or_default()
                .push(call.index);
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut covered: HashSet<usize> = HashSet::new();
    for calls in by_command.into_values() {
        if calls.len() >= th.repeated_failures {
            covered.extend(&calls);
            groups.push(calls);
        }
    }
    // The same error from different commands is repeated too, unless the
    // command groups already tell it.
    for calls in by_error.into_values() {
        if calls.len() >= th.repeated_failures && !calls.iter().all(|c| covered.contains(c)) {
            groups.push(calls);
        }
    }
    let mut findings: Vec<Finding> = groups
        .into_iter()
        .map(|calls| {
            let first = &t.calls[calls[0]];
            // The error as it last was; when it changed on the way, say so.
            let errors: Vec<&str> = calls
                .iter()
                .filter_map(|&i| t.calls[i].error.as_deref())
                .collect();
            let error = match errors.last() {
                Some(last) if errors.iter().all(|e| e == last) => format!(": {}", cut(last, 160)),
                Some(last) => format!(", last with: {}", cut(last, 160)),
                None => String::new(),
            };
            let mut commands: Vec<String> = Vec::new();
            for &i in &calls {
                let described = describe_call(&t.calls[i]);
                if !commands.contains(&described) {
                    commands.push(described);
                }
            }
            let failed = match commands.as_slice() {
                [one] => format!("{one} failed {} times", calls.len()),
                // The same error from different commands: name them.
                [first, second] => format!(
                    "{} calls failed with the same error ({first}, {second})",
                    calls.len()
                ),
                [first, second, rest @ ..] => format!(
                    "{} calls failed with the same error ({first}, {second} and {} other{})",
                    calls.len(),
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                ),
                [] => unreachable!("a group holds calls"),
            };
            let summary =
                format!("{failed}{error}; the agent did not keep that it had failed, or why");
            let mut finding = Finding::new(
                Pattern::RepeatedFailure,
                3 + 2 * calls.len(),
                vec![Lost::ErrorDetails, Lost::Decisions],
                summary,
            )
            .with_calls(calls.iter().map(|&i| &t.calls[i]));
            finding.count = calls.len();
            finding.path = first.path.clone();
            finding
        })
        .collect();
    findings.sort_by_key(|f| (std::cmp::Reverse(f.count), f.calls[0].index));
    findings.truncate(FAILURE_FINDINGS);
    findings
}

fn rereads_after_compaction(t: &Trajectory, th: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for compaction in &t.compactions {
        let boundary = compaction.before_call;
        // Files read before the compaction and not changed since: a file
        // written after its read is read again for what changed.
        let mut read_before: HashSet<&str> = HashSet::new();
        let mut again: Vec<&Call> = Vec::new();
        for (i, call) in t
            .calls
            .iter()
            .enumerate()
            .take(boundary.saturating_add(th.after_compaction_calls))
        {
            let Some(path) = call.path.as_deref().map(file_key) else {
                continue;
            };
            match call.kind {
                CallKind::Read if i < boundary => {
                    read_before.insert(path);
                }
                CallKind::Read if read_before.contains(path) => again.push(call),
                CallKind::Write => {
                    read_before.remove(path);
                }
                _ => {}
            }
        }
        if again.is_empty() {
            continue;
        }
        let files: HashSet<&str> = again.iter().filter_map(|c| c.path.as_deref()).collect();
        let summary = format!(
            "{} of the first {} calls after the compaction{} re-read {} file{} read before it: \
             the summary did not keep {}",
            again.len(),
            th.after_compaction_calls,
            compaction
                .at
                .as_deref()
                .map(|at| format!(" at {at}"))
                .unwrap_or_default(),
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            if files.len() == 1 { "it" } else { "them" },
        );
        let mut finding = Finding::new(
            Pattern::RereadAfterCompaction,
            6 + again.len(),
            vec![Lost::FilePaths, Lost::Symbols],
            summary,
        )
        .with_calls(again.iter().copied());
        finding.count = again.len();
        findings.push(finding);
    }
    most_severe_first(&mut findings, COMPACTION_FINDINGS);
    findings
}

/// `Bash \`cargo test\`` or `Read src/a.rs`: a call in a sentence.
pub fn describe_call(call: &Call) -> String {
    match (call.detail.as_deref(), call.path.as_deref()) {
        (Some(detail), _) => format!("{} `{}`", call.tool, cut(detail, 80)),
        (None, Some(path)) => format!("{} {}", call.tool, path),
        (None, None) => call.tool.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::model::Format;
    use serde_json::json;

    /// A trajectory from `(tool, arguments, is_error)` triples.
    fn run(calls: &[(&str, serde_json::Value, bool)]) -> Trajectory {
        let mut t = Trajectory::new(Format::ToolList);
        for (tool, arguments, is_error) in calls {
            let i = t.push_call(tool, arguments);
            t.calls[i].set_result(*is_error, if *is_error { "error: it broke" } else { "" });
        }
        t
    }

    fn read(path: &str) -> (&'static str, serde_json::Value, bool) {
        ("Read", json!({ "file_path": path }), false)
    }

    fn edit(path: &str) -> (&'static str, serde_json::Value, bool) {
        ("Edit", json!({ "file_path": path }), false)
    }

    fn shell(command: &str, fails: bool) -> (&'static str, serde_json::Value, bool) {
        ("Bash", json!({ "command": command }), fails)
    }

    fn grep(pattern: &str) -> (&'static str, serde_json::Value, bool) {
        ("Grep", json!({ "pattern": pattern }), false)
    }

    fn patterns(t: &Trajectory) -> Vec<Pattern> {
        find_patterns(t, &Thresholds::default())
            .iter()
            .map(|f| f.pattern)
            .collect()
    }

    fn found(t: &Trajectory, pattern: Pattern) -> Vec<Finding> {
        find_patterns(t, &Thresholds::default())
            .into_iter()
            .filter(|f| f.pattern == pattern)
            .collect()
    }

    /// Distinct files read once each, and shell calls to fill a run.
    fn reads_and_shells(
        reads: usize,
        shells: usize,
    ) -> Vec<(&'static str, serde_json::Value, bool)> {
        let mut calls: Vec<_> = (0..reads)
            .map(|i| ("Read", json!({ "file_path": format!("f{i}.rs") }), false))
            .collect();
        calls.extend((0..shells).map(|i| shell(&format!("make step{i}"), false)));
        calls
    }

    #[test]
    fn mostly_reading_is_found_above_forty_percent_of_more_than_ten_calls() {
        // 5 of 11 calls (45%) are reads.
        let t = run(&reads_and_shells(5, 6));
        let found = found(&t, Pattern::ReadHeavy);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].count, 5);
        assert_eq!(found[0].calls.len(), 5);
        assert_eq!(found[0].lost, [Lost::FilePaths, Lost::Symbols]);
        assert!((3..=10).contains(&found[0].severity));
        // Just below: 4 of 10 calls is exactly 40%, and 10 calls is no run of more than 10.
        assert!(!patterns(&run(&reads_and_shells(4, 6))).contains(&Pattern::ReadHeavy));
        assert!(!patterns(&run(&reads_and_shells(9, 1))).contains(&Pattern::ReadHeavy));
    }

    #[test]
    fn searching_right_after_an_error_is_found_from_three_searches() {
        let calls = vec![
            shell("cargo build", true),
            grep("fn missing"),
            ("Glob", json!({"pattern": "**/*.rs"}), false),
            read("src/lib.rs"),
            shell("cargo build", false),
        ];
        let found = found(&run(&calls), Pattern::SearchesAfterError);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].count, 3);
        let indexes: Vec<usize> = found[0].calls.iter().map(|c| c.index).collect();
        assert_eq!(indexes, [0, 1, 2, 3], "the error and the searches");
        assert_eq!(found[0].lost, [Lost::ErrorDetails]);
        assert!(
            found[0].summary.contains("error: it broke"),
            "{}",
            found[0].summary
        );
        assert!(
            found[0].summary.contains("none of them fetched again"),
            "{}",
            found[0].summary
        );
        // Reading again what was read before the error is the stronger sign.
        let again = vec![
            read("src/lib.rs"),
            grep("fn missing"),
            shell("cargo build", true),
            grep("fn missing"),
            read("./src/lib.rs"),
            read("src/main.rs"),
        ];
        let found_again = self::found(&run(&again), Pattern::SearchesAfterError);
        assert!(
            found_again[0].summary.contains("2 of them fetched again"),
            "{}",
            found_again[0].summary
        );
        assert!(found_again[0].severity > found[0].severity);
        // A file changed since it was read is new to read.
        let changed = vec![
            read("src/lib.rs"),
            edit("src/lib.rs"),
            shell("cargo build", true),
            read("src/lib.rs"),
            read("src/main.rs"),
            grep("fn other"),
        ];
        let found_changed = self::found(&run(&changed), Pattern::SearchesAfterError);
        assert!(
            found_changed[0]
                .summary
                .contains("none of them fetched again"),
            "{}",
            found_changed[0].summary
        );
        // Just below: two searches, then something else.
        let below = vec![
            shell("cargo build", true),
            grep("fn missing"),
            read("src/lib.rs"),
            edit("src/lib.rs"),
            read("src/main.rs"),
        ];
        assert!(!patterns(&run(&below)).contains(&Pattern::SearchesAfterError));
    }

    #[test]
    fn calls_made_beside_a_failed_one_did_not_know_of_its_error() {
        // A failed read and two searches in one turn, its result after
        // them; then two more searches and a build.
        let mut t = Trajectory::new(Format::ToolList);
        let failed = t.push_call("Read", &json!({"file_path": "src/gone.rs"}));
        for (tool, arguments) in [
            ("Glob", json!({"pattern": "**/*.rs"})),
            ("Grep", json!({"pattern": "gone"})),
        ] {
            let i = t.push_call(tool, &arguments);
            t.calls[i].set_result(false, "");
            t.result_seen(i);
        }
        t.calls[failed].set_result(true, "File does not exist.");
        t.result_seen(failed);
        for (tool, arguments, is_error) in [
            grep("mod gone"),
            read("src/lib.rs"),
            shell("cargo build", false),
        ] {
            let i = t.push_call(tool, &arguments);
            t.calls[i].set_result(is_error, "");
        }
        // Two searches knew of the error: below the three that make a
        // finding, where the five in a row made one.
        assert!(!patterns(&t).contains(&Pattern::SearchesAfterError));
        let one_more = Thresholds {
            searches_after_error: 2,
            ..Thresholds::default()
        };
        let found: Vec<Finding> = find_patterns(&t, &one_more)
            .into_iter()
            .filter(|f| f.pattern == Pattern::SearchesAfterError)
            .collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].count, 2);
        let indexes: Vec<usize> = found[0].calls.iter().map(|c| c.index).collect();
        assert_eq!(
            indexes,
            [0, 3, 4],
            "the error and the searches made after it"
        );
    }

    #[test]
    fn more_than_five_greps_are_found() {
        let six: Vec<_> = ["a", "b", "c", "a", "d", "e"]
            .iter()
            .map(|p| grep(p))
            .collect();
        let found = found(&run(&six), Pattern::GrepHeavy);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].count, 6);
        assert!(found[0]
            .summary
            .contains("1 of them searched more than once"));
        assert_eq!(found[0].lost, [Lost::SearchResults, Lost::Symbols]);
        // Shell greps count too; five are not too many.
        let five = vec![
            grep("a"),
            grep("b"),
            shell("rg -n c src", false),
            shell("grep -r d .", false),
            shell("git grep e", false),
        ];
        assert!(!patterns(&run(&five)).contains(&Pattern::GrepHeavy));
        let mut six = five.clone();
        six.push(shell("cd src && rg f", false));
        assert!(patterns(&run(&six)).contains(&Pattern::GrepHeavy));
    }

    #[test]
    fn a_file_read_again_without_a_write_is_found_with_how_far_apart() {
        let mut calls = vec![read("src/a.rs"), shell("ls", false), shell("make", false)];
        calls.push(read("./src/a.rs"));
        calls.push(read("src/a.rs"));
        let mut t = run(&calls);
        t.calls[0].set_time(Some(&json!("2026-11-23T10:00:00Z")));
        t.calls[3].set_time(Some(&json!("2026-11-23T10:01:30Z")));
        t.calls[4].set_time(Some(&json!("2026-11-23T10:01:40Z")));
        let found = found(&t, Pattern::Reread);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path.as_deref(), Some("src/a.rs"));
        assert_eq!(found[0].count, 3);
        assert_eq!(found[0].apart_calls, [3, 1]);
        assert_eq!(found[0].apart_secs, [90, 10]);
        // Just below: a write in between makes the second read a new look.
        let below = run(&[read("src/a.rs"), edit("src/a.rs"), read("src/a.rs")]);
        assert!(!patterns(&below).contains(&Pattern::Reread));
    }

    #[test]
    fn the_same_failure_again_is_found() {
        let calls = vec![
            shell("cargo test", true),
            edit("src/a.rs"),
            shell("cargo  test", true),
            shell("cargo build", false),
        ];
        let repeated = found(&run(&calls), Pattern::RepeatedFailure);
        assert_eq!(repeated.len(), 1);
        assert_eq!(repeated[0].count, 2);
        assert_eq!(repeated[0].lost, [Lost::ErrorDetails, Lost::Decisions]);
        // The same error text from different commands is repeated too.
        let texts = run(&[shell("npm test", true), shell("npx vitest", true)]);
        let by_error = found(&texts, Pattern::RepeatedFailure);
        assert_eq!(by_error.len(), 1, "{by_error:?}");
        // Just below: one failure of each.
        let below = run(&[shell("cargo test", true), shell("cargo build", false)]);
        assert!(!patterns(&below).contains(&Pattern::RepeatedFailure));
    }

    #[test]
    fn paging_through_a_file_is_no_reread() {
        let page = |offset: u64| {
            (
                "Read",
                json!({"file_path": "big.rs", "offset": offset, "limit": 200}),
                false,
            )
        };
        let paged = run(&[page(1), page(201), page(401)]);
        assert!(!patterns(&paged).contains(&Pattern::Reread));
        let sed = run(&[
            shell("sed -n '1,200p' big.rs", false),
            shell("sed -n '201,400p' big.rs", false),
        ]);
        assert!(!patterns(&sed).contains(&Pattern::Reread));
        // Pages that share their edge line are pages too, as is a count of
        // the file's lines.
        let seamed = run(&[
            shell("wc -l big.rs", false),
            shell("sed -n '70,150p' big.rs", false),
            shell("sed -n '150,210p' big.rs", false),
        ]);
        assert!(!patterns(&seamed).contains(&Pattern::Reread));
        // Pages that cover the same lines again, or the whole file twice, are.
        let again = run(&[page(1), page(101), read("big.rs")]);
        assert_eq!(found(&again, Pattern::Reread)[0].count, 3);
        let viewed = run(&[
            (
                "str_replace_based_edit_tool",
                json!({"command": "view", "path": "big.rs", "view_range": [1, 50]}),
                false,
            ),
            (
                "str_replace_based_edit_tool",
                json!({"command": "view", "path": "big.rs", "view_range": [40, -1]}),
                false,
            ),
        ]);
        assert!(patterns(&viewed).contains(&Pattern::Reread));
        // The first lines and the last lines are different parts of a
        // file; the last lines twice are the same part.
        let ends = run(&[shell("head -5 b.txt", false), shell("tail -5 b.txt", false)]);
        assert!(!patterns(&ends).contains(&Pattern::Reread));
        let tails = run(&[
            shell("tail -n 5 b.txt", false),
            shell("tail -20 b.txt", false),
        ]);
        assert!(patterns(&tails).contains(&Pattern::Reread));
        let whole = run(&[shell("tail -5 b.txt", false), shell("cat b.txt", false)]);
        assert!(patterns(&whole).contains(&Pattern::Reread));
    }

    #[test]
    fn the_same_error_from_two_commands_names_both() {
        let mut t = Trajectory::new(Format::ToolList);
        for command in ["ls -lh /x/ae*.jsonl", "stat /x/ae*.jsonl"] {
            let i = t.push_call("Bash", &json!({ "command": command }));
            t.calls[i].set_result(true, "no matches found: /x/ae*.jsonl");
        }
        let found = found(&t, Pattern::RepeatedFailure);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].summary.starts_with(
                "2 calls failed with the same error (Bash `ls -lh /x/ae*.jsonl`, Bash `stat /x/ae*.jsonl`): no matches found"
            ),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_repeated_failure_quotes_its_last_error() {
        let mut t = Trajectory::new(Format::ToolList);
        for error in ["error: A", "error: B", "error: B"] {
            let i = t.push_call("Bash", &json!({ "command": "make" }));
            t.calls[i].set_result(true, error);
        }
        let repeated = found(&t, Pattern::RepeatedFailure);
        assert!(
            repeated[0]
                .summary
                .contains("failed 3 times, last with: error: B"),
            "{}",
            repeated[0].summary
        );
        let same = run(&[shell("make", true), shell("make", true)]);
        let summary = &found(&same, Pattern::RepeatedFailure)[0].summary;
        assert!(
            summary.contains("failed 2 times: error: it broke"),
            "{summary}"
        );
    }

    #[test]
    fn re_reading_right_after_a_compaction_is_found() {
        let mut calls = vec![read("src/a.rs"), read("src/b.rs")];
        calls.extend((0..3).map(|i| shell(&format!("step {i}"), false)));
        let mut t = run(&calls);
        t.push_compaction(None);
        for call in [read("src/a.rs"), shell("make", false)] {
            let i = t.push_call(call.0, &call.1);
            t.calls[i].set_result(false, "");
        }
        let found = found(&t, Pattern::RereadAfterCompaction);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].calls[0].index, 5);
        assert!(found[0].severity >= 7);
        // Just below: the re-read comes only after the first 10 calls.
        let mut later = run(&[read("src/a.rs")]);
        later.push_compaction(None);
        for i in 0..10 {
            later.push_call("Bash", &json!({ "command": format!("step {i}") }));
        }
        later.push_call("Read", &json!({"file_path": "src/a.rs"}));
        assert!(!patterns(&later).contains(&Pattern::RereadAfterCompaction));
        // A file the agent changed after reading it, before or after the
        // compaction, is read again for what changed.
        for edited_before in [false, true] {
            let mut edited = run(&[read("src/a.rs")]);
            if edited_before {
                edited.push_call("Edit", &json!({"file_path": "src/a.rs"}));
            }
            edited.push_compaction(None);
            if !edited_before {
                edited.push_call("Edit", &json!({"file_path": "./src/a.rs"}));
            }
            edited.push_call("Read", &json!({"file_path": "src/a.rs"}));
            assert!(
                !patterns(&edited).contains(&Pattern::RereadAfterCompaction),
                "edited before: {edited_before}"
            );
        }
    }

    #[test]
    fn thresholds_are_checked_and_tunable() {
        assert!(Thresholds::default().validate().is_ok());
        let two = Thresholds {
            read_share: 2.0,
            ..Thresholds::default()
        };
        assert_eq!(
            two.validate().unwrap_err(),
            "read_share must be between 0 and 1, not 2"
        );
        assert_eq!(
            two.validate_flags().unwrap_err(),
            "--read-share must be between 0 and 1, not 2"
        );
        let bad = Thresholds {
            read_share: 1.5,
            ..Thresholds::default()
        };
        assert!(bad.validate().unwrap_err().contains("read_share"));
        let bad = Thresholds {
            same_file_reads: 1,
            ..Thresholds::default()
        };
        assert!(bad.validate().unwrap_err().contains("same_file_reads"));
        // Four greps are many when the limit is three.
        let four: Vec<_> = ["a", "b", "c", "d"].iter().map(|p| grep(p)).collect();
        let strict = Thresholds {
            max_greps: 3,
            ..Thresholds::default()
        };
        let found = find_patterns(&run(&four), &strict);
        assert!(found.iter().any(|f| f.pattern == Pattern::GrepHeavy));
    }
}
