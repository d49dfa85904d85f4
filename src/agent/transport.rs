//! How the far end is reached: anything that carries the agent's standard input and output.
//!
//! - `local`: `upktgen agent` as a child process on this host, in this namespace;
//! - `netns:NAME`: `ip netns exec NAME upktgen agent`, a namespace of this host;
//! - `ssh://[user@]host[:port]`: the system's OpenSSH client, so the user's keys,
//!   `~/.ssh/config`, jump hosts and ControlMaster all apply; `BatchMode=yes`, so a run
//!   never stops at a password prompt.

use std::fmt;
use std::path::Path;
use std::process::Command;
use std::str::FromStr;

/// Where the far end's agent runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerUri {
    Local,
    Netns(String),
    Ssh {
        user: Option<String>,
        host: String,
        port: Option<u16>,
    },
}

/// A peer address that cannot be used, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{uri:?}: {why} (expected local, netns:NAME or ssh://[user@]host[:port])")]
pub struct BadUri {
    pub uri: String,
    pub why: &'static str,
}

fn bad(uri: &str, why: &'static str) -> BadUri {
    BadUri {
        uri: uri.to_string(),
        why,
    }
}

/// A name that is safe as one argument: not empty, no whitespace or control characters,
/// and not starting with `-` (so that no program takes it for an option).
fn plain_word(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('-') && s.chars().all(|c| !c.is_whitespace() && !c.is_control())
}

/// A host name as RFC 1123 has them: dot-separated labels of 1 to 63 letters, digits and
/// `-` (not first or last), 253 characters at most, a final `.` allowed. IPv4 addresses are
/// among them.
fn host_name(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// An IPv6 address, with an optional zone (`fe80::1%eth0`).
fn ipv6_literal(s: &str) -> bool {
    let (addr, zone) = match s.split_once('%') {
        Some((a, z)) => (a, Some(z)),
        None => (s, None),
    };
    addr.parse::<std::net::Ipv6Addr>().is_ok()
        && zone.is_none_or(|z| {
            (1..=15).contains(&z.len())
                && z.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        })
}

/// A login name as useradd takes them: a letter or `_`, then letters, digits, `_`, `.`,
/// `-`, at most 64 characters (a final `$` allowed, as for machine accounts).
fn user_name(s: &str) -> bool {
    let s = s.strip_suffix('$').unwrap_or(s);
    let mut b = s.bytes();
    s.len() <= 64
        && b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
}

impl FromStr for PeerUri {
    type Err = BadUri;

    fn from_str(uri: &str) -> Result<Self, BadUri> {
        if uri == "local" {
            return Ok(PeerUri::Local);
        }
        if let Some(name) = uri.strip_prefix("netns:") {
            // ip netns names are file names under /run/netns.
            if !plain_word(name) || name.contains('/') || name == "." || name == ".." {
                return Err(bad(uri, "not a network namespace name"));
            }
            return Ok(PeerUri::Netns(name.to_string()));
        }
        if let Some(rest) = uri.strip_prefix("ssh://") {
            let rest = rest.strip_suffix('/').unwrap_or(rest);
            let (user, hostport) = match rest.rsplit_once('@') {
                Some((u, h)) => (Some(u), h),
                None => (None, rest),
            };
            if let Some(u) = user
                && !user_name(u)
            {
                return Err(bad(
                    uri,
                    "not a user name (a letter or _, then letters, digits, _, . or -)",
                ));
            }
            // [v6addr]:port, host:port, or host.
            let (host, port, v6) = if let Some(v6) = hostport.strip_prefix('[') {
                let (addr, after) = v6
                    .split_once(']')
                    .ok_or_else(|| bad(uri, "an IPv6 address needs its closing ]"))?;
                match after {
                    "" => (addr, None, true),
                    p => (
                        addr,
                        Some(
                            p.strip_prefix(':')
                                .ok_or_else(|| bad(uri, "junk after the IPv6 address"))?,
                        ),
                        true,
                    ),
                }
            } else {
                match hostport.split_once(':') {
                    Some((h, p)) => (h, Some(p), false),
                    None => (hostport, None, false),
                }
            };
            if v6 && !ipv6_literal(host) {
                return Err(bad(uri, "not an IPv6 address inside [ ]"));
            }
            if !v6 && !host_name(host) {
                return Err(bad(
                    uri,
                    "not a host name (dot-separated labels of letters, digits and -) nor an IP address (IPv6 inside [ ])",
                ));
            }
            let port = match port {
                None => None,
                Some(p) => Some(
                    p.parse::<u16>()
                        .ok()
                        .filter(|&p| p != 0)
                        .ok_or_else(|| bad(uri, "the port must be a number from 1 to 65535"))?,
                ),
            };
            return Ok(PeerUri::Ssh {
                user: user.map(str::to_string),
                host: host.to_string(),
                port,
            });
        }
        Err(bad(uri, "unknown kind of peer"))
    }
}

impl fmt::Display for PeerUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerUri::Local => f.write_str("local"),
            PeerUri::Netns(n) => write!(f, "netns:{n}"),
            PeerUri::Ssh { user, host, port } => {
                f.write_str("ssh://")?;
                if let Some(u) = user {
                    write!(f, "{u}@")?;
                }
                if host.contains(':') {
                    write!(f, "[{host}]")?;
                } else {
                    f.write_str(host)?;
                }
                if let Some(p) = port {
                    write!(f, ":{p}")?;
                }
                Ok(())
            }
        }
    }
}

/// Quotes one word for a POSIX shell (the far end's login shell runs ssh's command line).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl PeerUri {
    /// True when the far end shares this host's clock (no offset to estimate).
    pub fn same_host(&self) -> bool {
        !matches!(self, PeerUri::Ssh { .. })
    }

    /// The agent program run when none is named: this very binary on this host, `upktgen`
    /// on the far end's PATH over SSH.
    pub fn default_agent(&self) -> String {
        match self {
            PeerUri::Ssh { .. } => "upktgen".to_string(),
            _ => std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "upktgen".to_string()),
        }
    }

    /// The command that starts `AGENT agent` at the far end with its stdio as the channel;
    /// `ssh_config` is given to ssh as `-F FILE` (instead of ~/.ssh/config).
    pub fn command(
        &self,
        agent: &str,
        agent_args: &[String],
        ssh_config: Option<&Path>,
    ) -> Command {
        match self {
            PeerUri::Local => {
                let mut c = Command::new(agent);
                c.arg("agent").args(agent_args);
                c
            }
            PeerUri::Netns(name) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", name, agent, "agent"])
                    .args(agent_args);
                c
            }
            PeerUri::Ssh { user, host, port } => {
                let mut c = Command::new("ssh");
                // BatchMode: never a password or host-key prompt in the middle of a run;
                // ServerAlive*: a far end that vanishes is noticed in ~30 s, not never.
                c.args([
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "ConnectTimeout=10",
                    "-o",
                    "ServerAliveInterval=10",
                    "-o",
                    "ServerAliveCountMax=3",
                    "-T",
                ]);
                if let Some(f) = ssh_config {
                    c.arg("-F").arg(f);
                }
                if let Some(p) = port {
                    c.arg("-p").arg(p.to_string());
                }
                if let Some(u) = user {
                    c.arg("-l").arg(u);
                }
                let mut remote = vec![shell_quote(agent), "agent".to_string()];
                remote.extend(agent_args.iter().map(|a| shell_quote(a)));
                c.arg("--").arg(host).arg(remote.join(" "));
                c
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &Command) -> Vec<String> {
        std::iter::once(c.get_program())
            .chain(c.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn parses_every_kind_and_prints_it_back() {
        for (s, want) in [
            ("local", PeerUri::Local),
            ("netns:rx1", PeerUri::Netns("rx1".into())),
            (
                "ssh://host",
                PeerUri::Ssh {
                    user: None,
                    host: "host".into(),
                    port: None,
                },
            ),
            (
                "ssh://me@10.0.0.2:2222",
                PeerUri::Ssh {
                    user: Some("me".into()),
                    host: "10.0.0.2".into(),
                    port: Some(2222),
                },
            ),
            (
                "ssh://[fd00::2]:22",
                PeerUri::Ssh {
                    user: None,
                    host: "fd00::2".into(),
                    port: Some(22),
                },
            ),
        ] {
            let got: PeerUri = s.parse().unwrap();
            assert_eq!(got, want, "{s}");
            assert_eq!(got.to_string(), s);
        }
    }

    #[test]
    fn refuses_what_could_become_an_option_or_a_path() {
        for s in [
            "",
            "remote",
            "netns:",
            "netns:../etc",
            "netns:a/b",
            "netns:-x",
            "ssh://",
            "ssh://-oProxyCommand=x",
            "ssh://-l@host",
            "ssh://host:0",
            "ssh://host:99999",
            "ssh://host:x",
            "ssh://ho st",
            "ssh://[fd00::1",
            "ssh://[fd00::1]x",
            // Shell and option syntax, whatever ssh would make of it.
            "ssh://h;id",
            "ssh://h'x",
            "ssh://$(id)",
            "ssh://`id`@h",
            "ssh://a;b@h",
            "ssh://me$(id)@h",
            "ssh://1me@h",
            "ssh://h_x",
            "ssh://-h",
            "ssh://h-.x",
            "ssh://a..b",
            "ssh://[h;id]",
            "ssh://[::1%a;b]",
            "ssh://[10.0.0.1]",
        ] {
            let e = s.parse::<PeerUri>().unwrap_err();
            assert!(
                e.to_string().contains("expected local, netns:NAME"),
                "{s}: {e}"
            );
        }
    }

    #[test]
    fn takes_host_names_ip_literals_and_user_names() {
        for s in [
            "ssh://far",
            "ssh://far.example.org.",
            "ssh://a-1.b2",
            "ssh://10.0.0.2",
            "ssh://[::1]",
            "ssh://[fe80::1%eth0]:22",
            "ssh://_svc@h",
            "ssh://first.last-1@h",
            "ssh://host$@h",
        ] {
            assert!(s.parse::<PeerUri>().is_ok(), "{s}");
        }
        let long = format!("ssh://{}", "a".repeat(64));
        assert!(long.parse::<PeerUri>().is_err());
    }

    #[test]
    fn ssh_never_prompts_and_quotes_the_remote_command() {
        let u: PeerUri = "ssh://me@h:2200".parse().unwrap();
        let a = args(&u.command("/opt/up ktgen", &["--x".into()], Some(Path::new("/c"))));
        assert_eq!(a[0], "ssh");
        assert!(a.windows(2).any(|w| w == ["-o", "BatchMode=yes"]));
        assert!(a.windows(2).any(|w| w == ["-p", "2200"]));
        assert!(a.windows(2).any(|w| w == ["-F", "/c"]));
        assert!(a.windows(2).any(|w| w == ["-l", "me"]));
        let dd = a.iter().position(|x| x == "--").unwrap();
        assert_eq!(a[dd + 1], "h");
        assert_eq!(a[dd + 2], "'/opt/up ktgen' agent --x");
        assert_eq!(a.len(), dd + 3);
    }

    #[test]
    fn netns_and_local_commands() {
        let n: PeerUri = "netns:rx".parse().unwrap();
        assert_eq!(
            args(&n.command("/bin/upktgen", &[], None)),
            ["ip", "netns", "exec", "rx", "/bin/upktgen", "agent"]
        );
        assert_eq!(
            args(&PeerUri::Local.command("u", &[], None)),
            ["u", "agent"]
        );
        assert!(n.same_host() && PeerUri::Local.same_host());
        assert!(!"ssh://h".parse::<PeerUri>().unwrap().same_host());
    }

    #[test]
    fn shell_quote_round_trips_through_sh() {
        for s in ["plain", "a b", "it's", "$(touch x)", "", "a'b'c", "--x=1"] {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(s)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }
}
