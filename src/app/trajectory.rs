//! Trajectory analysis as a use case: a transcript in, where the agent lost
//! context out. A pure function of the transcript (no brain); HTTP
//! (`server::trajectories`, which also keeps the page) and MCP
//! (`analyze_trajectory`) are adapters over it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

use super::{Error, Noggin};
use crate::trajectory::{self, Analysis, Thresholds, MAX_TRAJECTORY_BYTES};

/// `analyze_trajectory`'s input.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeTrajectoryRequest {
    /// The trajectory file's text (at most 10 MiB): a JSON list of
    /// `{tool, arguments, is_error, at}`, a Claude Code session (JSONL) or a
    /// Codex CLI rollout (JSONL). Give this or `path`.
    #[serde(default)]
    pub transcript: Option<String>,
    /// Over stdio only (`noggin mcp`, a process of the user's own): the
    /// trajectory file on this machine, which noggin reads, so that its
    /// text need not pass through the conversation: a `.jsonl` or `.json`
    /// file, absolute or starting with `~/`, e.g. a Claude Code session
    /// under `~/.claude/projects/`, a Codex CLI rollout under
    /// `~/.codex/sessions/`.
    #[serde(default)]
    pub path: Option<String>,
    /// When a pattern is reported; the defaults when left out.
    #[serde(default)]
    pub thresholds: Option<Thresholds>,
}

impl From<trajectory::Error> for Error {
    fn from(error: trajectory::Error) -> Error {
        match error.input_code() {
            Some(code @ "body-too-large") => Error::TooLarge {
                code,
                message: error.to_string(),
            },
            Some(code) => Error::invalid(code, error.to_string()),
            None => Error::Internal(error.into()),
        }
    }
}

/// The refusal of a call that gives neither `transcript` nor `path`, or both.
pub fn transcript_or_path() -> Error {
    Error::invalid(
        "transcript-or-path",
        "give the trajectory's text as `transcript` or its file as `path`: one of the two",
    )
}

/// `path` as a trajectory file of this machine: `~/` is the user's home
/// folder; a relative path names no file here (whose working folder would
/// it be?).
fn local_file(path: &str) -> Result<PathBuf, Error> {
    let file = match path.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(rest),
            None => PathBuf::from(path),
        },
        None => PathBuf::from(path),
    };
    if !file.is_absolute() {
        return Err(Error::invalid(
            "invalid-path",
            format!("path {path:?} is relative: give the trajectory file's absolute path (or one starting with ~/)"),
        ));
    }
    // Trajectories are JSON or JSONL files: no other file of the user's
    // is read on a model's word.
    let json = file
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json") || e.eq_ignore_ascii_case("jsonl"));
    if !json {
        return Err(Error::invalid(
            "invalid-path",
            format!("path {path:?} is no trajectory file: one ending in .jsonl or .json"),
        ));
    }
    Ok(file)
}

impl Noggin {
    /// Analyses the trajectory file at `path` (see
    /// [`AnalyzeTrajectoryRequest::path`]): for a caller that is a process
    /// of the user's own, never one that reaches noggin over the network.
    pub async fn analyze_trajectory_file(
        &self,
        path: &str,
        thresholds: Thresholds,
    ) -> Result<Analysis, Error> {
        let file = local_file(path)?;
        let bytes = tokio::task::spawn_blocking(move || {
            trajectory::read_input(&file, MAX_TRAJECTORY_BYTES)
        })
        .await
        .context("the trajectory reading task failed")?
        .map_err(|error| match error {
            trajectory::Error::Read { path, source } => Error::invalid(
                "unreadable-path",
                format!("cannot read {}: {source}", path.display()),
            ),
            other => other.into(),
        })?;
        self.analyze_trajectory(bytes, thresholds).await
    }

    /// Analyses a trajectory off the async runtime (it is CPU work).
    pub async fn analyze_trajectory(
        &self,
        bytes: Vec<u8>,
        thresholds: Thresholds,
    ) -> Result<Analysis, Error> {
        if bytes.len() > MAX_TRAJECTORY_BYTES {
            return Err(trajectory::Error::TooLarge {
                limit: MAX_TRAJECTORY_BYTES,
            }
            .into());
        }
        let analysis =
            tokio::task::spawn_blocking(move || trajectory::analyze(&bytes, &thresholds))
                .await
                .context("the trajectory analysis task failed")??;
        Ok(analysis)
    }
}
