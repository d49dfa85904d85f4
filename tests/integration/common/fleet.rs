//! A fleet of "hosts" for the Ansible tests: a controller namespace holding a management
//! bridge, and host namespaces each with its own hostname (a UTS namespace) and a real
//! OpenSSH server on its management address, reached from the controller over the bridge.
//! The measured traffic runs on separate veth pairs between hosts ([`Fleet::link`]). Keys
//! are made per fleet in its own directory; everything is removed on drop.
#![allow(dead_code)]

use super::hosts::{keygen, run, sshd_config};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// One host: its namespace, hostname and management address.
pub struct Host {
    pub name: String,
    pub ns: String,
    pub mgmt_ip: String,
    sshd: Option<Child>,
}

/// One end of a data link.
#[derive(Clone, Debug)]
pub struct End {
    pub host: String,
    pub dev: String,
    pub ip: String,
    pub mac: String,
}

pub struct Fleet {
    /// The controller's namespace (the bridge's side; run ansible-playbook here).
    pub ctl: String,
    pub hosts: Vec<Host>,
    pub dir: PathBuf,
    oct: u32,
    links: u32,
}

impl Fleet {
    /// A controller and one host per name, joined by the management bridge (10.95.N.0/24:
    /// the controller .1, host i .(11 + i)); no sshd yet.
    pub fn new(names: &[&str]) -> Fleet {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let id = std::process::id();
        let oct = (id % 200 + n) % 250 + 1;
        let base = format!("upkt-f{id}-{n}");
        let dir = std::env::temp_dir().join(format!("{base}-files"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = Fleet {
            ctl: format!("{base}-ctl"),
            hosts: Vec::new(),
            dir,
            oct,
            links: 0,
        };
        let ctl = f.ctl.clone();
        run(&["ip", "netns", "add", &ctl]);
        run(&["ip", "-n", &ctl, "link", "set", "lo", "up"]);
        run(&["ip", "-n", &ctl, "link", "add", "br0", "type", "bridge"]);
        run(&[
            "ip",
            "-n",
            &ctl,
            "addr",
            "add",
            &format!("10.95.{oct}.1/24"),
            "dev",
            "br0",
        ]);
        run(&["ip", "-n", &ctl, "link", "set", "br0", "up"]);
        for (i, name) in names.iter().enumerate() {
            let ns = format!("{base}-{name}");
            let ip = format!("10.95.{oct}.{}", 11 + i);
            let port = format!("m-{name}");
            run(&["ip", "netns", "add", &ns]);
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            run(&[
                "ip",
                "netns",
                "exec",
                &ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
            ]);
            run(&[
                "ip", "-n", &ctl, "link", "add", &port, "type", "veth", "peer", "name", "mgt0",
                "netns", &ns,
            ]);
            run(&["ip", "-n", &ctl, "link", "set", &port, "master", "br0"]);
            run(&["ip", "-n", &ctl, "link", "set", &port, "up"]);
            run(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{ip}/24"),
                "dev",
                "mgt0",
            ]);
            run(&["ip", "-n", &ns, "link", "set", "mgt0", "up"]);
            f.hosts.push(Host {
                name: name.to_string(),
                ns,
                mgmt_ip: ip,
                sshd: None,
            });
        }
        f
    }

    pub fn host(&self, name: &str) -> &Host {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    /// A data veth pair from `a` (device `a_dev`) to `b` (`b_dev`), with addresses
    /// 10.94.N.(4k+1)/30 and .(4k+2)/30 and fixed MACs; the measured traffic's link.
    pub fn link(&mut self, a: &str, a_dev: &str, b: &str, b_dev: &str) -> (End, End) {
        let k = self.links;
        self.links += 1;
        let oct = self.oct;
        let end = |host: &str, dev: &str, last: u32, side: u32| End {
            host: host.to_string(),
            dev: dev.to_string(),
            ip: format!("10.94.{oct}.{}", 4 * k + last),
            mac: format!("02:00:00:95:{k:02x}:{side:02x}"),
        };
        let (ea, eb) = (end(a, a_dev, 1, 1), end(b, b_dev, 2, 2));
        let (na, nb) = (self.host(a).ns.clone(), self.host(b).ns.clone());
        run(&[
            "ip", "-n", &na, "link", "add", a_dev, "address", &ea.mac, "type", "veth", "peer",
            "name", b_dev, "address", &eb.mac, "netns", &nb,
        ]);
        for (ns, e) in [(&na, &ea), (&nb, &eb)] {
            run(&[
                "ip",
                "-n",
                ns,
                "addr",
                "add",
                &format!("{}/30", e.ip),
                "dev",
                &e.dev,
            ]);
            run(&["ip", "-n", ns, "link", "set", &e.dev, "up"]);
        }
        (ea, eb)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Starts an sshd in every host (its own hostname, its own host key, one client key
    /// authorised for root) and writes `ssh_config` (every host by address, strict host key
    /// checking against `known_hosts`). Returns once every host accepts a login from the
    /// controller.
    pub fn start_sshd(&mut self) -> PathBuf {
        let d = self.dir.clone();
        keygen(&d, "client_key");
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let mut known = String::new();
        std::fs::create_dir_all("/run/sshd").unwrap();
        for i in 0..self.hosts.len() {
            let key = format!("host_key_{}", self.hosts[i].name);
            keygen(&d, &key);
            let host_pub = std::fs::read_to_string(d.join(format!("{key}.pub"))).unwrap();
            known.push_str(&format!("{} {host_pub}", self.hosts[i].mgmt_ip));
            self.spawn_sshd(i, "");
        }
        std::fs::write(d.join("known_hosts"), known).unwrap();
        let cfg = format!(
            "Host *\n  User root\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n",
            d = d.display()
        );
        let ssh_config = d.join("ssh_config");
        std::fs::write(&ssh_config, cfg).unwrap();
        for i in 0..self.hosts.len() {
            self.wait_for_login(i);
        }
        ssh_config
    }

    /// Starts sshd in host `i` on its management address, in a UTS namespace of its own
    /// named after the host; `extra` is added to its configuration.
    fn spawn_sshd(&mut self, i: usize, extra: &str) {
        let d = self.dir.clone();
        let h = &mut self.hosts[i];
        let cfg = sshd_config(&h.mgmt_ip, &d.join(format!("host_key_{}", h.name)), &d)
            + &format!("PidFile none\nMaxStartups 50\n{extra}");
        let cfg_path = d.join(format!("sshd_config_{}", h.name));
        std::fs::write(&cfg_path, cfg).unwrap();
        // unshare and sh exec in turn: the child is sshd itself.
        let child = Command::new("ip")
            .args(["netns", "exec", &h.ns, "unshare", "--uts", "sh", "-c"])
            .arg("hostname \"$0\" && exec /usr/sbin/sshd -D -e -f \"$1\"")
            .arg(&h.name)
            .arg(&cfg_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        h.sshd = Some(child);
    }

    /// Waits until host `i` accepts a login from the controller (and names itself).
    fn wait_for_login(&self, i: usize) {
        let h = &self.hosts[i];
        let ssh_config = self.dir.join("ssh_config");
        let t0 = Instant::now();
        loop {
            let o = self.in_ctl(&[
                "ssh",
                "-F",
                ssh_config.to_str().unwrap(),
                &h.mgmt_ip,
                "hostname",
            ]);
            if o.status.success() {
                assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), h.name);
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "sshd in {} did not come up: {}",
                h.ns,
                String::from_utf8_lossy(&o.stderr)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Restarts the sshd of `name` with `extra` added to its configuration (e.g. `SetEnv`
    /// for every session's environment).
    pub fn restart_sshd(&mut self, name: &str, extra: &str) {
        self.stop_sshd(name);
        let i = self.hosts.iter().position(|h| h.name == name).unwrap();
        self.spawn_sshd(i, extra);
        self.wait_for_login(i);
    }

    /// Stops the sshd of `name` (the host becomes unreachable).
    pub fn stop_sshd(&mut self, name: &str) {
        let h = self.hosts.iter_mut().find(|h| h.name == name).unwrap();
        if let Some(mut c) = h.sshd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A command inside the controller's namespace.
    pub fn in_ctl(&self, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl])
            .args(args)
            .output()
            .unwrap()
    }

    /// The processes in namespace `ns` (zombies left out), as `pid command line`, except the
    /// host's sshd listener.
    pub fn processes_in(&self, ns: &str) -> Vec<String> {
        let listener = self
            .hosts
            .iter()
            .find(|h| h.ns == ns)
            .and_then(|h| h.sshd.as_ref().map(Child::id));
        let o = Command::new("ip")
            .args(["netns", "pids", ns])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
            .filter(|p| Some(*p) != listener)
            .filter_map(|p| {
                let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok()?;
                let state = status.lines().find(|l| l.starts_with("State:"))?;
                if state.contains("Z") {
                    return None;
                }
                let cmd = std::fs::read(format!("/proc/{p}/cmdline")).ok()?;
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                Some(format!("{p} {}", cmd.trim()))
            })
            .collect()
    }

    /// Waits up to 10 s until no process but the sshd listeners is left in any namespace of
    /// the fleet (an ssh session may take a moment to close); returns what is left.
    pub fn leftovers(&self) -> Vec<String> {
        let t0 = Instant::now();
        loop {
            let mut left: Vec<String> = self.processes_in(&self.ctl);
            for h in &self.hosts {
                left.extend(
                    self.processes_in(&h.ns)
                        .into_iter()
                        .map(|p| format!("{}: {p}", h.name)),
                );
            }
            if left.is_empty() || t0.elapsed() > Duration::from_secs(10) {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for h in &mut self.hosts {
            if let Some(mut c) = h.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        // Anything still in a namespace (an sshd session, a process a failed test left)
        // goes with it.
        let all: Vec<String> = std::iter::once(self.ctl.clone())
            .chain(self.hosts.iter().map(|h| h.ns.clone()))
            .collect();
        for ns in &all {
            let _ = Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .map(|o| {
                    for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                        let _ = Command::new("kill").args(["-9", pid]).status();
                    }
                });
        }
        for ns in &all {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
