//! `noggin index`: brings the index up to date and prints a summary.

use std::time::Instant;

use crate::app::{CoreConfig, Noggin};
use crate::config::IndexArgs;

pub fn index(args: IndexArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let app = Noggin::open_once(&CoreConfig::reading(args.brain), false)?;
    let report = app.reindex(super::progress_bar())?;
    if let Some(error) = &report.brain_error {
        anyhow::bail!("{error}; the index was left as it was");
    }
    if let Some(error) = app.index().status().commit_error {
        anyhow::bail!("the index could not be saved: {error}; it holds what it held before");
    }
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["seconds"] = serde_json::json!(secs);
        return super::print_json(&value);
    }
    let mut skipped = String::new();
    for (n, why) in [
        (report.skipped_too_large, "skipped as over --max-note-bytes"),
        (report.skipped_links, "symbolic links not followed"),
        (report.unreadable, "unreadable (see the warnings above)"),
        (
            report.frontmatter_unread,
            "with frontmatter that is no YAML (see the warnings above)",
        ),
    ] {
        if n > 0 {
            skipped.push_str(&format!(", {n} {why}"));
        }
    }
    println!(
        "indexed {} notes, {} sections in {:.2} s ({} re-parsed, {} unchanged, {} removed{skipped})",
        report.notes, report.sections, secs, report.reparsed, report.unchanged, report.removed
    );
    Ok(())
}
