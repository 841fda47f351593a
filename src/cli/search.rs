//! `noggin search`: ranked notes in the terminal.

use std::io::Write;

use crate::app::{CoreConfig, Noggin, SearchRequest};
use crate::config::SearchArgs;
use crate::text::one_line;

pub fn search(args: SearchArgs) -> anyhow::Result<()> {
    let request = SearchRequest {
        q: args.query.join(" "),
        limit: Some(args.limit.into()),
        folder: args.folder,
        tag: args.tag,
    };
    // A bad query is refused before the index is opened (or made).
    request.validate()?;
    let app = Noggin::open_once(&CoreConfig::reading(args.brain), true)?;
    let results = super::runtime()?.block_on(app.search(request))?;
    if args.json {
        return super::print_json(&results);
    }
    let mut out = std::io::stdout().lock();
    super::say_if_indexing(results.indexing);
    if results.hits.is_empty() {
        let yet = if results.indexing { " yet" } else { "" };
        writeln!(out, "no notes match{yet}")?;
    }
    for hit in results.hits {
        let heading = if hit.heading.is_empty() {
            String::new()
        } else {
            format!(" › {}", hit.heading)
        };
        writeln!(
            out,
            "{}{}  ({:.2})\n  {}\n{}\n",
            one_line(&hit.title),
            one_line(&heading),
            hit.score,
            one_line(&hit.path),
            indented(&plain_snippet(&hit.snippet))
        )?;
    }
    Ok(())
}

/// The snippet's lines, each indented under its hit, with no blank ones
/// and no control character of the note's.
fn indented(snippet: &str) -> String {
    snippet
        .lines()
        .filter(|line| !line.trim().is_empty())
        // A code line keeps its indentation.
        .map(|line| format!("  {}", one_line(line.trim_end())))
        .collect::<Vec<_>>()
        .join("\n")
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
