//! The one way upktgen writes an output file ([`OutFile`]).
//!
//! - A name under `/dev/` or `/proc/` (`/dev/stdout`, `/dev/null`, `/dev/fd/N`), or one that
//!   is itself a FIFO, a character device or a socket, is opened and written directly: it
//!   must exist, and nothing is created, replaced or removed there.
//! - Every other name is written to a new temporary file in the same directory (created
//!   exclusively, with an unpredictable name) and renamed over the name when the writer is
//!   committed. An existing file is replaced whole and atomically (a reader sees the old file
//!   or the new one, never half of one); a symbolic link at the name is replaced by the file,
//!   and what it pointed to is left untouched (rename never follows a link). A writer
//!   dropped without [`OutFile::commit`] (an error, a panic) removes its temporary file and
//!   leaves the old file as it was.
//! - A replaced regular file keeps what it was: its permission bits (not set-user-ID or
//!   set-group-ID) and, where this process may give them, its owner and group. A new file
//!   gets the default mode (0666 less the umask).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// An output file being written; see the module's documentation.
pub struct OutFile {
    file: File,
    /// The temporary file and the name it becomes; None when written directly.
    rename: Option<(PathBuf, PathBuf)>,
}

/// Whether `path` is written in place rather than replaced: a name under /dev or /proc, or
/// a FIFO, character device or socket (the name itself, not what a link at it points to).
pub fn is_stream(path: &Path) -> bool {
    if path.starts_with("/dev") || path.starts_with("/proc") {
        return true;
    }
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        t.is_fifo() || t.is_char_device() || t.is_socket()
    })
}

/// 64 bits nobody can guess in advance, for a temporary file's name.
fn unpredictable() -> u64 {
    let mut b = [0u8; 8];
    let urandom = File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut b));
    let r = u64::from_le_bytes(b);
    if urandom.is_ok() && r != 0 {
        return r;
    }
    crate::rng::Rng::new(crate::sys::realtime_ns() ^ u64::from(std::process::id())).next_u64()
}

impl OutFile {
    /// Opens `path` for writing as described in the module's documentation.
    pub fn create(path: &Path) -> io::Result<OutFile> {
        if is_stream(path) {
            let file = OpenOptions::new().write(true).open(path)?;
            return Ok(OutFile { file, rename: None });
        }
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
            .to_string_lossy()
            .into_owned();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tries = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", unpredictable()));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .mode(0o666)
                .open(&tmp)
            {
                Ok(file) => {
                    return Ok(OutFile {
                        file,
                        rename: Some((tmp, path.to_path_buf())),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Flushes, syncs and renames the temporary file over the name (a direct write is only
    /// flushed).
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        if let Some((tmp, name)) = self.rename.take() {
            let done = self
                .keep_what_it_replaces(&name)
                .and_then(|()| self.file.sync_all())
                .and_then(|()| std::fs::rename(&tmp, &name));
            if done.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            done?;
        }
        Ok(())
    }
}

impl OutFile {
    /// Gives the temporary file the permission bits, owner and group of the regular file at
    /// `name` (not of what a link there points to: the link is what is replaced).
    fn keep_what_it_replaces(&self, name: &Path) -> io::Result<()> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let Ok(old) = std::fs::symlink_metadata(name) else {
            return Ok(());
        };
        if !old.is_file() {
            return Ok(());
        }
        // The owner first: changing it clears set-ID bits, and the mode comes after.
        // Giving a file away needs CAP_CHOWN; without it the new file is the writer's.
        match std::os::unix::fs::fchown(&self.file, Some(old.uid()), Some(old.gid())) {
            Err(e) if e.raw_os_error() != Some(libc::EPERM) => return Err(e),
            _ => {}
        }
        self.file
            .set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o1777))
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.rename.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `bytes` to `path` with an [`OutFile`].
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OutFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// An output file or directory that could not be written or used: the message names it
/// (and the option, for a directory) and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum OutFileError {
    #[error("writing {}: {err}", .path.display())]
    Write { path: PathBuf, err: io::Error },
    /// `what`: the option; `to`: where the link points (or why that is unknown).
    #[error("{what} {}: a symbolic link (to {to}); give the directory itself", .dir.display())]
    DirIsLink {
        what: String,
        dir: PathBuf,
        to: String,
    },
    #[error("{what} {}: not a directory", .dir.display())]
    NotDir { what: String, dir: PathBuf },
    #[error("{what} {}: cannot create the directory: {err}", .dir.display())]
    CreateDir {
        what: String,
        dir: PathBuf,
        err: io::Error,
    },
}

/// [`write`] of a text, the error naming the file.
pub fn write_text(path: &Path, text: &str) -> Result<(), OutFileError> {
    write(path, text.as_bytes()).map_err(|err| OutFileError::Write {
        path: path.to_path_buf(),
        err,
    })
}

/// A directory to write output files into (`what` names the option, e.g. `--out`): created
/// when missing (its parents too); refused when it is a symbolic link (a link planted where
/// the directory was expected would send the files elsewhere; the message names the
/// target to give instead) or not a directory.
pub fn out_dir(dir: &Path, what: &str) -> Result<(), OutFileError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            let to = std::fs::read_link(dir).map(|t| t.display().to_string());
            Err(OutFileError::DirIsLink {
                what: what.to_string(),
                dir: dir.to_path_buf(),
                to: to.unwrap_or_else(|e| e.to_string()),
            })
        }
        Ok(m) if !m.is_dir() => Err(OutFileError::NotDir {
            what: what.to_string(),
            dir: dir.to_path_buf(),
        }),
        Ok(_) => Ok(()),
        Err(_) => std::fs::create_dir_all(dir).map_err(|err| OutFileError::CreateDir {
            what: what.to_string(),
            dir: dir.to_path_buf(),
            err,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tmp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("upktgen-outfile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_link_at_the_name_is_replaced_and_its_target_untouched() {
        let d = tmp_dir("link");
        let target = d.join("target");
        std::fs::write(&target, "precious").unwrap();
        let name = d.join("out.txt");
        symlink(&target, &name).unwrap();
        write(&name, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(&name)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "new");
        // A dangling link too: nothing is created where it points.
        let name2 = d.join("dangling");
        symlink(d.join("nowhere"), &name2).unwrap();
        write(&name2, b"x").unwrap();
        assert!(!d.join("nowhere").exists());
        assert_eq!(names(&d), ["dangling", "out.txt", "target"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_existing_file_is_replaced_whole_and_a_dropped_writer_leaves_it() {
        let d = tmp_dir("replace");
        let name = d.join("f");
        std::fs::write(&name, "a long old content").unwrap();
        // A hard link to the old file keeps the old content: the name gets a new file.
        std::fs::hard_link(&name, d.join("hard")).unwrap();
        write(&name, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "new");
        assert_eq!(
            std::fs::read_to_string(d.join("hard")).unwrap(),
            "a long old content"
        );
        let mut w = OutFile::create(&name).unwrap();
        w.write_all(b"half").unwrap();
        assert_eq!(names(&d).len(), 3, "the temporary file is beside it");
        drop(w);
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "new");
        assert_eq!(names(&d), ["f", "hard"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_default() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmp_dir("mode");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let private = d.join("private");
        std::fs::write(&private, "old").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        write(&private, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&private).unwrap(), "new");
        assert_eq!(mode(&private), 0o600);
        let open = d.join("open");
        std::fs::write(&open, "old").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o754)).unwrap();
        write(&open, b"new").unwrap();
        assert_eq!(mode(&open), 0o754);
        // Set-user-ID is not carried over.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o4755)).unwrap();
        write(&open, b"newer").unwrap();
        assert_eq!(mode(&open), 0o755);
        // A new file: what create(2) gives with 0666 and this process's umask.
        let fresh = d.join("fresh");
        write(&fresh, b"x").unwrap();
        let reference = d.join("reference");
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&reference)
            .unwrap();
        assert_eq!(mode(&fresh), mode(&reference));
        // A link at the name: the link is replaced, the new file does not take its 0777.
        let target = d.join("target");
        std::fs::write(&target, "t").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        let l = d.join("l");
        symlink(&target, &l).unwrap();
        write(&l, b"x").unwrap();
        assert_eq!(mode(&l), mode(&reference));
        assert_eq!(mode(&target), 0o700);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_replaced_file_keeps_its_owner_when_the_writer_may_give_it() {
        use std::os::unix::fs::MetadataExt;
        let d = tmp_dir("owner");
        let f = d.join("f");
        std::fs::write(&f, "old").unwrap();
        let me = std::fs::metadata(&f).unwrap();
        // Root may give a file to anyone: the old file belongs to nobody (65534) and so does
        // the new one. Anyone else keeps their own files.
        if std::os::unix::fs::chown(&f, Some(65534), Some(65534)).is_ok() {
            write(&f, b"new").unwrap();
            let m = std::fs::metadata(&f).unwrap();
            assert_eq!((m.uid(), m.gid()), (65534, 65534));
        } else {
            write(&f, b"new").unwrap();
            let m = std::fs::metadata(&f).unwrap();
            assert_eq!((m.uid(), m.gid()), (me.uid(), me.gid()));
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_and_fifos_are_written_in_place() {
        assert!(is_stream(Path::new("/dev/null")));
        assert!(is_stream(Path::new("/dev/stdout")));
        write(Path::new("/dev/null"), b"x").unwrap();
        let d = tmp_dir("fifo");
        let fifo = d.join("p");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(is_stream(&fifo));
        let f2 = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(f2).unwrap());
        write(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert_eq!(names(&d), ["p"]);
        // A link to a device elsewhere is not a device name: it is replaced.
        let l = d.join("l");
        symlink("/dev/null", &l).unwrap();
        assert!(!is_stream(&l));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn out_dir_refuses_a_link_and_a_file() {
        let d = tmp_dir("dir");
        let real = d.join("real");
        std::fs::create_dir(&real).unwrap();
        let l = d.join("l");
        symlink(&real, &l).unwrap();
        let e = out_dir(&l, "--out").unwrap_err().to_string();
        assert!(
            e.contains("a symbolic link (to ") && e.contains("real"),
            "{e}"
        );
        std::fs::write(d.join("f"), "").unwrap();
        let e = out_dir(&d.join("f"), "--out").unwrap_err().to_string();
        assert!(e.ends_with("not a directory"), "{e}");
        out_dir(&d.join("new/sub"), "--out").unwrap();
        assert!(d.join("new/sub").is_dir());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
