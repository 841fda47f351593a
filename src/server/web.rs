//! The web card's static files (the `web/` folder, embedded in the binary)
//! and the security headers that every response carries.

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rust_embed::RustEmbed;

use super::error::ApiError;
use super::AppState;

#[derive(RustEmbed)]
#[folder = "web/"]
struct Assets;

/// Only noggin's own files run or style a page: a note that slipped through
/// as HTML still could not run a script, load a style or frame the card.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

/// `GET /` and every file of `web/` at `/<name>`.
pub fn router() -> Router<AppState> {
    let mut router = Router::new().route("/", get(|| async { asset("index.html") }));
    for name in Assets::iter().filter(|name| name != "index.html") {
        let path = format!("/{name}");
        router = router.route(&path, get(move || async move { asset(&name) }));
    }
    router
}

fn asset(name: &str) -> Response {
    let Some(file) = Assets::get(name) else {
        return ApiError::not_found("no such file").into_response();
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type(name)),
            // Embedded files change only with the binary; revalidating is cheap.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        file.data,
    )
        .into_response()
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Adds the security headers to a response: the content security policy,
/// no MIME sniffing, and no referrer (note paths stay in noggin).
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        HeaderName::from_static("x-frame-options"),
        HeaderValue::from_static("DENY"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_files_are_embedded() {
        for name in ["index.html", "card.css", "card.js", "favicon.svg"] {
            assert!(Assets::get(name).is_some(), "{name} is missing from web/");
        }
    }
}
