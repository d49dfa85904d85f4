//! A session directory: a directory a command fills with its output files (`sweep --out`,
//! `sweep --redraw`), and the record of what it wrote there.
//!
//! upktgen replaces or removes in such a directory only what it can prove it wrote: the
//! names listed in the directory's manifest ([`MANIFEST`]), which every session keeps up to
//! date (a name is listed before its file is written, so an interrupted session's files
//! are listed too). So:
//! - a missing directory is created; an empty one is used;
//! - a directory with entries but no manifest is refused, naming some of them (writing
//!   there could replace files upktgen did not write), except for the inputs the caller
//!   names (`runs.json` for `--redraw`);
//! - in a directory with a manifest, a file at a name the manifest does not list is never
//!   replaced (the write is refused, naming it);
//! - when the session ends ([`SessionDir::finish`]), the files the previous session wrote and
//!   this one did not (a plot of a point no longer swept) are removed, and the manifest then
//!   lists exactly this session's files. Only regular files are removed, never a directory
//!   or a link, and only plain names inside the directory.

use crate::outfile::{self, OutFileError};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

/// The manifest's name inside a session directory.
pub const MANIFEST: &str = ".upktgen-manifest";

/// The manifest's first line.
const HEADER: &str =
    "# upktgen: the files it wrote in this directory (it replaces or removes only these)";

/// Entries named in a refusal at most.
const SHOWN: usize = 3;

/// Why a session directory cannot be used, or a file in it written or removed: the message
/// names the option, the directory or file, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum SessionDirError {
    #[error(transparent)]
    Dir(#[from] OutFileError),
    #[error(
        "{what} {}: not empty ({}) and without upktgen's manifest {MANIFEST}, so upktgen cannot tell its files from others: give a new or empty directory",
        .dir.display(), .entries
    )]
    NotOurs {
        what: String,
        dir: PathBuf,
        /// The first few entries, and how many more.
        entries: String,
    },
    #[error(
        "{what}: {} exists and upktgen's manifest does not list it (upktgen did not write it): move it away or give another directory",
        .path.display()
    )]
    Foreign { what: String, path: PathBuf },
    #[error("{}: line {line}: `{text}` is not a file name; this is not a manifest upktgen wrote: remove it or give another directory", .path.display())]
    BadManifest {
        path: PathBuf,
        line: usize,
        text: String,
    },
    #[error("reading {}: {err}", .path.display())]
    Read { path: PathBuf, err: io::Error },
    #[error("reading {}: {err}", .path.display())]
    ReadManifest {
        path: PathBuf,
        err: crate::input::ReadError,
    },
    #[error("removing {}, which an earlier session wrote: {err}", .path.display())]
    Remove { path: PathBuf, err: io::Error },
}

/// A session directory being written; see the module's documentation.
#[derive(Debug)]
pub struct SessionDir {
    dir: PathBuf,
    what: String,
    /// What the manifest listed when the session began.
    before: BTreeSet<String>,
    /// What this session wrote.
    written: BTreeSet<String>,
    /// Names the caller reads and does not write (never refused, never removed).
    inputs: BTreeSet<String>,
}

/// Whether `name` is one plain file name (no separator, not `.` or `..`, not the manifest).
fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && name != MANIFEST
}

fn read_manifest(path: &Path) -> Result<Option<BTreeSet<String>>, SessionDirError> {
    let text = match crate::input::read_text(path, 1 << 20, "a session directory's manifest") {
        Ok(t) => t,
        Err(crate::input::ReadError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(err) => {
            return Err(SessionDirError::ReadManifest {
                path: path.to_path_buf(),
                err,
            });
        }
    };
    let mut names = BTreeSet::new();
    for (i, l) in text.lines().enumerate() {
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        if !plain(l) {
            return Err(SessionDirError::BadManifest {
                path: path.to_path_buf(),
                line: i + 1,
                text: l.to_string(),
            });
        }
        names.insert(l.to_string());
    }
    Ok(Some(names))
}

impl SessionDir {
    /// Opens `dir` for a session (`what` names the option, for messages; `inputs` are names
    /// in it the session only reads). See the module's documentation for what is refused.
    pub fn open(dir: &Path, what: &str, inputs: &[&str]) -> Result<SessionDir, SessionDirError> {
        outfile::out_dir(dir, what)?;
        let before = match read_manifest(&dir.join(MANIFEST))? {
            Some(names) => names,
            None => {
                let rd = std::fs::read_dir(dir).map_err(|err| SessionDirError::Read {
                    path: dir.to_path_buf(),
                    err,
                })?;
                let mut others: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !inputs.contains(&n.as_str()))
                    .collect();
                if !others.is_empty() {
                    others.sort();
                    let more = others.len().saturating_sub(SHOWN);
                    let mut entries = others[..others.len().min(SHOWN)].join(", ");
                    if more > 0 {
                        entries += &format!(" and {more} more");
                    }
                    return Err(SessionDirError::NotOurs {
                        what: what.to_string(),
                        dir: dir.to_path_buf(),
                        entries,
                    });
                }
                BTreeSet::new()
            }
        };
        Ok(SessionDir {
            dir: dir.to_path_buf(),
            what: what.to_string(),
            before,
            written: BTreeSet::new(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `text` as the file `name` in the directory (with [`outfile`]: whole and
    /// atomically, keeping the mode of the file it replaces), listing it in the manifest
    /// first. Refused when a file is at `name` that upktgen cannot prove it wrote.
    pub fn write(&mut self, name: &str, text: &str) -> Result<(), SessionDirError> {
        assert!(plain(name), "a session file is a plain name: {name}");
        let path = self.dir.join(name);
        let listed = self.before.contains(name) || self.written.contains(name);
        if !listed && !self.inputs.contains(name) && std::fs::symlink_metadata(&path).is_ok() {
            return Err(SessionDirError::Foreign {
                what: self.what.clone(),
                path,
            });
        }
        if self.written.insert(name.to_string()) && !listed {
            let all: BTreeSet<&String> = self.before.iter().chain(&self.written).collect();
            self.save_manifest(all)?;
        }
        Ok(outfile::write_text(&path, text)?)
    }

    fn save_manifest<'a>(
        &self,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), SessionDirError> {
        let mut text = String::from(HEADER);
        text.push('\n');
        for n in names {
            text.push_str(n);
            text.push('\n');
        }
        Ok(outfile::write_text(&self.dir.join(MANIFEST), &text)?)
    }

    /// Ends the session: removes the files the previous session wrote and this one did not
    /// (regular files only), and leaves a manifest listing this session's files (and the
    /// inputs an earlier session wrote). Returns the names removed.
    pub fn finish(self) -> Result<Vec<String>, SessionDirError> {
        let mut removed = Vec::new();
        let mut keep: BTreeSet<&String> = self.written.iter().collect();
        for n in self.before.difference(&self.written) {
            if self.inputs.contains(n) {
                keep.insert(n);
                continue;
            }
            let path = self.dir.join(n);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => match std::fs::remove_file(&path) {
                    Ok(()) => removed.push(n.clone()),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(err) => return Err(SessionDirError::Remove { path, err }),
                },
                // Not a regular file any more (a directory, a link): not what upktgen wrote.
                _ => {}
            }
        }
        self.save_manifest(keep)?;
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("upktgen-outdir-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
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
    fn a_new_directory_gets_a_manifest_and_a_later_session_removes_only_its_stale_files() {
        let d = tmp_dir("stale");
        let mut s = SessionDir::open(&d, "--out", &[]).unwrap();
        s.write("a.svg", "a").unwrap();
        s.write("b.svg", "b").unwrap();
        s.write("a.svg", "a2").unwrap();
        assert_eq!(s.finish().unwrap(), Vec::<String>::new());
        assert_eq!(names(&d), [MANIFEST, "a.svg", "b.svg"]);
        // The user adds a file of their own after the session.
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let mut s = SessionDir::open(&d, "--out", &[]).unwrap();
        s.write("a.svg", "a3").unwrap();
        // b.svg was the earlier session's and not this one's: removed; notes.txt stays.
        assert_eq!(s.finish().unwrap(), ["b.svg"]);
        assert_eq!(names(&d), [MANIFEST, "a.svg", "notes.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("a.svg")).unwrap(), "a3");
        let m = std::fs::read_to_string(d.join(MANIFEST)).unwrap();
        assert_eq!(m.lines().skip(1).collect::<Vec<_>>(), ["a.svg"]);
        // A file of the user's at a name the session writes is not replaced.
        let mut s = SessionDir::open(&d, "--out", &[]).unwrap();
        let e = s.write("notes.txt", "x").unwrap_err().to_string();
        assert!(
            e.contains("notes.txt exists and upktgen's manifest does not list it"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "mine"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_directory_with_files_and_no_manifest_is_refused_and_left_as_it_was() {
        let d = tmp_dir("foreign");
        std::fs::create_dir_all(&d).unwrap();
        for n in ["index.html", "thesis.tex", "z", "y"] {
            std::fs::write(d.join(n), n).unwrap();
        }
        let e = SessionDir::open(&d, "--out", &[]).unwrap_err().to_string();
        assert!(
            e.contains(
                "not empty (index.html, thesis.tex, y and 1 more) and without upktgen's manifest"
            ),
            "{e}"
        );
        assert_eq!(names(&d), ["index.html", "thesis.tex", "y", "z"]);
        // An input the caller names is allowed (--redraw's runs.json), and kept.
        let d2 = tmp_dir("input");
        std::fs::create_dir_all(&d2).unwrap();
        std::fs::write(d2.join("runs.json"), "{}").unwrap();
        let mut s = SessionDir::open(&d2, "--redraw", &["runs.json"]).unwrap();
        s.write("index.html", "i").unwrap();
        s.finish().unwrap();
        let mut s = SessionDir::open(&d2, "--redraw", &["runs.json"]).unwrap();
        s.write("summary.csv", "s").unwrap();
        assert_eq!(s.finish().unwrap(), ["index.html"]);
        assert_eq!(names(&d2), [MANIFEST, "runs.json", "summary.csv"]);
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&d2).unwrap();
    }

    #[test]
    fn a_manifest_cannot_name_anything_outside_the_directory_and_links_are_not_removed() {
        let d = tmp_dir("evil");
        std::fs::create_dir_all(&d).unwrap();
        let outside = tmp_dir("evil-outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("precious"), "p").unwrap();
        std::fs::write(d.join(MANIFEST), "# x\n../evil-outside/precious\n").unwrap();
        let e = SessionDir::open(&d, "--out", &[]).unwrap_err().to_string();
        assert!(
            e.contains("line 2: `../evil-outside/precious` is not a file name"),
            "{e}"
        );
        // A listed name that is now a link (or a directory) is left alone.
        std::fs::write(d.join(MANIFEST), "# x\nl\nsub\n").unwrap();
        std::os::unix::fs::symlink(outside.join("precious"), d.join("l")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let s = SessionDir::open(&d, "--out", &[]).unwrap();
        assert_eq!(s.finish().unwrap(), Vec::<String>::new());
        assert_eq!(names(&d), [MANIFEST, "l", "sub"]);
        assert_eq!(
            std::fs::read_to_string(outside.join("precious")).unwrap(),
            "p"
        );
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
