//! The controller's side: start the far end's agent over its transport, introduce ourselves,
//! call methods with a deadline, estimate the clock offset, and end the session so that
//! nothing is left running at the far end.

use super::clock::{self, ClockOffset, Exchange};
use super::proto::{self, ClockReply, Hello, HelloReply, LineError, Request, Response};
use super::transport::PeerUri;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long the far end may take to answer `hello` (an SSH login included).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an ordinary call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of the far end's standard error kept for error messages.
const STDERR_TAIL: usize = 20;

/// How to reach a far end.
#[derive(Debug, Clone)]
pub struct Transport {
    pub uri: PeerUri,
    /// The agent program at the far end (default: this binary on this host, `upktgen` on
    /// the far end's PATH over SSH).
    pub agent: Option<String>,
    /// ssh -F FILE.
    pub ssh_config: Option<PathBuf>,
}

/// A session with a far-end agent.
pub struct Peer {
    pub uri: PeerUri,
    agent: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Result<Vec<u8>, Gone>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_id: u64,
    /// What the agent said of itself.
    pub hello: HelloReply,
}

/// Why no more answers come from the far end.
#[derive(Debug, thiserror::Error)]
enum Gone {
    #[error("the far end closed the channel")]
    Closed,
    #[error("the far end sent a line longer than {0} bytes")]
    TooLong(usize),
    #[error("reading from the far end: {0}")]
    Io(std::io::Error),
}

/// Why the session with a far end failed: every message starts with `peer URI:` and says
/// what happened at which step (and, for a far end that went away, its last words).
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// `hint`: what to install, when known.
    #[error("peer {uri}: cannot start `{program}`: not found{hint}")]
    NotFound {
        uri: PeerUri,
        program: String,
        hint: &'static str,
    },
    #[error("peer {uri}: cannot start `{program}`: {err}")]
    Spawn {
        uri: PeerUri,
        program: String,
        err: std::io::Error,
    },
    #[error("peer {0}: no pipe from the agent")]
    NoPipe(PeerUri),
    #[error("peer {uri}: starting a thread to read the agent: {err}")]
    Thread { uri: PeerUri, err: std::io::Error },
    /// `theirs`, `their_protocol`: what the far end said (`?` when it did not say).
    #[error(
        "peer {uri}: version mismatch: this controller runs upktgen {ours} (protocol {our_protocol}), the far end runs upktgen {theirs} (protocol {their_protocol})",
        ours = proto::VERSION,
        our_protocol = proto::PROTOCOL
    )]
    Version {
        uri: PeerUri,
        theirs: String,
        their_protocol: String,
    },
    #[error("peer {uri}: {method}: cannot encode the request: {err}")]
    Encode {
        uri: PeerUri,
        method: String,
        err: serde_json::Error,
    },
    #[error("peer {uri}: {method}: unexpected answer: {err}")]
    Unexpected {
        uri: PeerUri,
        method: String,
        err: serde_json::Error,
    },
    #[error("peer {uri}: no answer to {method} within {secs} s")]
    Timeout {
        uri: PeerUri,
        method: String,
        secs: u64,
    },
    /// `line`: the start of what came instead.
    #[error("peer {uri}: not a JSON-RPC response ({err}): {line}")]
    NotJsonRpc {
        uri: PeerUri,
        err: serde_json::Error,
        line: String,
    },
    /// The method failed at the far end.
    #[error("peer {uri}: {method}: {remote}")]
    Remote {
        uri: PeerUri,
        method: String,
        remote: RemoteError,
    },
    #[error(
        "peer {uri}: no upktgen at the far end (`{agent}`: not found); install it there or name it with --peer-agent PATH"
    )]
    NoAgent { uri: PeerUri, agent: String },
    #[error("peer {uri}: ssh failed: {last}")]
    Ssh { uri: PeerUri, last: String },
    /// `why`: what the channel did; `last`: the far end's last line on standard error;
    /// `status`: the agent's exit status.
    #[error("peer {uri}: {why}{}", gone_detail(.last, .status))]
    Gone {
        uri: PeerUri,
        why: String,
        last: Option<String>,
        status: Option<i32>,
    },
    #[error("peer {0}: the local clock stepped during every exchange")]
    ClockStepped(PeerUri),
    #[error("peer {0}: the agent did not exit within 3 s of the end of its input: killed")]
    NotExited(PeerUri),
}

/// The end of a [`PeerError::Gone`] message: the far end's last line, else its status.
fn gone_detail(last: &Option<String>, status: &Option<i32>) -> String {
    match (last, status) {
        (Some(l), _) => format!(": {l}"),
        (None, Some(c)) => format!(" (the agent exited with status {c})"),
        (None, None) => String::new(),
    }
}

type Result<T, E = PeerError> = std::result::Result<T, E>;

/// A method that failed at the far end, with its JSON-RPC code.
#[derive(Debug)]
pub struct RemoteError {
    pub code: i64,
    pub message: String,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

impl Peer {
    /// Starts the agent at the far end and checks that it runs this very version. Its
    /// standard error goes to ours, each line prefixed with the peer's address.
    pub fn connect(t: &Transport) -> Result<Peer> {
        let uri = &t.uri;
        let agent = t.agent.clone().unwrap_or_else(|| uri.default_agent());
        let mut cmd = uri.command(&agent, &[], t.ssh_config.as_deref());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a Ctrl-C at the terminal reaches the controller only,
            // which then ends the session in order (a final report first).
            .process_group(0);
        let program = cmd.get_program().to_string_lossy().into_owned();
        let mut child = cmd.spawn().map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => PeerError::NotFound {
                uri: uri.clone(),
                hint: if program == "ssh" {
                    " (install OpenSSH's client)"
                } else {
                    ""
                },
                program: program.clone(),
            },
            _ => PeerError::Spawn {
                uri: uri.clone(),
                program: program.clone(),
                err,
            },
        })?;
        let no_pipe = || PeerError::NoPipe(uri.clone());
        let stdout = child.stdout.take().ok_or_else(no_pipe)?;
        let stderr_pipe = child.stderr.take().ok_or_else(no_pipe)?;
        let thread = |err| PeerError::Thread {
            uri: uri.clone(),
            err,
        };
        let (tx, lines) = mpsc::channel();
        std::thread::Builder::new()
            .name("upktgen-peer-out".into())
            .spawn(move || {
                let mut r = BufReader::new(stdout);
                let mut buf = Vec::new();
                loop {
                    let m = match proto::read_line(&mut r, proto::MAX_RESPONSE, &mut buf) {
                        Ok(true) => Ok(std::mem::take(&mut buf)),
                        Ok(false) => Err(Gone::Closed),
                        Err(LineError::TooLong(n)) => Err(Gone::TooLong(n)),
                        Err(LineError::Io(e)) => Err(Gone::Io(e)),
                    };
                    let last = m.is_err();
                    if tx.send(m).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(thread)?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let (tail, name) = (Arc::clone(&stderr), uri.to_string());
        std::thread::Builder::new()
            .name("upktgen-peer-err".into())
            .spawn(move || {
                for line in BufReader::new(stderr_pipe).lines() {
                    let Ok(line) = line else { return };
                    crate::errln!("peer {name}: {line}");
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.len() == STDERR_TAIL {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            })
            .map_err(thread)?;
        let mut peer = Peer {
            uri: uri.clone(),
            agent,
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            next_id: 0,
            hello: HelloReply {
                version: String::new(),
                protocol: 0,
                hostname: String::new(),
                kernel: String::new(),
                pid: 0,
                netns_inode: 0,
                root: false,
                methods: Vec::new(),
                rx_backends: Vec::new(),
                clock: None,
            },
        };
        let hello = Hello {
            version: proto::VERSION.into(),
            protocol: proto::PROTOCOL,
        };
        let reply: Value = peer.call_within("hello", &hello, CONNECT_TIMEOUT)?;
        // Check the version before the shape: another release may answer differently.
        let (v, p) = (reply["version"].as_str(), reply["protocol"].as_u64());
        if v != Some(proto::VERSION) || p != Some(u64::from(proto::PROTOCOL)) {
            return Err(PeerError::Version {
                uri: uri.clone(),
                theirs: v.unwrap_or("?").to_string(),
                their_protocol: p.map_or("?".into(), |p| p.to_string()),
            });
        }
        peer.hello = serde_json::from_value(reply).map_err(|err| PeerError::Unexpected {
            uri: uri.clone(),
            method: "hello".into(),
            err,
        })?;
        Ok(peer)
    }

    /// Calls `method` and waits for its answer at most [`CALL_TIMEOUT`].
    pub fn call<P: Serialize, R: DeserializeOwned>(&mut self, method: &str, p: &P) -> Result<R> {
        self.call_within(method, p, CALL_TIMEOUT)
    }

    /// Calls `method` and waits for its answer at most `timeout`.
    pub fn call_within<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: &str,
        p: &P,
        timeout: Duration,
    ) -> Result<R> {
        self.next_id += 1;
        let id = self.next_id;
        let encode = |err| PeerError::Encode {
            uri: self.uri.clone(),
            method: method.into(),
            err,
        };
        let req = Request {
            schema: Some(crate::schema::AGENT.into()),
            jsonrpc: "2.0".into(),
            id: Value::from(id),
            method: method.into(),
            params: serde_json::to_value(p).map_err(encode)?,
        };
        let line = serde_json::to_string(&req).map_err(encode)? + "\n";
        let sent = match self.stdin.as_mut() {
            Some(s) => s.write_all(line.as_bytes()).and_then(|_| s.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if sent.is_err() {
            return Err(self.gone("the channel is closed"));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(l)) => l,
                Ok(Err(why)) => return Err(self.gone(&why.to_string())),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(PeerError::Timeout {
                        uri: self.uri.clone(),
                        method: method.into(),
                        secs: timeout.as_secs(),
                    });
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(self.gone("the channel is closed"));
                }
            };
            let resp: Response =
                serde_json::from_slice(&line).map_err(|err| PeerError::NotJsonRpc {
                    uri: self.uri.clone(),
                    err,
                    line: super::short(&String::from_utf8_lossy(&line)),
                })?;
            if resp.id != id {
                continue; // an answer to an earlier call that timed out
            }
            if let Some(e) = resp.error {
                return Err(PeerError::Remote {
                    uri: self.uri.clone(),
                    method: method.into(),
                    remote: RemoteError {
                        code: e.code,
                        message: e.message,
                    },
                });
            }
            return serde_json::from_value(resp.result.unwrap_or(Value::Null)).map_err(|err| {
                PeerError::Unexpected {
                    uri: self.uri.clone(),
                    method: method.into(),
                    err,
                }
            });
        }
    }

    /// The error for a far end that went away: what its transport said on standard error,
    /// read as a person would (no upktgen there, a refused login, an unknown namespace).
    fn gone(&mut self, why: &str) -> PeerError {
        // Let the far end's last words arrive.
        let status = (0..50).find_map(|_| match self.child.try_wait() {
            Ok(Some(s)) => Some(s),
            _ => {
                std::thread::sleep(Duration::from_millis(20));
                None
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        let tail: Vec<String> = self
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        let last = tail.iter().rev().find(|l| !l.trim().is_empty()).cloned();
        let code = status.and_then(|s| s.code());
        let text = tail.join("\n");
        let uri = self.uri.clone();
        let agent = &self.agent;
        if code == Some(127)
            || text.contains("command not found")
            || (text.contains(agent.as_str()) && text.contains("No such file"))
        {
            return PeerError::NoAgent {
                uri,
                agent: agent.clone(),
            };
        }
        if matches!(uri, PeerUri::Ssh { .. }) && code == Some(255) {
            return PeerError::Ssh {
                uri,
                last: last.unwrap_or_else(|| "no message".into()),
            };
        }
        PeerError::Gone {
            uri,
            why: why.to_string(),
            last,
            status: code,
        }
    }

    /// The far end's clock against ours from `n` exchanges (none on one host: the clocks
    /// are one).
    pub fn clock_offset(&mut self, n: usize) -> Result<ClockOffset> {
        if self.uri.same_host() {
            return Ok(ClockOffset::same_clock());
        }
        let mut xs = Vec::with_capacity(n);
        for _ in 0..n.max(1) {
            let t0 = crate::sys::realtime_ns();
            let c: ClockReply = self.call("clock", &Value::Null)?;
            let t3 = crate::sys::realtime_ns();
            xs.push(Exchange {
                t0,
                t1: c.realtime_ns,
                t3,
            });
        }
        clock::estimate(&xs).ok_or_else(|| PeerError::ClockStepped(self.uri.clone()))
    }

    /// Ends the session: `shutdown`, then the end of its input; waits for the agent (and its
    /// transport) to exit, and kills it if it does not within 3 s.
    pub fn close(mut self) -> Result<()> {
        let _ = self.call_within::<_, Value>("shutdown", &Value::Null, Duration::from_secs(3));
        self.end()
    }

    fn end(&mut self) -> Result<()> {
        self.stdin.take();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(PeerError::NotExited(self.uri.clone()))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.end();
        }
    }
}
