//! The layer order of DESIGN.md §4, checked over the source: nothing below the run layer
//! imports the command line, and only `backend/` names the backends one by one.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (path under src/, line number, line) of every non-comment line containing `needle`.
fn uses(needle: &str) -> Vec<(String, usize, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        for (i, l) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let t = l.trim_start();
            if !t.starts_with("//") && t.contains(needle) {
                out.push((rel.clone(), i + 1, l.to_string()));
            }
        }
    }
    out
}

fn nothing_below_the_run_layer_imports_the_command_line() {
    // The command line's readers: the binary, the plan, the commands' entry points
    // (run/mod.rs, run/rx.rs, the agent's requests), and the other configuration sources:
    // scripts, sweep files and the ndr search (DESIGN.md §4), and the experiment core under
    // them, which checks its trials as `run` parses and plans them; and the manual pages and
    // completions, made from the definition itself.
    let allowed = [
        "main.rs",
        "experiment/",
        "ndr/",
        "cli/",
        "run/plan",
        "run/mod.rs",
        "run/rx.rs",
        // The far end reads `upktgen rx`'s own options from its requests.
        "run/agent.rs",
        "script/mod.rs",
        "sweep/",
        "manual.rs",
    ];
    let bad: Vec<_> = uses("crate::cli")
        .into_iter()
        .chain(uses("upktgen::cli"))
        .filter(|(f, _, _)| !allowed.iter().any(|a| f.starts_with(a)))
        .collect();
    assert!(
        bad.is_empty(),
        "imports of cli below the run layer: {bad:#?}"
    );
}

fn only_the_backend_folder_names_each_backend() {
    let mut bad = Vec::new();
    for kind in ["AfPacket", "TxRing", "AfXdp", "XdpLive"] {
        bad.extend(
            uses(&format!("BackendKind::{kind}"))
                .into_iter()
                // Tests may name them; so does the one default of --backend.
                .filter(|(f, _, l)| {
                    let exempt = f.starts_with("backend/")
                        || f.ends_with("tests.rs")
                        || (f == "cli/run.rs" && l.contains("default_value_t"));
                    !exempt
                }),
        );
    }
    assert!(bad.is_empty(), "backends named outside backend/: {bad:#?}");
}

/// The top-level module a file under src/ belongs to (`run/plan.rs` -> `run`, `pcap.rs` ->
/// `pcap`); None for the crate root and the binary.
fn top_module(rel: &str) -> Option<String> {
    let first = rel.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The source with comments and string literals blanked (so `crate::` in a doc line, a
/// comment or a message is not an import).
fn code_only(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            // A raw string's hashes are not handled; the sources have none around `crate::`.
            let raw = i > 0 && b[i - 1] == b'r';
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && !raw {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('"', '\n', '\''); a lifetime is left as it is.
            let end = b[i + 2..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| i + 3 + p);
            i = end;
            out.push_str("' '");
        } else {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules a file's code names through `crate::` (`crate::a::..`,
/// `crate::{a, b::c}`); a macro at the crate root (`crate::errln!`) counts for the module
/// that defines it (`macros`: name -> module).
fn crate_paths(code: &str, macros: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(p) = rest.find("crate::") {
        // `upktgen::` or `$crate::` are not this crate's paths from inside it.
        let before = rest[..p].chars().next_back();
        rest = &rest[p + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let t = rest.trim_start();
        if let Some(group) = t.strip_prefix('{') {
            // The first name of each item at depth 1 of the group.
            let mut depth = 1;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && depth == 1 && (c.is_alphanumeric() || c == '_') => {
                        out.push(ident_at(&group[i..]).to_string());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let id = ident_at(t);
            if t[id.len()..].starts_with('!') {
                if let Some((_, m)) = macros.iter().find(|(n, _)| n == id) {
                    out.push(m.clone());
                }
            } else if !id.is_empty() {
                out.push(id.to_string());
            }
        }
    }
    out
}

/// Edges between top-level modules: (from, to, a file of `from` that makes it).
fn module_graph() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            (rel, code_only(&std::fs::read_to_string(f).unwrap()))
        })
        .collect();
    let mut macros = Vec::new();
    for (rel, code) in &texts {
        let mut rest = code.as_str();
        while let Some(p) = rest.find("macro_rules!") {
            rest = &rest[p + "macro_rules!".len()..];
            if let Some(m) = top_module(rel) {
                macros.push((ident_at(rest.trim_start()).to_string(), m));
            }
        }
    }
    let mods: Vec<String> = texts.iter().filter_map(|(r, _)| top_module(r)).collect();
    let mut edges = Vec::new();
    for (rel, code) in &texts {
        let Some(from) = top_module(rel) else {
            continue;
        };
        for to in crate_paths(code, &macros) {
            if to != from
                && mods.contains(&to)
                && !edges.iter().any(|(a, b, _)| *a == from && *b == to)
            {
                edges.push((from.clone(), to, rel.clone()));
            }
        }
    }
    edges.sort();
    edges
}

/// A cycle of `edges` as the list of its edges, if there is one (depth-first search).
fn find_cycle(edges: &[(String, String, String)]) -> Option<Vec<(String, String, String)>> {
    fn visit<'a>(
        n: &'a str,
        edges: &'a [(String, String, String)],
        state: &mut std::collections::HashMap<&'a str, u8>,
        path: &mut Vec<&'a (String, String, String)>,
    ) -> Option<Vec<(String, String, String)>> {
        state.insert(n, 1);
        for e in edges.iter().filter(|e| e.0 == n) {
            match state.get(e.1.as_str()) {
                Some(1) => {
                    let start = path.iter().position(|p| p.0 == e.1).unwrap_or(path.len());
                    let mut c: Vec<_> = path[start..].iter().map(|&p| p.clone()).collect();
                    c.push(e.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    path.push(e);
                    if let Some(c) = visit(&e.1, edges, state, path) {
                        return Some(c);
                    }
                    path.pop();
                }
            }
        }
        state.insert(n, 2);
        None
    }
    let mut state = std::collections::HashMap::new();
    for e in edges {
        if !state.contains_key(e.0.as_str()) {
            let mut path = Vec::new();
            if let Some(c) = visit(&e.0, edges, &mut state, &mut path) {
                return Some(c);
            }
        }
    }
    None
}

fn the_cycle_finder_finds_cycles() {
    let e = |a: &str, b: &str| (a.to_string(), b.to_string(), format!("{a}.rs"));
    assert_eq!(find_cycle(&[e("a", "b"), e("b", "c"), e("a", "c")]), None);
    let c = find_cycle(&[e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d")]).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(
        crate_paths(
            &code_only(
                "use crate::{a::X, b};\nlet s = \"crate::c\"; // crate::d\ncrate::e::f(); crate::m!(x); upktgen::g"
            ),
            &[("m".into(), "out".into())]
        ),
        ["a", "b", "e", "out"]
    );
}

/// The groups of modules that reach each other (strongly connected, more than one), each
/// with the edges inside it.
fn tangles(edges: &[(String, String, String)]) -> Vec<Vec<(String, String, String)>> {
    let mut nodes: Vec<&str> = edges
        .iter()
        .flat_map(|e| [e.0.as_str(), e.1.as_str()])
        .collect();
    nodes.sort();
    nodes.dedup();
    let ix = |n: &str| nodes.iter().position(|&m| m == n).unwrap();
    let n = nodes.len();
    let mut reach = vec![vec![false; n]; n];
    for e in edges {
        reach[ix(&e.0)][ix(&e.1)] = true;
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                reach[i][j] |= reach[i][k] && reach[k][j];
            }
        }
    }
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for i in 0..n {
        if seen[i] {
            continue;
        }
        let group: Vec<usize> = (0..n)
            .filter(|&j| j == i || (reach[i][j] && reach[j][i]))
            .collect();
        for &j in &group {
            seen[j] = true;
        }
        if group.len() > 1 {
            out.push(
                edges
                    .iter()
                    .filter(|e| group.contains(&ix(&e.0)) && group.contains(&ix(&e.1)))
                    .cloned()
                    .collect(),
            );
        }
    }
    out
}

/// No import cycle between the top-level modules of src/ (a module's files taken as one):
/// each layer uses only the ones below it.
fn no_import_cycle_between_modules() {
    let edges = module_graph();
    assert!(edges.len() > 20, "the graph was read: {edges:?}");
    if let Some(c) = find_cycle(&edges) {
        let show = |es: &[(String, String, String)]| {
            es.iter()
                .map(|(a, b, f)| format!("    {a} -> {b}   (src/{f})"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let groups: Vec<String> = tangles(&edges).iter().map(|g| show(g)).collect();
        panic!(
            "import cycle between modules:\n{}\nall modules that import each other, group by group:\n{}\nmove the shared piece to the lower module",
            show(&c),
            groups.join("\n    --\n")
        );
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    nothing_below_the_run_layer_imports_the_command_line,
    only_the_backend_folder_names_each_backend,
    the_cycle_finder_finds_cycles,
    no_import_cycle_between_modules,
];
