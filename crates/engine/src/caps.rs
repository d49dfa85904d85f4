//! Privilege checks, so a missing capability is reported before anything is attempted.

/// Linux capability numbers upktgen needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    NetAdmin = 12,
    NetRaw = 13,
    SysAdmin = 21,
}

impl Cap {
    pub fn name(self) -> &'static str {
        match self {
            Cap::NetAdmin => "CAP_NET_ADMIN",
            Cap::NetRaw => "CAP_NET_RAW",
            Cap::SysAdmin => "CAP_SYS_ADMIN",
        }
    }
}

/// The effective capability mask from the text of /proc/self/status.
pub fn parse_cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

/// Of `needed`, the capabilities missing from `mask`.
pub fn missing(mask: u64, needed: &[Cap]) -> Vec<Cap> {
    needed
        .iter()
        .copied()
        .filter(|c| mask & (1u64 << *c as u32) == 0)
        .collect()
}

/// Capabilities a command needs and the process lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} needs {needed} (missing: {missing}): run as root, e.g. `sudo upktgen ...`")]
pub struct MissingCaps {
    /// What needs them ("sending on eth1").
    pub what: String,
    /// All it needs, ` and `-separated.
    pub needed: String,
    /// Those missing, comma-separated.
    pub missing: String,
}

/// Checks the calling process for `needed`; the error names what is missing and why.
pub fn require(needed: &[Cap], what: &str) -> Result<(), MissingCaps> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = parse_cap_eff(&status).unwrap_or(0);
    let miss = missing(mask, needed);
    if miss.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = miss.iter().map(|c| c.name()).collect();
    Err(MissingCaps {
        what: what.to_string(),
        needed: needed
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(" and "),
        missing: names.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status() {
        let s = "Name:\tbash\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\n";
        let m = parse_cap_eff(s).unwrap();
        assert!(missing(m, &[Cap::NetAdmin, Cap::NetRaw, Cap::SysAdmin]).is_empty());
        let user = "CapEff:\t0000000000000000\n";
        let m = parse_cap_eff(user).unwrap();
        assert_eq!(missing(m, &[Cap::NetRaw]), vec![Cap::NetRaw]);
        assert_eq!(parse_cap_eff("nothing"), None);
    }

    #[test]
    fn only_net_raw() {
        let m = 1u64 << 13;
        assert_eq!(
            missing(m, &[Cap::NetRaw, Cap::NetAdmin]),
            vec![Cap::NetAdmin]
        );
    }
}
