//! `noggin mcp`: the brain over MCP on stdin/stdout.

use crate::app::Noggin;
use crate::config::McpArgs;

pub fn mcp(args: McpArgs) -> anyhow::Result<()> {
    let (config, poll_interval) = args.core()?;
    super::runtime()?.block_on(async move {
        let app = Noggin::open_live(&config, args.follow.watch, poll_interval)?;
        // An assistant starts `noggin mcp` and asks at once: answer from an
        // index that is up to date, not from one still being filled. (After
        // the background reconcile this second one finds nothing to do.)
        app.index().reconcile(None).await?;
        tracing::info!(brain = %app.brain().display(), "serving MCP on stdio");
        let served = crate::mcp::serve_stdio(app.clone()).await;
        app.close().await;
        served
    })
}
