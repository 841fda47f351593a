//! `noggin search`: ranked notes in the terminal.

use std::io::Write;

use crate::app::{CoreConfig, Noggin, SearchRequest};
use crate::brain::parse::HEADING_SEPARATOR;
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
        let below = heading_below(&hit.title, &hit.heading);
        let heading = if below.is_empty() {
            String::new()
        } else {
            format!("{HEADING_SEPARATOR}{below}")
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

/// A passage's heading path without the note's title it starts with (a
/// note's first heading is often its title: "ADR-003 › ADR-003 › 결정").
fn heading_below<'h>(title: &str, heading: &'h str) -> &'h str {
    if heading == title {
        return "";
    }
    heading
        .strip_prefix(title)
        .and_then(|rest| rest.strip_prefix(HEADING_SEPARATOR))
        .unwrap_or(heading)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_path_loses_the_title_it_starts_with() {
        assert_eq!(heading_below("ADR-003", "ADR-003 › 결정"), "결정");
        assert_eq!(heading_below("박지훈", "박지훈"), "");
        assert_eq!(heading_below("Deploy", "Rollback"), "Rollback");
        assert_eq!(
            heading_below("Deploy", "Deployment › Steps"),
            "Deployment › Steps"
        );
        assert_eq!(heading_below("Deploy", ""), "");
    }
}
