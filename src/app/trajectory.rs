//! Trajectory analysis as a use case: a transcript in, where the agent lost
//! context out. A pure function of the transcript (no brain); HTTP
//! (`server::trajectories`, which also keeps the page) and MCP
//! (`analyze_trajectory`) are adapters over it.

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
    /// Codex CLI rollout (JSONL).
    pub transcript: String,
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

impl Noggin {
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
