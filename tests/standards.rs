//! The standards the CI enforces, checked where the compiler cannot: `unsafe` stays in
//! src/sys (the crate root denies it elsewhere), and .ci/run runs fmt and clippy.

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

#[test]
fn unsafe_code_is_denied_outside_sys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("\n#![deny(unsafe_code)]\n"),
        "src/lib.rs must deny unsafe code"
    );
    let allows: Vec<&str> = lib
        .lines()
        .filter(|l| l.contains("allow(unsafe_code)"))
        .collect();
    assert_eq!(allows, ["#[allow(unsafe_code)]"], "one allow, for sys");
    assert!(
        lib.contains("#[allow(unsafe_code)]\npub mod sys;\n"),
        "the allow is sys's"
    );
    let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    assert!(
        main.contains("#![deny(unsafe_code)]"),
        "src/main.rs must deny unsafe code"
    );
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for f in files {
        // The one allow (checked above) and the module that uses it.
        if f.starts_with(root.join("src/sys")) || f == root.join("src/lib.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, l) in text.lines().enumerate() {
            let code = l.split("//").next().unwrap_or("");
            assert!(
                !code.contains("unsafe ")
                    && !code.contains("unsafe(")
                    && !code.contains("allow(unsafe_code"),
                "{}:{}: unsafe outside src/sys: {l}",
                f.display(),
                i + 1
            );
        }
    }
}

#[test]
fn ci_runs_fmt_and_clippy() {
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(ci.contains("\ncargo fmt --check\n"), "{ci}");
    assert!(
        ci.contains("\ncargo clippy --all-targets -- -D warnings\n"),
        "{ci}"
    );
}
