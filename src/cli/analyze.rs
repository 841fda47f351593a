//! `noggin analyze`: where an agent lost its context, from its trajectory
//! file (or stdin); a report, `--json`, and the timeline page with `--html`.

use std::io::Write;

use anyhow::Context;

use crate::config::AnalyzeArgs;
use crate::trajectory::{self, render};

pub fn analyze(args: AnalyzeArgs) -> anyhow::Result<()> {
    // A bad flag is said as one, before any file is read.
    args.thresholds
        .validate_flags()
        .map_err(anyhow::Error::msg)?;
    let bytes = trajectory::read_input(&args.file, args.max_bytes).map_err(|e| match e {
        trajectory::Error::TooLarge { .. } => {
            anyhow::anyhow!("{e} (--max-bytes takes a larger one)")
        }
        e => e.into(),
    })?;
    let analysis = trajectory::analyze(&bytes, &args.thresholds)
        .with_context(|| format!("cannot analyse {:?}", args.file))?;
    if let Some(out) = &args.html {
        let page = render::html_page(&analysis, render::StyleLink::Inline);
        std::fs::write(out, page).with_context(|| format!("cannot write {out:?}"))?;
        eprintln!("wrote the timeline to {}", out.display());
    }
    if args.json {
        return super::print_json(&analysis);
    }
    let mut out = std::io::stdout().lock();
    write!(out, "{}", render::text_report(&analysis))?;
    Ok(())
}
