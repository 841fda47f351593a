//! One note of the brain: `GET /v1/notes/{path}` (its markdown source and
//! metadata, as JSON) and `GET /notes/{path}` (rendered to an HTML page, the
//! target of the card's source links).
//!
//! A path is served only when it names a note noggin would index: relative,
//! without `..` or hidden parts, with a note extension, and (after following
//! symlinks) inside the brain. Everything else is a plain 404, so a caller
//! cannot tell a file outside the brain from one that does not exist.
//!
//! A page opened from a session's card (`?session=`) leads back to it.

use std::cell::OnceCell;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde::Deserialize;

use super::error::ApiError;
use super::render::{render_body, LinkResolver};
use super::AppState;
use crate::app::{LoadedNote, NoteView};
use crate::brain::names::{link_target, NoteNames};
use crate::brain::parse::{parse_note, split_frontmatter};
use crate::index::search::{escape_html, rfc3339};
use crate::index::Index;

/// `GET /v1/notes/{path}`, behind the API's token check.
pub fn api_router() -> Router<AppState> {
    Router::new().route("/v1/notes/{*path}", get(note_json))
}

/// `GET /notes/{path}`: the page checks the token itself (see
/// [`super::card::authorized_for_pages`]) because a link cannot send a header.
pub fn page_router() -> Router<AppState> {
    Router::new().route("/notes/{*path}", get(note_page))
}

async fn note_json(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<NoteView>, ApiError> {
    let Ok(Path(rel_path)) = path else {
        return Err(ApiError::not_found("no such note in the brain"));
    };
    Ok(Json(state.app.read_note(rel_path).await?))
}

#[derive(Deserialize)]
struct PageParams {
    session: Option<String>,
}

/// The card a page leads back to: the session's it was opened from, if
/// that is a session name at all, else the latest of all.
fn back_to_card(params: Result<Query<PageParams>, QueryRejection>) -> String {
    match params.ok().and_then(|Query(p)| p.session) {
        Some(session) if crate::context::validate_session_id(&session).is_ok() => {
            format!(
                "/?session={}",
                utf8_percent_encode(&session, NON_ALPHANUMERIC)
            )
        }
        _ => "/".to_string(),
    }
}

async fn note_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
    params: Result<Query<PageParams>, QueryRejection>,
) -> Response {
    let back = back_to_card(params);
    if !super::card::authorized_for_pages(&state, &headers) {
        return page_response(
            StatusCode::UNAUTHORIZED,
            "Token needed",
            &message_html(
                "This noggin needs its token",
                "Open the card with its token first (http://HOST:PORT/#token=…); \
                 it lets this browser tab open the notes it links to.",
                &back,
            ),
            &back,
        );
    }
    let not_found = || {
        page_response(
            StatusCode::NOT_FOUND,
            "Note not found",
            &message_html(
                "Note not found",
                "There is no note at this address in the brain. It may have been \
                 renamed or deleted since the card linked to it.",
                &back,
            ),
            &back,
        )
    };
    let Ok(Path(rel_path)) = path else {
        return not_found();
    };
    let app = state.app.clone();
    let rendered = tokio::task::spawn_blocking(move || {
        let note = app.load_note(&rel_path).ok().flatten()?;
        Some(render_page(app.index(), app.max_note_bytes(), &note))
    })
    .await
    .ok()
    .flatten();
    match rendered {
        Some((title, html)) => page_response(StatusCode::OK, &title, &html, &back),
        None => not_found(),
    }
}

/// The note's `<article>`: path, title, tags, date and body.
fn render_page(index: &Index, max_note_bytes: u64, note: &LoadedNote) -> (String, String) {
    let path = &note.file.rel_path;
    let parsed = parse_note(path, &note.source);
    let source = note.source.strip_prefix('\u{feff}').unwrap_or(&note.source);
    let (_, body) = split_frontmatter(source);
    let links = BrainLinks {
        index,
        max_note_bytes,
        from: path,
        notes: OnceCell::new(),
    };
    let body_html = render_body(body, path, &parsed.title, &links);

    let mut html = String::with_capacity(body_html.len() + 1024);
    html.push_str("<article class=\"note\">\n<header class=\"note-header\">\n");
    // The path and title are the note's own text: `dir="auto"` isolates
    // them, so a direction override in them stays in them.
    html.push_str(&format!(
        "<p class=\"note-path\" dir=\"auto\">{}</p>\n<h1 dir=\"auto\">{}</h1>\n<p class=\"note-meta\">",
        escape_html(path),
        escape_html(&parsed.title)
    ));
    let modified = rfc3339(note.file.mtime_ns / 1_000_000_000);
    html.push_str(&format!(
        "<span>Modified <time datetime=\"{}\">{}</time></span>",
        escape_html(&modified),
        escape_html(modified.get(..10).unwrap_or(&modified))
    ));
    if let Some(created) = parsed.created {
        html.push_str(&format!(
            "<span>Created <time datetime=\"{created}\">{created}</time></span>"
        ));
    }
    html.push_str("</p>\n");
    if !parsed.tags.is_empty() {
        html.push_str("<ul class=\"tags\" aria-label=\"Tags\">");
        for tag in &parsed.tags {
            html.push_str(&format!("<li class=\"tag\">#{}</li>", escape_html(tag)));
        }
        html.push_str("</ul>\n");
    }
    html.push_str("</header>\n<div class=\"note-body\">\n");
    html.push_str(&body_html);
    html.push_str("</div>\n</article>\n");
    (parsed.title, html)
}

/// Resolves a note's links against the brain on disk and, for titles, the
/// index. The brain is listed only when a note has a wikilink to resolve.
struct BrainLinks<'a> {
    index: &'a Index,
    max_note_bytes: u64,
    /// The note being rendered: of two notes with the same name, the one
    /// beside it wins.
    from: &'a str,
    notes: OnceCell<NoteNames>,
}

impl BrainLinks<'_> {
    fn names(&self) -> &NoteNames {
        self.notes
            .get_or_init(|| NoteNames::scan(self.index.brain(), self.max_note_bytes))
    }
}

impl LinkResolver for BrainLinks<'_> {
    fn wikilink(&self, target: &str) -> Option<String> {
        let target = link_target(target);
        self.names()
            .resolve(target, self.from)
            .or_else(|| self.index.note_titled(target))
    }

    fn is_note(&self, rel_path: &str) -> bool {
        self.names().contains(rel_path)
    }
}

/// A short message for the 401 and 404 pages.
/// What an address no route serves answers: a page for a browser (a
/// mistyped address, `/notes/` without a note), the JSON error otherwise.
pub(super) async fn no_such_page(headers: HeaderMap) -> Response {
    let browser = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if !browser {
        return ApiError::not_found("no such route").into_response();
    }
    page_response(
        StatusCode::NOT_FOUND,
        "Not found",
        &message_html(
            "Nothing here",
            "noggin serves its card at / and the notes of the brain under /notes/.",
            "/",
        ),
        "/",
    )
}

fn message_html(heading: &str, text: &str, back: &str) -> String {
    format!(
        "<section class=\"message\">\n<h1>{}</h1>\n<p>{}</p>\n<p><a href=\"{}\">Back to the card</a></p>\n</section>\n",
        escape_html(heading),
        escape_html(text),
        escape_html(back)
    )
}

/// A full page around `main_html` (already escaped), styled like the card,
/// with a link `back` to the card.
fn page_response(status: StatusCode, title: &str, main_html: &str, back: &str) -> Response {
    let page = format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{fsi}{title}{pdi} · noggin</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/card.css">
</head>
<body class="page-note">
<a class="skip-link" href="#main">Skip to the note</a>
<header class="topbar">
<div class="wrap topbar-inner">
<a class="brand" href="/"><img src="/favicon.svg" alt="" width="28" height="28"><span>noggin</span></a>
<a class="back-link" href="{back}">Back to the card</a>
</div>
</header>
<main id="main" class="wrap">
{main_html}</main>
</body>
</html>
"##,
        title = escape_html(title),
        // First-strong isolate and its end: a direction override in the
        // title cannot turn " · noggin" around in the tab.
        fsi = '\u{2068}',
        pdi = '\u{2069}',
        back = escape_html(back),
    );
    (status, Html(page)).into_response()
}
