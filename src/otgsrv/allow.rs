//! Which ports the server may touch (`upktgen otg --allow PATTERN`, repeatable). A config
//! whose port lies outside every pattern is refused before anything is opened.
//!
//! A pattern has a location's form, `IFACE`, `netns:NAME/IFACE` or
//! `ssh://[user@]host[:port]/IFACE`, where the namespace's name and the interface's may end
//! in `*` (any rest, empty included): `netns:upk-*/*` is every interface of every namespace
//! whose name starts with `upk-`; `veth*` is this namespace's interfaces named `veth...`;
//! `ssh://lab@dut/*` every interface of that host. A bare `*` is every interface of this
//! namespace. With no pattern, no port is allowed.

use std::fmt;
use std::str::FromStr;

use crate::otg::Location;

/// One allowed set of ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// Where, without the interface: "" (this namespace), "netns:NAME" (NAME may end in
    /// `*`), or "ssh://[user@]host[:port]".
    place: String,
    /// The interface's name, which may end in `*`.
    iface: String,
    text: String,
}

/// A pattern that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{pattern:?}: {why} (expected IFACE, netns:NAME/IFACE or ssh://[user@]host[:port]/IFACE, a name or an interface ending in * for a prefix)"
)]
pub struct BadPattern {
    pub pattern: String,
    pub why: String,
}

/// Whether `name` matches `pat` (which may end in `*`).
fn glob(pat: &str, name: &str) -> bool {
    match pat.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pat == name,
    }
}

impl FromStr for Pattern {
    type Err = BadPattern;

    fn from_str(s: &str) -> Result<Pattern, BadPattern> {
        let bad = |why: &str| BadPattern {
            pattern: s.to_string(),
            why: why.to_string(),
        };
        if let Some(end) = s.strip_prefix("lab:") {
            if !matches!(end, "tx" | "rx" | "*") {
                return Err(bad("a lab port is lab:tx, lab:rx or lab:*"));
            }
            return Ok(Pattern {
                place: "lab:".into(),
                iface: end.to_string(),
                text: s.to_string(),
            });
        }
        // Checked as a location with the stars replaced by a letter, so that every name a
        // pattern can match is a name a location can hold.
        let probe = s.replace('*', "x");
        let loc: Location = probe
            .parse()
            .map_err(|e: crate::otg::location::BadLocation| bad(&e.why))?;
        let (place, iface) = match s.rsplit_once('/') {
            Some((p, i)) if !matches!(loc, Location::Local { .. }) => {
                (p.to_string(), i.to_string())
            }
            _ => (String::new(), s.to_string()),
        };
        for part in [place.as_str(), iface.as_str()] {
            if part.find('*').is_some_and(|i| i + 1 != part.len()) {
                return Err(bad("a * may only end a name"));
            }
        }
        if matches!(loc, Location::Ssh { .. }) && place.contains('*') {
            return Err(bad("a host cannot hold a *"));
        }
        Ok(Pattern {
            place,
            iface,
            text: s.to_string(),
        })
    }
}

impl Pattern {
    /// Whether the port at `loc` is in this pattern's set.
    pub fn allows(&self, loc: &Location) -> bool {
        let place_ok = match loc {
            Location::Lab { tx } => {
                return self.place == "lab:" && glob(&self.iface, if *tx { "tx" } else { "rx" });
            }
            Location::Local { .. } => self.place.is_empty(),
            Location::Netns { netns, .. } => self
                .place
                .strip_prefix("netns:")
                .is_some_and(|p| glob(p, netns)),
            Location::Ssh { .. } => {
                let full = loc.to_string();
                let place = full.rsplit_once('/').map_or("", |(p, _)| p);
                self.place.starts_with("ssh://") && self.place == place
            }
        };
        place_ok && glob(&self.iface, loc.iface())
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The patterns a server was started with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allow(pub Vec<Pattern>);

impl Allow {
    /// Whether some pattern allows `loc`.
    pub fn allows(&self, loc: &Location) -> bool {
        self.0.iter().any(|p| p.allows(loc))
    }

    /// The patterns as `--allow` took them, for a message.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "none: the server was started without --allow".into();
        }
        self.0
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(p: &str, loc: &str) -> bool {
        p.parse::<Pattern>()
            .unwrap_or_else(|e| panic!("{e}"))
            .allows(&loc.parse().unwrap())
    }

    #[test]
    fn patterns_match_their_places_and_prefixes() {
        assert!(allows("netns:upk-*/*", "netns:upk-a/veth0"));
        assert!(!allows("netns:upk-*/*", "netns:other/veth0"));
        assert!(!allows("netns:upk-*/*", "veth0"));
        assert!(allows("netns:lab/veth*", "netns:lab/veth-rx"));
        assert!(!allows("netns:lab/veth*", "netns:lab/eth0"));
        assert!(!allows("netns:lab/veth*", "netns:lab2/veth0"));
        assert!(allows("veth*", "veth-tx"));
        assert!(!allows("veth*", "netns:x/veth-tx"));
        assert!(allows("*", "eth0"));
        assert!(allows("eth1", "eth1"));
        assert!(!allows("eth1", "eth10"));
        assert!(allows("ssh://lab@dut/*", "ssh://lab@dut/ens1"));
        assert!(!allows("ssh://lab@dut/*", "ssh://dut/ens1"));
        assert!(!allows("ssh://lab@dut/*", "ens1"));
        assert!(allows("lab:*", "lab:tx"));
        assert!(allows("lab:rx", "lab:rx"));
        assert!(!allows("lab:rx", "lab:tx"));
        assert!(!allows("*", "lab:tx"));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_reason() {
        let why = |s: &str| s.parse::<Pattern>().unwrap_err().why;
        assert_eq!(why("v*th"), "a * may only end a name");
        assert_eq!(why("netns:a*b/x"), "a * may only end a name");
        assert_eq!(why("netns:lab"), "no /IFACE after the namespace's name");
        assert_eq!(why("eth 0"), "the interface name \"eth 0\" holds ' '");
        assert_eq!(why("ssh://h*/x"), "a host cannot hold a *");
        assert_eq!(why("lab:x"), "a lab port is lab:tx, lab:rx or lab:*");
        let empty = Allow::default();
        assert!(!empty.allows(&"eth0".parse().unwrap()));
        assert!(empty.describe().contains("without --allow"));
    }
}
