//! One note: `GET /v1/notes/{path}` (markdown source and metadata) and
//! `GET /notes/{path}` (rendered for the card's links).
//!
//! Paths are confined to the brain: hidden folders, `..`, non-notes and
//! symlinks that leave the brain are all "not found". Rendering escapes raw
//! HTML in the note (it is shown as text), turns `[[wikilinks]]` into links
//! to other notes, and keeps only link targets that cannot run script.

use std::collections::HashMap;
use std::path::Path;

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use pulldown_cmark::{CowStr, Event, HeadingLevel, LinkType, Parser, Tag, TagEnd};
use serde::Serialize;

use super::error::ApiError;
use super::AppState;
use crate::brain::parse::{markdown_options, parse_note, split_frontmatter};
use crate::brain::scan::{read_note_text, scan_brain, stat_note, NoteFile};
use crate::index::search::{escape_html, rfc3339};

pub fn api_router() -> Router<AppState> {
    Router::new().route("/v1/notes/{*path}", get(note_json))
}

pub fn page_router() -> Router<AppState> {
    Router::new().route("/notes/{*path}", get(note_page))
}

/// Characters escaped in a path segment of a note URL.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'\\')
    .add(b'[')
    .add(b']')
    .add(b'^')
    .add(b'|');

/// The card's URL of a note: `/notes/` and the percent-encoded path.
pub fn note_url(path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    format!("/notes/{}", segments.join("/"))
}

/// The note at `path` when it is a note inside the brain.
fn find_note(state: &AppState, path: &str) -> Option<NoteFile> {
    let path = path.trim_start_matches('/');
    match stat_note(state.index.brain(), path, state.config.brain.max_note_bytes) {
        Ok(found) => found,
        Err(error) => {
            tracing::debug!(%error, path, "note not served");
            None
        }
    }
}

/// `GET /v1/notes/{path}`.
#[derive(Serialize)]
struct NoteSource {
    path: String,
    title: String,
    tags: Vec<String>,
    /// `YYYY-MM-DD` from the frontmatter or file name, if any.
    created: Option<String>,
    /// RFC 3339.
    modified: String,
    size: u64,
    source: String,
}

async fn note_json(
    State(state): State<AppState>,
    UrlPath(path): UrlPath<String>,
) -> Result<Json<NoteSource>, ApiError> {
    let not_found = || ApiError::not_found(format!("no note {path:?} in the brain"));
    let file = find_note(&state, &path).ok_or_else(not_found)?;
    let source = read_note_text(&file).map_err(|_| not_found())?;
    let note = parse_note(&file.rel_path, &source);
    Ok(Json(NoteSource {
        path: file.rel_path,
        title: note.title,
        tags: note.tags,
        created: note.created.map(|d| d.to_string()),
        modified: rfc3339(file.mtime_ns / 1_000_000_000),
        size: file.size,
        source,
    }))
}

async fn note_page(State(state): State<AppState>, UrlPath(path): UrlPath<String>) -> Response {
    let Some(file) = find_note(&state, &path) else {
        return not_found_page(&path);
    };
    let Ok(source) = read_note_text(&file) else {
        return not_found_page(&path);
    };
    let brain = state.index.brain().to_path_buf();
    let max = state.config.brain.max_note_bytes;
    let rendered = tokio::task::spawn_blocking(move || {
        let mut links = LinkResolver::new(&brain, max);
        render_page(&file.rel_path, &source, &mut links)
    })
    .await;
    match rendered {
        Ok(html) => Html(html).into_response(),
        Err(error) => ApiError::internal(error).into_response(),
    }
}

fn not_found_page(path: &str) -> Response {
    let body = page(
        "Note not found",
        &format!(
            "<article class=\"note\"><h1>Note not found</h1><p>There is no note <code>{}</code> in this brain.</p></article>",
            escape_html(path)
        ),
    );
    (
        StatusCode::NOT_FOUND,
        [(header::CACHE_CONTROL, "no-store")],
        Html(body),
    )
        .into_response()
}

/// A whole HTML page around `main`, with the card's stylesheet.
fn page(title: &str, main: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · noggin</title>\n<link rel=\"stylesheet\" href=\"/assets/card.css\">\n</head>\n\
         <body>\n<div class=\"page\">\n<nav class=\"crumbs\"><a href=\"/\">← Back to the card</a></nav>\n\
         <main id=\"main\">\n{main}\n</main>\n</div>\n</body>\n</html>\n",
        escape_html(title)
    )
}

/// Finds the note a wikilink points at: by path, else by file name or title
/// (case-insensitive), the shortest path winning.
pub struct LinkResolver<'a> {
    brain: &'a Path,
    max_note_bytes: u64,
    by_name: Option<HashMap<String, String>>,
}

impl<'a> LinkResolver<'a> {
    pub fn new(brain: &'a Path, max_note_bytes: u64) -> Self {
        LinkResolver {
            brain,
            max_note_bytes,
            by_name: None,
        }
    }

    pub fn resolve(&mut self, target: &str) -> Option<String> {
        let target = target
            .split(['#', '^'])
            .next()?
            .trim()
            .trim_start_matches('/');
        if target.is_empty() {
            return None;
        }
        for candidate in [target.to_string(), format!("{target}.md")] {
            if let Ok(Some(file)) = stat_note(self.brain, &candidate, self.max_note_bytes) {
                return Some(file.rel_path);
            }
        }
        let brain = self.brain;
        let max = self.max_note_bytes;
        let by_name = self.by_name.get_or_insert_with(|| {
            let mut map: HashMap<String, String> = HashMap::new();
            if let Ok((files, _)) = scan_brain(brain, max) {
                for file in files {
                    let name = file.rel_path.rsplit('/').next().unwrap_or(&file.rel_path);
                    let stem = name
                        .strip_suffix(".md")
                        .or_else(|| name.strip_suffix(".markdown"))
                        .unwrap_or(name)
                        .to_lowercase();
                    let shorter = map.get(&stem).is_none_or(|p| p.len() > file.rel_path.len());
                    if shorter {
                        map.insert(stem, file.rel_path);
                    }
                }
            }
            map
        });
        let name = target.rsplit('/').next().unwrap_or(target).to_lowercase();
        let name = name.strip_suffix(".md").unwrap_or(&name);
        by_name.get(name).cloned()
    }
}

/// True for link targets that cannot run script: http(s), mailto, in-page
/// anchors and relative paths.
fn is_safe_url(url: &str) -> bool {
    let url = url.trim();
    let scheme_end = url.find(':');
    let first_slash = url.find(['/', '?', '#']);
    match scheme_end {
        None => true,
        Some(colon) if first_slash.is_some_and(|s| s < colon) => true,
        Some(_) => {
            let lower = url.to_ascii_lowercase();
            lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower.starts_with("mailto:")
        }
    }
}

/// A link target for the card: wikilinks and relative `.md` links become
/// note URLs, unsafe targets are dropped (`None`).
fn link_target(
    link_type: LinkType,
    dest: &str,
    note_dir: &str,
    links: &mut LinkResolver<'_>,
) -> Option<String> {
    if matches!(link_type, LinkType::WikiLink { .. }) {
        return links.resolve(dest).map(|p| note_url(&p));
    }
    if !is_safe_url(dest) {
        return None;
    }
    let path_part = dest.split('#').next().unwrap_or(dest);
    let decoded = percent_encoding::percent_decode_str(path_part).decode_utf8_lossy();
    if !dest.contains(':') && (decoded.ends_with(".md") || decoded.ends_with(".markdown")) {
        let joined = if note_dir.is_empty() || decoded.starts_with('/') {
            decoded.trim_start_matches('/').to_string()
        } else {
            format!("{note_dir}/{decoded}")
        };
        return links.resolve(&joined).map(|p| note_url(&p));
    }
    Some(dest.to_string())
}

/// The note rendered as a page.
pub fn render_page(rel_path: &str, source: &str, links: &mut LinkResolver<'_>) -> String {
    let note = parse_note(rel_path, source);
    let (_, body) = split_frontmatter(source);
    let (html, has_h1) = render_markdown(rel_path, body, links);
    let mut main = String::from("<article class=\"note\">\n<header class=\"note-head\">\n");
    main.push_str(&format!(
        "<p class=\"note-path\">{}</p>\n",
        escape_html(rel_path)
    ));
    if !has_h1 {
        main.push_str(&format!("<h1>{}</h1>\n", escape_html(&note.title)));
    }
    if !note.tags.is_empty() {
        main.push_str("<ul class=\"tags\" aria-label=\"Tags\">");
        for tag in &note.tags {
            main.push_str(&format!("<li>#{}</li>", escape_html(tag)));
        }
        main.push_str("</ul>\n");
    }
    main.push_str("</header>\n<div class=\"note-body\">\n");
    main.push_str(&html);
    main.push_str("</div>\n</article>");
    page(&note.title, &main)
}

/// Markdown to HTML with raw HTML escaped; also tells whether the note has
/// its own top-level heading.
fn render_markdown(rel_path: &str, body: &str, links: &mut LinkResolver<'_>) -> (String, bool) {
    let note_dir = rel_path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let mut has_h1 = false;
    // For every open link or image: whether its start tag was kept.
    let mut open: Vec<bool> = Vec::new();
    let mut events = Vec::new();
    for event in Parser::new_ext(body, markdown_options()) {
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Heading {
                level: HeadingLevel::H1,
                ..
            }) => {
                has_h1 = true;
                events.push(event);
            }
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
            }) => {
                // Images become links: the card loads nothing a note names.
                match link_target(link_type, &dest_url, &note_dir, links) {
                    Some(target) => {
                        open.push(true);
                        events.push(Event::Start(Tag::Link {
                            link_type: LinkType::Inline,
                            dest_url: CowStr::from(target),
                            title,
                            id,
                        }));
                    }
                    None => open.push(false),
                }
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
                if open.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            other => events.push(other),
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    (html, has_h1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("People")).unwrap();
        std::fs::write(dir.path().join("People/Mina Park.md"), "# Mina").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut links = LinkResolver::new(&root, 1 << 20);
        render_markdown("Notes/a.md", source, &mut links).0
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = render("Hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn wikilinks_link_to_notes() {
        let html = render("Ask [[Mina Park]] or [[Mina Park|Mina]] or [[Nobody]].");
        assert!(
            html.contains("<a href=\"/notes/People/Mina%20Park.md\">Mina Park</a>"),
            "{html}"
        );
        assert!(html.contains(">Mina</a>"), "{html}");
        assert!(
            html.contains("Nobody") && !html.contains("Nobody</a>"),
            "{html}"
        );
    }

    #[test]
    fn unsafe_links_and_images_are_defused() {
        let html =
            render("[x](javascript:alert(1)) ![y](https://example.com/p.png) [z](https://a.b/c)");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<a href=\"https://example.com/p.png\">y</a>"),
            "{html}"
        );
        assert!(html.contains("<a href=\"https://a.b/c\">z</a>"), "{html}");
    }

    #[test]
    fn note_urls_are_encoded() {
        assert_eq!(
            note_url("한국어/팀 소개.md"),
            "/notes/%ED%95%9C%EA%B5%AD%EC%96%B4/%ED%8C%80%20%EC%86%8C%EA%B0%9C.md"
        );
        assert_eq!(note_url("a/b#c?.md"), "/notes/a/b%23c%3F.md");
    }
}
