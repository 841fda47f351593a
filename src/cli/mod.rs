//! The terminal way in: one function per subcommand, each a thin adapter
//! over [`crate::app::Noggin`] that prints a human report, or with `--json`
//! the same JSON the HTTP API answers.
//!
//! `main` only parses the command line, sets up logging (to stderr: stdout
//! carries results, and in `noggin mcp` the protocol) and turns [`run`]'s
//! result into an exit code.

mod analyze;
mod context;
mod index;
mod mcp;
mod remember;
mod research;
mod search;
mod serve;

use std::io::IsTerminal;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use crate::config::{Cli, Command};
use crate::index::Progress;

/// Logs go to stderr, filtered by `RUST_LOG` (default: `info` for `serve` and
/// `mcp`, `warn` for the other commands).
pub fn init_logging(command: &Command) {
    // The commands that serve say what they do; a one-shot command speaks
    // through its output and logs only what went wrong.
    let default = match command {
        Command::Serve(_) | Command::Mcp(_) => "noggin=info,tower_http=info",
        _ => "noggin=warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default)),
        )
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, not in a log file or a
        // client's pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

/// Runs one subcommand to completion.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve::serve(args),
        Command::Index(args) => index::index(args),
        Command::Search(args) => search::search(args),
        Command::Research(args) => research::research(args),
        Command::Remember(args) => remember::remember(args),
        Command::Mcp(args) => mcp::mcp(args),
        Command::Context(args) => context::context(args),
        Command::Analyze(args) => analyze::analyze(args),
    }
}

/// A multi-threaded runtime for the commands that serve.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("cannot start the async runtime")
}

/// A progress bar on stderr when it is a terminal.
fn progress_bar() -> Option<Progress> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} notes {elapsed_precise}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(Box::new(move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done == total {
            bar.finish_and_clear();
        }
    }))
}

/// Says on stderr, when the index was still being brought up to date with
/// the brain (`indexing` of a search or research), that what was not
/// found may be found shortly.
fn say_if_indexing(indexing: bool) {
    if indexing {
        eprintln!(
            "noggin is still indexing this brain: notes not indexed yet were not searched; \
             ask again shortly"
        );
    }
}

/// Prints `value` as one line of JSON.
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string(value)?)?;
    Ok(())
}
