//! Values of options that are not pktgen parameters (those are the device language's, in
//! [`crate::pg`]): durations.

use std::time::Duration;

/// A text that is not a duration an option takes (the text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("'{0}' is not a duration (examples: 10, 2.5s, 500ms, 3m)")]
    NotDuration(String),
    #[error("'{0}': the duration must be positive and finite")]
    OutOfRange(String),
    #[error("'{0}': longer than 1000000000 s (31 years), the longest duration upktgen takes")]
    TooLong(String),
}

/// Parses a duration: `10` (seconds), `2.5s`, `500ms`, `100us`, `3m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let bad = || DurationError::NotDuration(s.to_string());
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().map_err(|_| bad())?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "ns" => 1e-9,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    let secs = v * scale;
    if secs > 1e9 {
        return Err(DurationError::TooLong(s.to_string()));
    }
    if !secs.is_finite() || secs <= 0.0 {
        return Err(DurationError::OutOfRange(s.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// [`parse_duration`], and zero too (`0`, `0s`, `0ms`...): for a delay, where none is a
/// value.
pub fn parse_duration_or_zero(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    let num = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if num.parse::<f64>() == Ok(0.0) && matches!(&t[num.len()..], "" | "s" | "ms" | "us" | "ns") {
        return Ok(Duration::ZERO);
    }
    parse_duration(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_a_delay() {
        for z in ["0", "0s", "0ms", "0.0us", " 0ns "] {
            assert_eq!(parse_duration_or_zero(z).unwrap(), Duration::ZERO, "{z}");
        }
        assert_eq!(
            parse_duration_or_zero("10ms").unwrap(),
            Duration::from_millis(10)
        );
        assert!(parse_duration_or_zero("0x").is_err());
        assert!(parse_duration_or_zero("-1ms").is_err());
        assert!(
            parse_duration("0").is_err(),
            "a plain duration is still above 0"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("3m").unwrap(), Duration::from_secs(180));
        for bad in ["", "s", "-1", "0", "1x", "1.2.3s", "nan", "1e999"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        // Too long is said as too long, not as "not positive".
        let e = parse_duration("1000000000000s").unwrap_err().to_string();
        assert!(e.contains("longer than 1000000000 s"), "{e}");
        assert!(
            parse_duration("0")
                .unwrap_err()
                .to_string()
                .contains("positive")
        );
    }
}
