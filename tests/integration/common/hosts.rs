//! "Hosts" for two-ended tests: network namespaces joined by a data veth pair (the
//! measured link) and, separately, a management veth pair for control traffic, with a real
//! OpenSSH server on the far host's management address when asked. Everything lives in
//! namespaces the test creates (unique names) and is removed on drop.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

pub const A_DATA: &str = "dat-a";
pub const B_DATA: &str = "dat-b";
pub const A_MAC: &str = "02:00:00:98:00:01";
pub const B_MAC: &str = "02:00:00:98:00:02";

/// Runs a command that must succeed (set-up steps).
pub fn run(args: &[&str]) {
    let o = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An ed25519 key pair without passphrase, `dir/name` and `dir/name.pub`.
pub fn keygen(dir: &Path, name: &str) {
    run(&[
        "ssh-keygen",
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-C",
        name,
        "-f",
        dir.join(name).to_str().unwrap(),
    ]);
}

/// An sshd configuration for a test host: listening on `ip`:22 only, key logins for root
/// with `dir/authorized_keys`, no PAM, no passwords, SFTP (ansible copies with it).
pub fn sshd_config(ip: &str, host_key: &Path, dir: &Path) -> String {
    format!(
        "ListenAddress {ip}:22\nHostKey {k}\nAuthorizedKeysFile {d}/authorized_keys\n\
         PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         UsePAM no\nStrictModes no\nLogLevel ERROR\nSubsystem sftp internal-sftp\n",
        k = host_key.display(),
        d = dir.display()
    )
}

/// Two namespaces: `a` (the controller and sender) and `b` (the far end).
pub struct TwoHosts {
    pub a: String,
    pub b: String,
    /// 10.98.N.1 / .2 on the data link.
    pub a_ip: String,
    pub b_ip: String,
    /// The far host's management address (sshd listens there).
    pub b_mgmt_ip: String,
    pub dir: PathBuf,
    sshd: Option<Child>,
}

impl TwoHosts {
    pub fn new() -> TwoHosts {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let id = std::process::id();
        // The third octet: unique among the tests of this process (and, with the pid, the
        // names are unique across processes).
        let oct = (id % 200 + n) % 250 + 1;
        let base = format!("upkt-t{id}-{n}");
        let dir = std::env::temp_dir().join(format!("{base}-files"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let h = TwoHosts {
            a: format!("{base}-a"),
            b: format!("{base}-b"),
            a_ip: format!("10.98.{oct}.1"),
            b_ip: format!("10.98.{oct}.2"),
            b_mgmt_ip: format!("10.97.{oct}.2"),
            dir,
            sshd: None,
        };
        let (a, b) = (h.a.as_str(), h.b.as_str());
        run(&["ip", "netns", "add", a]);
        run(&["ip", "netns", "add", b]);
        for ns in [a, b] {
            run(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            run(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
            ]);
        }
        run(&[
            "ip", "-n", a, "link", "add", A_DATA, "address", A_MAC, "type", "veth", "peer", "name",
            B_DATA, "address", B_MAC, "netns", b,
        ]);
        run(&[
            "ip", "-n", a, "link", "add", "mgt-a", "type", "veth", "peer", "name", "mgt-b",
            "netns", b,
        ]);
        run(&[
            "ip",
            "-n",
            a,
            "addr",
            "add",
            &format!("{}/24", h.a_ip),
            "dev",
            A_DATA,
        ]);
        run(&[
            "ip",
            "-n",
            b,
            "addr",
            "add",
            &format!("{}/24", h.b_ip),
            "dev",
            B_DATA,
        ]);
        run(&[
            "ip",
            "-n",
            a,
            "addr",
            "add",
            &format!("10.97.{oct}.1/24"),
            "dev",
            "mgt-a",
        ]);
        run(&[
            "ip",
            "-n",
            b,
            "addr",
            "add",
            &format!("{}/24", h.b_mgmt_ip),
            "dev",
            "mgt-b",
        ]);
        for (ns, ifs) in [(a, [A_DATA, "mgt-a"]), (b, [B_DATA, "mgt-b"])] {
            for i in ifs {
                run(&["ip", "-n", ns, "link", "set", i, "up"]);
            }
        }
        h
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Starts sshd in `b` on its management address with a host key and an authorised
    /// client key made for this test, and writes an ssh_config naming the far host `far`.
    /// Returns the ssh_config's path.
    pub fn start_sshd(&mut self) -> PathBuf {
        let d = &self.dir;
        for k in ["host_key", "client_key", "other_key"] {
            keygen(d, k);
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        std::fs::write(
            d.join("known_hosts"),
            format!("{} {host_pub}", self.b_mgmt_ip),
        )
        .unwrap();
        let cfg = sshd_config(&self.b_mgmt_ip, &d.join("host_key"), d)
            + &format!("PidFile {}/sshd.pid\n", d.display());
        std::fs::write(d.join("sshd_config"), cfg).unwrap();
        let client = |key: &str| {
            format!(
                "Host far\n  HostName {ip}\n  User root\n  IdentityFile {d}/{key}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                ip = self.b_mgmt_ip,
                d = d.display()
            )
        };
        std::fs::write(d.join("ssh_config"), client("client_key")).unwrap();
        std::fs::write(d.join("ssh_config_refused"), client("other_key")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.b, "/usr/sbin/sshd", "-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        self.sshd = Some(child);
        // Ready when a login works.
        let t0 = Instant::now();
        loop {
            let ok = self
                .in_a(&[
                    "ssh",
                    "-F",
                    d.join("ssh_config").to_str().unwrap(),
                    "far",
                    "true",
                ])
                .status
                .success();
            if ok {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "sshd did not come up"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        d.join("ssh_config")
    }

    /// Stops the far host's sshd (it becomes unreachable: connections are refused).
    pub fn stop_sshd(&mut self) {
        if let Some(mut c) = self.sshd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// `upktgen run --dev dat-a ... EXTRA` inside `a`, aimed at `b`'s data address at
    /// 50,000 pps.
    pub fn run_a_to_b(&self, count: u64, extra: &[&str]) -> std::process::Output {
        let c = count.to_string();
        let mut a = vec![
            env!("CARGO_BIN_EXE_upktgen"),
            "run",
            "--dev",
            A_DATA,
            "--dst",
            &self.b_ip,
            "--src",
            &self.a_ip,
            "--dst-mac",
            B_MAC,
            "--count",
            &c,
            "--ratep",
            "50000",
        ];
        a.extend_from_slice(extra);
        self.in_a(&a)
    }

    /// A command inside `a`.
    pub fn in_a(&self, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.a])
            .args(args)
            .output()
            .unwrap()
    }

    /// A command inside `b`.
    pub fn in_b(&self, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.b])
            .args(args)
            .output()
            .unwrap()
    }

    /// Moves b's data interface into `a` (up, no address): both ends of the data link in one
    /// namespace, for `--dev dat-a --rx-dev dat-b` (two ports of one host joined by a cable).
    pub fn b_data_into_a(&self) {
        run(&["ip", "-n", &self.b, "link", "set", B_DATA, "netns", &self.a]);
        run(&["ip", "-n", &self.a, "link", "set", B_DATA, "up"]);
    }

    pub fn ns_path(ns: &str) -> PathBuf {
        Path::new("/run/netns").join(ns)
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        if let Some(mut c) = self.sshd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // sshd forks a child per login: anything still in `b` goes with it.
        let _ = Command::new("ip")
            .args(["netns", "pids", &self.b])
            .output()
            .map(|o| {
                for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-9", pid]).status();
                }
            });
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
