//! `noggin serve`: the HTTP API, the web card and MCP at `/mcp`.

use anyhow::Context;

use crate::config::ServeArgs;
use crate::server;

pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let config = args.server_config()?;
    super::runtime()?.block_on(async move {
        let addr = config.addr;
        // Opening may wait for another process's index (Ctrl-C ends that
        // wait at once, by the default action); from the moment the address
        // can be known, Ctrl-C and SIGTERM end `serve` cleanly.
        let state = server::AppState::open(config)?;
        let shutdown = server::shutdown_signal();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        let brain = state.app.brain().display().to_string();
        tracing::info!(%brain, "serving");
        eprintln!("noggin is serving {brain} at http://{local}/");
        server::run(listener, state, shutdown).await?;
        Ok(())
    })
}
