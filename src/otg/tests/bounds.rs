//! The document's bounds: size, depth, flows, YAML aliases.

use super::super::*;

#[test]
fn a_file_over_the_cap_is_refused_before_it_is_read() {
    let p = std::env::temp_dir().join(format!("upktgen-otg-big-{}.json", std::process::id()));
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(100 << 20).unwrap(); // 100 MiB, sparse: nothing to read in
    drop(f);
    let e = read_file(&p).unwrap_err();
    std::fs::remove_file(&p).unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: more than 32 MiB, the most an OTG config may hold",
            p.display()
        )
    );
    let big = vec![b' '; (MAX_DOCUMENT + 1) as usize];
    assert_eq!(
        parse_json(&big).unwrap_err().to_string(),
        "33554433 bytes: more than 32 MiB, the most an OTG config may hold"
    );
    assert_eq!(
        parse_yaml(&big).unwrap_err().why,
        parse_json(&big).unwrap_err().why
    );
}

#[test]
fn a_file_reads_as_json_or_yaml() {
    let dir = std::env::temp_dir();
    let id = std::process::id();
    let j = dir.join(format!("upktgen-otg-{id}.json"));
    let y = dir.join(format!("upktgen-otg-{id}.yaml"));
    std::fs::write(&j, super::EXAMPLE_JSON).unwrap();
    std::fs::write(&y, super::EXAMPLE_YAML).unwrap();
    let (a, b) = (read_file(&j), read_file(&y));
    std::fs::write(&j, "{\"flows\": [").unwrap();
    let broken = read_file(&j).unwrap_err().to_string();
    std::fs::remove_file(&j).unwrap();
    std::fs::remove_file(&y).unwrap();
    assert_eq!(a.unwrap(), super::example());
    assert_eq!(b.unwrap(), super::example());
    assert_eq!(
        broken,
        format!(
            "{}: not JSON: EOF while parsing a list at line 1 column 11",
            j.display()
        )
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{{\"flows\": {}{}}}", "[".repeat(n), "]".repeat(n));
    assert_eq!(
        parse_json(deep(40).as_bytes()).unwrap_err().to_string(),
        "nested deeper than 32 levels"
    );
    // serde_json's own limit stops a far deeper one before it is built.
    let e = parse_json(deep(100_000).as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("not JSON: recursion limit exceeded"), "{e}");
    let e = parse_yaml(deep(40).as_bytes()).unwrap_err().to_string();
    assert!(e.starts_with("not YAML upktgen reads: "), "{e}");
    assert!(e.contains("depth"), "{e}");
}

#[test]
fn at_most_65536_flows() {
    let flow = r#"{"name": "f", "tx_rx": {"port": {"tx_name": "p1"}}}"#;
    let doc = |n: usize| {
        let flows: Vec<String> = (0..n)
            .map(|i| flow.replace("\"f\"", &format!("\"f{i}\"")))
            .collect();
        format!(
            r#"{{"ports": [{{"name": "p1", "location": "eth1"}}], "flows": [{}]}}"#,
            flows.join(",")
        )
    };
    assert_eq!(
        parse_json(doc(100_000).as_bytes()).unwrap_err().to_string(),
        "flows: 100000 flows, more than 65536, the most upktgen runs at once (a stream id has 16 bits)"
    );
    assert_eq!(
        parse_json(doc(MAX_FLOWS).as_bytes()).unwrap().flows.len(),
        65_536
    );
}

#[test]
fn a_yaml_alias_bomb_is_refused_before_it_grows() {
    // Nine levels of ten aliases each: a billion strings once expanded.
    let mut y = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..=9 {
        let p = format!("*a{}", i - 1);
        y.push_str(&format!("a{i}: &a{i} [{}]\n", [p.as_str(); 10].join(",")));
    }
    y.push_str("flows: *a9\n");
    let e = parse_yaml(y.as_bytes()).unwrap_err();
    assert!(matches!(e.why, Why::Document(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("not YAML upktgen reads: alias replay limit exceeded"),
        "{e}"
    );
    // Aliases as such are fine within the limits (the example uses some).
    parse_yaml(super::EXAMPLE_YAML.as_bytes()).unwrap();
}

#[test]
fn yaml_refuses_duplicate_keys_and_reads_no_as_a_string() {
    let e = parse_yaml(b"ports: []\nports: []\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("not YAML upktgen reads: "), "{e}");
    assert!(e.contains("duplicate"), "{e}");
    let e = parse_yaml(b"ports: [{name: p1, location: eth1}]\nflows: [{name: f, tx_rx: {port: {tx_name: p1}}, metrics: {enable: no}}]\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "flows[0].metrics.enable: expected true or false, got \"no\""
    );
    assert_eq!(
        parse_yaml(b"\xff").unwrap_err().to_string(),
        "not UTF-8 text"
    );
}
