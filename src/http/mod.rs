//! A bounded HTTP/1.1 server: an [`axum::Router`] served by hyper on a tokio runtime of its
//! own thread, with every resource a client can hold capped. The metrics endpoint stands on
//! it; the OTG server will too.
//!
//! # What a client can hold ([`Limits`])
//!
//! - **Connections**: at most [`Limits::max_connections`] at once. A connection beyond the
//!   cap is taken, and the one that moved no byte for the longest is closed to make room: a
//!   client that opens a thousand connections and sends nothing keeps a new scraper out for
//!   no longer than its own request takes.
//! - **Request head**: it must arrive within [`Limits::header_read_timeout`] (counted from
//!   the connection's start, or from the end of the previous response on a kept-alive one,
//!   so this is also the keep-alive idle time). A head begun and not finished by then is
//!   answered `408 Request Timeout`; an idle connection is closed. A head longer than
//!   [`Limits::max_header_bytes`], or with more than [`Limits::max_headers`] fields, is
//!   answered `431 Request Header Fields Too Large` and the connection closed.
//! - **Progress**: a connection that moves no byte either way for [`Limits::idle_timeout`]
//!   is closed, whatever it is doing (a client that pipelines requests without reading the
//!   answers stalls its own connection, and only that, until then).
//! - **Body**: a declared `Content-Length` above [`Limits::max_body_bytes`] is answered
//!   `413 Payload Too Large` before any handler runs; a chunked body is cut off at the same
//!   size (an extractor reading it answers 413). A request whose handler (body included)
//!   has not answered within [`Limits::request_timeout`] is answered `408`.
//! - **Memory**: per connection, one read buffer of at most [`Limits::max_header_bytes`]
//!   (rounded up to hyper's 8 KiB minimum) plus at most 64 KiB, and one response at a time.
//!
//! Unknown paths and methods are the router's to answer (404, 405 with `Allow`); `HEAD` is
//! answered like `GET` without the body (axum's `get` routes take `HEAD`).
//!
//! # Shutdown ends on time
//!
//! [`Server::stop`] (or dropping the [`Server`]) closes the listening socket, lets requests
//! in flight finish for at most [`Limits::shutdown_grace`], then drops every connection,
//! whatever its client is doing; it returns within that grace and a fraction of a second.
//! Nothing of the server runs on the caller's threads: a client can slow only the server's
//! own thread, never a sender.

#[cfg(test)]
mod tests;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// What a client may hold of the server; [`Limits::default`] gives the numbers the README
/// documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once (default 64); beyond it the least active one is closed.
    pub max_connections: usize,
    /// Time to receive a request's head, and the keep-alive idle time (default 10 s).
    pub header_read_timeout: Duration,
    /// A connection that moves no byte either way for this long is closed (default 30 s).
    pub idle_timeout: Duration,
    /// Largest request head, request line and fields together (default 16 KiB).
    pub max_header_bytes: usize,
    /// Most header fields in a request (default 64).
    pub max_headers: usize,
    /// Largest request body (default 64 KiB).
    pub max_body_bytes: usize,
    /// Time for a handler, reading the body included, to answer (default 30 s).
    pub request_timeout: Duration,
    /// How long requests in flight may finish once the server stops (default 1 s).
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 64,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_header_bytes: 16 * 1024,
            max_headers: 64,
            max_body_bytes: 64 * 1024,
            request_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(1),
        }
    }
}

/// hyper's smallest read buffer.
const MIN_BUF: usize = 8 * 1024;

/// Room above the head's bound in a connection's read buffer (for a body's chunks).
const BODY_BUF: usize = 64 * 1024;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("preparing the listening socket: {0}")]
    Socket(io::Error),
    #[error("starting the HTTP runtime: {0}")]
    Runtime(io::Error),
    #[error("starting the HTTP server thread: {0}")]
    Spawn(io::Error),
}

/// A running server; it stops (on time) when dropped.
pub struct Server {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    done: std::sync::mpsc::Receiver<()>,
    thread: Option<JoinHandle<()>>,
    grace: Duration,
}

impl Server {
    /// Serves `router` on `listener` (bound by the caller, so that a bad address is the
    /// caller's error and the socket is in the caller's network namespace) from a new
    /// thread named `name`.
    pub fn start(
        listener: std::net::TcpListener,
        router: Router,
        limits: Limits,
        name: &str,
    ) -> Result<Server, ServeError> {
        let addr = listener.local_addr().map_err(ServeError::Socket)?;
        listener.set_nonblocking(true).map_err(ServeError::Socket)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(2)
            .thread_name(format!("{name}-blocking"))
            .build()
            .map_err(ServeError::Runtime)?;
        let listener = {
            let _in_rt = rt.enter();
            TcpListener::from_std(listener).map_err(ServeError::Socket)?
        };
        let (stop, stopped) = watch::channel(false);
        let (done_tx, done) = std::sync::mpsc::channel();
        let grace = limits.shutdown_grace;
        let router = with_limits(router, &limits);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                rt.block_on(serve(listener, router, Arc::new(limits), stopped));
                // Whatever is left (connections past the grace, a handler's blocking
                // task) is dropped or left behind here, not waited for.
                rt.shutdown_timeout(Duration::from_millis(100));
                let _ = done_tx.send(());
            })
            .map_err(ServeError::Spawn)?;
        Ok(Server {
            addr,
            stop,
            done,
            thread: Some(thread),
            grace,
        })
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving: returns once the listening socket and every connection are closed,
    /// within [`Limits::shutdown_grace`] and a fraction of a second. Idempotent.
    pub fn stop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stop.send_replace(true);
        // The thread ends within the grace and the runtime's shutdown; should it not
        // (a bug), it is left behind rather than the caller held.
        match self.done.recv_timeout(self.grace + Duration::from_secs(2)) {
            Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let _ = thread.join();
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A plain-text answer.
pub fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The router behind the body and time bounds.
fn with_limits(router: Router, limits: &Limits) -> Router {
    let (max_body, timeout) = (limits.max_body_bytes, limits.request_timeout);
    router.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| async move {
            let declared = req
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            if declared.is_some_and(|n| n > max_body as u64) {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request body too large for this server\n",
                );
            }
            let req = req.map(|b| Body::new(http_body_util::Limited::new(b, max_body)));
            match tokio::time::timeout(timeout, next.run(req)).await {
                Ok(r) => r,
                Err(_) => text(
                    StatusCode::REQUEST_TIMEOUT,
                    "the request was not received and answered in time\n",
                ),
            }
        },
    ))
}

/// One connection's standing, for the cap and the idle check.
struct Standing {
    /// Milliseconds since the registry's epoch when a byte last moved.
    last: AtomicU64,
    /// Bytes were read since the last write: a request head is under way.
    reading: AtomicBool,
    /// Closed to make room; no longer counted.
    evicted: AtomicBool,
    evict: Notify,
}

/// The open connections.
struct Registry {
    epoch: Instant,
    next_id: AtomicU64,
    conns: Mutex<HashMap<u64, Arc<Standing>>>,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            conns: Mutex::new(HashMap::new()),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn touch(&self, s: &Standing) {
        s.last.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Registers a new connection; at the cap, first closes the one idle the longest.
    fn admit(&self, cap: usize) -> (u64, Arc<Standing>) {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let live = conns
            .values()
            .filter(|s| !s.evicted.load(Ordering::Relaxed))
            .count();
        // Least recently active first; among equals (the same millisecond), the oldest.
        if live >= cap.max(1)
            && let Some((_, oldest)) = conns
                .iter()
                .filter(|(_, s)| !s.evicted.load(Ordering::Relaxed))
                .min_by_key(|(id, s)| (s.last.load(Ordering::Relaxed), **id))
        {
            oldest.evicted.store(true, Ordering::Relaxed);
            oldest.evict.notify_one();
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let s = Arc::new(Standing {
            last: AtomicU64::new(self.now_ms()),
            reading: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
        });
        conns.insert(id, Arc::clone(&s));
        (id, s)
    }

    fn remove(&self, id: u64) {
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }
}

/// The accept loop, until `stop`; then the grace, then return (dropping what is left).
async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Arc<Limits>,
    mut stop: watch::Receiver<bool>,
) {
    let registry = Arc::new(Registry::new());
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .max_headers(limits.max_headers)
        .max_buf_size(limits.max_header_bytes.max(MIN_BUF) + BODY_BUF)
        .title_case_headers(true);
    let builder = Arc::new(builder);
    let mut conns = JoinSet::new();
    let conn_stop = stop.clone();
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let (id, standing) = registry.admit(limits.max_connections);
                    conns.spawn(connection(
                        stream,
                        id,
                        standing,
                        Arc::clone(&registry),
                        TowerToHyperService::new(router.clone()),
                        Arc::clone(&builder),
                        Arc::clone(&limits),
                        conn_stop.clone(),
                    ));
                }
                // Out of descriptors, or a connection reset before it was taken: wait a
                // little rather than spin, and go on.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(limits.shutdown_grace, async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    conns.abort_all();
}

/// The bytes of the one answer written outside hyper: to a head begun and not finished
/// within the header timeout, after hyper gave the connection up.
const REQUEST_TIMEOUT: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

#[allow(clippy::too_many_arguments)]
async fn connection(
    stream: TcpStream,
    id: u64,
    standing: Arc<Standing>,
    registry: Arc<Registry>,
    service: TowerToHyperService<Router>,
    builder: Arc<http1::Builder>,
    limits: Arc<Limits>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let stream = Arc::new(stream);
    let io = Tracked {
        stream: Arc::clone(&stream),
        standing: Arc::clone(&standing),
        registry: Arc::clone(&registry),
    };
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let mut stopping = false;
    let idle_ms = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
    loop {
        let last = standing.last.load(Ordering::Relaxed);
        let idle_at = registry.epoch + Duration::from_millis(last.saturating_add(idle_ms));
        tokio::select! {
            r = conn.as_mut() => {
                if r.is_err_and(|e| e.is_timeout()) && standing.reading.load(Ordering::Relaxed) {
                    let _ = stream.try_write(REQUEST_TIMEOUT);
                }
                break;
            }
            _ = standing.evict.notified() => break,
            _ = tokio::time::sleep_until(idle_at) => {
                if registry.now_ms().saturating_sub(standing.last.load(Ordering::Relaxed)) >= idle_ms {
                    break;
                }
            }
            _ = stop.wait_for(|s| *s), if !stopping => {
                // No new request on this connection; one in flight may finish.
                conn.as_mut().graceful_shutdown();
                stopping = true;
            }
        }
    }
    registry.remove(id);
}

/// The connection's socket, noting when bytes move (for the idle check and the 408). It
/// shares the socket with [`connection`], which writes the 408 after hyper gave up.
struct Tracked {
    stream: Arc<TcpStream>,
    standing: Arc<Standing>,
    registry: Arc<Registry>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.stream.poll_read_ready(cx))?;
            match self.stream.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    if n > 0 {
                        self.registry.touch(&self.standing);
                        self.standing.reading.store(true, Ordering::Relaxed);
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write(buf) {
                Ok(n) => {
                    if n > 0 {
                        self.registry.touch(&self.standing);
                        self.standing.reading.store(false, Ordering::Relaxed);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// The socket closes when the connection ends (the last handle is dropped).
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
