//! End-to-end: `upktgen man` and `upktgen completions` from the one command-line
//! definition. The pages render with man(1) without a warning (where man is installed;
//! their roff structure is checked in any case), and the bash script loads and registers
//! the completion. Needs no privilege and no lab.

use crate::common::*;
use clap::CommandFactory;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}

fn man_writes_a_page_per_subcommand_that_renders_without_warnings() {
    let dir = tmp_dir("manual", "man");
    let out = dir.join("pages");
    let o = upktgen(&["man", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // upktgen.1 and one page per subcommand of the definition.
    let mut want: Vec<String> = upktgen::cli::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| format!("upktgen-{}.1", c.get_name()))
        .chain(["upktgen.1".to_string()])
        .collect();
    want.sort();
    assert!(
        stderr(&o).contains(&format!("wrote {} manual pages", want.len())),
        "{}",
        stderr(&o)
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, want);
    for n in [
        "upktgen-run.1",
        "upktgen-rx.1",
        "upktgen-script.1",
        "upktgen-man.1",
        "upktgen-completions.1",
    ] {
        assert!(names.iter().any(|m| m == n), "{n} in {names:?}");
    }
    let man = have("man");
    for n in &names {
        let page = out.join(n);
        let roff = std::fs::read_to_string(&page).unwrap();
        let title = n.trim_end_matches(".1");
        assert!(roff.contains(&format!(".TH {title} 1 ")), "{n}: title line");
        for s in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION"] {
            assert!(roff.contains(s), "{n}: {s}");
        }
        if man {
            let r = Command::new("man")
                .args(["--warnings", "-l"])
                .arg(&page)
                .env("MANWIDTH", "80")
                .env("MAN_KEEP_FORMATTING", "0")
                .output()
                .unwrap();
            // Bold and underline may come as overstrikes (c BS c): keep the last of each.
            let mut text = String::new();
            for c in String::from_utf8_lossy(&r.stdout).chars() {
                if c == '\u{8}' {
                    text.pop();
                } else {
                    text.push(c);
                }
            }
            let warn = String::from_utf8_lossy(&r.stderr);
            assert!(r.status.success(), "{n}: man -l failed: {warn}");
            assert!(warn.trim().is_empty(), "{n}: man -l warns:\n{warn}");
            assert!(text.contains("SYNOPSIS"), "{n}: rendered:\n{text:.300}");
        }
    }
    let run = std::fs::read_to_string(out.join("upktgen-run.1")).unwrap();
    assert!(run.contains("ratep"), "run's page lists its options");
    // Without --out: upktgen.1 on standard output.
    let o = upktgen(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        std::fs::read_to_string(out.join("upktgen.1")).unwrap()
    );
}

fn bash_completion_loads_and_registers() {
    let bin = env!("CARGO_BIN_EXE_upktgen");
    let o = Command::new("bash")
        .args([
            "--norc",
            "-c",
            &format!("source <('{bin}' completions bash) && complete -p upktgen"),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.starts_with("complete ") && line.trim_end().ends_with(" upktgen"),
        "{line}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).trim().is_empty(),
        "loads without a message"
    );
    // The function completes a subcommand's options.
    let o = Command::new("bash")
        .args([
            "--norc",
            "-c",
            &format!(
                "source <('{bin}' completions bash); COMP_WORDS=(upktgen run --rat); COMP_CWORD=2; _upktgen upktgen --rat run; printf '%s\\n' \"${{COMPREPLY[@]}}\""
            ),
        ])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&o.stdout);
    assert!(words.lines().any(|w| w == "--ratep"), "{words}");
}

fn zsh_and_fish_scripts_are_well_formed() {
    let zsh = upktgen(&["completions", "zsh"]);
    assert!(zsh.status.success());
    let z = String::from_utf8_lossy(&zsh.stdout);
    assert!(z.starts_with("#compdef upktgen"), "{z:.80}");
    let fish = upktgen(&["completions", "fish"]);
    assert!(fish.status.success());
    let f = String::from_utf8_lossy(&fish.stdout);
    assert!(f.contains("complete -c upktgen"), "{f:.80}");
    for (shell, script, check) in [("zsh", &z, "-n"), ("fish", &f, "--no-execute")] {
        if have(shell) {
            let dir = tmp_dir("manual", shell);
            let p = dir.join("script");
            std::fs::write(&p, script.as_bytes()).unwrap();
            let r = Command::new(shell).arg(check).arg(&p).output().unwrap();
            assert!(
                r.status.success(),
                "{shell} {check}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
        }
    }
    let bad = upktgen(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("tcsh"), "{}", stderr(&bad));
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    man_writes_a_page_per_subcommand_that_renders_without_warnings,
    bash_completion_loads_and_registers,
    zsh_and_fish_scripts_are_well_formed,
];
