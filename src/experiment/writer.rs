//! An experiment's results: the record rewritten whole as the trials end (through the atomic
//! writer: a temporary file renamed), and the files drawn from it written into the session
//! directory ([`SessionDir`]: only what upktgen wrote is replaced or removed).

use crate::outdir::SessionDir;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A JSON-lines file (a header line, then one line per record), rewritten whole after each
/// trial, so it always holds exactly the records given last.
pub struct Journal {
    path: PathBuf,
    text: String,
    header_len: usize,
    record_schema: &'static str,
}

impl Journal {
    /// Writes `header` (as `header_schema`) and `old` at `path`.
    pub fn new<H: Serialize, T: Serialize>(
        path: PathBuf,
        header_schema: &'static str,
        header: &H,
        record_schema: &'static str,
        old: &[T],
    ) -> Result<Self> {
        let text = crate::schema::to_line(header_schema, header)? + "\n";
        let header_len = text.len();
        let mut j = Journal {
            path,
            text,
            header_len,
            record_schema,
        };
        j.save(old)?;
        Ok(j)
    }

    /// The file holds the header and exactly `records`.
    pub fn save<T: Serialize>(&mut self, records: &[T]) -> Result<()> {
        self.text.truncate(self.header_len);
        for r in records {
            self.text
                .push_str(&crate::schema::to_line(self.record_schema, r)?);
            self.text.push('\n');
        }
        Ok(crate::outfile::write_text(&self.path, &self.text)?)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// One file of a session directory rewritten while the experiment goes (after a trial, at
/// most once per `every`), so an experiment killed outright leaves what it did so far. A
/// failure is reported once (`what`: the message's prefix) and the experiment goes on; the
/// final write reports it again as an error.
pub struct Checkpoint {
    dir: Option<SessionDir>,
    name: &'static str,
    what: &'static str,
    every: Duration,
    last: Option<Instant>,
    warned: bool,
}

impl Checkpoint {
    /// Checkpoints `name` into `dir` (none without a directory).
    pub fn new(
        dir: Option<SessionDir>,
        name: &'static str,
        what: &'static str,
        every: Duration,
    ) -> Self {
        Checkpoint {
            dir,
            name,
            what,
            every,
            last: None,
            warned: false,
        }
    }

    /// The directory, for the final write.
    pub fn into_dir(self) -> Option<SessionDir> {
        self.dir
    }

    /// Writes the text `make` gives unless the last write was less than `every` ago.
    pub fn save(&mut self, make: impl FnOnce() -> Result<String>) {
        let Some(dir) = &mut self.dir else { return };
        if self.last.is_some_and(|t| t.elapsed() < self.every) {
            return;
        }
        self.last = Some(Instant::now());
        let res = make().and_then(|text| Ok(dir.write(self.name, &text)?));
        if let Err(e) = res
            && !self.warned
        {
            self.warned = true;
            crate::errln!("{}: {e:#}", self.what);
        }
    }
}

/// Writes `files` (name, text) into the session directory in order, then ends the session
/// (files an earlier session wrote and this one did not are removed). Returns the names
/// written and the names removed.
pub fn write_files(
    mut dir: SessionDir,
    files: Vec<(String, String)>,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut written = Vec::new();
    for (name, text) in files {
        dir.write(&name, &text)?;
        written.push(name);
    }
    let removed = dir.finish()?;
    Ok((written, removed))
}

/// Says (with the command's `tag`, `[sweep]`) which files of an earlier session in `dir`
/// were removed (none: nothing).
pub fn removed_note(tag: &str, dir: &Path, removed: &[String]) {
    if !removed.is_empty() {
        crate::errln!(
            "{tag} removed {} from {}: an earlier session wrote them and this one did not",
            removed.join(", "),
            dir.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("upktgen-writer-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_journal_holds_the_header_and_exactly_the_records_given_last() {
        let d = tmp("journal");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("r.jsonl");
        let mut j = Journal::new(
            p.clone(),
            crate::schema::NDR_RESULTS,
            &serde_json::json!({"a": 1}),
            crate::schema::NDR_TRIAL,
            &[1, 2, 3].map(|n| serde_json::json!({ "n": n })),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 4);
        j.save(&[serde_json::json!({"n": 7})]).unwrap();
        let t = std::fs::read_to_string(&p).unwrap();
        assert_eq!(t.lines().count(), 2, "{t}");
        assert!(t.lines().nth(1).unwrap().contains("\"n\":7"), "{t}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_session_keeps_only_what_it_wrote() {
        let d = tmp("files");
        let s = SessionDir::open(&d, "--out", &[]).unwrap();
        let f = |n: &str| (n.to_string(), format!("{n}\n"));
        let (w, r) = write_files(s, vec![f("a.csv"), f("b.svg")]).unwrap();
        assert_eq!((w.len(), r.len()), (2, 0));
        let s = SessionDir::open(&d, "--out", &[]).unwrap();
        let (w, r) = write_files(s, vec![f("a.csv")]).unwrap();
        assert_eq!(w, ["a.csv"]);
        assert_eq!(r, ["b.svg"]);
        assert!(!d.join("b.svg").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
