//! nftables rules for the loss tests: real drops, counted by the kernel.
#![allow(dead_code)]

use std::process::{Command, Stdio};

/// `nft` (Debian's nftables) for the loss tests; without it the test is skipped.
pub fn nft_or_skip() -> bool {
    crate::harness::tool_or_skip("nft", "apt-get install nftables")
}

/// Loads `rules` (nft -f syntax) inside namespace `ns`.
pub fn apply(ns: &str, rules: &str) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "nft: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The netdev table `upktgen_test` with `numgen inc mod n == n-1 counter drop` on `dev`'s
/// `hook` (ingress or egress).
pub fn drop_every_nth(ns: &str, hook: &str, dev: &str, n: u32) {
    apply(
        ns,
        &format!(
            "table netdev upktgen_test {{\n chain {hook} {{\n  type filter hook {hook} device \"{dev}\" priority 0; policy accept;\n  numgen inc mod {n} == {} counter drop\n }}\n}}\n",
            n - 1
        ),
    );
}

/// The packets counted by the first counter of table `family name` in `ns`.
pub fn counter(ns: &str, family: &str, name: &str) -> u64 {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "list", "table", family, name])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    let at = t
        .find("counter packets ")
        .unwrap_or_else(|| panic!("no counter: {t}"));
    t[at + 16..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The packets counted by `drop_every_nth`'s rule.
pub fn dropped(ns: &str) -> u64 {
    counter(ns, "netdev", "upktgen_test")
}

/// The netdev table `upktgen_test` with `limit rate over RATE/second burst BURST packets
/// counter drop` on `dev`'s ingress: a device of known capacity (a token bucket), what it
/// dropped read by [`dropped`].
pub fn limit_ingress(ns: &str, dev: &str, rate: u32, burst: u32) {
    apply(
        ns,
        &format!(
            "table netdev upktgen_test {{\n chain ingress {{\n  type filter hook ingress device \"{dev}\" priority 0; policy accept;\n  limit rate over {rate}/second burst {burst} packets counter drop\n }}\n}}\n"
        ),
    );
}
