//! Command-line and environment configuration.
//!
//! Every flag also reads a `NOGGIN_*` environment variable. Raw flags are
//! turned once into validated settings (e.g. [`ServeArgs::server_config`]) so
//! that the rest of the program never re-checks them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::brain::watch::WatchMode;
use crate::index::IndexOptions;

/// noggin: answers an assistant's open questions from your markdown notes
/// before it asks you.
#[derive(Debug, Parser)]
#[command(name = "noggin", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API and the web card, following changes to the brain.
    Serve(ServeArgs),
    /// Bring the index up to date with the brain and print a summary.
    Index(IndexArgs),
    /// Search the brain from the terminal.
    Search(SearchArgs),
}

/// Where the brain and its index are.
#[derive(Debug, Clone, Args)]
pub struct BrainArgs {
    /// The brain: a folder of markdown notes (an Obsidian vault, a docs folder).
    #[arg(long, env = "NOGGIN_BRAIN", value_name = "DIR")]
    pub brain: PathBuf,

    /// Where the index is kept [default: <brain>/.noggin].
    #[arg(long, env = "NOGGIN_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Notes larger than this many bytes are skipped.
    #[arg(long, env = "NOGGIN_MAX_NOTE_BYTES", default_value_t = 5 * 1024 * 1024, value_name = "BYTES")]
    pub max_note_bytes: u64,
}

impl BrainArgs {
    pub fn index_options(&self, read_only: bool) -> IndexOptions {
        IndexOptions {
            brain: self.brain.clone(),
            data_dir: self.data_dir.clone(),
            max_note_bytes: self.max_note_bytes,
            read_only,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Address to listen on. Anything but loopback requires --token.
    #[arg(
        long,
        env = "NOGGIN_ADDR",
        default_value = "127.0.0.1:7431",
        value_name = "HOST:PORT"
    )]
    pub addr: SocketAddr,

    /// Bearer token required on every /v1 route.
    #[arg(long, env = "NOGGIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Request bodies larger than this are refused with 413.
    #[arg(long, env = "NOGGIN_MAX_BODY_BYTES", default_value_t = 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,

    /// How to follow edits to the brain: native file events with a polling
    /// fallback (auto), periodic rescans only (poll), or not at all (off).
    #[arg(long, env = "NOGGIN_WATCH", value_enum, default_value_t = WatchMode::Auto)]
    pub watch: WatchMode,

    /// Interval of the periodic rescans when polling.
    #[arg(
        long,
        env = "NOGGIN_POLL_INTERVAL_MS",
        default_value_t = 2000,
        value_name = "MS"
    )]
    pub poll_interval_ms: u64,
}

/// Validated settings of the server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub brain: BrainArgs,
    pub addr: SocketAddr,
    pub token: Option<String>,
    pub max_body_bytes: usize,
    pub watch: WatchMode,
    pub poll_interval: Duration,
}

impl ServeArgs {
    /// Checks the flags together; refuses to expose the brain without a token.
    pub fn server_config(self) -> anyhow::Result<ServerConfig> {
        let token = self.token.filter(|t| !t.is_empty());
        if !self.addr.ip().is_loopback() && token.is_none() {
            anyhow::bail!(
                "refusing to listen on {} without a token: anyone on the network could read the brain; \
                 set --token (or NOGGIN_TOKEN), or listen on 127.0.0.1",
                self.addr
            );
        }
        if self.poll_interval_ms == 0 {
            anyhow::bail!("--poll-interval-ms must be at least 1");
        }
        Ok(ServerConfig {
            brain: self.brain,
            addr: self.addr,
            token,
            max_body_bytes: self.max_body_bytes,
            watch: self.watch,
            poll_interval: Duration::from_millis(self.poll_interval_ms),
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Print the hits as JSON.
    #[arg(long)]
    pub json: bool,

    /// Number of notes to show.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,

    /// Only notes under this folder.
    #[arg(long)]
    pub folder: Option<String>,

    /// Only notes with this tag.
    #[arg(long)]
    pub tag: Option<String>,

    /// What to look for.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(args: &[&str]) -> anyhow::Result<ServerConfig> {
        let mut argv = vec!["noggin", "serve", "--brain", "b"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv)?.command {
            Command::Serve(s) => s.server_config(),
            _ => unreachable!("parsed a serve command"),
        }
    }

    #[test]
    fn non_loopback_needs_a_token() {
        assert!(serve(&["--addr", "0.0.0.0:7431"]).is_err());
        assert!(serve(&["--addr", "0.0.0.0:7431", "--token", ""]).is_err());
        assert!(serve(&["--addr", "0.0.0.0:7431", "--token", "s3cret"]).is_ok());
        assert!(serve(&["--addr", "[::1]:7431"]).is_ok());
        assert!(serve(&[]).is_ok());
    }
}
