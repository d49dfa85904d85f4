//! The figures a sweep summarises, read from a run's JSON (`upktgen run --json`) or a
//! simulation's (`upktgen sim --json`); both carry pktgen's Result and top's shares.

use crate::sample::CpuShares;
use crate::sender::PktgenResult;
use serde_json::Value;

/// One run's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub result: PktgenResult,
    pub cpu: CpuShares,
    pub interrupts: u64,
    pub wakes: u64,
    pub stops: u64,
}

fn u(v: &Value, k: &str) -> Option<u64> {
    v.get(k)?.as_u64()
}

fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k)?.as_f64()
}

impl Metrics {
    /// Reads the figures of a run report (`system`, `outcome.backend.queue`) or a simulation
    /// (`outcome.cpu`, `outcome.queue`). None when the document is neither.
    pub fn from_json(v: &Value) -> Option<Metrics> {
        let o = v.get("outcome")?;
        let r = o.get("result")?;
        let result = PktgenResult {
            elapsed_ns: u(r, "elapsed_ns")?,
            idle_ns: u(r, "idle_ns")?,
            sent: u(r, "sent")?,
            pkt_size: u32::try_from(u(r, "pkt_size")?).ok()?,
            frags: u32::try_from(u(r, "frags").unwrap_or(0)).ok()?,
            errors: u(r, "errors").unwrap_or(0),
            imix_bytes: u(r, "imix_bytes"),
            size_range: None,
        };
        let (cpu, interrupts, queue) = match v.get("system") {
            Some(s) => (
                s.get("cpu_all")?,
                u(s, "interrupts")?,
                o.get("backend")?.get("queue")?,
            ),
            None => (o.get("cpu")?, u(o, "interrupts")?, o.get("queue")?),
        };
        let cpu = CpuShares {
            us: f(cpu, "us")?,
            sy: f(cpu, "sy")?,
            ni: f(cpu, "ni").unwrap_or(0.0),
            id: f(cpu, "id")?,
            wa: f(cpu, "wa").unwrap_or(0.0),
            hi: f(cpu, "hi")?,
            si: f(cpu, "si")?,
            st: f(cpu, "st").unwrap_or(0.0),
        };
        Some(Metrics {
            result,
            cpu,
            interrupts,
            wakes: u(queue, "wakes").unwrap_or(0),
            stops: u(queue, "stops").unwrap_or(0),
        })
    }

    /// The seed's three report lines after `Iteration K (label):`, reusing the report's
    /// formatters.
    pub fn seed_lines(&self) -> String {
        format!(
            "{}\nResult: {}\nInterrupts: {}\n",
            self.cpu.top_line("Cpu(s)"),
            self.result.lines(),
            self.interrupts
        )
    }

    pub fn pps(&self) -> f64 {
        self.result.pps() as f64
    }

    fn per_packet(&self, n: u64) -> f64 {
        n as f64 / self.result.sent.max(1) as f64
    }

    pub fn irq_per_packet(&self) -> f64 {
        self.per_packet(self.interrupts)
    }

    pub fn wakes_per_packet(&self) -> f64 {
        self.per_packet(self.wakes)
    }

    /// pktgen's idle (d) as a share of the elapsed time, in percent.
    pub fn sender_idle_pct(&self) -> f64 {
        self.result.idle_ns as f64 * 100.0 / self.result.elapsed_ns.max(1) as f64
    }
}

/// A metric by name, for tables, CSV and comparisons.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Column name (CSV).
    pub key: &'static str,
    /// What it is, with its unit, for people.
    pub title: &'static str,
    /// How a sentence names it ("interrupts", "idle time").
    pub noun: &'static str,
    pub get: fn(&Metrics) -> f64,
}

/// The metrics compared and summarised, pps first.
pub const FIELDS: [Field; 8] = [
    Field {
        key: "pps",
        title: "packets per second",
        noun: "pps",
        get: Metrics::pps,
    },
    Field {
        key: "irq_per_pkt",
        title: "interrupts per packet",
        noun: "interrupts per packet",
        get: Metrics::irq_per_packet,
    },
    Field {
        key: "wakes_per_pkt",
        title: "queue wakes per packet",
        noun: "wakes per packet",
        get: Metrics::wakes_per_packet,
    },
    Field {
        key: "cpu_id",
        title: "CPU idle (% of CPU time)",
        noun: "idle time",
        get: |m| m.cpu.id,
    },
    Field {
        key: "cpu_sy",
        title: "CPU system (% of CPU time)",
        noun: "system time",
        get: |m| m.cpu.sy,
    },
    Field {
        key: "cpu_hi",
        title: "CPU hard interrupts (% of CPU time)",
        noun: "hard-interrupt time",
        get: |m| m.cpu.hi,
    },
    Field {
        key: "cpu_si",
        title: "CPU softirqs (% of CPU time)",
        noun: "softirq time",
        get: |m| m.cpu.si,
    },
    Field {
        key: "sender_idle_pct",
        title: "sender idle d/E (%)",
        noun: "sender idle (d)",
        get: Metrics::sender_idle_pct,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_simulation_and_a_run_report() {
        let sim = serde_json::json!({"model": {}, "outcome": {
            "result": {"elapsed_ns": 2_000_000_000u64, "idle_ns": 500_000_000u64, "sent": 300000, "pkt_size": 60, "frags": 0, "errors": 0},
            "cpu": {"us": 0.3, "sy": 20.0, "ni": 0.0, "id": 0.0, "wa": 0.0, "hi": 30.0, "si": 49.7, "st": 0.0},
            "interrupts": 150000, "queue": {"posted": 1, "completed": 1, "stops": 10, "wakes": 30000}}});
        let m = Metrics::from_json(&sim).unwrap();
        assert_eq!(m.pps(), 150_000.0);
        assert_eq!(m.irq_per_packet(), 0.5);
        assert_eq!(m.wakes_per_packet(), 0.1);
        assert_eq!(m.sender_idle_pct(), 25.0);
        assert!(m.seed_lines().starts_with("Cpu(s):  0.3%us, 20.0%sy,"));
        assert!(m.seed_lines().contains(
            "\nResult: OK: 2000000(c1500000+d500000) usec, 300000 (60byte,0frags)\n  150000pps"
        ));
        let run = serde_json::json!({
            "outcome": {"result": {"elapsed_ns": 1_000_000_000u64, "idle_ns": 0, "sent": 1000, "pkt_size": 60, "frags": 0, "errors": 0},
                        "backend": {"queue": {"stops": 2, "wakes": 2}}},
            "system": {"cpu_all": {"us": 1.0, "sy": 2.0, "ni": 0.0, "id": 97.0, "wa": 0.0, "hi": 0.0, "si": 0.0, "st": 0.0},
                       "interrupts": 10}});
        let m = Metrics::from_json(&run).unwrap();
        assert_eq!((m.interrupts, m.wakes, m.cpu.id), (10, 2, 97.0));
        assert!(Metrics::from_json(&serde_json::json!({"outcome": {}})).is_none());
    }
}
