//! `upktgen otg`: an Open Traffic Generator server. A snappi or gosnappi script (or any
//! client of the model's HTTP API) sets a config, starts and stops its flows, reads port and
//! flow metrics and port captures, as with any OTG implementation; the flows are sent by
//! upktgen's engine (the run engine's streams), in this process.
//!
//! - [`api`]: the routes and handlers, on the bounded HTTP server of [`crate::http`];
//! - [`model`]: the request and response bodies; [`openapi`]: the document made from them;
//! - [`state`]: the config, the traffic's phase and counters; [`figures`]: get_metrics;
//! - [`engine`]: what the server needs of the engine; [`streams`]: the run engine's
//!   streams behind it; [`fake`]: an engine for tests;
//! - [`capture`]: port captures, bounded, as pcap; [`allow`]: which ports it may touch.
//!
//! docs/otg-server.md is the user's side.

pub mod allow;
pub mod api;
pub mod capture;
pub mod engine;
pub mod error;
pub mod fake;
pub mod figures;
pub mod model;
pub mod openapi;
pub mod state;
pub mod streams;

#[cfg(test)]
mod tests;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;

pub use allow::{Allow, Pattern};
pub use engine::Engine;
pub use state::Options;

/// The server's bounds: the metrics endpoint's, with a config's size as the largest body.
pub fn limits() -> crate::http::Limits {
    crate::http::Limits {
        max_body_bytes: crate::otg::MAX_DOCUMENT as usize,
        ..crate::http::Limits::default()
    }
}

/// A server serving: stop it with [`Running::stop`] (or drop it).
pub struct Running {
    pub shared: Arc<state::Shared>,
    server: crate::http::Server,
}

impl Running {
    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Stops the traffic, the captures and the server.
    pub fn stop(mut self) {
        self.shared.shutdown();
        self.server.stop();
    }
}

/// Serves the OTG API on `listener` with `engine`.
pub fn serve(
    listener: TcpListener,
    engine: Arc<dyn Engine>,
    capturer: Arc<dyn capture::live::Capturer>,
    clock: Arc<dyn fake::Clock>,
    opts: Options,
    limits: crate::http::Limits,
) -> anyhow::Result<Running> {
    let shared = state::Shared::new(engine, capturer, clock, opts);
    let server = crate::http::Server::start(
        listener,
        api::router(Arc::clone(&shared)),
        limits,
        "upktgen-otg",
    )?;
    Ok(Running { shared, server })
}

/// `upktgen otg`: listens on `listen` (its address printed on standard output, one line),
/// serves until `stop` is set (SIGINT, SIGTERM), then stops the traffic and returns.
pub fn main(
    listen: SocketAddr,
    engine: Arc<dyn Engine>,
    opts: Options,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    let running = serve(
        listener,
        engine,
        Arc::new(capture::live::RingCapturer),
        Arc::new(fake::WallClock::default()),
        opts,
        limits(),
    )
    .with_context(|| format!("serving on {listen}"))?;
    crate::out::println(format_args!(
        "upktgen otg: serving the Open Traffic Generator API on http://{} (GET /openapi.json)",
        running.addr()
    ))?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    running.stop();
    Ok(())
}

/// The options of `upktgen otg --allow PATTERN... --watchdog TIME --capture-mib N` (a
/// watchdog of 0: none); a bad pattern is an error naming it.
pub fn options(allow: &[String], watchdog: Duration, capture_mib: u32) -> anyhow::Result<Options> {
    let allow = allow
        .iter()
        .map(|p| p.parse::<Pattern>().with_context(|| "--allow".to_string()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Options {
        allow: Allow(allow),
        watchdog: (!watchdog.is_zero()).then_some(watchdog),
        capture_bytes: (capture_mib as usize) << 20,
        ..Options::default()
    })
}

/// The engine `upktgen otg` runs: the fake one when asked (`--fake-engine`, for trying a
/// client's script without root), else the run engine's streams.
pub fn engine(fake: bool, queues: crate::run::streams::Queues) -> anyhow::Result<Arc<dyn Engine>> {
    if fake {
        return Ok(Arc::new(fake::FakeEngine::new(Arc::new(
            fake::WallClock::default(),
        ))));
    }
    queues.check()?;
    Ok(Arc::new(streams::StreamsEngine { queues }))
}
