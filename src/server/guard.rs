//! The door check in front of every route: `Host`, `Origin` and an
//! announced body size, before any handler runs.
//!
//! A web page can make a browser talk to noggin on loopback by rebinding its
//! own name to 127.0.0.1 (DNS rebinding); the browser then sends that name as
//! `Host`, and `Origin` names the page. So a request is served only when its
//! host is a loopback name (`localhost`, `127.0.0.1`, `[::1]`, …), the address
//! noggin listens on, or one allowed with `--allowed-host`; and when it
//! carries an `Origin`, only when that is the very origin it is addressed to
//! (the card calling its own server) or one allowed with `--allowed-origin`.
//! Anything else gets 403 in the API's error shape. No CORS headers are ever
//! sent, so other origins cannot read responses either way.
//!
//! A `Content-Length` over the body limit is answered 413 at once, without
//! reading a byte of the body.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiError;
use super::AppState;

/// Who may knock: hosts and origins, lower-cased.
#[derive(Debug, Clone, Default)]
pub struct DoorRules {
    /// Listening on every interface (`0.0.0.0`, `[::]`): any IP address is
    /// one of ours, so every IP literal is served (a rebinding page always
    /// uses a name, never an address).
    pub any_ip: bool,
    /// Host names (no port) served besides the loopback names.
    pub hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) served besides a request's own.
    pub origins: Vec<String>,
}

impl DoorRules {
    /// The rules of a server listening on `addr` with these extra hosts and
    /// origins.
    pub fn new(addr: std::net::SocketAddr, hosts: &[String], origins: &[String]) -> DoorRules {
        let mut all_hosts: Vec<String> = hosts
            .iter()
            .map(|h| normalize_host(strip_port(h)))
            .collect();
        if !addr.ip().is_unspecified() {
            all_hosts.push(normalize_host(&addr.ip().to_string()));
        }
        DoorRules {
            any_ip: addr.ip().is_unspecified(),
            hosts: all_hosts,
            origins: origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// True when `host` (a `Host` header value, port and all) may be served.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = normalize_host(strip_port(host));
        is_loopback_name(&name)
            || self.hosts.contains(&name)
            || (self.any_ip && ip_literal(&name).is_some())
    }

    /// True when a request addressed to `host` may come from `origin`.
    pub fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        // Same origin: the page was loaded from the server it calls.
        let Some(host) = host else { return false };
        origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| rest == host.to_ascii_lowercase() && self.host_allowed(rest))
    }
}

/// `example.com:80` → `example.com`; `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> &str {
    let host = host.trim();
    if let Some(end) = host.find(']') {
        return &host[..=end];
    }
    match host.rsplit_once(':') {
        // More than one colon without brackets: a bare IPv6 address.
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

/// Lower case, no trailing dot, IPv6 in brackets.
fn normalize_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host
    }
}

fn ip_literal(name: &str) -> Option<std::net::IpAddr> {
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    bare.parse().ok()
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name.ends_with(".localhost")
        || ip_literal(name).is_some_and(|ip| ip.is_loopback())
}

fn forbidden(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, code, message)
}

/// The middleware: refuses foreign hosts and origins, bodies announced too
/// large, and bodies sent compressed.
pub async fn check_door(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let rules = &state.config.door;
    let headers = request.headers();
    // HTTP/1.1 requires Host; without one (HTTP/1.0 tools) the authority of
    // the request target, if any, is checked instead. Browsers always send it.
    let host = headers
        .get(header::HOST)
        .map(|h| h.to_str().unwrap_or("\u{0}"))
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    if let Some(host) = host {
        if !rules.host_allowed(host) {
            return Err(forbidden(
                "forbidden-host",
                "this Host is not served; noggin answers loopback names and hosts allowed with --allowed-host",
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("\u{0}");
        if !rules.origin_allowed(origin, host) {
            return Err(forbidden(
                "forbidden-origin",
                "requests from this Origin are not served; allow it with --allowed-origin",
            ));
        }
    }
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = body_limit(request.uri().path(), state.config.max_body_bytes);
    if announced.is_some_and(|n| n > limit as u64) {
        let why = if limit == state.config.max_body_bytes {
            "--max-body-bytes"
        } else {
            "the limit of this route"
        };
        // A client still sending its body when the connection closes sees
        // a broken pipe, not the 413 (Node's fetch, Python's urllib): a body
        // of a reasonable size is read and dropped first, within the body
        // time limit. A larger one is not read, nor one whose client waits
        // to be told to send it (`Expect: 100-continue`): it is told no.
        let waits = headers
            .get(header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        if !waits && announced.is_some_and(|n| n <= DRAIN_BYTES) {
            drain(request.into_body()).await;
        }
        return Err(body_too_large(limit, why));
    }
    // A compressed body would be read as malformed JSON: say what is wrong.
    if let Some(encoding) = headers.get(header::CONTENT_ENCODING) {
        let encoding = encoding.to_str().unwrap_or("?").trim();
        if !encoding.eq_ignore_ascii_case("identity") {
            let refusal = format!(
                "noggin reads bodies as sent, without Content-Encoding ({}); send it uncompressed",
                crate::text::one_line(encoding)
            );
            // Read first, so that the client is not cut off mid-send.
            if announced.is_some_and(|n| n <= DRAIN_BYTES) {
                drain(request.into_body()).await;
            }
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                refusal,
            ));
        }
    }
    Ok(next.run(request).await)
}

/// Largest refused body that is read (and dropped) before the 413.
const DRAIN_BYTES: u64 = 16 << 20;

/// Reads a body to its end (or its first error, such as the body time
/// limit), keeping none of it.
async fn drain(body: axum::body::Body) {
    use futures_util::StreamExt;
    let mut chunks = body.into_data_stream();
    while let Some(Ok(_)) = chunks.next().await {}
}

/// The refusal of a body over `limit` bytes; `why` names the limit.
pub(super) fn body_too_large(limit: usize, why: &str) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body-too-large",
        format!("the body is larger than {limit} bytes ({why})"),
    )
}

/// The body limit of a route: the server's, except where the body is a
/// file (a trajectory may be up to 10 MiB, whatever --max-body-bytes says),
/// or may carry one (an MCP call of `analyze_trajectory`).
pub(super) fn body_limit(path: &str, server_limit: usize) -> usize {
    if path == "/v1/trajectories/analyze" {
        crate::trajectory::MAX_TRAJECTORY_BYTES
    } else if path == "/mcp" || path.starts_with("/mcp/") {
        crate::mcp::MAX_HTTP_BODY_BYTES
    } else {
        server_limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> DoorRules {
        DoorRules::new(
            "192.168.1.5:7431".parse().unwrap(),
            &["Notes.Example".to_string()],
            &["https://app.example/".to_string()],
        )
    }

    #[test]
    fn hosts() {
        let r = rules();
        for ok in [
            "localhost",
            "localhost:7431",
            "LOCALHOST.",
            "127.0.0.1:7431",
            "127.1.2.3",
            "[::1]:7431",
            "::1",
            "192.168.1.5:7431",
            "notes.example:80",
            "card.localhost:1",
        ] {
            assert!(r.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:7431",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "192.168.1.6",
            "",
            "[::2]:80",
        ] {
            assert!(!r.host_allowed(bad), "{bad}");
        }
        let everywhere = DoorRules::new("0.0.0.0:7431".parse().unwrap(), &[], &[]);
        assert!(everywhere.host_allowed("10.1.2.3:7431"));
        assert!(!everywhere.host_allowed("evil.example"));
    }

    #[test]
    fn origins() {
        let r = rules();
        let host = Some("127.0.0.1:7431");
        assert!(r.origin_allowed("http://127.0.0.1:7431", host));
        assert!(r.origin_allowed("https://app.example", host));
        assert!(!r.origin_allowed("http://localhost:7431", host));
        assert!(!r.origin_allowed("http://127.0.0.1:3000", host));
        assert!(!r.origin_allowed("http://evil.example", host));
        assert!(!r.origin_allowed("null", host));
        assert!(!r.origin_allowed("http://evil.example", Some("evil.example")));
        assert!(!r.origin_allowed("http://127.0.0.1:7431", None));
    }
}
