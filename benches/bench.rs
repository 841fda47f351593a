//! noggin's benchmarks, one subcommand per area:
//!
//! ```text
//! cargo bench --bench bench -- index [BRAIN_DIR]
//! cargo bench --bench bench -- research [VAULT_DIR]
//! cargo bench --bench bench -- sessions [BRAIN_DIR]
//! cargo bench --bench bench -- trajectory [CALLS]
//! cargo bench --bench bench -- retrieval [BEIR_DIR]
//! ```
//!
//! `index` measures a brain (default: the tldr-pages vault of the shared
//! evaluation data) copied to a temp dir, so the original is never touched:
//! cold indexing, a warm start with nothing changed, how long an edit on disk
//! takes to become searchable while the watcher runs, search latency over
//! queries drawn from the notes themselves, the peak memory of it all, and
//! then the analyzer and the parser alone over the notes' text (tokens/s and
//! µs a note on one thread).
//!
//! `research` serves a vault (default: the Obsidian help vault, all four
//! languages as one brain) copied to a temp dir with the real HTTP server and
//! measures `POST /v1/research` with 20 questions per request: one client
//! sending requests one after another, then many clients at once. Questions
//! are the evaluation questions (English, Korean) and questions made from the
//! headings of the Japanese and Chinese notes.
//!
//! `retrieval` indexes a BEIR-style set (default: SciFact of the shared
//! evaluation data: `brain/` with one note per document, `queries-train.tsv`
//! and `qrels-train.tsv`) copied to a temp dir, scores the ranking as
//! `retrieval_eval.py` does (nDCG@10, recall@10 and @100), and times
//! `Index::search` with every query at limit 10 and 100: one client, then
//! 16 at once. Each timing starts from a freshly opened index, so its first
//! pass over the queries pays for every term the caches have not seen yet;
//! the later passes show the warm path.
//!
//! `sessions` (in [`sessions`]) measures working context: event ingest per
//! second and the latency of the block, the context pack and the window.
//!
//! `trajectory` analyses a generated Claude Code session of 10,000 tool
//! calls (see [`trajectory`]).
//!
//! `model` loads the semantic model (from `NOGGIN_MODEL_DIR` or the cache
//! folder, as `noggin serve` does) and measures its load time, embedding
//! throughput on passages of the SciFact abstracts and the Korean Obsidian
//! help (tokens/s, passages/s, on one thread, as the background embedder
//! runs), query-embedding latency over the evaluation questions (English and
//! Korean), and the memory it takes.
//!
//! Performance is measured here, never by timed tests.

mod sessions;
// Not `benches/trajectory.rs`: Cargo would take that for a bench of its own.
#[path = "bench/trajectory.rs"]
mod trajectory;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use noggin::brain::scan_brain;
use noggin::config::{Cli, Command};
use noggin::index::{Index, IndexOptions, SearchFilter};
use noggin::server::AppState;
use serde_json::Value;
use tantivy::tokenizer::TokenStream;

/// The brain `index` measures unless told otherwise, in the shared
/// evaluation data.
const DEFAULT_BRAIN: &str = "vaults/tldr-pages-en";
/// Notes are skipped above this size, as `noggin` does by default.
const MAX_NOTE_BYTES: u64 = 5 * 1024 * 1024;
/// Edits timed for edit → searchable.
const EDITS: usize = 10;
/// Queries drawn from the brain for search latency.
const QUERIES: usize = 200;
/// Times each query is run for search latency.
const SEARCH_ROUNDS: usize = 5;

/// The vault `research` serves unless told otherwise, in the shared
/// evaluation data.
const DEFAULT_VAULT: &str = "vaults/obsidian-help";
/// Evaluation question files (relative to the crate) `research` asks from.
const EVAL_QUESTIONS: [&str; 2] = ["eval/obsidian-help-en.jsonl", "eval/obsidian-help-ko.jsonl"];
/// Language folders of the vault whose headings become questions, with what
/// follows a heading to ask about it in that language.
const HEADING_QUESTIONS: [(&str, &str); 2] = [("ja", "とは何ですか？"), ("zh", "是什么？")];
/// Heading questions made per language folder.
const HEADINGS_PER_LANGUAGE: usize = 40;
/// Questions in each research request by default (the most a request may
/// hold).
const QUESTIONS_PER_REQUEST: usize = 20;
/// Requests sent before measuring.
const WARM_UP_REQUESTS: usize = 10;
/// Requests the single client sends, one after another.
const SEQUENTIAL_REQUESTS: usize = 100;
/// Clients sending requests at the same time.
const CLIENTS: usize = 16;
/// Requests each of the concurrent clients sends.
const REQUESTS_PER_CLIENT: usize = 25;

const USAGE: &str = "usage: cargo bench --bench bench -- index [BRAIN_DIR] | research [VAULT_DIR [QUESTIONS_PER_REQUEST]] | sessions [BRAIN_DIR] | trajectory [CALLS] | model [MODEL_DIR] | retrieval [BEIR_DIR]";
/// Passages `model` embeds from each of its two sources.
const MODEL_PASSAGES: usize = 60;
/// Characters of a note taken as one passage by `model`.
const MODEL_PASSAGE_CHARS: usize = 1500;
/// The BEIR-style set `retrieval` measures unless told otherwise, in the
/// shared evaluation data.
const DEFAULT_BEIR: &str = "scifact";
/// Passes over the queries for each retrieval timing (the first is cold).
const RETRIEVAL_ROUNDS: usize = 3;

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` adds `--bench`; `cargo test --all-targets` runs this
    // binary without it, and then there is nothing to measure.
    let benching = raw.iter().any(|a| a == "--bench");
    let args: Vec<&str> = raw
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let result = match args.as_slice() {
        [] if !benching => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [] | ["index"] => bench_index(&shared_eval(DEFAULT_BRAIN)),
        ["index", brain] => bench_index(Path::new(brain)),
        ["research"] => bench_research(&shared_eval(DEFAULT_VAULT), QUESTIONS_PER_REQUEST),
        ["research", vault] => bench_research(Path::new(vault), QUESTIONS_PER_REQUEST),
        ["research", vault, per_request] => match per_request.parse() {
            Ok(n) if n > 0 => bench_research(Path::new(vault), n),
            _ => Err(anyhow::anyhow!(
                "questions per request: a number from 1, not {per_request:?}"
            )),
        },
        ["sessions"] => {
            sessions::bench_sessions(&Path::new(env!("CARGO_MANIFEST_DIR")).join("brain-sample"))
        }
        ["sessions", brain] => sessions::bench_sessions(Path::new(brain)),
        ["trajectory"] => trajectory::bench_trajectory(10_000),
        ["trajectory", calls] => match calls.parse() {
            Ok(calls) => trajectory::bench_trajectory(calls),
            Err(_) => {
                eprintln!("{USAGE}");
                return ExitCode::FAILURE;
            }
        },
        ["model"] => bench_model(None),
        ["model", dir] => bench_model(Some(Path::new(dir))),
        ["retrieval"] => bench_retrieval(&shared_eval(DEFAULT_BEIR)),
        ["retrieval", set] => bench_retrieval(Path::new(set)),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn bench_model(dir: Option<&Path>) -> anyhow::Result<()> {
    use noggin::semantic::{resolve_model_dir, Embedder};
    let dir = resolve_model_dir(dir)
        .ok_or_else(|| anyhow::anyhow!("no model folder: set NOGGIN_MODEL_DIR"))?;
    let rss_before = current_rss_kb()?;
    let started = Instant::now();
    let embedder = Embedder::load(&dir)?;
    let load = started.elapsed();
    let rss_loaded = current_rss_kb()?;
    println!(
        "model: {} ({} dims), loaded in {:.0} ms; RSS {:.0} MB before, {:.0} MB loaded (+{:.0} MB)",
        embedder.path().display(),
        embedder.dims(),
        ms(load),
        rss_before as f64 / 1024.0,
        rss_loaded as f64 / 1024.0,
        (rss_loaded - rss_before) as f64 / 1024.0
    );

    // Passages: SciFact abstracts (English) and Korean help pages.
    let mut sources = Vec::new();
    for (name, folder) in [
        ("SciFact abstracts", shared_eval("scifact/brain")),
        (
            "Obsidian help, Korean",
            shared_eval("vaults/obsidian-help/ko"),
        ),
    ] {
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&folder)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .map(|e| e.into_path())
            .collect();
        files.sort();
        let passages: Vec<String> = files
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .filter(|t| t.trim().len() > 200)
            .take(MODEL_PASSAGES)
            .map(|t| t.chars().take(MODEL_PASSAGE_CHARS).collect())
            .collect();
        sources.push((name, passages));
    }
    for (name, passages) in &sources {
        let tokens: usize = passages
            .iter()
            .map(|p| embedder.count_tokens(p, false).min(512))
            .sum();
        let started = Instant::now();
        for p in passages {
            std::hint::black_box(embedder.embed_passage_head(p, 1));
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "embed passages ({name}): {} passages, {} tokens ({:.0} per passage) in {secs:.2} s: \
             {:.1} passages/s, {:.0} tokens/s (one thread)",
            passages.len(),
            tokens,
            tokens as f64 / passages.len() as f64,
            passages.len() as f64 / secs,
            tokens as f64 / secs
        );
    }

    // Query latency over the evaluation questions.
    let mut questions = Vec::new();
    for file in EVAL_QUESTIONS {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line)?;
            if let Some(q) = value["question"].as_str() {
                questions.push(q.to_string());
            }
        }
    }
    let mut latencies = Vec::with_capacity(questions.len());
    let mut tokens = 0;
    for q in &questions {
        tokens += embedder.count_tokens(q, true);
        let started = Instant::now();
        std::hint::black_box(embedder.embed_queries(&[q.as_str()]));
        latencies.push(started.elapsed());
    }
    latencies.sort();
    println!(
        "embed queries: {} questions (English, Korean; {:.0} tokens each): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        questions.len(),
        tokens as f64 / questions.len() as f64,
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.95)),
        ms(*latencies.last().unwrap_or(&Duration::ZERO))
    );
    println!(
        "memory: RSS {:.0} MB now, peak {:.0} MB",
        current_rss_kb()? as f64 / 1024.0,
        peak_rss_kb()? as f64 / 1024.0
    );
    Ok(())
}

/// Resident memory of this process now (VmRSS), in KiB.
fn current_rss_kb() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))
}

fn bench_index(source: &Path) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let brain = temp.path().join("brain");
    copy_brain(source, &brain)?;
    let (files, _) = scan_brain(&std::fs::canonicalize(&brain)?, MAX_NOTE_BYTES)?;
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    println!(
        "brain: {} ({} notes, {:.1} MB), copied to {}",
        source.display(),
        files.len(),
        bytes as f64 / 1e6,
        brain.display()
    );

    // Cold: no index at all.
    let started = Instant::now();
    let index = open_index(&brain)?;
    let cold = index.reconcile_blocking(None)?;
    let cold_secs = started.elapsed().as_secs_f64();
    println!(
        "cold index:          {cold_secs:.3} s  ({} notes, {} sections; {:.0} notes/s, {:.1} MB/s; index {:.1} MB)",
        cold.notes,
        cold.sections,
        cold.notes as f64 / cold_secs,
        bytes as f64 / 1e6 / cold_secs,
        index.size_bytes() as f64 / 1e6
    );

    // Search latency, on the index just built.
    let queries = queries_from(&files);
    for q in &queries {
        index.search(q, &SearchFilter::default(), 10)?;
    }
    let mut samples = Vec::with_capacity(queries.len() * SEARCH_ROUNDS);
    for _ in 0..SEARCH_ROUNDS {
        for q in &queries {
            let started = Instant::now();
            index.search(q, &SearchFilter::default(), 10)?;
            samples.push(started.elapsed());
        }
    }
    samples.sort();
    println!(
        "search:              p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms  ({} queries × {SEARCH_ROUNDS})",
        ms(percentile(&samples, 0.50)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().unwrap_or(&Duration::ZERO)),
        queries.len()
    );
    drop(index);

    // Warm: the index is there and nothing changed.
    let started = Instant::now();
    let index = open_index(&brain)?;
    let warm = index.reconcile_blocking(None)?;
    let warm_secs = started.elapsed().as_secs_f64();
    println!(
        "warm start:          {:.1} ms  ({} re-parsed, {} unchanged)",
        warm_secs * 1e3,
        warm.reparsed,
        warm.unchanged
    );
    drop(index);

    // Edit → searchable, with the server's watcher following the brain.
    let state = open_server_state(&brain)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while state.app.index().status().last_reconcile.is_none() || state.app.index().status().indexing
    {
        anyhow::ensure!(Instant::now() < deadline, "the first reconcile never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut latencies = Vec::new();
    for i in 0..EDITS {
        let file = &files[(i * 7919) % files.len()];
        let word = unique_word(i);
        let mut text = std::fs::read_to_string(&file.abs_path)?;
        text.push_str(&format!("\n{word}\n"));
        std::fs::write(&file.abs_path, text)?;
        let started = Instant::now();
        let limit = started + Duration::from_secs(10);
        loop {
            let hits = state
                .app
                .index()
                .search(&word, &SearchFilter::default(), 1)?;
            if hits.first().is_some_and(|h| h.path == file.rel_path) {
                break;
            }
            anyhow::ensure!(Instant::now() < limit, "edit {i} not searchable after 10 s");
            std::thread::sleep(Duration::from_millis(1));
        }
        latencies.push(started.elapsed());
    }
    latencies.sort();
    println!(
        "edit → searchable:   median {:.0} ms, max {:.0} ms  ({EDITS} edits, watcher {})",
        ms(percentile(&latencies, 0.5)),
        ms(*latencies.last().unwrap_or(&Duration::ZERO)),
        state.app.status().watcher.state
    );
    drop(state);

    println!(
        "peak RSS:            {:.1} MB",
        peak_rss_kb()? as f64 / 1024.0
    );

    // The analyzer alone (it runs on every word indexed), after the peak
    // RSS is read (the notes' text is held for it): the notes' text,
    // best of three passes through one analyzer (its stem cache starts
    // empty, as an indexing thread's does).
    let texts: Vec<(&str, String)> = files
        .iter()
        .filter_map(|f| {
            Some((
                f.rel_path.as_str(),
                std::fs::read_to_string(&f.abs_path).ok()?,
            ))
        })
        .collect();
    let mut best = Duration::MAX;
    let mut tokens = 0usize;
    for _ in 0..3 {
        let mut analyzer = noggin::index::analyzer::text_analyzer();
        let started = Instant::now();
        tokens = 0;
        for (_, text) in &texts {
            let mut stream = analyzer.token_stream(text);
            while stream.advance() {
                tokens += 1;
            }
        }
        best = best.min(started.elapsed());
    }
    println!(
        "analyzer:            {:.1} ms  ({tokens} tokens; {:.1} M tokens/s on one thread)",
        ms(best),
        tokens as f64 / best.as_secs_f64() / 1e6
    );

    // The parser alone (Markdown into passages, every note a cold index
    // reads), best of three passes on one thread.
    let mut best = Duration::MAX;
    let mut sections = 0usize;
    for _ in 0..3 {
        let started = Instant::now();
        sections = 0;
        for (path, text) in &texts {
            sections += noggin::brain::parse_note(path, text).sections.len();
        }
        best = best.min(started.elapsed());
    }
    let text_bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    println!(
        "parser:              {:.1} ms  ({sections} sections; {:.1} µs a note, {:.0} MB/s on one thread)",
        ms(best),
        best.as_secs_f64() * 1e6 / texts.len().max(1) as f64,
        text_bytes as f64 / best.as_secs_f64() / 1e6
    );
    Ok(())
}

fn bench_research(source: &Path, per_request: usize) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let brain = temp.path().join("brain");
    copy_brain(source, &brain)?;
    let questions = research_questions(source)?;
    anyhow::ensure!(!questions.is_empty(), "no questions to ask");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let state = open_server_state(&brain)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base_url = format!("http://{}", listener.local_addr()?);
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(noggin::server::run(listener, state, async {
            let _ = stopped.await;
        }));

        let client = http_client()?;
        let started = Instant::now();
        let status = loop {
            let status: Value = client
                .get(format!("{base_url}/v1/status"))
                .send()
                .await?
                .json()
                .await?;
            // Research reads the model once it is loaded: wait for it too.
            if status["indexing"] == false
                && status["last_reconcile"].is_object()
                && status["model"]["state"] != "loading"
            {
                break status;
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(120),
                "the first reconcile (or loading the model) never ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        println!(
            "brain: {} ({} notes, {} sections), copied to {}; first reconcile done {:.1} s after start",
            source.display(),
            status["notes"],
            status["sections"],
            brain.display(),
            started.elapsed().as_secs_f64()
        );
        println!(
            "questions: {} ({per_request} per request, asked in turn); semantic model: {}",
            questions.len(),
            status["model"]["state"]
        );

        let questions = std::sync::Arc::new(questions);
        let url = format!("{base_url}/v1/research");
        for i in 0..WARM_UP_REQUESTS {
            research_once(&client, &url, &questions, per_request, i).await?;
        }

        let (started, cpu) = (Instant::now(), cpu_time());
        let mut run = Run::default();
        for i in 0..SEQUENTIAL_REQUESTS {
            run.add(research_once(&client, &url, &questions, per_request, i).await?);
        }
        run.report(
            "1 client",
            SEQUENTIAL_REQUESTS,
            started.elapsed(),
            cpu_time() - cpu,
        );

        let (started, cpu) = (Instant::now(), cpu_time());
        let mut clients = Vec::with_capacity(CLIENTS);
        for c in 0..CLIENTS {
            let (url, questions) = (url.clone(), questions.clone());
            clients.push(tokio::spawn(async move {
                let client = http_client()?;
                let mut run = Run::default();
                for r in 0..REQUESTS_PER_CLIENT {
                    // Each client starts elsewhere in the questions.
                    let i = c * 7 + r;
                    run.add(research_once(&client, &url, &questions, per_request, i).await?);
                }
                anyhow::Ok(run)
            }));
        }
        let mut run = Run::default();
        for client in clients {
            run.merge(client.await??);
        }
        run.report(
            &format!("{CLIENTS} clients"),
            CLIENTS * REQUESTS_PER_CLIENT,
            started.elapsed(),
            cpu_time() - cpu,
        );

        let _ = shutdown.send(());
        server.await??;
        anyhow::Ok(())
    })?;
    println!(
        "peak RSS:            {:.1} MB",
        peak_rss_kb()? as f64 / 1024.0
    );
    Ok(())
}

fn bench_retrieval(set: &Path) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let brain = temp.path().join("brain");
    copy_brain(&set.join("brain"), &brain)?;
    let queries = read_tsv(&set.join("queries-train.tsv"))?;
    let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
    for row in read_tsv(&set.join("qrels-train.tsv"))? {
        let (query, rest) = row;
        if let Some((doc, relevance)) = rest.split_once('\t') {
            qrels
                .entry(query)
                .or_default()
                .insert(doc.to_string(), relevance.trim().parse()?);
        }
    }
    let started = Instant::now();
    let index = open_index(&brain)?;
    let cold = index.reconcile_blocking(None)?;
    println!(
        "set: {} ({} notes, {} sections; indexed in {:.2} s), {} queries",
        set.display(),
        cold.notes,
        cold.sections,
        started.elapsed().as_secs_f64(),
        queries.len()
    );

    let (ndcg, recall_10, recall_100, judged) = score_ranking(&index, &queries, &qrels)?;
    println!(
        "ranking:             nDCG@10 {ndcg:.4}, recall@10 {recall_10:.4}, recall@100 {recall_100:.4}  ({judged} judged queries)"
    );
    drop(index);

    let texts: Arc<Vec<String>> = Arc::new(queries.into_iter().map(|(_, t)| t).collect());
    for limit in [10, 100] {
        for clients in [1, CLIENTS] {
            // A fresh handle: its caches know no term yet.
            let index = open_index(&brain)?;
            let started = Instant::now();
            let mut workers = Vec::with_capacity(clients);
            for c in 0..clients {
                let (index, texts) = (index.clone(), texts.clone());
                workers.push(std::thread::spawn(move || {
                    let mut rounds: Vec<Vec<Duration>> = (0..RETRIEVAL_ROUNDS)
                        .map(|_| Vec::with_capacity(texts.len()))
                        .collect();
                    for round in rounds.iter_mut() {
                        for i in 0..texts.len() {
                            // Each client starts elsewhere in the queries.
                            let text = &texts[(i + c * texts.len() / clients) % texts.len()];
                            let started = Instant::now();
                            index.search(text, &SearchFilter::default(), limit)?;
                            round.push(started.elapsed());
                        }
                    }
                    anyhow::Ok(rounds)
                }));
            }
            let mut first = Vec::new();
            let mut later = Vec::new();
            for worker in workers {
                let rounds = worker
                    .join()
                    .map_err(|_| anyhow::anyhow!("a client panicked"))??;
                for (round, samples) in rounds.into_iter().enumerate() {
                    if round == 0 {
                        first.extend(samples)
                    } else {
                        later.extend(samples)
                    }
                }
            }
            let wall = started.elapsed();
            first.sort();
            later.sort();
            let searches = first.len() + later.len();
            println!(
                "search limit {limit:<3} {clients:>2} client{}: first pass p50 {:.2} ms, p99 {:.2} ms; warm p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.0} searches/s",
                if clients == 1 { " " } else { "s" },
                ms(percentile(&first, 0.50)),
                ms(percentile(&first, 0.99)),
                ms(percentile(&later, 0.50)),
                ms(percentile(&later, 0.99)),
                ms(*later.last().unwrap_or(&Duration::ZERO)),
                searches as f64 / wall.as_secs_f64()
            );
        }
    }
    println!(
        "peak RSS:            {:.1} MB",
        peak_rss_kb()? as f64 / 1024.0
    );
    Ok(())
}

/// nDCG@10, recall@10 and recall@100 of `index`'s search over the judged
/// queries, as retrieval_eval.py scores them, and how many were judged.
fn score_ranking(
    index: &Index,
    queries: &[(String, String)],
    qrels: &HashMap<String, HashMap<String, u32>>,
) -> anyhow::Result<(f64, f64, f64, usize)> {
    let (mut ndcg, mut recall_10, mut recall_100, mut judged) = (0.0, 0.0, 0.0, 0);
    for (id, text) in queries {
        let Some(relevant) = qrels.get(id) else {
            continue;
        };
        let docs: Vec<String> = index
            .search(text, &SearchFilter::default(), 100)?
            .into_iter()
            .map(|h| {
                let name = h.path.rsplit('/').next().unwrap_or(&h.path);
                name.strip_suffix(".md").unwrap_or(name).to_string()
            })
            .collect();
        let gain = |r: u32| 2f64.powi(r as i32) - 1.0;
        let dcg: f64 = docs
            .iter()
            .take(10)
            .enumerate()
            .map(|(i, d)| gain(relevant.get(d).copied().unwrap_or(0)) / (i as f64 + 2.0).log2())
            .sum();
        let mut ideal: Vec<u32> = relevant.values().copied().collect();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal
            .iter()
            .take(10)
            .enumerate()
            .map(|(i, &r)| gain(r) / (i as f64 + 2.0).log2())
            .sum();
        ndcg += dcg / idcg;
        let wanted: Vec<&String> = relevant
            .iter()
            .filter(|(_, &r)| r > 0)
            .map(|(d, _)| d)
            .collect();
        let found = |k: usize| {
            wanted
                .iter()
                .filter(|d| docs[..docs.len().min(k)].contains(d))
                .count()
        };
        recall_10 += found(10) as f64 / wanted.len() as f64;
        recall_100 += found(100) as f64 / wanted.len() as f64;
        judged += 1;
    }
    let n = judged.max(1) as f64;
    Ok((ndcg / n, recall_10 / n, recall_100 / n, judged))
}

/// The rows of a tab-separated file as (first column, the rest).
fn read_tsv(path: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect())
}

/// A path in the shared evaluation data: `../shared/eval` beside the
/// checkout, else `/work/shared/eval`.
fn shared_eval(relative: &str) -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval");
    let root = if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/eval")
    };
    root.join(relative)
}

fn http_client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder().no_proxy().build()?)
}

/// Latencies and answers of a series of research requests.
#[derive(Default)]
struct Run {
    latencies: Vec<Duration>,
    asked: usize,
    answered: usize,
    took_ms: Vec<u64>,
}

/// One research request's outcome.
struct Researched {
    latency: Duration,
    asked: usize,
    answered: usize,
    took_ms: u64,
}

impl Run {
    fn add(&mut self, r: Researched) {
        self.latencies.push(r.latency);
        self.asked += r.asked;
        self.answered += r.answered;
        self.took_ms.push(r.took_ms);
    }

    fn merge(&mut self, other: Run) {
        self.latencies.extend(other.latencies);
        self.asked += other.asked;
        self.answered += other.answered;
        self.took_ms.extend(other.took_ms);
    }

    /// Prints the figures of `requests` requests that took `wall` and used
    /// `cpu` (server and clients together: they share the process).
    fn report(mut self, name: &str, requests: usize, wall: Duration, cpu: Duration) {
        self.latencies.sort();
        self.took_ms.sort();
        let took = |p: f64| {
            let rank = ((self.took_ms.len() as f64 * p).ceil() as usize).max(1);
            self.took_ms.get(rank - 1).copied().unwrap_or(0)
        };
        println!(
            "research, {name:<10} p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {:.1} requests/s, {:.1} ms CPU each  ({requests} requests; server took_ms p50 {}, p95 {}; answered {}/{} = {:.0}%)",
            ms(percentile(&self.latencies, 0.50)),
            ms(percentile(&self.latencies, 0.95)),
            ms(percentile(&self.latencies, 0.99)),
            ms(*self.latencies.last().unwrap_or(&Duration::ZERO)),
            requests as f64 / wall.as_secs_f64(),
            ms(cpu) / requests.max(1) as f64,
            took(0.50),
            took(0.95),
            self.answered,
            self.asked,
            100.0 * self.answered as f64 / self.asked.max(1) as f64
        );
    }
}

/// Sends the `i`-th request: the next `per_request` questions, wrapping
/// around.
async fn research_once(
    client: &reqwest::Client,
    url: &str,
    questions: &[String],
    per_request: usize,
    i: usize,
) -> anyhow::Result<Researched> {
    let asked: Vec<&String> = (0..per_request)
        .map(|k| &questions[(i * per_request + k) % questions.len()])
        .collect();
    let body = serde_json::json!({ "prompt": "", "questions": asked });
    let started = Instant::now();
    let response = client.post(url).json(&body).send().await?;
    let code = response.status();
    let body: Value = response.json().await?;
    let latency = started.elapsed();
    anyhow::ensure!(code.is_success(), "research answered {code}: {body}");
    Ok(Researched {
        latency,
        asked: asked.len(),
        answered: body["answered"].as_array().map_or(0, Vec::len),
        took_ms: body["took_ms"].as_u64().unwrap_or(0),
    })
}

/// The questions `research` asks, interleaved so every request mixes
/// languages: the evaluation questions, then one per heading of evenly
/// spread Japanese and Chinese notes.
fn research_questions(vault: &Path) -> anyhow::Result<Vec<String>> {
    let mut sources: Vec<Vec<String>> = Vec::new();
    for file in EVAL_QUESTIONS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let mut asked = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let entry: Value = serde_json::from_str(line)?;
            if let Some(q) = entry["question"].as_str() {
                asked.push(q.to_string());
            }
        }
        sources.push(asked);
    }
    for (language, ask) in HEADING_QUESTIONS {
        let folder = vault.join(language);
        if folder.is_dir() {
            let headings = headings_of(&folder)?;
            let step = (headings.len() / HEADINGS_PER_LANGUAGE).max(1);
            sources.push(
                headings
                    .iter()
                    .step_by(step)
                    .take(HEADINGS_PER_LANGUAGE)
                    .map(|h| format!("{h}{ask}"))
                    .collect(),
            );
        }
    }
    let longest = sources.iter().map(Vec::len).max().unwrap_or(0);
    Ok((0..longest)
        .flat_map(|i| sources.iter().filter_map(move |s| s.get(i).cloned()))
        .collect())
}

/// The `##` headings of the notes below `folder` (outside code blocks), in
/// path order.
fn headings_of(folder: &Path) -> anyhow::Result<Vec<String>> {
    let mut notes: Vec<PathBuf> = walkdir::WalkDir::new(folder)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.into_path())
        .collect();
    notes.sort();
    let mut headings = Vec::new();
    for note in notes {
        let mut in_code = false;
        for line in std::fs::read_to_string(&note)?.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            } else if let Some(heading) = line.strip_prefix("## ").filter(|_| !in_code) {
                let heading = heading.trim();
                if heading.chars().count() >= 2 && !heading.contains(['[', '`', '<']) {
                    headings.push(heading.to_string());
                }
            }
        }
    }
    Ok(headings)
}

/// Copies the notes of `source` (not its index) into `to`.
fn copy_brain(source: &Path, to: &Path) -> anyhow::Result<()> {
    let walker = walkdir::WalkDir::new(source)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".noggin");
    for entry in walker {
        let entry = entry?;
        let target = to.join(entry.path().strip_prefix(source)?);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Opens the index of `brain`; a handle dropped a moment ago may still be
/// releasing the writer lock.
fn open_index(brain: &Path) -> anyhow::Result<Index> {
    let options = IndexOptions {
        brain: brain.to_path_buf(),
        data_dir: None,
        max_note_bytes: MAX_NOTE_BYTES,
        read_only: false,
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Index::open(options.clone()) {
            Err(noggin::index::Error::Locked(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            result => return Ok(result?),
        }
    }
}

/// What `noggin serve --brain <brain>` opens, watcher included.
fn open_server_state(brain: &Path) -> anyhow::Result<AppState> {
    let brain = brain.to_str().expect("temp paths are UTF-8");
    let Command::Serve(args) = Cli::try_parse_from(["noggin", "serve", "--brain", brain])?.command
    else {
        anyhow::bail!("not a serve command");
    };
    let config = args.server_config()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match AppState::open(config.clone()) {
            Err(e)
                if matches!(
                    e.downcast_ref::<noggin::index::Error>(),
                    Some(noggin::index::Error::Locked(_))
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            result => return result,
        }
    }
}

/// Queries a user might type about the brain: note titles and the first
/// line of prose of evenly spread notes.
fn queries_from(files: &[noggin::brain::NoteFile]) -> Vec<String> {
    let mut sorted: Vec<&noggin::brain::NoteFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    let step = (sorted.len() / (QUERIES / 2)).max(1);
    let mut queries = Vec::new();
    for file in sorted.iter().step_by(step).take(QUERIES / 2) {
        let stem = Path::new(&file.rel_path)
            .file_stem()
            .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
            .unwrap_or_default();
        queries.push(stem);
        let text = std::fs::read_to_string(&file.abs_path).unwrap_or_default();
        let prose = text
            .lines()
            .map(|l| l.trim_start_matches(['#', '>', '-', ' ']).trim())
            .filter(|l| l.split_whitespace().count() >= 3 && !l.starts_with('`'))
            .nth(1)
            .unwrap_or("");
        let words: Vec<&str> = prose.split_whitespace().take(8).collect();
        if !words.is_empty() {
            queries.push(words.join(" "));
        }
    }
    queries
}

/// A word no note contains: letters only, so the analyzer keeps it whole.
fn unique_word(i: usize) -> String {
    let letters: String = i
        .to_string()
        .bytes()
        .map(|d| (b'a' + (d - b'0')) as char)
        .collect();
    format!("zqxnogginedit{letters}")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Peak resident memory of this process (VmHWM), in KiB.
fn peak_rss_kb() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmHWM in /proc/self/status"))
}

/// CPU time this process has used so far (user and system), from
/// `/proc/self/stat`; zero where that cannot be read.
fn cpu_time() -> Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            // The fields after the command name, which may hold spaces.
            let rest = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // utime and stime are fields 14 and 15 of the whole line.
            let utime: u64 = fields.get(11)?.parse().ok()?;
            let stime: u64 = fields.get(12)?.parse().ok()?;
            Some(utime + stime)
        })
        .unwrap_or(0);
    // The kernel counts in USER_HZ, 100 per second on Linux.
    Duration::from_millis(ticks * 10)
}
