//! Where a port is (`Port.location`, whose format the model leaves to each implementation):
//!
//! - `IFACE`: an interface of this host, in upktgen's own namespace (`eth1`);
//! - `netns:NAME/IFACE`: an interface in the network namespace NAME of this host;
//! - `ssh://[user@]host[:port]/IFACE`: an interface of another host, through the agent;
//! - `lab:tx`, `lab:rx`: the sending and the receiving end of the private lab `upktgen run`
//!   makes for itself (two namespaces, or three with `--lab dut`).
//!
//! The namespace and host parts are checked as `--peer` checks them
//! ([`PeerUri`](crate::agent::transport::PeerUri)), and [`Location::peer`] gives the
//! `PeerUri` that reaches the port.

use std::fmt;
use std::str::FromStr;

use crate::agent::transport::PeerUri;
use crate::sys::MAX_IFNAME;

/// Where a port is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An end of the run's own lab: `lab:tx` (true) sends, `lab:rx` (false) receives.
    Lab {
        tx: bool,
    },
    Local {
        iface: String,
    },
    Netns {
        netns: String,
        iface: String,
    },
    Ssh {
        user: Option<String>,
        host: String,
        port: Option<u16>,
        iface: String,
    },
}

/// A location that cannot be used, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{location:?}: {why} (expected IFACE, netns:NAME/IFACE, ssh://[user@]host[:port]/IFACE, lab:tx or lab:rx)"
)]
pub struct BadLocation {
    pub location: String,
    pub why: String,
}

/// The longest network namespace name `ip netns` takes (a file name under /run/netns,
/// shorter than NAME_MAX).
pub const MAX_NETNS: usize = 254;

/// Why a string is not a Linux interface name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadIfname {
    #[error("no interface name")]
    Empty,
    #[error("the interface name {0:?} is longer than {MAX_IFNAME} bytes")]
    TooLong(String),
    #[error("{0:?} is not an interface name")]
    Dots(String),
    #[error("the interface name {0:?} holds {1:?}")]
    Holds(String, char),
}

/// Why `s` is not a Linux interface name: 1 to 15 bytes, not `.` or `..`, without `/`,
/// `:`, whitespace or control characters (what the kernel's `dev_valid_name` allows,
/// less `:`, which old alias names use).
pub fn check_ifname(s: &str) -> Result<(), BadIfname> {
    if s.is_empty() {
        return Err(BadIfname::Empty);
    }
    if s.len() > MAX_IFNAME {
        return Err(BadIfname::TooLong(s.to_string()));
    }
    if s == "." || s == ".." {
        return Err(BadIfname::Dots(s.to_string()));
    }
    if let Some(c) = s
        .chars()
        .find(|c| *c == '/' || *c == ':' || c.is_whitespace() || c.is_control())
    {
        return Err(BadIfname::Holds(s.to_string(), c));
    }
    Ok(())
}

impl Location {
    /// The interface's name.
    pub fn iface(&self) -> &str {
        match self {
            Location::Lab { tx: true } => "veth-tx",
            Location::Lab { tx: false } => "veth-rx",
            Location::Local { iface }
            | Location::Netns { iface, .. }
            | Location::Ssh { iface, .. } => iface,
        }
    }

    /// The network namespace's path (`/run/netns/NAME`) of a `netns:` location.
    pub fn netns_path(&self) -> Option<std::path::PathBuf> {
        match self {
            Location::Netns { netns, .. } => Some(std::path::Path::new("/run/netns").join(netns)),
            _ => None,
        }
    }

    /// How the agent that serves this port is reached.
    pub fn peer(&self) -> PeerUri {
        match self {
            Location::Local { .. } | Location::Lab { .. } => PeerUri::Local,
            Location::Netns { netns, .. } => PeerUri::Netns(netns.clone()),
            Location::Ssh {
                user, host, port, ..
            } => PeerUri::Ssh {
                user: user.clone(),
                host: host.clone(),
                port: *port,
            },
        }
    }
}

impl FromStr for Location {
    type Err = BadLocation;

    fn from_str(s: &str) -> Result<Self, BadLocation> {
        let bad = |why: String| BadLocation {
            location: s.to_string(),
            why,
        };
        // What --peer refuses, said without its own list of forms.
        let peer = |uri: &str| uri.parse::<PeerUri>().map_err(|e| bad(e.why.to_string()));
        match s {
            "lab:tx" => return Ok(Location::Lab { tx: true }),
            "lab:rx" => return Ok(Location::Lab { tx: false }),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("netns:") {
            let (name, iface) = rest
                .split_once('/')
                .ok_or_else(|| bad("no /IFACE after the namespace's name".into()))?;
            if name.len() > MAX_NETNS {
                return Err(bad(format!(
                    "a namespace name is at most {MAX_NETNS} bytes"
                )));
            }
            let PeerUri::Netns(netns) = peer(&format!("netns:{name}"))? else {
                unreachable!("a netns: URI parses as Netns")
            };
            check_ifname(iface).map_err(|e| bad(e.to_string()))?;
            return Ok(Location::Netns {
                netns,
                iface: iface.to_string(),
            });
        }
        if let Some(rest) = s.strip_prefix("ssh://") {
            let (hostpart, iface) = rest
                .split_once('/')
                .ok_or_else(|| bad("no /IFACE after the host".into()))?;
            let PeerUri::Ssh { user, host, port } = peer(&format!("ssh://{hostpart}"))? else {
                unreachable!("an ssh:// URI parses as Ssh")
            };
            check_ifname(iface).map_err(|e| bad(e.to_string()))?;
            return Ok(Location::Ssh {
                user,
                host,
                port,
                iface: iface.to_string(),
            });
        }
        check_ifname(s).map_err(|e| bad(e.to_string()))?;
        Ok(Location::Local {
            iface: s.to_string(),
        })
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Lab { tx } => f.write_str(if *tx { "lab:tx" } else { "lab:rx" }),
            Location::Local { iface } => f.write_str(iface),
            Location::Netns { iface, .. } | Location::Ssh { iface, .. } => {
                write!(f, "{}/{iface}", self.peer())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_prints_it_back() {
        for (s, want) in [
            (
                "eth1",
                Location::Local {
                    iface: "eth1".into(),
                },
            ),
            (
                "netns:rx1/veth-rx",
                Location::Netns {
                    netns: "rx1".into(),
                    iface: "veth-rx".into(),
                },
            ),
            (
                "ssh://lab@dut.example:2222/ens1f0",
                Location::Ssh {
                    user: Some("lab".into()),
                    host: "dut.example".into(),
                    port: Some(2222),
                    iface: "ens1f0".into(),
                },
            ),
            (
                "ssh://[fe80::1%eth0]/eth2",
                Location::Ssh {
                    user: None,
                    host: "fe80::1%eth0".into(),
                    port: None,
                    iface: "eth2".into(),
                },
            ),
        ] {
            let l: Location = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(l, want);
            assert_eq!(l.to_string(), s);
            assert_eq!(l.iface(), want.iface());
        }
        assert_eq!(
            "netns:a/b".parse::<Location>().unwrap().peer(),
            PeerUri::Netns("a".into())
        );
        assert_eq!("eth0".parse::<Location>().unwrap().peer(), PeerUri::Local);
    }

    #[test]
    fn refuses_bad_names_with_the_reason() {
        let why = |s: &str| s.parse::<Location>().unwrap_err().why;
        assert_eq!(why(""), "no interface name");
        assert_eq!(
            why("averyveryverylongname"),
            "the interface name \"averyveryverylongname\" is longer than 15 bytes"
        );
        assert_eq!(why("eth 1"), "the interface name \"eth 1\" holds ' '");
        assert_eq!(
            why("localhost:5555"),
            "the interface name \"localhost:5555\" holds ':'"
        );
        assert_eq!(why(".."), "\"..\" is not an interface name");
        assert_eq!(why("netns:rx1"), "no /IFACE after the namespace's name");
        assert_eq!(why("netns:../eth0"), "not a network namespace name");
        assert_eq!(
            why("netns:rx/x/eth0"),
            "the interface name \"x/eth0\" holds '/'"
        );
        assert_eq!(why("netns:-x/eth0"), "not a network namespace name");
        assert_eq!(why("netns:a b/eth0"), "not a network namespace name");
        assert_eq!(
            why(&format!("netns:{}/eth0", "n".repeat(255))),
            "a namespace name is at most 254 bytes"
        );
        assert_eq!(why("ssh://host"), "no /IFACE after the host");
        assert_eq!(
            why("ssh://host:0/eth0"),
            "the port must be a number from 1 to 65535"
        );
        assert_eq!(
            why("ssh://-oProxyCommand=x/eth0").split(' ').next(),
            Some("not")
        );
        assert_eq!(why("ssh://host/"), "no interface name");
        let e = "eth0/x".parse::<Location>().unwrap_err().to_string();
        assert_eq!(
            e,
            "\"eth0/x\": the interface name \"eth0/x\" holds '/' (expected IFACE, netns:NAME/IFACE, ssh://[user@]host[:port]/IFACE, lab:tx or lab:rx)"
        );
    }
}
