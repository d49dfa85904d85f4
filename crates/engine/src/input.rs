//! The one way upktgen reads an input file: as a stream, with a stated cap ([`Capped`]).
//!
//! A named input must be a regular file: it is opened without blocking (O_NONBLOCK, so a
//! FIFO without a writer cannot hang the open) and refused by what it is (a FIFO, a
//! directory, a device) before anything is read, so nothing waits forever on an input
//! that never comes. A regular file larger than the cap is refused from its size. Standard
//! input (`-`) is read as a stream until the cap and refused there, so memory stays
//! bounded by the cap whatever the input. Every refusal names the limit.
//! The caps: a script line [`MAX_SCRIPT_LINE`], a script [`MAX_SCRIPT`], a sweep file
//! [`MAX_SWEEP_FILE`], a JSON document [`MAX_JSON`], a pcap file to replay
//! [`MAX_REPLAY`](crate::pcap::MAX_REPLAY) (its records read one at a time, each bounded by
//! [`MAX_CAPLEN`](crate::pcap::MAX_CAPLEN)).

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The longest line of a script (`upktgen script`), in bytes.
pub const MAX_SCRIPT_LINE: usize = 64 << 10;
/// The largest script.
pub const MAX_SCRIPT: u64 = 16 << 20;
/// The largest file of a `--session` directory (its log, a proc file, its manifest).
pub const MAX_SESSION_FILE: u64 = 16 << 20;
/// The largest sweep file.
pub const MAX_SWEEP_FILE: u64 = 1 << 20;
/// The largest JSON document (`compare`, `sweep --redraw`).
pub const MAX_JSON: u64 = 256 << 20;

/// `65536` -> "64 KiB", `16 << 20` -> "16 MiB".
pub fn size_text(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// An input over its cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooBig {
    pub cap: u64,
    /// What the cap is of: "a script", "a JSON document" ...
    pub what: &'static str,
}

impl fmt::Display for TooBig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "more than {}, the most {} may hold",
            size_text(self.cap),
            self.what
        )
    }
}

impl std::error::Error for TooBig {}

/// The [`TooBig`] inside an I/O error from a [`Capped`] reader, if that is what it is.
pub fn too_big(e: &io::Error) -> Option<&TooBig> {
    e.get_ref().and_then(|i| i.downcast_ref::<TooBig>())
}

/// Why an input could not be read.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    TooBig(TooBig),
    /// A line (1-based) longer than the line cap.
    LongLine(usize, usize),
    /// Not UTF-8 (at a line, 1-based, when read by lines).
    NotUtf8(Option<usize>),
    /// A name that is not a regular file: what it is ("a FIFO", "a directory" ...).
    NotRegular(&'static str),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooBig(t) => write!(f, "{t}"),
            ReadError::LongLine(n, cap) => write!(
                f,
                "line {n}: longer than {}, the most a line may hold",
                size_text(*cap as u64)
            ),
            ReadError::NotUtf8(Some(n)) => write!(f, "line {n}: not UTF-8 text"),
            ReadError::NotUtf8(None) => write!(f, "not UTF-8 text"),
            ReadError::NotRegular(what) => write!(f, "{what}, not a regular file"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        match too_big(&e) {
            Some(t) => ReadError::TooBig(t.clone()),
            None => ReadError::Io(e),
        }
    }
}

/// A reader that fails with [`TooBig`] once more than `cap` bytes come from `inner`.
pub struct Capped<R> {
    inner: R,
    left: u64,
    limit: TooBig,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, cap: u64, what: &'static str) -> Self {
        Capped {
            inner,
            left: cap,
            limit: TooBig { cap, what },
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: one more byte says the input goes on.
            let mut one = [0u8; 1];
            return match self.inner.read(&mut one)? {
                0 => Ok(0),
                _ => Err(io::Error::other(self.limit.clone())),
            };
        }
        let n = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got as u64;
        Ok(got)
    }
}

/// Opens `path` (`-` for standard input) capped at `cap`; a regular file larger than the cap
/// is refused from its size at once.
pub fn open(
    path: &Path,
    cap: u64,
    what: &'static str,
) -> Result<BufReader<Capped<Box<dyn Read>>>, ReadError> {
    let inner: Box<dyn Read> = if path == Path::new("-") {
        Box::new(io::stdin())
    } else {
        let f = open_regular(path)?;
        if f.metadata()?.len() > cap {
            return Err(ReadError::TooBig(TooBig { cap, what }));
        }
        Box::new(f)
    };
    Ok(BufReader::new(Capped::new(inner, cap, what)))
}

/// What a file type is, for a message ("a FIFO").
pub fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading only if it is a regular file (following links): opened with
/// O_NONBLOCK, so that a FIFO without a writer does not block the open, then refused by
/// what fstat says it is before anything is read. (O_NONBLOCK does nothing to a regular
/// file's reads.) Every named input goes through here.
pub fn open_regular(path: &Path) -> Result<std::fs::File, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(ReadError::NotRegular(kind_of(&t)));
    }
    Ok(f)
}

/// Whether `path` names a regular file, for a file another program reads (`sh FILE`):
/// the reason when not ("no such file", "a directory, not a regular file" ...).
pub fn check_regular(path: &Path) -> Result<(), ReadError> {
    let m = std::fs::metadata(path)?;
    if !m.is_file() {
        return Err(ReadError::NotRegular(kind_of(&m.file_type())));
    }
    Ok(())
}

/// The whole of `path` as UTF-8 text, at most `cap` bytes.
pub fn read_text(path: &Path, cap: u64, what: &'static str) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    open(path, cap, what)?.read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8(None))
}

/// The lines of `r` (without their `\n` or `\r\n`), numbered from 1, each at most
/// `line_cap` bytes: a longer line is refused as soon as it is seen, without reading the
/// rest of it.
pub fn read_lines(
    r: &mut impl BufRead,
    line_cap: usize,
) -> Result<Vec<(usize, String)>, ReadError> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = r
            .by_ref()
            .take(line_cap as u64 + 2)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        let no = out.len() + 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > line_cap {
            return Err(ReadError::LongLine(no, line_cap));
        }
        let line = String::from_utf8(std::mem::take(&mut buf))
            .map_err(|_| ReadError::NotUtf8(Some(no)))?;
        out.push((no, line));
    }
}

/// A JSON document that could not be read, or is not what was asked for: the message names
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("reading {}: {err}", .path.display())]
    Read { path: PathBuf, err: ReadError },
    /// JSON, but not of the shape `what` names.
    #[error("{}: not {what}: {err}", .path.display())]
    NotWhat {
        path: PathBuf,
        what: &'static str,
        err: serde_json::Error,
    },
    #[error("{}: not JSON: {err}", .path.display())]
    NotJson {
        path: PathBuf,
        err: serde_json::Error,
    },
}

/// A JSON document from `path`, read as a stream of at most `cap` bytes; `what` says what
/// it should be ("a sweep's runs.json"), for messages.
pub fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    cap: u64,
    what: &'static str,
) -> Result<T, JsonError> {
    let path = path.to_path_buf();
    let r = match open(&path, cap, what) {
        Ok(r) => r,
        Err(err) => return Err(JsonError::Read { path, err }),
    };
    serde_json::from_reader(r).map_err(|err| {
        if err.is_io() {
            let io: io::Error = err.into();
            JsonError::Read {
                path,
                err: ReadError::from(io),
            }
        } else if err.is_data() {
            JsonError::NotWhat { path, what, err }
        } else {
            JsonError::NotJson { path, err }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_reader_names_its_limit_and_stops_there() {
        let mut r = Capped::new(io::repeat(0), 1000, "a test input");
        let mut v = Vec::new();
        let e = ReadError::from(r.read_to_end(&mut v).unwrap_err());
        assert_eq!(
            e.to_string(),
            "more than 1000 bytes, the most a test input may hold"
        );
        assert_eq!(v.len(), 1000, "nothing past the cap is kept");
        // Exactly the cap is fine.
        let mut v = Vec::new();
        Capped::new(&[7u8; 1000][..], 1000, "x")
            .read_to_end(&mut v)
            .unwrap();
        assert_eq!(v.len(), 1000);
        assert_eq!(size_text(64 << 10), "64 KiB");
        assert_eq!(size_text(256 << 20), "256 MiB");
    }

    #[test]
    fn a_regular_file_over_the_cap_is_refused_from_its_size() {
        let p = std::env::temp_dir().join(format!("upktgen-input-{}", std::process::id()));
        std::fs::write(&p, "0123456789").unwrap();
        let e = read_text(&p, 9, "a nine").unwrap_err();
        assert!(matches!(e, ReadError::TooBig(_)), "{e}");
        assert_eq!(read_text(&p, 10, "a ten").unwrap(), "0123456789");
        std::fs::remove_file(&p).unwrap();
        // A stream is capped as it is read.
        let mut v = Vec::new();
        let e = Capped::new(std::fs::File::open("/dev/zero").unwrap(), 4096, "a page")
            .read_to_end(&mut v)
            .unwrap_err();
        assert_eq!(
            ReadError::from(e).to_string(),
            "more than 4 KiB, the most a page may hold"
        );
    }

    #[test]
    fn what_is_not_a_regular_file_is_refused_before_it_is_read() {
        let d = std::env::temp_dir().join(format!("upktgen-input-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("p");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // No writer: the open does not block, and the FIFO is named as what it is.
        let e = read_text(&fifo, 100, "x").unwrap_err().to_string();
        assert_eq!(e, "a FIFO (named pipe), not a regular file");
        let e = read_text(&d, 100, "x").unwrap_err().to_string();
        assert!(e.starts_with("a directory, not a regular file"), "{e}");
        let e = read_text(Path::new("/dev/zero"), 100, "x").unwrap_err();
        assert!(
            matches!(e, ReadError::NotRegular("a character device")),
            "{e}"
        );
        assert!(check_regular(&fifo).is_err());
        assert!(matches!(
            check_regular(&d.join("none")),
            Err(ReadError::Io(e)) if e.kind() == io::ErrorKind::NotFound
        ));
        let f = d.join("f");
        std::fs::write(&f, "ok").unwrap();
        check_regular(&f).unwrap();
        assert_eq!(read_text(&f, 100, "x").unwrap(), "ok");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn lines_are_capped_one_by_one() {
        let mut r = io::Cursor::new(b"a\r\nbb\n\nccc".to_vec());
        let l = read_lines(&mut r, 3).unwrap();
        assert_eq!(
            l,
            [
                (1, "a".into()),
                (2, "bb".into()),
                (3, String::new()),
                (4, "ccc".into())
            ]
        );
        let mut r = io::Cursor::new(b"ok\nfour\n".to_vec());
        assert_eq!(
            read_lines(&mut r, 3).unwrap_err().to_string(),
            "line 2: longer than 3 bytes, the most a line may hold"
        );
        // An endless line is refused after the cap, not read to its end.
        let mut r = BufReader::new(io::repeat(b'x'));
        assert!(matches!(
            read_lines(&mut r, MAX_SCRIPT_LINE),
            Err(ReadError::LongLine(1, MAX_SCRIPT_LINE))
        ));
        let mut r = io::Cursor::new(b"ok\n\xff\n".to_vec());
        assert_eq!(
            read_lines(&mut r, 3).unwrap_err().to_string(),
            "line 2: not UTF-8 text"
        );
    }

    #[test]
    fn json_streams_and_stops_at_the_cap() {
        let p = std::env::temp_dir().join(format!("upktgen-input-json-{}", std::process::id()));
        std::fs::write(&p, "  [1, 2]  ").unwrap();
        let v: serde_json::Value = read_json(&p, 100, "x").unwrap();
        assert_eq!(v, serde_json::json!([1, 2]));
        let e = read_json::<serde_json::Value>(&p, 5, "a JSON document").unwrap_err();
        assert!(
            format!("{e:#}").ends_with("more than 5 bytes, the most a JSON document may hold"),
            "{e:#}"
        );
        std::fs::remove_file(&p).unwrap();
    }
}
