//! The web card's static files (`web/`, embedded in the binary) and the
//! security headers every response carries.

use axum::extract::Path;
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rust_embed::RustEmbed;
use tower_http::set_header::SetResponseHeaderLayer;

use super::AppState;

#[derive(RustEmbed)]
#[folder = "web/"]
struct Assets;

/// No inline script or style, nothing from elsewhere: a note that slips
/// through as HTML still cannot run.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { asset("index.html") }))
        .route(
            "/assets/{*file}",
            get(|Path(file): Path<String>| async move { asset(&file) }),
        )
}

fn asset(name: &str) -> Response {
    let Some(file) = Assets::get(name) else {
        return super::error::ApiError::not_found("no such file").into_response();
    };
    let content_type = match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        file.data,
    )
        .into_response()
}

/// The security headers, as layers for the whole app.
pub fn security_headers() -> [SetResponseHeaderLayer<HeaderValue>; 4] {
    let set = |name: HeaderName, value: &'static str| {
        SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value))
    };
    [
        set(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        set(header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        set(header::REFERRER_POLICY, "no-referrer"),
        set(header::X_FRAME_OPTIONS, "DENY"),
    ]
}
