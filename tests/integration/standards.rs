//! The standards the CI enforces, checked where the compiler cannot: `unsafe` stays in
//! crates/sys (every other crate root forbids it), .ci/run runs fmt and clippy, and library
//! errors are typed (no `Result<_, String>`, no `anyhow` below the edges).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source folder of the workspace: the top package's src/ and each layer crate's.
pub(crate) fn source_dirs() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    let mut crates: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

fn all_rust_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for d in source_dirs() {
        rust_files(&d, &mut files);
    }
    files
}

fn unsafe_code_is_forbidden_outside_sys() {
    // `forbid` cannot be lifted by an `allow` further in, so the compiler holds the rest:
    // every crate root but the system layer's forbids unsafe code.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src/lib.rs"), root.join("src/main.rs")];
    for d in source_dirs().into_iter().skip(1) {
        roots.push(d.join("lib.rs"));
    }
    assert!(roots.len() >= 7, "the layer crates were found: {roots:?}");
    for r in roots {
        let text = std::fs::read_to_string(&r).unwrap();
        let sys = r.starts_with(root.join("crates/sys"));
        assert_eq!(
            text.contains("\n#![forbid(unsafe_code)]\n"),
            !sys,
            "{}: every crate root but crates/sys forbids unsafe code",
            r.display()
        );
    }
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("allow(unsafe_code"),
            "{}: no allow of unsafe code (the system layer is a crate of its own)",
            f.display()
        );
    }
}

fn ci_runs_fmt_and_clippy() {
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(ci.contains("\ncargo fmt --all --check\n"), "{ci}");
    assert!(
        ci.contains("\ncargo clippy --workspace --all-targets -- -D warnings\n"),
        "{ci}"
    );
    // The README's test command, which installs what the tests need.
    assert!(ci.ends_with("\ncargo xtask test\n"), "{ci}");
    // ...which tests every crate of the workspace, not only the top package.
    let xtask =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("xtask/src/main.rs"))
            .unwrap();
    assert!(
        xtask.contains(".args([\"test\", \"--workspace\"])"),
        "xtask's test command"
    );
}

/// The integration tests run on a harness of their own (harness.rs): a `#[test]` function
/// there would be compiled out without a word, so none may be written.
fn integration_tests_are_listed_not_attributed() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration"),
        &mut files,
    );
    assert!(files.len() > 20, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, l) in text.lines().enumerate() {
            assert!(
                l.trim() != "#[test]",
                "{}:{}: #[test] is not run here: list the function in the module's TESTS",
                f.display(),
                i + 1
            );
        }
    }
}

/// What `find` finds in each of `files` not in `allowed` (paths from the crate root), as
/// `path:line: text`.
fn findings(
    files: &[std::path::PathBuf],
    allowed: &[&str],
    find: fn(&str) -> Vec<(usize, String)>,
) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if allowed.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        out.extend(
            find(&text)
                .into_iter()
                .map(|(n, l)| format!("{rel}:{n}: {l}")),
        );
    }
    out
}

/// Every `Result<_, String>` type written in `text` (comments skipped): (line number, line).
fn string_results(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let code = l.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("Result<") {
            let args = &rest[at + "Result<".len()..];
            // The arguments up to the matching '>', split at top-level commas.
            let (mut depth, mut last_comma, mut end) = (0i32, None, None);
            for (j, c) in args.char_indices() {
                match c {
                    '<' | '(' | '[' => depth += 1,
                    ')' | ']' => depth -= 1,
                    '>' if depth == 0 => {
                        end = Some(j);
                        break;
                    }
                    '>' => depth -= 1,
                    ',' if depth == 0 => last_comma = Some(j),
                    _ => {}
                }
            }
            if let (Some(c), Some(e)) = (last_comma, end)
                && args[c + 1..e].trim() == "String"
            {
                out.push((i + 1, l.trim().to_string()));
            }
            rest = &args[end.unwrap_or(args.len())..];
        }
    }
    out
}

fn the_string_result_finder_finds_them() {
    let text = "fn a() -> Result<u8, String> {}\n\
                fn b() -> std::result::Result<Vec<(u8, u16)>, String> {}\n\
                type C = Result<String, Error>;\n\
                // fn d() -> Result<(), String>\n\
                fn e(x: Result<(), String>, y: Result<u8, io::Error>) {}\n";
    let found: Vec<usize> = string_results(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [1, 2, 5]);
}

fn library_errors_are_typed_not_strings() {
    // Errors are typed values (an error enum per module); no file answers with a String.
    let allowed: [&str; 0] = [];
    let bad = findings(&all_rust_files(), &allowed, string_results);
    assert!(
        bad.is_empty(),
        "Result<_, String> outside the allow-list: {bad:#?}"
    );
}

/// Every line of `text` whose code (comments skipped) names `anyhow`: (line number, line).
fn anyhow_uses(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.split("//").next().unwrap_or("").contains("anyhow"))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

fn the_anyhow_finder_finds_them() {
    let text = "use anyhow::{Context, Result};\n\
                // anyhow in a comment\n\
                /// docs that name anyhow::Error\n\
                fn a() -> anyhow::Result<()> { Ok(()) }\n\
                let x = 1; // anyhow after the code\n\
                fn b() -> Result<(), Error> { anyhow::bail!(\"no\") }\n\
                fn c() -> Result<(), Error> {}\n";
    let found: Vec<usize> = anyhow_uses(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [1, 4, 6]);
}

fn library_layers_do_not_use_anyhow() {
    // Typed errors in the library layers, `anyhow` at the edges (main, cli, run, ndr,
    // sweep, script, merge, manual, schema): a library error is a value its caller can
    // match, and its message names the file, interface or option. The layer crates
    // (crates/) have no anyhow dependency, so the compiler holds them; these are the
    // top package's library modules.
    let layers = [
        "src/sim",
        "src/outdir.rs",
        "src/metrics",
        "src/http",
        "src/live.rs",
        "src/agent/far.rs",
    ];
    // Library files that may still use it, each with its reason (none today).
    let allowed: [&str; 0] = [];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for l in layers {
        let p = root.join(l);
        assert!(p.exists(), "{l}: no such file or folder (update the list)");
        if p.is_dir() {
            rust_files(&p, &mut files);
        } else {
            files.push(p);
        }
    }
    let bad = findings(&files, &allowed, anyhow_uses);
    assert!(
        bad.is_empty(),
        "anyhow in a library layer (give it a typed error): {bad:#?}"
    );
}

fn unit_tests_sit_in_their_module_or_its_tests_rs() {
    // README's layout: `mod tests { ... }` in the module, or the module's own tests.rs
    // (or NAME_tests.rs) in its folder; never a test file reached through #[path].
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !text.contains("#[path"),
            "{}: a module reached through #[path]",
            f.display()
        );
        assert!(
            name == "tests.rs" || name.ends_with("_tests.rs") || !name.contains("test"),
            "{}: a test file is named tests.rs (or NAME_tests.rs beside it)",
            f.display()
        );
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    unsafe_code_is_forbidden_outside_sys,
    ci_runs_fmt_and_clippy,
    integration_tests_are_listed_not_attributed,
    the_string_result_finder_finds_them,
    library_errors_are_typed_not_strings,
    the_anyhow_finder_finds_them,
    library_layers_do_not_use_anyhow,
    unit_tests_sit_in_their_module_or_its_tests_rs,
];
