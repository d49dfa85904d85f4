//! `upktgen agent`: the far end. It reads requests from standard input, one per line, and
//! answers each on standard output. It ends when its input closes (the controller is gone,
//! however it went: a kill -9 closes the pipe too), on `shutdown`, or on SIGINT/SIGTERM/
//! SIGHUP (at once, even inside rx.stop's wait), or when no request has come for
//! `--watchdog` while a receiver runs (a controller gone without closing the channel: a lost
//! management link); on every one of these paths its receivers are stopped and dropped,
//! which closes their sockets and BPF links, so no XDP program outlives it.
//!
//! A command's entry point, so it sits in the run layer beside [`super::rx`]; the protocol,
//! the transports and the controller's side stay in [`crate::agent`].

use crate::agent::proto::{
    self, ClockReply, CountersParams, Hello, HelloReply, LineError, Request, Response, RxStart,
    RxStarted, RxStats, RxStatsParams, RxStop, RxStreamsParams, StreamsChunk, code,
};
use crate::cli::rx::RxArgs;
use crate::rx::background::{RxThread, Settle};
use crate::sample::NetDevSnapshot;
use clap::Parser;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The methods, in the order docs/agent.md gives them.
pub const METHODS: &[&str] = &[
    "hello",
    "clock",
    "counters",
    "rx.start",
    "rx.stats",
    "rx.stop",
    "rx.streams",
    "shutdown",
];

/// `upktgen rx`'s options, parsed as that command parses them.
#[derive(Parser, Debug)]
#[command(name = "rx", no_binary_name = true)]
struct RxWords {
    #[command(flatten)]
    rx: RxArgs,
}

/// A failed method: its JSON-RPC code and a message.
struct Failure(i64, String);

fn failed(e: impl std::fmt::Display) -> Failure {
    Failure(code::FAILED, e.to_string())
}

fn no_receiver(id: u32) -> Failure {
    Failure(code::INVALID_PARAMS, format!("no receiver {id}"))
}

fn params<T: DeserializeOwned>(v: Value) -> Result<T, Failure> {
    // A method without parameters may be called with none, null or {}.
    let v = if v.is_null() {
        Value::Object(Default::default())
    } else {
        v
    };
    serde_json::from_value(v).map_err(|e| Failure(code::INVALID_PARAMS, format!("params: {e}")))
}

fn reply<T: Serialize>(v: T) -> Result<Value, Failure> {
    serde_json::to_value(v).map_err(failed)
}

fn read_small(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The agent's state: introduced or not, its receivers by id, and its metrics endpoint.
#[derive(Default)]
pub(crate) struct Agent<'a> {
    introduced: bool,
    receivers: BTreeMap<u32, RxThread>,
    /// Stopped receivers' stream summaries beyond the report's first
    /// [`proto::REPORT_CHUNK`], until `rx.streams` has read the last of them: (the index
    /// of the first, the summaries).
    held: BTreeMap<u32, (usize, Vec<crate::rx::streams::StreamSummary>)>,
    next_id: u32,
    pub(crate) shutdown: bool,
    metrics: Option<&'a crate::metrics::Endpoint>,
    /// Set by a signal: cuts rx.stop's wait short.
    stop: Option<&'a AtomicBool>,
}

impl<'a> Agent<'a> {
    /// An agent without a metrics endpoint whose rx.stop wait `stop` cuts short.
    pub(crate) fn new(stop: &'a AtomicBool) -> Self {
        Agent {
            stop: Some(stop),
            ..Agent::default()
        }
    }

    pub(crate) fn handle(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        if req.jsonrpc != "2.0" {
            return Response::err(id, code::INVALID_REQUEST, "jsonrpc must be \"2.0\"");
        }
        // A request names its schema (one typed by hand may not): another version, or
        // another kind, is not a request this agent reads.
        let want = crate::schema::kind(crate::schema::AGENT);
        match req
            .schema
            .as_deref()
            .map(|t| crate::schema::kind_of_tag("the request", t))
        {
            Some(Err(e)) => return Response::err(id, code::INVALID_REQUEST, format!("{e:#}")),
            Some(Ok(k)) if k != want => {
                return Response::err(
                    id,
                    code::INVALID_REQUEST,
                    format!(
                        "the request: {} document, not an agent request",
                        crate::schema::a_kind(k)
                    ),
                );
            }
            _ => {}
        }
        if req.method != "hello" && !self.introduced {
            return Response::err(
                id,
                code::NOT_INTRODUCED,
                format!("{}: call hello first", req.method),
            );
        }
        let r = match req.method.as_str() {
            "hello" => self.hello(req.params),
            "clock" => reply(ClockReply {
                realtime_ns: crate::sys::realtime_ns(),
                monotonic_ns: crate::sys::monotonic_ns(),
            }),
            "counters" => self.counters(req.params),
            "rx.start" => self.rx_start(req.params),
            "rx.stats" => self.rx_stats(req.params),
            "rx.stop" => self.rx_stop(req.params),
            "rx.streams" => self.rx_streams(req.params),
            "shutdown" => {
                self.shutdown = true;
                Ok(Value::Null)
            }
            m => Err(Failure(
                code::METHOD_NOT_FOUND,
                format!("no method {m:?} (this agent has: {})", METHODS.join(", ")),
            )),
        };
        match r {
            Ok(v) => Response::ok(id, v),
            Err(Failure(c, m)) => Response::err(id, c, m),
        }
    }

    fn hello(&mut self, p: Value) -> Result<Value, Failure> {
        let h: Hello = params(p)?;
        if h.version != proto::VERSION || h.protocol != proto::PROTOCOL {
            return Err(Failure(
                code::VERSION_MISMATCH,
                format!(
                    "version mismatch: the controller runs upktgen {} (protocol {}), this agent runs upktgen {} (protocol {})",
                    h.version,
                    h.protocol,
                    proto::VERSION,
                    proto::PROTOCOL
                ),
            ));
        }
        self.introduced = true;
        let me = std::fs::metadata("/proc/self").ok();
        reply(HelloReply {
            version: proto::VERSION.into(),
            protocol: proto::PROTOCOL,
            hostname: read_small("/proc/sys/kernel/hostname"),
            kernel: read_small("/proc/sys/kernel/osrelease"),
            pid: std::process::id(),
            netns_inode: std::fs::metadata("/proc/self/ns/net")
                .map(|m| m.ino())
                .unwrap_or(0),
            root: me.is_some_and(|m| m.uid() == 0),
            methods: METHODS.iter().map(|m| m.to_string()).collect(),
            rx_backends: vec!["af_xdp".into(), "af_packet".into()],
            clock: crate::sys::clock::clock_sync().ok(),
        })
    }

    fn counters(&mut self, p: Value) -> Result<Value, Failure> {
        let c: CountersParams = params(p)?;
        let snap = NetDevSnapshot::read().map_err(|e| failed(format!("{e:#}")))?;
        let mut out = BTreeMap::new();
        for d in &c.devs {
            out.insert(
                d.clone(),
                snap.iface(d).map_err(|e| failed(format!("{e:#}")))?,
            );
        }
        reply(out)
    }

    fn rx_start(&mut self, p: Value) -> Result<Value, Failure> {
        let s: RxStart = params(p)?;
        let words = RxWords::try_parse_from(&s.args).map_err(|e| {
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            Failure(code::INVALID_PARAMS, format!("rx options: {first}"))
        })?;
        let cfg = crate::run::rx::config(&words.rx).map_err(|e| failed(format!("{e:#}")))?;
        let rx = RxThread::start(None, &words.rx.dev, cfg).map_err(|e| failed(format!("{e:#}")))?;
        if let Some(m) = self.metrics {
            crate::metrics::watch_rx(m, &words.rx.dev, rx.progress())
                .map_err(|e| failed(format!("--metrics-listen: {e:#}")))?;
        }
        self.next_id += 1;
        let started = rx.started().clone();
        self.receivers.insert(self.next_id, rx);
        reply(RxStarted {
            id: self.next_id,
            backend: started.backend.into(),
            choice: started.choice,
        })
    }

    fn receiver(&self, id: u32) -> Result<&RxThread, Failure> {
        self.receivers.get(&id).ok_or_else(|| no_receiver(id))
    }

    fn rx_stats(&mut self, p: Value) -> Result<Value, Failure> {
        let RxStatsParams { id, streams_from } = params(p)?;
        let rx = self.receiver(id)?;
        let pr = rx.progress();
        let streams = streams_from
            .zip(pr.streams.get())
            .map(|(from, t)| StreamsChunk::of(t, from));
        reply(RxStats {
            frames: pr.frames.load(Ordering::Relaxed),
            bytes: pr.bytes.load(Ordering::Relaxed),
            lost: pr.lost.load(Ordering::Relaxed),
            drops: pr.drops.load(Ordering::Relaxed),
            running: rx.running(),
            streams,
        })
    }

    fn rx_stop(&mut self, p: Value) -> Result<Value, Failure> {
        let s: RxStop = params(p)?;
        let rx = self
            .receivers
            .remove(&s.id)
            .ok_or_else(|| no_receiver(s.id))?;
        let settle = Settle {
            expected: s.expected,
            settle: Duration::from_millis(s.settle_ms.min(60_000)),
            max_wait: Duration::from_millis(s.max_wait_ms.min(600_000)),
        };
        // A signal ends the wait at once: the receiver reports what it has, and the
        // session ends after this answer.
        let never = AtomicBool::new(false);
        let mut report = rx
            .finish_unless(settle, self.stop.unwrap_or(&never))
            .map_err(|e| failed(format!("{e:#}")))?;
        if let Some(m) = self.metrics {
            m.finish_rx(&report);
        }
        // A report of many streams in several answers: the first REPORT_CHUNK here, the
        // others through rx.streams (the report's `expected` says how many there are).
        if let Some(st) = &mut report.streams
            && st.streams.len() > proto::REPORT_CHUNK
        {
            let rest = st.streams.split_off(proto::REPORT_CHUNK);
            self.held.insert(s.id, (proto::REPORT_CHUNK, rest));
        }
        reply(report)
    }

    /// The stream summaries of a stopped receiver's report from index `from`, at most
    /// [`proto::REPORT_CHUNK`]; once the last is read, nothing is held for it any more.
    fn rx_streams(&mut self, p: Value) -> Result<Value, Failure> {
        let RxStreamsParams { id, from } = params(p)?;
        let Some((first, rest)) = self.held.get(&id) else {
            return Err(Failure(
                code::INVALID_PARAMS,
                format!(
                    "no stream summaries held for receiver {id}: none of this session's receivers stopped with more than rx.stop gave, or all were read"
                ),
            ));
        };
        let (first, total) = (*first, first + rest.len());
        let from = from as usize;
        if from < first || from >= total {
            return Err(Failure(
                code::INVALID_PARAMS,
                format!(
                    "receiver {id}: streams {first} to {} are held, not {from}",
                    total - 1
                ),
            ));
        }
        let end = (from + proto::REPORT_CHUNK).min(total);
        let chunk = reply(&rest[from - first..end - first])?;
        if end == total {
            self.held.remove(&id);
        }
        Ok(chunk)
    }
}

enum Input {
    Line(Vec<u8>),
    TooLong(usize),
    End,
}

/// Serves requests from `input` until it ends, `shutdown`, or `stop` is set; answers go to
/// `output`. Returns when the session is over, with every receiver stopped.
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    serve_with(input, output, stop, None, None)
}

/// The agent's watchdog fired: no request came for `.0` while a receiver ran.
#[derive(Debug, thiserror::Error)]
#[error(
    "agent: no request for {} s while a receiver ran (--watchdog): the controller is gone; receivers stopped, the session ends",
    .0.as_secs_f64()
)]
pub struct WatchdogFired(pub Duration);

/// [`serve`], feeding a metrics endpoint with each receiver (the call sequence of
/// [`crate::metrics`]: watch at rx.start, finish at rx.stop), and with a watchdog: when no
/// request has come for `watchdog` while a receiver runs, the receivers stop and the
/// session ends ([`WatchdogFired`]).
pub fn serve_with(
    input: impl Read + Send + 'static,
    mut output: impl Write,
    stop: &AtomicBool,
    metrics: Option<&crate::metrics::Endpoint>,
    watchdog: Option<Duration>,
) -> anyhow::Result<()> {
    // The input is read on a thread of its own, so that a signal is seen within 100 ms
    // even while the controller is silent.
    let (tx, rx) = mpsc::sync_channel::<Input>(1);
    std::thread::Builder::new()
        .name("upktgen-agent-in".into())
        .spawn(move || {
            let mut r = BufReader::new(input);
            let mut buf = Vec::new();
            loop {
                let msg = match proto::read_line(&mut r, proto::MAX_REQUEST, &mut buf) {
                    Ok(true) => Input::Line(std::mem::take(&mut buf)),
                    Ok(false) | Err(LineError::Io(_)) => Input::End,
                    Err(LineError::TooLong(n)) => Input::TooLong(n),
                };
                let last = !matches!(msg, Input::Line(_));
                if tx.send(msg).is_err() || last {
                    return;
                }
            }
        })?;
    let mut agent = Agent {
        metrics,
        stop: Some(stop),
        ..Agent::default()
    };
    let mut heard = Instant::now();
    let mut fired = None;
    while !stop.load(Ordering::Relaxed) && !agent.shutdown {
        let line = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Input::Line(l)) => {
                heard = Instant::now();
                l
            }
            Ok(Input::TooLong(n)) => {
                let r = Response::err(
                    Value::Null,
                    code::INVALID_REQUEST,
                    format!("a request longer than {n} bytes: the session ends"),
                );
                let _ = writeln!(output, "{}", serde_json::to_string(&r)?);
                break;
            }
            Ok(Input::End) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(w) = watchdog
                    && !agent.receivers.is_empty()
                    && heard.elapsed() >= w
                {
                    fired = Some(w);
                    break;
                }
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let resp = match serde_json::from_slice::<Request>(&line) {
            Ok(req) => agent.handle(req),
            Err(e) => {
                // Answer with the id if the line was JSON with one, as JSON-RPC asks.
                let id = serde_json::from_slice::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").cloned())
                    .unwrap_or(Value::Null);
                let c = if id.is_null() && serde_json::from_slice::<Value>(&line).is_err() {
                    code::PARSE_ERROR
                } else {
                    code::INVALID_REQUEST
                };
                Response::err(id, c, format!("not a JSON-RPC request: {e}"))
            }
        };
        let text = serde_json::to_string(&resp)?;
        // The controller gone (EPIPE) ends the session like the end of the input.
        if writeln!(output, "{text}")
            .and_then(|_| output.flush())
            .is_err()
        {
            break;
        }
    }
    // Receivers stop here (their Drop), whatever ended the session.
    agent.receivers.clear();
    match fired {
        Some(w) => Err(WatchdogFired(w).into()),
        None => Ok(()),
    }
}

/// Runs `upktgen agent` on this process's standard input and output; with
/// --metrics-listen, bound before the first request is read, and kept up for
/// --metrics-linger after the session.
pub fn main(a: &crate::cli::AgentArgs, stop: &AtomicBool) -> anyhow::Result<()> {
    if let Some(mode) = a.fake {
        return super::fake_agent::main(mode, stop);
    }
    let metrics = a.metrics.start()?;
    let stdout = std::io::stdout();
    let watchdog = Some(a.watchdog).filter(|w| !w.is_zero());
    serve_with(
        std::io::stdin(),
        stdout.lock(),
        stop,
        metrics.as_ref(),
        watchdog,
    )?;
    if let Some(m) = &metrics {
        m.linger(stop);
    }
    Ok(())
}

/// Lets tests drive an agent in-process.
#[cfg(test)]
pub(crate) fn session(lines: &[&str]) -> Vec<Value> {
    let input = lines.join("\n") + "\n";
    let mut out = Vec::new();
    serve(
        std::io::Cursor::new(input.into_bytes()),
        &mut out,
        &AtomicBool::new(false),
    )
    .unwrap();
    std::io::BufRead::lines(&out[..])
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hello() -> String {
        json!({"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":proto::VERSION,"protocol":proto::PROTOCOL}}).to_string()
    }

    #[test]
    fn hello_then_clock_and_unknown_methods() {
        let out = session(&[
            &hello(),
            r#"{"jsonrpc":"2.0","id":2,"method":"clock"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
        ]);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["result"]["version"], proto::VERSION);
        assert!(out[0]["result"]["methods"].as_array().unwrap().len() == METHODS.len());
        assert!(out[1]["result"]["realtime_ns"].as_u64().unwrap() > 1_600_000_000_000_000_000);
        assert_eq!(out[2]["error"]["code"], code::METHOD_NOT_FOUND);
        assert_eq!(out[2]["id"], 3);
    }

    #[test]
    fn a_request_of_another_schema_is_refused_naming_it() {
        let out = session(&[
            r#"{"schema":"upktgen.agent/3","jsonrpc":"2.0","id":1,"method":"clock"}"#,
            r#"{"schema":"upktgen.agent/4","jsonrpc":"2.0","id":2,"method":"clock"}"#,
            r#"{"schema":"upktgen.run/1","jsonrpc":"2.0","id":3,"method":"clock"}"#,
            r#"{"schema":"upktgen.agent/1","jsonrpc":"2.0","id":4,"method":"clock"}"#,
        ]);
        // Version 3 is read (here: refused only for want of hello).
        assert_eq!(out[0]["error"]["code"], code::NOT_INTRODUCED);
        assert_eq!(out[0]["schema"], crate::schema::AGENT);
        for (r, want) in [
            (
                &out[1],
                "the request: an agent document of schema version 4 (\"upktgen.agent/4\")",
            ),
            (&out[2], "the request: a run document, not an agent request"),
            (
                &out[3],
                "the request: an agent document of schema version 1 (\"upktgen.agent/1\"), written by an older upktgen",
            ),
        ] {
            assert_eq!(r["error"]["code"], code::INVALID_REQUEST, "{r}");
            let m = r["error"]["message"].as_str().unwrap();
            assert!(m.starts_with(want), "{m}");
        }
    }

    #[test]
    fn nothing_before_hello_and_a_version_mismatch_names_both() {
        let out = session(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"clock"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"hello","params":{"version":"0.0.1","protocol":1}}"#,
        ]);
        assert_eq!(out[0]["error"]["code"], code::NOT_INTRODUCED);
        assert_eq!(out[1]["error"]["code"], code::VERSION_MISMATCH);
        let m = out[1]["error"]["message"].as_str().unwrap();
        assert!(m.contains("0.0.1") && m.contains(proto::VERSION), "{m}");
    }

    #[test]
    fn bad_lines_get_json_rpc_errors() {
        let out = session(&[
            "not json",
            r#"{"id":7}"#,
            &hello(),
            r#"{"jsonrpc":"2.0","id":4,"method":"rx.stats","params":{"id":9}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"rx.start","params":{"args":["--bogus"]}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"counters","params":{"devs":["nosuchdev0"]}}"#,
        ]);
        assert_eq!(out[0]["error"]["code"], code::PARSE_ERROR);
        assert_eq!(out[1]["error"]["code"], code::INVALID_REQUEST);
        assert_eq!(out[1]["id"], 7);
        assert_eq!(out[3]["error"]["message"], "no receiver 9");
        assert_eq!(out[4]["error"]["code"], code::INVALID_PARAMS);
        assert!(
            out[4]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("--bogus")
        );
        assert!(
            out[5]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("nosuchdev0")
        );
    }

    /// A summary with every figure at its widest.
    fn wide_summary(id: u16) -> crate::rx::streams::StreamSummary {
        use crate::rx::sink::{LatencyCounters, LatencySummary, SeqCounters};
        let m = u64::MAX;
        crate::rx::streams::StreamSummary {
            id,
            name: format!("flow-{id:05}-abcdefghij"),
            frames: m,
            bytes: m,
            first_seq: Some(u32::MAX),
            last_seq: Some(u32::MAX),
            seq: SeqCounters {
                received: m,
                lost: m,
                duplicates: m,
                reordered: m,
                late_beyond_window: m,
                restarts: m,
                wraps: m,
                jumps: m,
                tx_clock_backwards: m,
            },
            latency: Some(LatencySummary {
                count: m,
                min_ns: m,
                mean_ns: 1.234_567_890_123_456_7e19,
                p50_ns: m,
                p90_ns: m,
                p99_ns: m,
                p999_ns: m,
                max_ns: m,
            }),
            latency_not_recorded: LatencyCounters {
                no_timestamp: m,
                bad_timestamp: m,
                clock_backwards: m,
                out_of_range: m,
            },
            jitter_ns: Some(1.234_567_890_123_456_7e19),
            first_rx_ns: Some(m),
            last_rx_ns: Some(m),
        }
    }

    /// A stopped receiver's report of 65,536 streams (every id a signature names) (more than one line holds at ~1 KB a
    /// summary): rx.stop kept the first 4,096, rx.streams gives the others 4,096 an answer,
    /// each answer within a line, then nothing more is held.
    #[test]
    fn a_report_of_the_most_streams_comes_in_answers_that_fit_a_line() {
        // Every id a signature can name.
        let n = crate::wire::signature::MAX_STREAMS;
        let one = serde_json::to_string(&wide_summary(0)).unwrap().len();
        assert!(
            one * n > proto::MAX_RESPONSE,
            "one line would not hold them"
        );
        let rest: Vec<_> = (proto::REPORT_CHUNK..n)
            .map(|i| wide_summary(i as u16))
            .collect();
        let stop = AtomicBool::new(false);
        let mut a = Agent::new(&stop);
        a.introduced = true;
        a.held.insert(7, (proto::REPORT_CHUNK, rest));
        let call = |a: &mut Agent, from: usize| {
            let r = a.handle(Request {
                schema: Some(crate::schema::AGENT.into()),
                jsonrpc: "2.0".into(),
                id: json!(from),
                method: "rx.streams".into(),
                params: json!({"id": 7, "from": from}),
            });
            serde_json::to_string(&r).unwrap()
        };
        // Below what is held: refused, naming what is.
        assert!(call(&mut a, 0).contains("streams 4096 to 65535 are held, not 0"));
        let (mut from, mut answers) = (proto::REPORT_CHUNK, 0);
        while from < n {
            let line = call(&mut a, from);
            assert!(line.len() < proto::MAX_RESPONSE, "{} bytes", line.len());
            let got = line.matches("\"name\":").count();
            assert_eq!(got, proto::REPORT_CHUNK.min(n - from));
            let first = format!("\"name\":\"{}\"", wide_summary(from as u16).name);
            assert_eq!(
                line.find("\"name\":"),
                line.find(&first),
                "starts at {from}"
            );
            from += got;
            answers += 1;
        }
        assert_eq!(answers, 15, "16 answers with rx.stop's");
        assert!(a.held.is_empty(), "nothing held once all were read");
        assert!(call(&mut a, from).contains("no stream summaries held for receiver 7"));
    }

    #[test]
    fn shutdown_ends_the_session() {
        let out = session(&[
            &hello(),
            r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"clock"}"#,
        ]);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn an_endless_line_ends_the_session_with_bounded_memory() {
        let big = vec![b'x'; proto::MAX_REQUEST + 10];
        let mut out = Vec::new();
        serve(std::io::Cursor::new(big), &mut out, &AtomicBool::new(false)).unwrap();
        let v: Value = serde_json::from_slice(out.trim_ascii_end()).unwrap();
        assert_eq!(v["error"]["code"], code::INVALID_REQUEST);
    }
}
