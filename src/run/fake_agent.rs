//! `upktgen agent --fake MODE` (hidden): a far end that misbehaves on purpose, so that the
//! tests can show what the controller does with a hostile or broken far end. It is the real
//! agent (the same answers, the same receivers) but for the one thing each mode does
//! wrong. Nothing in a run uses it; the tests point `--peer-agent` at a two-line script
//! that runs `upktgen agent --fake MODE`.

use super::agent::Agent;
pub use crate::agent::fake::Mode;
use crate::agent::proto::{self, Request, Response};
use serde_json::{Value, json};
use std::io::{BufReader, Write};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How much a flood writes before it stops (so that a controller without bounds, as a
/// test's "before", grows by this much and not without end).
pub const FLOOD_BYTES: u64 = 256 << 20;

type Out = Arc<Mutex<std::io::Stdout>>;

fn write_line(out: &Out, text: &str) -> bool {
    let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
    writeln!(o, "{text}").and_then(|_| o.flush()).is_ok()
}

/// Writes FLOOD_BYTES to `w` in chunks of `chunk` (each a line when it ends in a newline).
fn flood(mut w: impl FnMut(&[u8]) -> bool, chunk: &[u8]) {
    let mut n = 0u64;
    while n < FLOOD_BYTES {
        if !w(chunk) {
            return;
        }
        n += chunk.len() as u64;
    }
}

/// Serves the session on standard input and output, wrongly in the way `mode` says.
pub fn main(mode: Mode, stop: &AtomicBool) -> anyhow::Result<()> {
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    if mode == Mode::ForkHang {
        let child = std::process::Command::new("sleep").arg("600").spawn()?;
        crate::errln!("fake far end: child {}", child.id());
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if mode == Mode::Escapes {
        crate::errln!("\x1b[2J\x1b[1;1H\x1b[32mResult: OK: 999999999 pps (forged)\x1b[0m");
    }
    let mut agent = Agent::new(stop);
    let mut r = BufReader::new(std::io::stdin());
    let mut buf = Vec::new();
    let mut counters_calls = 0;
    while !agent.shutdown {
        match proto::read_line(&mut r, proto::MAX_REQUEST, &mut buf) {
            Ok(true) => {}
            _ => break,
        }
        let Ok(req) = serde_json::from_slice::<Request>(&buf) else {
            continue;
        };
        let method = req.method.clone();
        if method == "hello" && mode == Mode::StderrLine {
            let mut e = std::io::stderr();
            flood(|c| e.write_all(c).is_ok(), &[b'x'; 65536]);
            let _ = e.write_all(b"\n");
        }
        let mut resp = serde_json::to_value(agent.handle(req))?;
        match (mode, method.as_str()) {
            (Mode::Escapes, "hello") => {
                resp["result"]["hostname"] = json!("far\x1b]0;pwned\x07\x1b[2J\rResult: OK");
                resp["result"]["kernel"] = json!("6.0\x1b[31m");
            }
            (Mode::WrongIds, _) => {
                resp["id"] = json!(resp["id"].as_u64().unwrap_or(0) + 1000);
            }
            (Mode::LieVersion, _) => resp["jsonrpc"] = json!("1.0"),
            (Mode::LieCounters, "counters") => {
                counters_calls += 1;
                if counters_calls > 1
                    && let Some(m) = resp["result"].as_object_mut()
                {
                    for c in m.values_mut() {
                        c["rx_packets"] = json!(u64::MAX);
                    }
                }
            }
            (Mode::LieReport, "rx.stop") => {
                let t = &mut resp["result"]["sink"]["totals"]["received"];
                *t = json!(t.as_u64().unwrap_or(1).max(1) * 1_000_000);
            }
            _ => {}
        }
        let text = serde_json::to_string(&resp)?;
        if !write_line(&out, &text) {
            break;
        }
        if method == "rx.start" {
            match mode {
                Mode::StdoutFlood => {
                    let o = Arc::clone(&out);
                    std::thread::spawn(move || {
                        let line = Response::ok(Value::from(0), json!({"pad": "x".repeat(1000)}));
                        let mut l = serde_json::to_string(&line).unwrap_or_default();
                        l.push('\n');
                        flood(
                            |c| {
                                let mut w = o.lock().unwrap_or_else(|p| p.into_inner());
                                w.write_all(c).is_ok()
                            },
                            l.as_bytes(),
                        );
                    });
                }
                Mode::ExitMidRun => {
                    std::thread::spawn(|| {
                        std::thread::sleep(Duration::from_millis(300));
                        crate::errln!("fake far end: exiting in the middle of the run");
                        std::process::exit(3);
                    });
                }
                _ => {}
            }
        }
    }
    drop(agent);
    if mode == Mode::SlowExit {
        std::thread::sleep(Duration::from_secs(10));
    }
    Ok(())
}
