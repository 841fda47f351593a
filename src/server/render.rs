//! A note's markdown turned into HTML that is safe to show in the browser.
//!
//! pulldown-cmark does the rendering with the options the index uses; this
//! module only rewrites its events on the way: raw HTML becomes text (a note
//! saying `<script>` shows those characters), wikilinks and relative links to
//! other notes become links to their rendered pages (or plain text when they
//! lead nowhere), links with a scheme other than http, https or mailto lose
//! their link, Obsidian callouts get a title, and headings get ids so that
//! `[[Note#Heading]]` can point at them.

use std::collections::HashMap;
use std::sync::LazyLock;

use pulldown_cmark::{BlockQuoteKind, CodeBlockKind, CowStr, Event, LinkType, Parser, Tag, TagEnd};
use regex::Regex;

use crate::brain::parse::{
    heading_id_start, is_embed_size, markdown_options, replace_marked, strip_comments,
    wikilink_text, BLOCK_ID, HIGHLIGHT,
};

/// Where the links of a note lead.
pub trait LinkResolver {
    /// The note (path relative to the brain) that `[[target]]` names.
    fn wikilink(&self, target: &str) -> Option<String>;
    /// True when `rel_path` is a note of the brain.
    fn is_note(&self, rel_path: &str) -> bool;
}

/// Renders a note's body (frontmatter already split off) to HTML.
///
/// `path` is the note's own path relative to the brain, for relative links;
/// a first-level heading equal to `title` that opens the body is left out,
/// because the page shows the title already.
pub fn render_body(body: &str, path: &str, title: &str, links: &impl LinkResolver) -> String {
    let body = strip_comments(body);
    let mut events: Vec<Event> = Parser::new_ext(&body, markdown_options()).collect();
    strip_heading_ids(&mut events);
    drop_leading_title(&mut events, title);
    assign_heading_ids(&mut events);
    let events = rewrite(events, path, links);
    let mut html = String::with_capacity(body.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

pub use crate::app::note_link;

/// The id a heading gets: lower-cased words joined by `-`.
pub fn heading_slug(text: &str) -> String {
    let mut slug = String::new();
    for c in text.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            slug.push(c);
        } else if (c.is_whitespace() || c == '-') && !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_string()
}

/// Plain text of the events between a start tag at `start` and its end.
fn text_until_end(events: &[Event], start: usize) -> (String, usize) {
    let mut text = String::new();
    let mut depth = 0usize;
    for (i, event) in events.iter().enumerate().skip(start) {
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth -= 1;
                if depth == 0 {
                    return (text, i);
                }
            }
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
    }
    (text, events.len().saturating_sub(1))
}

/// Takes a heading's id written after it (`## Setup {#setup}`, MDX's
/// `{/*setup*/}`) out of the page, as the index does: it renders as nothing,
/// and the heading's anchor is the one `[[Note#Setup]]` and the evidence's
/// links name.
fn strip_heading_ids(events: &mut Vec<Event>) {
    let mut drop = vec![false; events.len()];
    for start in 0..events.len() {
        if !matches!(events[start], Event::Start(Tag::Heading { .. })) {
            continue;
        }
        let (text, end) = text_until_end(events, start);
        let Some(cut) = heading_id_start(&text) else {
            continue;
        };
        // Walks the heading's events as `text_until_end` read them: what
        // begins at or after `cut` goes (tags opened there with their ends),
        // the text the id begins in is cut short.
        let (mut at, mut opened) = (0usize, 0usize);
        for i in start + 1..end {
            let len = match &events[i] {
                Event::Text(t) | Event::Code(t) => t.len(),
                Event::SoftBreak | Event::HardBreak => 1,
                _ => 0,
            };
            if at >= cut {
                match &events[i] {
                    Event::Start(_) => opened += 1,
                    Event::End(_) if opened == 0 => continue,
                    Event::End(_) => opened -= 1,
                    _ => {}
                }
                drop[i] = true;
            } else if at + len > cut {
                if let Event::Text(t) = &events[i] {
                    let kept = t[..cut - at].trim_end().to_string();
                    events[i] = Event::Text(kept.into());
                }
            }
            at += len;
        }
    }
    let mut i = 0;
    events.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
}

fn drop_leading_title(events: &mut Vec<Event>, title: &str) {
    if let Some(Event::Start(Tag::Heading {
        level: pulldown_cmark::HeadingLevel::H1,
        ..
    })) = events.first()
    {
        let (text, end) = text_until_end(events, 0);
        if text.trim() == title.trim() {
            events.drain(..=end);
        }
    }
}

fn assign_heading_ids(events: &mut [Event]) {
    let mut used: HashMap<String, usize> = HashMap::new();
    for i in 0..events.len() {
        if !matches!(&events[i], Event::Start(Tag::Heading { id: None, .. })) {
            continue;
        }
        let (text, _) = text_until_end(events, i);
        let base = heading_slug(&text);
        if base.is_empty() {
            continue;
        }
        let seen = used.entry(base.clone()).or_insert(0);
        let slug = if *seen == 0 {
            base
        } else {
            format!("{base}-{seen}")
        };
        *seen += 1;
        if let Event::Start(Tag::Heading { id, .. }) = &mut events[i] {
            *id = Some(slug.into());
        }
    }
}

static CALLOUT: LazyLock<Regex> = LazyLock::new(|| {
    // The pattern is a literal, so compiling it cannot fail.
    Regex::new(r"^\[!([A-Za-z][\w-]*)\][+-]?\s*(.*)$").unwrap()
});

/// What happened to a link's start tag, so its end tag does the same.
enum Opened {
    Kept,
    Dropped,
}

fn rewrite<'a>(events: Vec<Event<'a>>, path: &str, links: &impl LinkResolver) -> Vec<Event<'a>> {
    let mut out = Vec::with_capacity(events.len());
    let mut opened: Vec<Opened> = Vec::new();
    let mut in_html_block = false;
    let mut code_depth = 0usize;
    // A wikilink's text as Obsidian shows it, in place of the text that
    // follows (an embed's size only when that text is a size).
    let mut shown: Option<(String, bool)> = None;
    let mut events = events.into_iter().peekable();
    while let Some(event) = events.next() {
        if let (Some((text, only_a_size)), Event::Text(t)) = (&shown, &event) {
            if !*only_a_size || is_embed_size(t) {
                out.push(Event::Text(CowStr::from(text.clone())));
            } else {
                out.push(event);
            }
            shown = None;
            continue;
        }
        if let Event::Start(Tag::Link {
            link_type: LinkType::WikiLink { has_pothole },
            dest_url,
            ..
        })
        | Event::Start(Tag::Image {
            link_type: LinkType::WikiLink { has_pothole },
            dest_url,
            ..
        }) = &event
        {
            let image = matches!(event, Event::Start(Tag::Image { .. }));
            shown = (!has_pothole || image).then(|| (wikilink_text(dest_url), *has_pothole));
        }
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                code_depth += 1;
                out.push(event);
            }
            Event::End(TagEnd::CodeBlock) => {
                code_depth = code_depth.saturating_sub(1);
                out.push(event);
            }
            Event::Text(text) if code_depth == 0 && !in_html_block => push_prose(&mut out, text),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => match link_target(link_type, &dest_url, path, links) {
                Some(href) => {
                    opened.push(Opened::Kept);
                    out.push(Event::Start(Tag::Link {
                        link_type: LinkType::Inline,
                        dest_url: href.into(),
                        title,
                        id,
                    }));
                }
                None => opened.push(Opened::Dropped),
            },
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(Opened::Kept) = opened.pop() {
                    out.push(Event::End(TagEnd::Link));
                }
            }
            // Raw HTML is shown as what it is: text.
            Event::Start(Tag::HtmlBlock) => {
                in_html_block = true;
                out.push(Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(
                    "html".into(),
                ))));
            }
            Event::End(TagEnd::HtmlBlock) => {
                in_html_block = false;
                out.push(Event::End(TagEnd::CodeBlock));
            }
            Event::Html(html) | Event::InlineHtml(html) => out.push(Event::Text(html)),
            Event::Start(Tag::BlockQuote(None)) if !in_html_block => {
                let (kind, opening) = callout(&mut events);
                out.push(Event::Start(Tag::BlockQuote(kind)));
                out.extend(opening);
            }
            other => out.push(other),
        }
    }
    out
}

/// Text of prose, with Obsidian's `==highlights==` marked and block ids
/// (`… ^mon1`) left out, as Obsidian shows them.
fn push_prose<'a>(out: &mut Vec<Event<'a>>, text: CowStr<'a>) {
    let text = match replace_marked(&text, "^", &BLOCK_ID, "") {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(shorter) => CowStr::from(shorter),
    };
    if !text.contains("==") {
        out.push(Event::Text(text));
        return;
    }
    let mut last = 0;
    for caps in HIGHLIGHT.captures_iter(&text) {
        let (whole, inner) = (caps.get(0).expect("a match"), caps.get(1).expect("a group"));
        out.push(Event::Text(CowStr::from(
            text[last..whole.start()].to_string(),
        )));
        out.push(Event::InlineHtml(CowStr::Borrowed("<mark>")));
        out.push(Event::Text(CowStr::from(inner.as_str().to_string())));
        out.push(Event::InlineHtml(CowStr::Borrowed("</mark>")));
        last = whole.end();
    }
    out.push(Event::Text(CowStr::from(text[last..].to_string())));
}

/// Turns an Obsidian callout (`> [!warning] Title`) into a blockquote of a
/// kind with its title in bold; other blockquotes pass unchanged. Returns the
/// kind and the events that open the blockquote's content.
fn callout<'a>(
    events: &mut std::iter::Peekable<std::vec::IntoIter<Event<'a>>>,
) -> (Option<BlockQuoteKind>, Vec<Event<'a>>) {
    let mut taken = Vec::new();
    if !matches!(events.peek(), Some(Event::Start(Tag::Paragraph))) {
        return (None, taken);
    }
    taken.extend(events.next());
    // The marker arrives split over several text events ("[", "!warning", "]…").
    let mut text = String::new();
    while let Some(Event::Text(t)) = events.peek() {
        text.push_str(t);
        taken.extend(events.next());
    }
    let Some(caps) = CALLOUT.captures(&text) else {
        return (None, taken);
    };
    let name = caps[1].to_lowercase();
    let kind = match name.as_str() {
        "tip" | "hint" | "success" | "check" | "done" | "example" => BlockQuoteKind::Tip,
        "important" | "question" | "help" | "faq" => BlockQuoteKind::Important,
        "warning" | "attention" => BlockQuoteKind::Warning,
        "caution" | "danger" | "error" | "failure" | "fail" | "missing" | "bug" => {
            BlockQuoteKind::Caution
        }
        _ => BlockQuoteKind::Note,
    };
    let title = match caps[2].trim() {
        "" => {
            let mut chars = name.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        given => given.to_string(),
    };
    let mut opening = vec![
        Event::Start(Tag::Paragraph),
        Event::Start(Tag::Strong),
        Event::Text(CowStr::from(title)),
        Event::End(TagEnd::Strong),
    ];
    if matches!(events.peek(), Some(Event::SoftBreak)) {
        events.next();
        opening.push(Event::HardBreak);
    }
    (Some(kind), opening)
}

/// Where a link or image should lead on the rendered page, or `None` when it
/// should become plain text.
fn link_target(
    link_type: LinkType,
    dest: &str,
    path: &str,
    links: &impl LinkResolver,
) -> Option<String> {
    if let LinkType::WikiLink { .. } = link_type {
        let (target, heading) = match dest.split_once('#') {
            Some((target, heading)) => (target.trim(), Some(heading)),
            None => (dest.trim(), None),
        };
        let anchor = heading
            .map(heading_slug)
            .filter(|s| !s.is_empty())
            .map(|s| format!("#{s}"))
            .unwrap_or_default();
        if target.is_empty() {
            return (!anchor.is_empty()).then_some(anchor);
        }
        return links
            .wikilink(target)
            .map(|note| format!("{}{anchor}", note_link(&note)));
    }
    let dest = dest.trim();
    let lower = dest.to_ascii_lowercase();
    if ["http://", "https://", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s))
        || dest.starts_with('#')
    {
        return Some(dest.to_string());
    }
    // Anything else with a scheme (javascript:, data:, file:) goes nowhere.
    if dest.is_empty() || dest.contains(':') || dest.starts_with("//") {
        return None;
    }
    let (file, fragment) = match dest.split_once('#') {
        Some((file, fragment)) => (file, format!("#{fragment}")),
        None => (dest, String::new()),
    };
    let file = percent_encoding::percent_decode_str(file)
        .decode_utf8()
        .ok()?;
    let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    [join_relative(folder, &file), join_relative("", &file)]
        .into_iter()
        .flatten()
        .find(|candidate| links.is_note(candidate))
        .map(|note| format!("{}{fragment}", note_link(&note)))
}

/// `rel` taken from `folder` (both relative to the brain), with `.` and `..`
/// resolved; `None` when it would climb out of the brain.
fn join_relative(folder: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        folder.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Notes(&'static [&'static str]);

    impl LinkResolver for Notes {
        fn wikilink(&self, target: &str) -> Option<String> {
            self.0
                .iter()
                .find(|p| {
                    p.rsplit('/')
                        .next()
                        .and_then(|n| n.strip_suffix(".md"))
                        .is_some_and(|stem| stem.eq_ignore_ascii_case(target))
                })
                .map(|p| p.to_string())
        }
        fn is_note(&self, rel_path: &str) -> bool {
            self.0.contains(&rel_path)
        }
    }

    const NOTES: Notes = Notes(&[
        "Harbor/Runbooks/Deploy.md",
        "People/Mina Park.md",
        "한국어/용어집.md",
    ]);

    fn render(src: &str) -> String {
        render_body(src, "Harbor/Notes.md", "Notes", &NOTES)
    }

    #[test]
    fn obsidian_marks_show_as_in_obsidian() {
        let html = render(
            "See [[Deploy#Rollback steps]] and [[Deploy#^abc]]. ![[diagram.png|300]] \
             The host is ==kestrel-02== now. ^mon1\n\n`==code==`",
        );
        assert!(html.contains(">Deploy &gt; Rollback steps</a>"), "{html}");
        assert!(html.contains(">Deploy</a>."), "{html}");
        assert!(
            html.contains("diagram.png") && !html.contains("300"),
            "{html}"
        );
        assert!(
            html.contains("is <mark>kestrel-02</mark> now.</p>"),
            "{html}"
        );
        assert!(html.contains("<code>==code==</code>"), "{html}");
    }

    #[test]
    fn obsidian_comments_are_not_shown() {
        let html = render("Key %%hunter2%% here.\n\n%%\nA hidden block.\n%%\n\n`%%kept%%`");
        assert!(
            !html.contains("hunter2") && !html.contains("hidden"),
            "{html}"
        );
        assert!(
            html.contains("Key  here.") && html.contains("<code>%%kept%%</code>"),
            "{html}"
        );
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html =
            render("Saved <script>alert(\"xss\")</script> and <img src=x onerror=alert(1)>.");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
        let html = render("<div onclick=\"x()\">block</div>\n");
        assert!(
            html.contains("<pre><code class=\"language-html\">&lt;div onclick="),
            "{html}"
        );
    }

    #[test]
    fn a_heading_id_renders_as_nothing() {
        let html = render(
            "# Notes {#notes}\n## Setup {#setup .wide}\ntext\n## *Database* {/*db*/}\n\
             ## Use `{#id}`\n## Sets {a}\n",
        );
        // The title heading, once its id is gone, is the page's title.
        assert!(!html.contains("<h1"), "{html}");
        assert!(html.contains("<h2 id=\"setup\">Setup</h2>"), "{html}");
        assert!(
            html.contains("<h2 id=\"database\"><em>Database</em></h2>"),
            "{html}"
        );
        // As in the index, where the heading reads "Use".
        assert!(html.contains("<h2 id=\"use\">Use</h2>"), "{html}");
        assert!(html.contains("<h2 id=\"sets-a\">Sets {a}</h2>"), "{html}");
        assert!(!html.contains("{#") && !html.contains("{/"), "{html}");
    }

    #[test]
    fn wikilinks_lead_to_rendered_notes() {
        let cases = [
            ("[[Deploy]]", "<a href=\"/notes/Harbor/Runbooks/Deploy.md\">Deploy</a>"),
            (
                "[[Mina Park|Mina]]",
                "<a href=\"/notes/People/Mina%20Park.md\">Mina</a>",
            ),
            (
                "[[Deploy#Roll back]]",
                "<a href=\"/notes/Harbor/Runbooks/Deploy.md#roll-back\">Deploy &gt; Roll back</a>",
            ),
            (
                "[[용어집]]",
                "<a href=\"/notes/%ED%95%9C%EA%B5%AD%EC%96%B4/%EC%9A%A9%EC%96%B4%EC%A7%91.md\">용어집</a>",
            ),
            ("![[Deploy]]", "<a href=\"/notes/Harbor/Runbooks/Deploy.md\">Deploy</a>"),
            ("[[Nowhere]]", "<p>Nowhere</p>"),
            ("![[diagram.png]]", "<p>diagram.png</p>"),
        ];
        for (src, expected) in cases {
            let html = render(src);
            assert!(html.contains(expected), "{src}: {html}");
        }
    }

    #[test]
    fn links_keep_only_safe_destinations() {
        let cases = [
            ("[a](https://example.com/x)", Some("https://example.com/x")),
            ("[a](mailto:a@b.c)", Some("mailto:a@b.c")),
            ("[a](#setup)", Some("#setup")),
            (
                "[a](Runbooks/Deploy.md#x)",
                Some("/notes/Harbor/Runbooks/Deploy.md#x"),
            ),
            (
                "[a](../People/Mina%20Park.md)",
                Some("/notes/People/Mina%20Park.md"),
            ),
            ("[a](javascript:alert(1))", None),
            ("[a](JavaScript:alert(1))", None),
            ("[a](data:text/html,x)", None),
            ("[a](../../etc/passwd)", None),
            ("[a](missing.md)", None),
            (
                "![a](https://example.com/i.png)",
                Some("https://example.com/i.png"),
            ),
            ("![a](local.png)", None),
        ];
        for (src, href) in cases {
            let html = render(src);
            match href {
                Some(href) => assert!(
                    html.contains(&format!("<a href=\"{href}\">a</a>")),
                    "{src}: {html}"
                ),
                None => assert_eq!(html, "<p>a</p>\n", "{src}"),
            }
        }
    }

    #[test]
    fn callouts_get_a_kind_and_a_title() {
        let html = render("> [!warning] Careful now\n> Never deploy on Friday.\n");
        assert!(
            html.contains("<blockquote class=\"markdown-alert-warning\">"),
            "{html}"
        );
        assert!(
            html.contains("<strong>Careful now</strong><br />"),
            "{html}"
        );
        assert!(html.contains("Never deploy on Friday."), "{html}");
        let html = render("> [!info]\n> Body\n");
        assert!(html.contains("<strong>Info</strong>"), "{html}");
        let html = render("> Just a quote\n");
        assert!(html.contains("<blockquote>\n<p>Just a quote</p>"), "{html}");
    }

    #[test]
    fn headings_get_ids_and_the_title_is_not_repeated() {
        let html = render("# Notes\n\nIntro\n\n## Roll back\n\n## Roll back\n\n## Étape 2: fini\n");
        assert!(!html.contains("<h1"), "{html}");
        assert!(html.contains("<h2 id=\"roll-back\">"), "{html}");
        assert!(html.contains("<h2 id=\"roll-back-1\">"), "{html}");
        assert!(html.contains("<h2 id=\"étape-2-fini\">"), "{html}");
        let html = render("# Another title\n");
        assert!(html.contains("<h1 id=\"another-title\">"), "{html}");
    }

    #[test]
    fn relative_paths_cannot_climb_out() {
        assert_eq!(join_relative("a/b", "../c.md").as_deref(), Some("a/c.md"));
        assert_eq!(join_relative("a", "./c.md").as_deref(), Some("a/c.md"));
        assert_eq!(join_relative("a", "/c.md").as_deref(), Some("c.md"));
        assert_eq!(join_relative("a", "../../c.md"), None);
        assert_eq!(join_relative("", ".."), None);
    }
}
