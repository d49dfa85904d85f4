//! What the sweep changes around a run: the CPU clock (cpufreq) and competing CPU load.

use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// cpufreq of every CPU under a sysfs root (a parameter, so tests use a fake tree).
#[derive(Debug)]
pub struct CpuFreq {
    /// `cpuN/cpufreq` directories.
    dirs: Vec<PathBuf>,
}

fn read_khz(p: &Path) -> Result<u64> {
    let s = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    s.trim()
        .parse()
        .map_err(|_| anyhow!("{}: {:?} is not a frequency in kHz", p.display(), s.trim()))
}

fn write(p: &Path, v: &str) -> Result<()> {
    std::fs::write(p, v).with_context(|| format!("writing {v} to {}", p.display()))
}

impl CpuFreq {
    /// Finds `cpu*/cpufreq` under `root`; an error if there is none.
    pub fn open(root: &Path) -> Result<Self> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        n.strip_prefix("cpu")
                            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
                    })
                    .map(|e| e.path().join("cpufreq"))
                    .filter(|p| p.join("scaling_max_freq").exists())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        if dirs.is_empty() {
            bail!("cpu_mhz: not available on this machine (no cpufreq)");
        }
        Ok(CpuFreq { dirs })
    }

    /// The clock range every CPU supports, in kHz (the largest minimum, the smallest maximum).
    pub fn range_khz(&self) -> Result<(u64, u64)> {
        let mut lo = 0;
        let mut hi = u64::MAX;
        for d in &self.dirs {
            lo = lo.max(read_khz(&d.join("cpuinfo_min_freq"))?);
            hi = hi.min(read_khz(&d.join("cpuinfo_max_freq"))?);
        }
        Ok((lo, hi))
    }

    /// Refuses a clock outside the CPUs' range, naming the range.
    pub fn check(&self, mhz: f64) -> Result<()> {
        let (lo, hi) = self.range_khz()?;
        let khz = mhz * 1000.0;
        if khz < lo as f64 || khz > hi as f64 {
            bail!(
                "cpu_mhz = {mhz}: outside this CPU's range {} to {} MHz",
                lo as f64 / 1000.0,
                hi as f64 / 1000.0
            );
        }
        Ok(())
    }

    /// Saves the current scaling limits; they come back when the guard is dropped.
    pub fn save(&self) -> Result<FreqGuard> {
        let mut saved = Vec::new();
        for d in &self.dirs {
            saved.push((
                d.clone(),
                read_khz(&d.join("cpuinfo_min_freq"))?,
                read_khz(&d.join("scaling_min_freq"))?,
                read_khz(&d.join("scaling_max_freq"))?,
            ));
        }
        Ok(FreqGuard { saved })
    }

    /// Pins every CPU's clock to `mhz` (scaling_min_freq = scaling_max_freq).
    pub fn set(&self, mhz: f64) -> Result<()> {
        self.check(mhz)?;
        let khz = (mhz * 1000.0).round() as u64;
        for d in &self.dirs {
            // min first down to the hardware floor, so max can go anywhere in range.
            write(
                &d.join("scaling_min_freq"),
                &read_khz(&d.join("cpuinfo_min_freq"))?.to_string(),
            )?;
            write(&d.join("scaling_max_freq"), &khz.to_string())?;
            write(&d.join("scaling_min_freq"), &khz.to_string())?;
        }
        Ok(())
    }
}

/// Restores the saved cpufreq limits when dropped (normal end, error, Ctrl-C, panic).
#[derive(Debug)]
pub struct FreqGuard {
    /// (dir, cpuinfo_min, scaling_min, scaling_max) in kHz.
    saved: Vec<(PathBuf, u64, u64, u64)>,
}

impl FreqGuard {
    /// Restores now, every CPU even when one fails; the error lists every failure.
    pub fn restore(&self) -> Result<()> {
        let mut errors = Vec::new();
        for (d, floor, min, max) in &self.saved {
            let one = write(&d.join("scaling_min_freq"), &floor.to_string())
                .and_then(|()| write(&d.join("scaling_max_freq"), &max.to_string()))
                .and_then(|()| write(&d.join("scaling_min_freq"), &min.to_string()));
            if let Err(e) = one {
                errors.push(format!("{e:#}"));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            bail!("{}", errors.join("; "))
        }
    }
}

impl Drop for FreqGuard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            crate::errln!("upktgen sweep: restoring the CPU clock: {e:#}");
        }
    }
}

/// `n` busy threads competing for the CPUs while a run goes; stopped and joined when
/// dropped, so they end on every exit path (and die with the process in any case).
#[derive(Debug)]
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    pub fn start(n: u32) -> Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for i in 0..n {
            let s = Arc::clone(&stop);
            let h = std::thread::Builder::new()
                .name(format!("load-{i}"))
                .spawn(move || {
                    let mut x = 0x9e37_79b9_7f4a_7c15u64;
                    while !s.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                        }
                        std::hint::black_box(x);
                    }
                });
            match h {
                Ok(h) => threads.push(h),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    for t in threads {
                        let _ = t.join();
                    }
                    return Err(anyhow!("starting load thread {i}: {e}"));
                }
            }
        }
        Ok(Load { stop, threads })
    }

    #[cfg(test)]
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(tag: &str, cpus: usize) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("upktgen-cpufreq-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for c in 0..cpus {
            let d = root.join(format!("cpu{c}/cpufreq"));
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("cpuinfo_min_freq", "800000"),
                ("cpuinfo_max_freq", "2400000"),
                ("scaling_min_freq", "800000"),
                ("scaling_max_freq", "2400000"),
            ] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        std::fs::create_dir_all(root.join("cpuidle")).unwrap();
        root
    }

    #[test]
    fn no_cpufreq_is_a_clear_error() {
        let root = fake_root("none", 0);
        std::fs::create_dir_all(root.join("cpu0")).unwrap();
        let e = CpuFreq::open(&root).unwrap_err().to_string();
        assert_eq!(e, "cpu_mhz: not available on this machine (no cpufreq)");
        let e = CpuFreq::open(Path::new("/nonexistent/upktgen"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not available"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn range_set_and_restore() {
        let root = fake_root("set", 2);
        let f = CpuFreq::open(&root).unwrap();
        assert_eq!(f.range_khz().unwrap(), (800_000, 2_400_000));
        let e = f.check(3000.0).unwrap_err().to_string();
        assert_eq!(
            e,
            "cpu_mhz = 3000: outside this CPU's range 800 to 2400 MHz"
        );
        assert!(f.check(500.0).is_err());
        {
            let _g = f.save().unwrap();
            f.set(1000.0).unwrap();
            for c in 0..2 {
                let d = root.join(format!("cpu{c}/cpufreq"));
                assert_eq!(
                    std::fs::read_to_string(d.join("scaling_max_freq")).unwrap(),
                    "1000000"
                );
                assert_eq!(
                    std::fs::read_to_string(d.join("scaling_min_freq")).unwrap(),
                    "1000000"
                );
            }
            assert!(f.set(9999.0).is_err());
        }
        let d = root.join("cpu1/cpufreq");
        assert_eq!(
            std::fs::read_to_string(d.join("scaling_max_freq")).unwrap(),
            "2400000"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("scaling_min_freq")).unwrap(),
            "800000"
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn restore_goes_on_past_a_cpu_that_fails() {
        let root = fake_root("restore", 3);
        let f = CpuFreq::open(&root).unwrap();
        let g = f.save().unwrap();
        f.set(1000.0).unwrap();
        // cpu0 and cpu1 can no longer be written (a directory where a file was; root too).
        for c in [0, 1] {
            let p = root.join(format!("cpu{c}/cpufreq/scaling_min_freq"));
            std::fs::remove_file(&p).unwrap();
            std::fs::create_dir(&p).unwrap();
        }
        let e = format!("{:#}", g.restore().unwrap_err());
        assert!(
            e.contains("cpu0/cpufreq/scaling_min_freq") && e.contains("cpu1/cpufreq"),
            "{e}"
        );
        let d = root.join("cpu2/cpufreq");
        assert_eq!(
            std::fs::read_to_string(d.join("scaling_max_freq")).unwrap(),
            "2400000"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("scaling_min_freq")).unwrap(),
            "800000"
        );
        for c in [0, 1] {
            let p = root.join(format!("cpu{c}/cpufreq/scaling_min_freq"));
            std::fs::remove_dir(&p).unwrap();
            std::fs::write(&p, "1000000").unwrap();
        }
        drop(g);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn load_threads_start_and_stop() {
        let l = Load::start(2).unwrap();
        assert_eq!(l.threads(), 2);
        let stop = Arc::clone(&l.stop);
        drop(l);
        assert!(stop.load(Ordering::Relaxed));
        assert_eq!(Load::start(0).unwrap().threads(), 0);
    }
}
