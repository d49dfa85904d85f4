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
use std::io::{BufRead, BufReader, Read, Write};
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
/// The longest line of the far end's standard error printed: the rest of a longer line is
/// read and dropped (the line is marked), so that an endless line costs no memory.
pub const MAX_STDERR_LINE: usize = 4096;
/// Answer lines read ahead of the caller: the reading thread waits when they are not
/// taken, and so does the far end, so that a flood of lines costs no memory here.
const READ_AHEAD: usize = 1;

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
    /// Calls that timed out: their answers may still come, and are then passed over.
    late: u64,
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
    /// A request the agent would not read (it ends the session on one).
    #[error(
        "peer {uri}: {method}: a request of {len} bytes, more than the agent reads ({max} bytes){hint}",
        max = proto::MAX_REQUEST
    )]
    RequestTooLong {
        uri: PeerUri,
        method: String,
        len: usize,
        hint: &'static str,
    },
    #[error("peer {uri}: {method}: cannot encode the request: {err}")]
    Encode {
        uri: PeerUri,
        method: String,
        err: serde_json::Error,
    },
    /// `why`: what did not fit (it may quote the answer: escaped, see [`escaped`]).
    #[error("peer {uri}: {method}: unexpected answer: {why}")]
    Unexpected {
        uri: PeerUri,
        method: String,
        why: String,
    },
    #[error("peer {uri}: no answer to {method} within {secs} s")]
    Timeout {
        uri: PeerUri,
        method: String,
        secs: u64,
    },
    /// `line`: the start of what came instead.
    #[error("peer {uri}: not a JSON-RPC response ({why}): {line}")]
    NotJsonRpc {
        uri: PeerUri,
        why: String,
        line: String,
    },
    /// `version`: what the far end's line says instead of "2.0".
    #[error(
        "peer {uri}: {method}: the far end does not speak JSON-RPC 2.0 (its answer says {version})"
    )]
    NotJsonRpc2 {
        uri: PeerUri,
        method: String,
        version: String,
    },
    /// An answer to no request under way: another protocol, or a far end flooding the
    /// channel; the session cannot go on.
    #[error(
        "peer {uri}: {method}: the far end answered request {got}, but the request under way is {want}: \
         it does not follow the protocol (a flood of lines, or another program): the session ends"
    )]
    Unasked {
        uri: PeerUri,
        method: String,
        got: String,
        want: u64,
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
    /// `why`: what is wrong with the file.
    #[error("peer {uri}: --ssh-config {}: {why}", .path.display())]
    SshConfig {
        uri: PeerUri,
        path: PathBuf,
        why: String,
    },
}

/// A parse error of what the far end sent, fit to print: serde quotes the value it could not
/// take, which may hold anything.
fn escaped(e: &serde_json::Error) -> String {
    crate::text::printable(&super::short(&e.to_string())).into_owned()
}

/// The largest --ssh-config file handed to ssh (a configuration is a few kilobytes).
pub const MAX_SSH_CONFIG: u64 = 1 << 20;

/// --ssh-config FILE, checked before ssh reads it: a regular file (not a device, a FIFO or
/// a directory, which ssh would read without end or block on) of at most
/// [`MAX_SSH_CONFIG`] bytes.
fn check_ssh_config(uri: &PeerUri, path: &std::path::Path) -> Result<()> {
    let bad = |why: String| PeerError::SshConfig {
        uri: uri.clone(),
        path: path.to_path_buf(),
        why,
    };
    let m = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if !m.is_file() {
        let what = crate::input::kind_of(&m.file_type());
        return Err(bad(format!("not a regular file ({what})")));
    }
    if m.len() > MAX_SSH_CONFIG {
        return Err(bad(format!(
            "{} bytes: larger than {MAX_SSH_CONFIG} bytes, too large for an ssh configuration",
            m.len()
        )));
    }
    Ok(())
}

/// Reads the far end's standard error a line at a time into `line`, at most `max` bytes of
/// it: `Ok(None)` at the end, `Ok(Some(true))` when the line was longer (the rest is read
/// and dropped up to its newline).
fn read_stderr_line(
    r: &mut impl BufRead,
    max: usize,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let n = r.by_ref().take(max as u64).read_until(b'\n', line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        // A CRLF line end (ssh writes its own messages so): the CR is no part of the text.
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Some(false));
    }
    if n < max {
        return Ok(Some(false)); // the last line, without its newline
    }
    // Longer than max: drop the rest of it, a buffer at a time.
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(Some(true));
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                return Ok(Some(true));
            }
            None => {
                let k = buf.len();
                r.consume(k);
            }
        }
    }
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
        if let Some(f) = &t.ssh_config {
            check_ssh_config(uri, f)?;
        }
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
        let (tx, lines) = mpsc::sync_channel(READ_AHEAD);
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
                let mut r = BufReader::with_capacity(1 << 16, stderr_pipe);
                let mut buf = Vec::new();
                while let Ok(Some(cut)) = read_stderr_line(&mut r, MAX_STDERR_LINE, &mut buf) {
                    // What the far end writes is shown for what it is: marked, and with
                    // its control characters escaped (no escape sequence reaches the
                    // terminal, no line of its own looks like ours).
                    let text = String::from_utf8_lossy(&buf);
                    let mut line = crate::text::printable(&text).into_owned();
                    if cut {
                        line += &format!(" [line cut at {MAX_STDERR_LINE} bytes]");
                    }
                    crate::errln!("peer {name} (far end's stderr): {line}");
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
            late: 0,
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
                theirs: crate::text::printable(&super::short(v.unwrap_or("?"))).into_owned(),
                their_protocol: p.map_or("?".into(), |p| p.to_string()),
            });
        }
        peer.hello = serde_json::from_value(reply).map_err(|err| PeerError::Unexpected {
            uri: uri.clone(),
            method: "hello".into(),
            why: escaped(&err),
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
        if line.len() > proto::MAX_REQUEST {
            return Err(PeerError::RequestTooLong {
                uri: self.uri.clone(),
                method: method.into(),
                len: line.len(),
                hint: if method == "rx.start" {
                    " (it carries the receiver's options, with a config's flows one per flow: fewer flows, or shorter names)"
                } else {
                    ""
                },
            });
        }
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
                    self.late += 1;
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
                    why: escaped(&err),
                    line: crate::text::printable(&super::short(&String::from_utf8_lossy(&line)))
                        .into_owned(),
                })?;
            if resp.jsonrpc != "2.0" {
                return Err(PeerError::NotJsonRpc2 {
                    uri: self.uri.clone(),
                    method: method.into(),
                    version: crate::text::printable(&super::short(
                        &serde_json::to_string(&resp.jsonrpc).unwrap_or_default(),
                    ))
                    .into_owned(),
                });
            }
            if resp.id != id {
                // An answer to an earlier call that timed out is passed over; anything
                // else answers no request: a far end that does not follow the protocol,
                // or floods the channel, ends the session here.
                if self.late > 0 && resp.id.as_u64().is_some_and(|n| n < id) {
                    self.late -= 1;
                    continue;
                }
                return Err(PeerError::Unasked {
                    uri: self.uri.clone(),
                    method: method.into(),
                    got: crate::text::printable(&super::short(&resp.id.to_string())).into_owned(),
                    want: id,
                });
            }
            if let Some(e) = resp.error {
                return Err(PeerError::Remote {
                    uri: self.uri.clone(),
                    method: method.into(),
                    remote: RemoteError {
                        code: e.code,
                        message: crate::text::printable(&super::short(&e.message)).into_owned(),
                    },
                });
            }
            return serde_json::from_value(resp.result.unwrap_or(Value::Null)).map_err(|err| {
                PeerError::Unexpected {
                    uri: self.uri.clone(),
                    method: method.into(),
                    why: escaped(&err),
                }
            });
        }
    }

    /// The error for a far end that went away: what its transport said on standard error,
    /// read as a person would (no upktgen there, a refused login, an unknown namespace).
    fn gone(&mut self, why: &str) -> PeerError {
        // Let the far end's last words arrive.
        let status = (0..50).find_map(|_| match self.reap() {
            Some(s) => Some(s),
            None => {
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
        // The agent itself missing: the shell's 127, or the path named as the file not found
        // (`/x/upktgen: No such file`, ip netns exec's `exec of "/x/upktgen" failed`), not a program that ran and missed a file of its own
        // (`/bin/cat: agent: No such file`).
        if code == Some(127)
            || text.contains("command not found")
            || text.contains(&format!("{agent}: No such file"))
            || text.contains(&format!("exec of \"{agent}\" failed: No such file"))
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

    /// The agent's exit status once it has exited, after what it left in its process group
    /// is killed (a child it forked, a transport's helper): nothing of the session outlives
    /// it. None while it runs.
    fn reap(&mut self) -> Option<std::process::ExitStatus> {
        if let Ok(Some(s)) = self.child.try_wait() {
            return Some(s); // reaped before
        }
        let pid = self.child.id();
        match crate::sys::proc::exited_unreaped(pid) {
            Ok(true) => {
                // The zombie holds the group's id: the signal reaches that group only.
                let _ = crate::sys::proc::signal_group(pid, libc::SIGKILL);
                self.child.wait().ok()
            }
            Ok(false) => None,
            Err(_) => self.child.try_wait().ok().flatten(),
        }
    }

    fn end(&mut self) -> Result<()> {
        self.stdin.take();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if self.reap().is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // The whole group, the agent's children with it (it leads the group, and is not
        // reaped yet).
        let _ = crate::sys::proc::signal_group(self.child.id(), libc::SIGKILL);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_lines_are_cut_and_the_rest_dropped() {
        let mut input = b"short\n".to_vec();
        input.extend(vec![b'x'; 100_000]);
        input.extend(b"\nnext\nlast");
        let mut r = BufReader::with_capacity(64, &input[..]);
        let mut l = Vec::new();
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), Some(false));
        assert_eq!(l, b"short");
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), Some(true));
        assert_eq!(l, vec![b'x'; 16]);
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), Some(false));
        assert_eq!(l, b"next");
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), Some(false));
        assert_eq!(l, b"last");
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), None);
        // ssh's own messages end with CRLF: the line is without the CR (it was shown as a
        // trailing `\r`); a CR inside a line stays (escaped when shown).
        let mut r = BufReader::new(&b"ssh: Could not resolve hostname x\r\na\rb\n"[..]);
        assert_eq!(read_stderr_line(&mut r, 64, &mut l).unwrap(), Some(false));
        assert_eq!(l, b"ssh: Could not resolve hostname x");
        assert_eq!(read_stderr_line(&mut r, 64, &mut l).unwrap(), Some(false));
        assert_eq!(l, b"a\rb");
        // An endless line without a newline: cut, then the end.
        let endless = vec![b'y'; 1 << 20];
        let mut r = BufReader::new(&endless[..]);
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), Some(true));
        assert_eq!(read_stderr_line(&mut r, 16, &mut l).unwrap(), None);
    }

    #[test]
    fn an_ssh_config_must_be_a_small_regular_file() {
        let uri: PeerUri = "ssh://far".parse().unwrap();
        let e = check_ssh_config(&uri, std::path::Path::new("/dev/null")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "peer ssh://far: --ssh-config /dev/null: not a regular file (a character device)"
        );
        let e = check_ssh_config(&uri, std::path::Path::new("/nonexistent/x")).unwrap_err();
        assert!(e.to_string().contains("No such file"), "{e}");
        let me = std::env::current_exe().unwrap();
        let big = std::fs::metadata(&me).unwrap().len() > MAX_SSH_CONFIG;
        assert_eq!(check_ssh_config(&uri, &me).is_err(), big);
    }
}
