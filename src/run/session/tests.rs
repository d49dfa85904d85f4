//! The session without root: fake observers that log what is called when, a fake send, and
//! one real observer written here in a few lines (the UDP counters of /proc/net/snmp) to
//! show that a new measurement is one type and one entry in the list.

use super::*;
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// Logs its start and finish; fails where asked; writes its name into `extra`.
struct Fake {
    name: &'static str,
    log: Log,
    fail_start: bool,
    fail_finish: bool,
    optional: bool,
}

fn fake(name: &'static str, log: &Log) -> Fake {
    Fake {
        name,
        log: Arc::clone(log),
        fail_start: false,
        fail_finish: false,
        optional: false,
    }
}

impl Observer for Fake {
    fn name(&self) -> &'static str {
        self.name
    }
    fn start(&mut self) -> Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", self.name));
        if self.fail_start {
            anyhow::bail!("{} cannot start", self.name);
        }
        Ok(())
    }
    fn finish(self: Box<Self>, ended: &Ended, parts: &mut Parts) -> Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("finish {} sent={}", self.name, ended.sent));
        if self.fail_finish {
            anyhow::bail!("{} lost", self.name);
        }
        parts
            .extra
            .push((self.name, format!("seen {}", parts.extra.len())));
        Ok(())
    }
    fn optional(&self) -> bool {
        self.optional
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(format!("drop {}", self.name));
    }
}

fn send_ok(log: &Log, sent: u64) -> impl FnOnce(&mut Moments) -> Result<u64> + '_ {
    move |m| {
        m.ready()?;
        log.lock().unwrap().push("send".into());
        m.stopped()?;
        Ok(sent)
    }
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[test]
fn observers_start_before_the_send_and_finish_after_it_in_order() {
    let log = Log::default();
    let obs: Vec<Box<dyn Observer>> = vec![Box::new(fake("a", &log)), Box::new(fake("b", &log))];
    let (sent, parts) = observe(obs, send_ok(&log, 7), |n| *n).unwrap();
    assert_eq!(sent, 7);
    assert_eq!(
        entries(&log),
        [
            "start a",
            "start b",
            "send",
            "finish a sent=7",
            "drop a",
            "finish b sent=7",
            "drop b"
        ]
    );
    // b came after a and saw its part.
    assert_eq!(
        parts.extra,
        [("a", "seen 0".to_string()), ("b", "seen 1".to_string())]
    );
    assert!(parts.missing.is_empty());
}

#[test]
fn an_observer_that_cannot_start_ends_the_session_before_anything_is_sent() {
    let log = Log::default();
    let mut b = fake("b", &log);
    b.fail_start = true;
    let obs: Vec<Box<dyn Observer>> = vec![
        Box::new(fake("a", &log)),
        Box::new(b),
        Box::new(fake("c", &log)),
    ];
    let e = observe(obs, send_ok(&log, 7), |n| *n).unwrap_err();
    assert_eq!(format!("{e:#}"), "starting the b: b cannot start");
    let l = entries(&log);
    assert!(!l.contains(&"send".to_string()), "{l:?}");
    assert!(!l.iter().any(|e| e.starts_with("finish")), "{l:?}");
    // Every observer made is released (a lab receiver, a far end, ...).
    for n in ["drop a", "drop b", "drop c"] {
        assert!(l.contains(&n.to_string()), "{l:?}");
    }
}

#[test]
fn an_optional_part_that_fails_is_named_and_the_rest_is_reported() {
    let log = Log::default();
    let mut far = fake("far end", &log);
    (far.fail_finish, far.optional) = (true, true);
    let obs: Vec<Box<dyn Observer>> = vec![
        Box::new(fake("a", &log)),
        Box::new(far),
        Box::new(fake("c", &log)),
    ];
    let (_, parts) = observe(obs, send_ok(&log, 3), |n| *n).unwrap();
    assert_eq!(parts.missing, [("far end", "far end lost".to_string())]);
    assert_eq!(parts.extra.len(), 2);
}

#[test]
fn a_required_part_that_fails_fails_the_run_after_every_observer_finished() {
    let log = Log::default();
    let mut a = fake("a", &log);
    a.fail_finish = true;
    let obs: Vec<Box<dyn Observer>> = vec![Box::new(a), Box::new(fake("b", &log))];
    let e = observe(obs, send_ok(&log, 3), |n| *n).unwrap_err();
    assert_eq!(format!("{e:#}"), "the a: a lost");
    assert!(entries(&log).contains(&"finish b sent=3".to_string()));
}

#[test]
fn a_send_that_fails_finishes_no_observer_and_releases_every_one() {
    let log = Log::default();
    let obs: Vec<Box<dyn Observer>> = vec![Box::new(fake("a", &log))];
    let e = observe(
        obs,
        |_: &mut Moments| -> Result<u64> { anyhow::bail!("no socket") },
        |n| *n,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "no socket");
    assert_eq!(entries(&log), ["start a", "drop a"]);
}

/// A new measurement in a few lines: the UDP counters of this namespace's /proc/net/snmp
/// around the send.
struct UdpCounters {
    before: Option<crate::sample::SnmpSnapshot>,
}

impl Observer for UdpCounters {
    fn name(&self) -> &'static str {
        "UDP counters"
    }
    fn start(&mut self) -> Result<()> {
        self.before = Some(crate::sample::SnmpSnapshot::read()?);
        Ok(())
    }
    fn finish(self: Box<Self>, _: &Ended, parts: &mut Parts) -> Result<()> {
        let after = crate::sample::SnmpSnapshot::read()?;
        let before = self.before.expect("started");
        let changed = before.changed(&after);
        let udp: Vec<String> = changed
            .iter()
            .filter(|(k, _)| k.starts_with("Udp."))
            .map(|(k, d)| format!("{k} {d}"))
            .collect();
        parts.extra.push(("Udp", udp.join(", ")));
        Ok(())
    }
}

#[test]
fn a_new_observer_is_one_type_the_udp_counters_of_proc_net_snmp() {
    // The send: one real datagram on loopback (no root), so Udp.OutDatagrams moves.
    let send = |_: &mut Moments| -> Result<u64> {
        let s = std::net::UdpSocket::bind("127.0.0.1:0")?;
        s.send_to(b"upktgen", s.local_addr()?)?;
        let mut b = [0u8; 16];
        s.recv(&mut b)?;
        Ok(1)
    };
    let obs: Vec<Box<dyn Observer>> = vec![Box::new(UdpCounters { before: None })];
    let (_, parts) = observe(obs, send, |n| *n).unwrap();
    let (label, text) = &parts.extra[0];
    assert_eq!(*label, "Udp");
    // Other processes may send too: at least ours is counted.
    let out: i64 = text
        .split(", ")
        .find_map(|kv| kv.strip_prefix("Udp.OutDatagrams "))
        .unwrap_or_else(|| panic!("no Udp.OutDatagrams in {text:?}"))
        .parse()
        .unwrap();
    assert!(out >= 1, "{text}");
}

/// Logs the two moments of the send; fails at `ready` where asked.
struct Timed {
    log: Log,
    fail_ready: bool,
}

impl Observer for Timed {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn ready(&mut self) -> Result<()> {
        self.log.lock().unwrap().push("ready".into());
        if self.fail_ready {
            anyhow::bail!("no /proc/stat");
        }
        Ok(())
    }
    fn stopped(&mut self) -> Result<()> {
        self.log.lock().unwrap().push("stopped".into());
        Ok(())
    }
    fn finish(self: Box<Self>, _: &Ended, _: &mut Parts) -> Result<()> {
        self.log.lock().unwrap().push("finish clock".into());
        Ok(())
    }
}

#[test]
fn the_moments_of_the_send_come_between_start_and_finish() {
    let log = Log::default();
    let obs: Vec<Box<dyn Observer>> = vec![
        Box::new(fake("a", &log)),
        Box::new(Timed {
            log: Arc::clone(&log),
            fail_ready: false,
        }),
    ];
    observe(obs, send_ok(&log, 1), |n| *n).unwrap();
    assert_eq!(
        entries(&log),
        [
            "start a",
            "ready",
            "send",
            "stopped",
            "finish a sent=1",
            "drop a",
            "finish clock"
        ]
    );
    // A moment that fails is the send's error, naming the observer; nothing is finished.
    let log = Log::default();
    let obs: Vec<Box<dyn Observer>> = vec![Box::new(Timed {
        log: Arc::clone(&log),
        fail_ready: true,
    })];
    let e = observe(obs, send_ok(&log, 1), |n| *n).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        "the clock before the start: no /proc/stat"
    );
    assert_eq!(entries(&log), ["ready"]);
}
