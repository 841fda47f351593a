//! Where did the agent lose its context? Reads an agent's tool-call
//! trajectory, finds the patterns of lost context in it and says what a
//! compaction should have kept (SPEC §8).
//!
//! The data flows one way: [`parse`] detects the input's format by its
//! content and hands each line to [`claude`] or [`codex`] (or reads a plain
//! list of calls), all into one [`model::Trajectory`]; [`classify`] tells
//! each call's kind, file and error; [`patterns`] finds the findings;
//! [`keep`] turns them into compaction instructions and working-context
//! events; [`render`] shows it all as text or as a page with an SVG
//! timeline; [`store`] keeps the latest pages for `GET /trajectories/{id}`.

pub mod classify;
pub mod claude;
pub mod codex;
pub mod keep;
pub mod model;
pub mod parse;
pub mod patterns;
pub mod render;
pub mod store;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use keep::Keep;
pub use model::{CallKind, Format, Trajectory};
pub use patterns::{Finding, Thresholds};

/// The largest trajectory read by default (10 MiB), over HTTP and from files.
pub const MAX_TRAJECTORY_BYTES: usize = 10 * 1024 * 1024;

/// Why a trajectory cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the trajectory is empty")]
    Empty,
    #[error("the trajectory is binary data, not JSON or JSONL text")]
    Binary,
    #[error(
        "the trajectory is a JSON document that is {} at line {line}, column {column} ({message})",
        if *.cut_short { "cut short" } else { "broken" }
    )]
    BrokenJson {
        line: usize,
        column: usize,
        cut_short: bool,
        message: String,
    },
    #[error(
        "no tool call could be read from the input ({lines} lines or entries, {skipped} of them \
         unreadable or of an unknown shape); expected a JSON list of \
         {{tool, arguments, is_error, at}}, a Claude Code session (JSONL) or a Codex CLI rollout (JSONL)"
    )]
    NoCalls { lines: usize, skipped: usize },
    #[error("the trajectory is over the limit of {limit} bytes")]
    TooLarge { limit: usize },
    #[error("invalid threshold: {0}")]
    InvalidThreshold(String),
    #[error("cannot read {path:?}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// The API's error code when the caller is at fault; `None` otherwise.
    pub fn input_code(&self) -> Option<&'static str> {
        match self {
            Error::Empty => Some("empty-trajectory"),
            Error::Binary => Some("binary-trajectory"),
            Error::BrokenJson { .. } => Some("invalid-trajectory"),
            Error::NoCalls { .. } => Some("no-calls"),
            Error::TooLarge { .. } => Some("body-too-large"),
            Error::InvalidThreshold(_) => Some("invalid-threshold"),
            Error::Read { .. } => None,
        }
    }
}

/// Calls of each kind.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KindCounts {
    pub read: usize,
    pub write: usize,
    pub search: usize,
    pub shell: usize,
    pub other: usize,
}

/// The analysis of one trajectory.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Analysis {
    pub format: Format,
    pub calls: usize,
    pub kinds: KindCounts,
    /// Calls that failed.
    pub errors: usize,
    pub compactions: Vec<model::Compaction>,
    /// Lines (or list entries) read, and those skipped as unreadable.
    pub lines: usize,
    pub skipped_lines: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    pub thresholds: Thresholds,
    /// Most severe first.
    pub findings: Vec<Finding>,
    pub keep: Keep,
    /// The run itself, for the timeline.
    #[serde(skip)]
    pub trajectory: Trajectory,
}

/// Reads and analyses a trajectory.
pub fn analyze(bytes: &[u8], thresholds: &Thresholds) -> Result<Analysis, Error> {
    thresholds.validate().map_err(Error::InvalidThreshold)?;
    let trajectory = parse::read_trajectory(bytes)?;
    let findings = patterns::find_patterns(&trajectory, thresholds);
    let keep = keep::what_to_keep(&trajectory, &findings);
    let [read, write, search, shell, other] = trajectory.counts();
    let times: Vec<&str> = trajectory
        .calls
        .iter()
        .filter_map(|c| c.at.as_deref())
        .collect();
    Ok(Analysis {
        format: trajectory.format,
        calls: trajectory.calls.len(),
        kinds: KindCounts {
            read,
            write,
            search,
            shell,
            other,
        },
        errors: trajectory.calls.iter().filter(|c| c.is_error).count(),
        compactions: trajectory.compactions.clone(),
        lines: trajectory.lines,
        skipped_lines: trajectory.skipped_lines,
        started: times.first().map(|s| s.to_string()),
        ended: times.last().map(|s| s.to_string()),
        thresholds: thresholds.clone(),
        findings,
        keep,
        trajectory,
    })
}

/// Reads a trajectory file (`-` for standard input) of at most `limit` bytes.
pub fn read_input(path: &Path, limit: usize) -> Result<Vec<u8>, Error> {
    let read_error = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(read_error)?;
        if file.metadata().map_err(read_error)?.len() > limit as u64 {
            return Err(Error::TooLarge { limit });
        }
        Box::new(file)
    };
    // One byte more than the limit tells a file at the limit from a larger one.
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() > limit {
        return Err(Error::TooLarge { limit });
    }
    Ok(bytes)
}
