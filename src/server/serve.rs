//! Accepting and serving connections, with limits a hostile client cannot
//! get around.
//!
//! `axum::serve` keeps a connection open for as long as the client likes; a
//! few thousand clients that send half a header, a body at one byte a second
//! or nothing at all used to exhaust noggin's file descriptors. Here every
//! connection is served by hyper's HTTP/1 builder with a header-read timeout
//! (hyper starts that clock whenever it waits for a request head, so it also
//! ends idle keep-alive connections), every request body must arrive whole
//! within a deadline (a body trickled a byte at a time would otherwise hold
//! its connection for ever), and at most `max_connections` at once: a connection beyond that
//! gets a 503 and is closed. When `accept` itself fails because the process
//! is out of file descriptors, one descriptor kept in reserve is given up to
//! accept the waiting client, answer it 503 and close it, and accepting
//! pauses briefly instead of spinning; it resumes by itself once descriptors
//! are free again. Shutdown is graceful: no new connections, idle ones are
//! closed, requests in flight finish.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::Router;
use hyper::body::{Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

/// Limits on each connection and on their number.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// A request head must arrive within this, counted from when the server
    /// waits for it (also between requests on a kept-alive connection).
    pub header_timeout: Duration,
    /// A request body must arrive whole within this, counted from its head.
    pub body_timeout: Duration,
    /// Connections served at once; more are answered 503 and closed.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
        }
    }
}

/// The error of a request body that did not arrive whole in time.
#[derive(Debug)]
pub struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimedOut {}

/// A request body that fails with [`BodyTimedOut`] once its deadline
/// passes before its end.
struct DeadlineBody {
    inner: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl DeadlineBody {
    fn new(inner: Body, timeout: Duration) -> Self {
        DeadlineBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

impl hyper::body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Pause of the accept loop after it failed (out of descriptors, mostly).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How long writing a 503 to a refused client may take.
const REFUSE_TIMEOUT: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `shutdown` resolves, then tells endless
/// responses to end (`closing`) and waits for the connections to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    closing: Arc<watch::Sender<bool>>,
) -> std::io::Result<()> {
    let body_timeout = limits.body_timeout;
    let service = tower::ServiceBuilder::new()
        .map_request(
            move |request: axum::extract::Request<hyper::body::Incoming>| {
                request.map(|body| Body::new(DeadlineBody::new(Body::new(body), body_timeout)))
            },
        )
        .service(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    // Turns true on shutdown: every connection then finishes what it is
    // doing and closes.
    let (stop, stopped) = watch::channel(false);
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut reserve = reserve_descriptor();
    tokio::pin!(shutdown);
    loop {
        // Shutdown first: a stream of clients cannot keep it from being seen.
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream =
            match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) if crate::knowledge::is_out_of_descriptors(&error) => {
                    tracing::warn!(%error, "out of file descriptors; refusing a client with 503");
                    // Give up the reserve to answer one waiting client, so it
                    // hears why instead of hanging in the backlog.
                    drop(reserve.take());
                    let refused =
                        match tokio::time::timeout(Duration::from_millis(10), listener.accept())
                            .await
                        {
                            Ok(Ok((stream, _))) => {
                                refuse(stream).await;
                                true
                            }
                            _ => false,
                        };
                    reserve = reserve_descriptor();
                    if !refused {
                        // Nothing could be done now: pause instead of spinning.
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                    continue;
                }
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a connection; pausing");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::warn!(
                max = limits.max_connections,
                "too many connections; refusing one with 503"
            );
            tokio::spawn(refuse(stream));
            continue;
        };
        if reserve.is_none() {
            reserve = reserve_descriptor();
            if reserve.is_none() {
                // The reserve was taken by something else in the process while
                // it was given up: this connection used the last descriptor.
                // Refuse it, so the reserve comes back before the next client.
                drop(permit);
                refuse(stream).await;
                reserve = reserve_descriptor();
                continue;
            }
        }
        let _ = stream.set_nodelay(true);
        let connection = http
            .serve_connection(
                TokioIo::new(stream),
                TowerToHyperService::new(service.clone()),
            )
            .with_upgrades();
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = ended {
                // Timeouts and clients that went away: routine, not errors.
                tracing::debug!(%error, "connection ended");
            }
            drop(permit);
        });
    }
    drop(listener);
    closing.send_replace(true);
    stop.send_replace(true);
    // Every connection gives its permit back when it has ended.
    let all = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
    Ok(())
}

/// A descriptor held only so it can be closed when accept runs out of them.
fn reserve_descriptor() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

/// Errors of one connection (it went away before it was accepted), after
/// which accepting goes on at once.
fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Answers 503 in the API's error shape and closes the connection, without
/// waiting on the client: the accept loop calls it when out of descriptors.
async fn refuse(mut stream: TcpStream) {
    let body = serde_json::json!({"error": {
        "code": "busy",
        "message": "noggin has too many open connections; try again in a moment",
    }})
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // Take what the client already sent, so that closing does not reset
    // the connection before it has read the answer.
    let mut sink = [0u8; 8192];
    while matches!(stream.try_read(&mut sink), Ok(n) if n > 0) {}
    let _ = tokio::time::timeout(REFUSE_TIMEOUT, async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}
