//! top's `Cpu(s):` line.

use serde::Serialize;

/// CPU time shares in percent, in top's field order (us sy ni id wa hi si st).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CpuShares {
    pub us: f64,
    pub sy: f64,
    pub ni: f64,
    pub id: f64,
    pub wa: f64,
    pub hi: f64,
    pub si: f64,
    pub st: f64,
}

impl CpuShares {
    /// Percent of time not idle and not waiting for I/O.
    pub fn busy(&self) -> f64 {
        100.0 - self.id - self.wa
    }

    /// The line as top (procps 3.2, the seed's era) prints it, e.g.
    /// `Cpu(s):  0.3%us, 13.6%sy,  0.0%ni,  0.0%id,  0.0%wa, 31.2%hi, 54.8%si,  0.0%st`.
    /// `label` is `Cpu(s)` for all CPUs or `Cpu0` etc. for one.
    pub fn top_line(&self, label: &str) -> String {
        format!(
            "{label}:{:5.1}%us,{:5.1}%sy,{:5.1}%ni,{:5.1}%id,{:5.1}%wa,{:5.1}%hi,{:5.1}%si,{:5.1}%st",
            self.us, self.sy, self.ni, self.id, self.wa, self.hi, self.si, self.st
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_cpu_line_byte_for_byte() {
        let c = CpuShares {
            us: 0.3,
            sy: 13.6,
            ni: 0.0,
            id: 0.0,
            wa: 0.0,
            hi: 31.2,
            si: 54.8,
            st: 0.0,
        };
        assert_eq!(
            c.top_line("Cpu(s)"),
            "Cpu(s):  0.3%us, 13.6%sy,  0.0%ni,  0.0%id,  0.0%wa, 31.2%hi, 54.8%si,  0.0%st"
        );
        assert!((c.busy() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn full_share_fits() {
        let c = CpuShares {
            id: 100.0,
            ..Default::default()
        };
        assert!(c.top_line("Cpu0  ").contains("100.0%id"));
    }
}
