//! MAC addresses.

use std::fmt;
use std::str::FromStr;

/// A 48-bit Ethernet address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// A text that is not a MAC address (the text itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a MAC address (expected six hex bytes like 02:00:00:00:00:01)")]
pub struct BadMac(pub String);

impl FromStr for MacAddr {
    type Err = BadMac;

    /// Accepts `aa:bb:cc:dd:ee:ff` and `aa-bb-cc-dd-ee-ff` (hex digits, one or two each).
    fn from_str(s: &str) -> Result<Self, BadMac> {
        let bad = || BadMac(s.to_string());
        let parts: Vec<&str> = s.split([':', '-']).collect();
        if parts.len() != 6 {
            return Err(bad());
        }
        let mut m = [0u8; 6];
        for (o, p) in m.iter_mut().zip(parts) {
            if p.is_empty() || p.len() > 2 {
                return Err(bad());
            }
            *o = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        Ok(MacAddr(m))
    }
}

impl serde::Serialize for MacAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let m: MacAddr = "02:00:00:99:00:0A".parse().unwrap();
        assert_eq!(m.0, [2, 0, 0, 0x99, 0, 0x0a]);
        assert_eq!(m.to_string(), "02:00:00:99:00:0a");
        assert_eq!("2-0-0-99-0-a".parse::<MacAddr>().unwrap(), m);
        assert!(!m.is_multicast());
        assert!(
            "ff:ff:ff:ff:ff:ff"
                .parse::<MacAddr>()
                .unwrap()
                .is_multicast()
        );
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "02:00:00:99:00",
            "02:00:00:99:00:01:02",
            "0g:00:00:00:00:00",
            "123:0:0:0:0:0",
            "::::::",
        ] {
            let e = s.parse::<MacAddr>().unwrap_err().to_string();
            assert!(e.contains("is not a MAC address"), "{s}: {e}");
        }
    }
}
