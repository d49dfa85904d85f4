//! `upktgen compare A [B]`: two experiments' results compared, each kind by its own figures
//! (a sweep: every figure of two points' runs; ndr: the NDR per frame size), through one
//! entry that knows the kinds, reads a results directory (`--out DIR`) as the results file
//! it holds, and hands the pair to the kind that takes it.

use crate::cli::CompareArgs;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// A kind of experiment results that `upktgen compare` reads.
pub trait Results: Sync {
    /// The results file in a results directory of this kind (`runs.json`, `trials.jsonl`).
    fn file_in_dir(&self) -> &'static str;
    /// Whether this kind compares `a` with `b` (or within `a` alone).
    fn takes(&self, a: &Path, b: Option<&Path>) -> bool;
    /// Compares and prints the comparison; an error when it cannot be made.
    fn compare(&self, args: &CompareArgs) -> Result<()>;
}

/// The results file `path` stands for: itself, or for a directory the first of `kinds`'
/// results files it holds.
fn resolve(path: &Path, kinds: &[&dyn Results]) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    for k in kinds {
        let f = path.join(k.file_in_dir());
        if f.is_file() {
            return Ok(f);
        }
    }
    bail!(
        "{}: a directory without {}: not an experiment's results directory",
        path.display(),
        kinds
            .iter()
            .map(|k| k.file_in_dir())
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

/// `upktgen compare`: the first of `kinds` that takes the pair compares it.
pub fn compare_cli(args: &CompareArgs, kinds: &[&dyn Results]) -> Result<()> {
    let mut args = args.clone();
    args.a = resolve(&args.a, kinds)?;
    if let Some(b) = &args.b {
        args.b = Some(resolve(b, kinds)?);
    }
    match kinds.iter().find(|k| k.takes(&args.a, args.b.as_deref())) {
        Some(k) => k.compare(&args),
        None => bail!("{}: no kind of results upktgen compares", args.a.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Kind {
        file: &'static str,
        seen: Mutex<Vec<PathBuf>>,
    }

    impl Results for Kind {
        fn file_in_dir(&self) -> &'static str {
            self.file
        }
        fn takes(&self, a: &Path, _b: Option<&Path>) -> bool {
            a.ends_with(self.file)
        }
        fn compare(&self, args: &CompareArgs) -> Result<()> {
            let mut s = self.seen.lock().unwrap();
            s.push(args.a.clone());
            s.extend(args.b.clone());
            Ok(())
        }
    }

    #[test]
    fn a_results_directory_is_read_as_its_results_file() {
        let d = std::env::temp_dir().join(format!("upktgen-cmp-{}", std::process::id()));
        let (x, y) = (d.join("x"), d.join("y"));
        std::fs::create_dir_all(&x).unwrap();
        std::fs::create_dir_all(&y).unwrap();
        std::fs::write(x.join("trials.jsonl"), "").unwrap();
        std::fs::write(y.join("trials.jsonl"), "").unwrap();
        let ndr = Kind {
            file: "trials.jsonl",
            seen: Mutex::new(vec![]),
        };
        let sweep = Kind {
            file: "runs.json",
            seen: Mutex::new(vec![]),
        };
        let args = |a: &Path, b: Option<&Path>| CompareArgs {
            a: a.to_path_buf(),
            b: b.map(Path::to_path_buf),
            sel_a: None,
            sel_b: None,
        };
        compare_cli(&args(&x, Some(&y)), &[&sweep, &ndr]).unwrap();
        assert_eq!(
            *ndr.seen.lock().unwrap(),
            [x.join("trials.jsonl"), y.join("trials.jsonl")]
        );
        assert!(sweep.seen.lock().unwrap().is_empty());
        let e = compare_cli(&args(&d, None), &[&sweep, &ndr])
            .unwrap_err()
            .to_string();
        assert!(e.contains("without runs.json or trials.jsonl"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
