//! One line of a script: `TARGET COMMAND...`, `echo COMMAND > /proc/net/pktgen/TARGET`,
//! `show TARGET` / `cat /proc/net/pktgen/TARGET`, a `#` comment or nothing.

/// Where the kernel's files live; accepted in front of every target.
pub const PROC_DIR: &str = "/proc/net/pktgen/";

/// The kernel limits an added device's name (`eth0@tag`) to 31 bytes.
pub const MAX_DEV_NAME: usize = 31;
/// An interface name is at most IFNAMSIZ - 1 bytes.
pub use crate::sys::MAX_IFNAME;

/// A file under /proc/net/pktgen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `pgctrl`: start, stop, reset.
    Pgctrl,
    /// `kpktgend_N`: the thread on CPU N.
    Thread(usize),
    /// A device as added (`eth0`, `eth0@1`).
    Dev(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Pgctrl => f.write_str("pgctrl"),
            Target::Thread(n) => write!(f, "kpktgend_{n}"),
            Target::Dev(d) => f.write_str(d),
        }
    }
}

/// A parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Blank or comment.
    Empty,
    /// What `echo "CMD" > /proc/net/pktgen/TARGET` does.
    Write { target: Target, cmd: String },
    /// What `cat /proc/net/pktgen/TARGET` does.
    Show(Target),
}

/// Why a line of a script cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// A device name pktgen's add_device would not take.
    #[error("'{0}': no interface name before '@'")]
    NoIfname(String),
    #[error("'{0}': an interface name has at most {MAX_IFNAME} bytes")]
    LongIfname(String),
    #[error("'{0}': a device name (with its @tag) has at most {MAX_DEV_NAME} bytes")]
    LongDevName(String),
    #[error("'{0}' is not an interface name")]
    NotIfname(String),
    #[error("'{}': {c:?} cannot appear in a device name", .name.escape_debug())]
    BadChar { name: String, c: char },
    #[error("'{0}': no such thread number")]
    NoSuchThread(String),
    #[error("'{0}': a thread is kpktgend_N with N a CPU number")]
    NotThread(String),
    #[error(
        "'{0}': not a pktgen file (targets are pgctrl, kpktgend_N or a device, optionally as {PROC_DIR}NAME)"
    )]
    NotPktgenFile(String),
    #[error("unterminated {0} quote")]
    Unterminated(char),
    #[error("echo: '>' without a file")]
    EchoNoFile,
    #[error("echo: unexpected '{0}' after the file")]
    EchoExtra(String),
    #[error("echo: no '> /proc/net/pktgen/TARGET'")]
    EchoNoTarget,
    #[error("{0}: give one target (pgctrl, kpktgend_N or a device)")]
    ShowTargets(String),
    #[error("{0}: no command")]
    NoCommand(String),
}

/// Checks a device name as pktgen's add_device takes it: `IFNAME` or `IFNAME@TAG`, where
/// IFNAME is a valid Linux interface name.
pub fn check_dev_name(name: &str) -> Result<(), LineError> {
    let base = name.split('@').next().unwrap_or("");
    let name_s = || name.to_string();
    if base.is_empty() {
        return Err(LineError::NoIfname(name_s()));
    }
    if base.len() > MAX_IFNAME {
        return Err(LineError::LongIfname(name_s()));
    }
    if name.len() > MAX_DEV_NAME {
        return Err(LineError::LongDevName(name_s()));
    }
    if base == "." || base == ".." {
        return Err(LineError::NotIfname(name_s()));
    }
    if let Some(c) = name
        .chars()
        .find(|c| *c == '/' || *c == ':' || c.is_whitespace() || c.is_control())
    {
        return Err(LineError::BadChar { name: name_s(), c });
    }
    Ok(())
}

/// `pgctrl`, `kpktgend_N`, a device name, each optionally spelled with /proc/net/pktgen/.
pub fn parse_target(word: &str) -> Result<Target, LineError> {
    let w = word.strip_prefix(PROC_DIR).unwrap_or(word);
    if w == "pgctrl" {
        return Ok(Target::Pgctrl);
    }
    if let Some(n) = w.strip_prefix("kpktgend_") {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return n
                .parse()
                .map(Target::Thread)
                .map_err(|_| LineError::NoSuchThread(w.to_string()));
        }
        return Err(LineError::NotThread(w.to_string()));
    }
    if w.starts_with('/') {
        return Err(LineError::NotPktgenFile(word.to_string()));
    }
    check_dev_name(w)?;
    Ok(Target::Dev(w.to_string()))
}

/// Splits a line into words as a shell would for these purposes: blanks separate, single
/// and double quotes group (and are removed), `#` at the start of a word begins a comment.
pub fn words(line: &str) -> Result<Vec<String>, LineError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '"' | '\'' => {
                in_word = true;
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == c {
                        closed = true;
                        break;
                    }
                    cur.push(d);
                }
                if !closed {
                    return Err(LineError::Unterminated(c));
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// Parses one line.
pub fn parse_line(line: &str) -> Result<Line, LineError> {
    let w = words(line)?;
    let Some(first) = w.first() else {
        return Ok(Line::Empty);
    };
    match first.as_str() {
        "echo" => {
            // echo [-n] WORDS... > TARGET  (also `>TARGET`)
            let mut cmd: Vec<&str> = Vec::new();
            let mut target: Option<&str> = None;
            let mut it = w[1..].iter().peekable();
            if it.peek().is_some_and(|s| *s == "-n" || *s == "-e") {
                it.next();
            }
            while let Some(s) = it.next() {
                if s == ">" || s == ">>" {
                    let t = it.next().ok_or(LineError::EchoNoFile)?;
                    target = Some(t);
                    break;
                }
                if let Some(t) = s.strip_prefix(">>").or_else(|| s.strip_prefix('>')) {
                    target = Some(t);
                    break;
                }
                cmd.push(s);
            }
            if let Some(extra) = it.next() {
                return Err(LineError::EchoExtra(extra.to_string()));
            }
            let t = target.ok_or(LineError::EchoNoTarget)?;
            Ok(Line::Write {
                target: parse_target(t)?,
                cmd: nonempty(cmd.join(" "), t)?,
            })
        }
        "show" | "cat" => match &w[1..] {
            [t] => Ok(Line::Show(parse_target(t)?)),
            _ => Err(LineError::ShowTargets(first.to_string())),
        },
        t => {
            let target = parse_target(t)?;
            Ok(Line::Write {
                target,
                cmd: nonempty(w[1..].join(" "), t)?,
            })
        }
    }
}

fn nonempty(cmd: String, target: &str) -> Result<String, LineError> {
    if cmd.trim().is_empty() {
        Err(LineError::NoCommand(target.to_string()))
    } else {
        Ok(cmd)
    }
}
