//! The `noggin` command: parses flags, sets up logging, runs a subcommand.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use noggin::config::{
    Cli, Command, IndexArgs, RememberArgs, ResearchCmdArgs, SearchArgs, ServeArgs,
};
use noggin::index::{Index, Progress, SearchFilter};
use noggin::research::{research_questions, ResearchRequest, MARKER};
use noggin::server;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("noggin=info,tower_http=info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("noggin: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Index(args) => index(args),
        Command::Search(args) => search(args),
        Command::Research(args) => research(args),
        Command::Remember(args) => remember(args),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let config = args.server_config()?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let addr = config.addr;
        let state = server::AppState::open(config)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        tracing::info!(brain = %state.index.brain().display(), "serving");
        eprintln!(
            "noggin is serving {} at http://{local}/",
            state.index.brain().display()
        );
        server::run(listener, state, server::shutdown_signal()).await?;
        Ok(())
    })
}

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

fn index(args: IndexArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let index = Index::open(args.brain.index_options(false))
        .with_context(|| format!("cannot open the index of {:?}", args.brain.brain))?;
    let report = index.reconcile_blocking(progress_bar())?;
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["seconds"] = serde_json::json!(secs);
        println!("{value}");
    } else {
        println!(
            "indexed {} notes, {} sections in {:.2} s ({} re-parsed, {} unchanged, {} removed)",
            report.notes, report.sections, secs, report.reparsed, report.unchanged, report.removed
        );
    }
    Ok(())
}

/// Opens the index for reading: brought up to date when this process can
/// write it, as the running server has it otherwise.
fn open_for_reading(brain: &noggin::config::BrainArgs) -> anyhow::Result<Index> {
    Ok(match Index::open(brain.index_options(false)) {
        Ok(index) => {
            index.reconcile_blocking(None)?;
            index
        }
        // A running server owns the writer: search what it has indexed.
        Err(noggin::index::Error::Locked(_)) => Index::open(brain.index_options(true))?,
        Err(error) => {
            return Err(error)
                .with_context(|| format!("cannot open the index of {:?}", brain.brain))
        }
    })
}

fn search(args: SearchArgs) -> anyhow::Result<()> {
    let index = open_for_reading(&args.brain)?;
    let filter = SearchFilter {
        folder: args.folder,
        tag: args.tag,
        kind: None,
    };
    let hits = index.search(&args.query.join(" "), &filter, args.limit as usize)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&serde_json::json!({"hits": hits}))?
        )?;
        return Ok(());
    }
    if hits.is_empty() {
        writeln!(out, "no notes match")?;
    }
    for hit in hits {
        let heading = if hit.heading.is_empty() {
            String::new()
        } else {
            format!(" › {}", hit.heading)
        };
        writeln!(
            out,
            "{}{}  ({:.2})\n  {}\n  {}\n",
            hit.title,
            heading,
            hit.score,
            hit.path,
            plain_snippet(&hit.snippet)
        )?;
    }
    Ok(())
}

/// The snippet for a terminal: marks become brackets, entities are decoded.
fn plain_snippet(html: &str) -> String {
    html.replace("<mark>", "[")
        .replace("</mark>", "]")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn research(args: ResearchCmdArgs) -> anyhow::Result<()> {
    let settings = args.research.research_settings(&args.brain.brain)?;
    let request = ResearchRequest {
        prompt: args.prompt,
        questions: args.questions,
        session: None,
        project_context: None,
    };
    request.validate()?;
    let index = open_for_reading(&args.brain)?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let response = runtime.block_on(research_questions(&index, &settings, &request));
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&response)?)?;
        return Ok(());
    }
    for answered in &response.answered {
        writeln!(out, "{}", answered.question)?;
        writeln!(out, "  {}{}", MARKER, answered.answer)?;
        let sources: Vec<&str> = answered.evidence.iter().map(|e| e.path.as_str()).collect();
        writeln!(
            out,
            "  confidence {:.2}; from {}",
            answered.confidence,
            sources.join(", ")
        )?;
        for old in &answered.superseded {
            writeln!(out, "  (replaces \"{}\" from {})", old.answer, old.path)?;
        }
        writeln!(out)?;
    }
    if !response.unanswered.is_empty() {
        writeln!(out, "Still open, for the user:")?;
        for open in &response.unanswered {
            writeln!(out, "  - {}", open.question)?;
        }
    }
    Ok(())
}

fn remember(args: RememberArgs) -> anyhow::Result<()> {
    let given = args.pairs()?;
    let settings = args.knowledge.settings(&args.folder)?;
    let brain = noggin::brain::canonical_root(&args.brain.brain)?;
    let knowledge = noggin::knowledge::Knowledge::new(&brain, settings);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let outcome = runtime.block_on(knowledge.remember(&args.prompt, &given))?;
    let paths: Vec<String> = outcome.saved.iter().map(|s| s.path.clone()).collect();
    let indexed = if paths.is_empty() {
        None
    } else {
        match Index::open(args.brain.index_options(false)) {
            Ok(index) => Some(
                runtime
                    .block_on(index.sync_paths(paths))
                    .map_err(|e| e.to_string()),
            ),
            // A running server owns the index; its watcher indexes the note.
            Err(noggin::index::Error::Locked(_)) => Some(Err(
                "a running noggin server holds the index; it will index the note".into(),
            )),
            Err(error) => Some(Err(error.to_string())),
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut value = serde_json::to_value(&outcome)?;
        value["indexed"] = serde_json::json!(!matches!(indexed, Some(Err(_))));
        writeln!(out, "{value}")?;
        return Ok(());
    }
    for saved in &outcome.saved {
        let count = saved.questions.len();
        let plural = if count == 1 { "" } else { "s" };
        writeln!(out, "saved {count} answer{plural} to {}", saved.path)?;
    }
    for skipped in &outcome.skipped {
        writeln!(
            out,
            "skipped {:?}: {}",
            skipped.question,
            skipped.reason.describe()
        )?;
    }
    match indexed {
        Some(Ok(())) => writeln!(out, "indexed: searchable now")?,
        Some(Err(why)) => writeln!(out, "not indexed yet: {why}")?,
        None => {}
    }
    Ok(())
}
