//! `sessions`: working context under load, through the real HTTP server on a
//! temp copy of the bundled sample brain.
//!
//! Prints event ingest per second (one client posting single events, many
//! clients posting to one session at once, batches of events, and the store
//! alone without HTTP), the latency of rendering a full session's block
//! (over HTTP and in-process), of the context pack with and without
//! research, and of cutting a long chat history to a window.

use std::path::Path;
use std::time::{Duration, Instant};

use noggin::context::block::render_block;
use noggin::context::events::parse_events;
use noggin::context::window::{fit_window, Protect, WindowRequest};
use serde_json::{json, Value};

use super::{copy_brain, http_client, ms, open_server_state, percentile};

/// Single-event posts of the one sequential client.
const SEQUENTIAL_EVENTS: usize = 1000;
/// Clients posting to one session at once, and posts each.
const CONCURRENT_CLIENTS: usize = 16;
const POSTS_PER_CLIENT: usize = 100;
/// Batches posted, and events per batch.
const BATCHES: usize = 100;
const EVENTS_PER_BATCH: usize = 50;
/// Renders timed per measurement.
const RENDERS: usize = 1000;
/// Packs timed without and with research.
const PACKS: usize = 300;
const PACKS_WITH_RESEARCH: usize = 30;

fn event(i: usize) -> Value {
    match i % 6 {
        0 => {
            json!({"type": "tool_call", "tool": "Read", "arguments": {"file_path": format!("src/module_{}.rs", i % 37)}})
        }
        1 => {
            json!({"type": "tool_call", "tool": "Edit", "arguments": format!("{{\"path\": \"src/edit_{}.rs\"}}", i % 13)})
        }
        2 => {
            json!({"type": "progress", "text": format!("step {i} of the migration"), "done": i.is_multiple_of(4)})
        }
        3 => {
            json!({"type": "failure", "kind": if i.is_multiple_of(2) { "build" } else { "test" }, "text": format!("error[E0{i}]: mismatched types\n --> src/lib.rs:{i}:5")})
        }
        4 => {
            json!({"type": "decision", "text": format!("decision {i}: keep the parser streaming")})
        }
        _ => {
            json!({"type": "user_message", "text": format!("please continue with part {i} and keep the tests green")})
        }
    }
}

fn report(name: &str, mut latencies: Vec<Duration>) {
    latencies.sort();
    println!(
        "{name:<44} p50 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  (n={})",
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap_or(&Duration::ZERO)),
        latencies.len()
    );
}

fn rate(name: &str, events: usize, wall: Duration) {
    println!(
        "{name:<44} {:>9.0} events/s  ({events} events in {:.2} s)",
        events as f64 / wall.as_secs_f64(),
        wall.as_secs_f64()
    );
}

pub fn bench_sessions(source: &Path) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let brain = temp.path().join("brain");
    copy_brain(source, &brain)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let state = open_server_state(&brain)?;
        let store = state.sessions.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(noggin::server::run(listener, state, async {
            let _ = stopped.await;
        }));
        let client = http_client()?;
        // Wait for the first reconcile, so research has an index.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status: Value = client.get(format!("{base}/v1/status")).send().await?.json().await?;
            if status["indexing"] == false && status["last_reconcile"].is_object() {
                break;
            }
            anyhow::ensure!(Instant::now() < deadline, "the first reconcile takes too long");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        println!("sessions bench on {} (store: SQLite WAL, synchronous=FULL)", source.display());

        // Ingest: one client, one event per request.
        let mut latencies = Vec::new();
        let started = Instant::now();
        for i in 0..SEQUENTIAL_EVENTS {
            let t = Instant::now();
            let r = client.post(format!("{base}/v1/sessions/seq/events")).json(&event(i)).send().await?;
            anyhow::ensure!(r.status().is_success(), "ingest failed: {}", r.status());
            latencies.push(t.elapsed());
        }
        rate("ingest, 1 client, 1 event/request", SEQUENTIAL_EVENTS, started.elapsed());
        report("  POST /v1/sessions/{id}/events latency", latencies);

        // Ingest: many clients into one session.
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..CONCURRENT_CLIENTS {
            let (client, base) = (client.clone(), base.clone());
            tasks.push(tokio::spawn(async move {
                for i in 0..POSTS_PER_CLIENT {
                    let r = client
                        .post(format!("{base}/v1/sessions/crowd/events"))
                        .json(&event(c * 1000 + i))
                        .send()
                        .await?;
                    anyhow::ensure!(r.status().is_success(), "ingest failed: {}", r.status());
                }
                Ok(())
            }));
        }
        for task in tasks {
            task.await??;
        }
        rate(
            &format!("ingest, {CONCURRENT_CLIENTS} clients, one session"),
            CONCURRENT_CLIENTS * POSTS_PER_CLIENT,
            started.elapsed(),
        );

        // Ingest: batches.
        let started = Instant::now();
        for b in 0..BATCHES {
            let batch: Vec<Value> = (0..EVENTS_PER_BATCH).map(|i| event(b * EVENTS_PER_BATCH + i)).collect();
            let r = client.post(format!("{base}/v1/sessions/batch/events")).json(&batch).send().await?;
            anyhow::ensure!(r.status().is_success(), "ingest failed: {}", r.status());
        }
        rate(
            &format!("ingest, batches of {EVENTS_PER_BATCH}"),
            BATCHES * EVENTS_PER_BATCH,
            started.elapsed(),
        );

        // The store alone, no HTTP.
        let store_events = 1000;
        let started = Instant::now();
        for i in 0..store_events {
            let value = event(i);
            let parsed = parse_events(&value)?;
            store.append("direct".to_string(), parsed, vec![value.to_string()]).await?;
        }
        rate("ingest, store only, 1 event/transaction", store_events, started.elapsed());

        // A full session for rendering: every list at its cap.
        let mut full: Vec<Value> = vec![json!({"type": "user_message", "text": "Migrate the parser to pulldown-cmark, keep every test green and write the release notes. ".repeat(3)})];
        full.extend((0..20usize).map(|i| json!({"type": "goal", "text": format!("goal {i}: a goal of moderate length"), "done": i.is_multiple_of(3)})));
        full.extend((0..100usize).map(|i| json!({"type": "progress", "text": format!("progress {i}: one more step done"), "done": i.is_multiple_of(2)})));
        full.extend((0..50).map(|i| json!({"type": "decision", "text": format!("decision {i}: keep it simple")})));
        full.extend((0..12).map(|i| json!({"type": "tool_call", "tool": "Edit", "arguments": {"path": format!("src/file_{i}.rs")}})));
        full.push(json!({"type": "failure", "kind": "build", "text": "error[E0308]: mismatched types\n".repeat(200)}));
        full.push(json!({"type": "failure", "kind": "test", "text": "thread 'x' panicked\n".repeat(50)}));
        let r = client.post(format!("{base}/v1/sessions/full/events")).json(&full).send().await?;
        anyhow::ensure!(r.status().is_success(), "cannot fill the session: {}", r.status());

        for budget in [2000usize, 20_000] {
            let mut latencies = Vec::new();
            for _ in 0..RENDERS {
                let t = Instant::now();
                let r = client.get(format!("{base}/v1/sessions/full/context?budget={budget}")).send().await?;
                anyhow::ensure!(r.status().is_success(), "render failed: {}", r.status());
                let _ = r.bytes().await?;
                latencies.push(t.elapsed());
            }
            report(&format!("GET context, budget {budget}"), latencies);
        }
        let session = store.get("full".into()).await?.ok_or_else(|| anyhow::anyhow!("no session"))?;
        let mut latencies = Vec::new();
        for _ in 0..RENDERS * 10 {
            let t = Instant::now();
            std::hint::black_box(render_block(&session.context, 2000));
            latencies.push(t.elapsed());
        }
        report("render_block in-process, budget 2000", latencies);

        let mut latencies = Vec::new();
        for _ in 0..PACKS {
            let t = Instant::now();
            let r = client
                .post(format!("{base}/v1/context"))
                .json(&json!({"session": "full", "prompt": "Add a refund button"}))
                .send()
                .await?;
            anyhow::ensure!(r.status().is_success(), "pack failed: {}", r.status());
            let _ = r.bytes().await?;
            latencies.push(t.elapsed());
        }
        report("POST /v1/context (no questions)", latencies);
        let mut latencies = Vec::new();
        for _ in 0..PACKS_WITH_RESEARCH {
            let t = Instant::now();
            let r = client
                .post(format!("{base}/v1/context"))
                .json(&json!({"session": "full", "prompt": "Add a refund button",
                    "questions": ["When do we deploy?", "Which database do we use?", "Who owns the payments service?", "What is the refund policy?", "Where are the runbooks?"]}))
                .send()
                .await?;
            anyhow::ensure!(r.status().is_success(), "pack failed: {}", r.status());
            let _ = r.bytes().await?;
            latencies.push(t.elapsed());
        }
        report("POST /v1/context (5 questions researched)", latencies);

        // The window over a 1,000-message history.
        let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."}),
            json!({"role": "user", "content": "Refactor the parser."})];
        for i in 0..499 {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\": \"src/{i}.rs\"}}")}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "x".repeat(300)}));
        }
        let request = WindowRequest { messages, budget: 8000, protect: Protect::default(), session: None };
        let mut latencies = Vec::new();
        for _ in 0..100 {
            let t = Instant::now();
            std::hint::black_box(fit_window(&request, None));
            latencies.push(t.elapsed());
        }
        report("fit_window in-process, 1,000 messages", latencies);

        let _ = stop.send(());
        server.await??;
        Ok(())
    })
}
