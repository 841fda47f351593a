//! `noggin mcp`: the brain over MCP on stdin/stdout.

use crate::app::Noggin;
use crate::config::McpArgs;

pub fn mcp(args: McpArgs) -> anyhow::Result<()> {
    let (config, poll_interval) = args.core()?;
    let runtime = super::runtime()?;
    let served = runtime.block_on(async move {
        // An assistant ends the server it started by closing its input or
        // with a signal (SIGTERM, Ctrl-C): either way the session store is
        // left whole in its file.
        let stopped = crate::server::shutdown_signal();
        let app = match Noggin::open_live(&config, args.follow.watch, poll_interval) {
            Ok(app) => app,
            Err(error) => {
                crate::mcp::refuse_stdio(&format!("noggin cannot serve: {error:#}")).await;
                return Err(error);
            }
        };
        let serve = async {
            // An assistant starts `noggin mcp` and asks at once: answer from
            // an index that is up to date, not from one still being filled.
            // (After the background reconcile this second one finds nothing
            // to do.)
            app.index().reconcile(None).await?;
            tracing::info!(brain = %app.brain().display(), "serving MCP on stdio");
            crate::mcp::serve_stdio(app.clone()).await
        };
        let served = tokio::select! {
            served = serve => served,
            () = stopped => Ok(()),
        };
        app.close().await;
        served
    });
    // The read of stdin cannot be cancelled: a runtime that waited for it
    // would keep a signalled `noggin mcp` alive until its input ends.
    // Everything is closed by now.
    runtime.shutdown_background();
    served
}
