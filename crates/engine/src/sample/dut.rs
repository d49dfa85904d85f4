//! A device under test's counters at one moment ([`DutSample`]) and its qdiscs' drops, as
//! the lab reads them; [`crate::report::dut`] makes the account of a run from two.

use super::{IfaceCounters, SnmpSnapshot};

/// The DUT's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DutSample {
    pub ingress: IfaceCounters,
    pub egress: IfaceCounters,
    pub snmp: SnmpSnapshot,
    /// Drops of the egress interface's qdiscs, summed (`tc -s qdisc`).
    pub egress_qdisc_drops: u64,
}

/// Output of `tc -s -j qdisc` that is not the list of qdiscs it prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QdiscError {
    /// With the JSON parser's message.
    #[error("tc -s -j qdisc: not JSON: {0}")]
    NotJson(String),
    #[error("tc -s -j qdisc: not a list of qdiscs")]
    NotList,
}

/// The sum of `drops` over the qdiscs of `tc -s -j qdisc show dev IF`'s JSON.
pub fn qdisc_drops(tc_json: &str) -> Result<u64, QdiscError> {
    let v: serde_json::Value =
        serde_json::from_str(tc_json).map_err(|e| QdiscError::NotJson(e.to_string()))?;
    let list = v.as_array().ok_or(QdiscError::NotList)?;
    Ok(list
        .iter()
        .filter_map(|q| q.get("drops").and_then(|d| d.as_u64()))
        .sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tc_json_drops_are_summed() {
        let j =
            r#"[{"kind":"tbf","handle":"1:","drops":12,"packets":5},{"kind":"pfifo","drops":3}]"#;
        assert_eq!(qdisc_drops(j), Ok(15));
        assert_eq!(qdisc_drops("[]"), Ok(0));
        assert!(qdisc_drops("{").is_err());
        assert!(qdisc_drops("{}").is_err());
    }
}
