//! `--start-at TIME`: a wall-clock instant at which every sender of a run starts, on every
//! host of a fleet. TIME is RFC 3339 (`2026-12-01T10:00:00.5Z`, `...+01:00`), nanoseconds
//! since the epoch (`1796116041764387788`), or `+DURATION` from now (`+5s`, `+500ms`).

use std::time::Duration;

/// The furthest ahead a start may be (a typo in a date should not hang a fleet for days).
pub const MAX_AHEAD: Duration = Duration::from_secs(3600);
/// How far in the past a start may be when it is parsed (the time it took to reach the
/// host); anything older is refused.
pub const PAST_TOLERANCE: Duration = Duration::from_millis(0);

/// Days from 1970-01-01 to the civil date (proleptic Gregorian), for any year 0..=9999.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// What is wrong with an RFC 3339 date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    #[error("expected YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)")]
    Shape,
    /// `what`: the field (`year`, `offset hours`, ...).
    #[error("{what} {text:?} is not a number")]
    NotNumber { what: &'static str, text: String },
    #[error("{what} {v} is out of range ({lo} to {hi})")]
    OutOfRange {
        what: &'static str,
        v: i64,
        lo: i64,
        hi: i64,
    },
    #[error("a '.' without fraction digits")]
    NoFraction,
    #[error("bad fraction")]
    BadFraction,
    #[error("no time zone: end with Z or an offset such as +01:00")]
    NoZone,
    #[error("{0:?} is not a time zone (Z or +HH:MM)")]
    BadZone(String),
    #[error("before 1970")]
    Before1970,
}

/// A `--start-at` value that names no instant a run may start at (`text`: the value).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartAtError {
    #[error(transparent)]
    Duration(#[from] crate::units::DurationError),
    #[error("{0:?}: too large for nanoseconds since the epoch")]
    TooLarge(String),
    #[error(
        "{text:?}: {error} (TIME is RFC 3339, nanoseconds since the epoch, or +DURATION such as +5s)"
    )]
    Date { text: String, error: DateError },
    #[error("{text:?} is {secs:.3} s in the past")]
    Past { text: String, secs: f64 },
    #[error(
        "{text:?} is {secs:.0} s ahead: at most {max} s (a start further away is likely a mistake)",
        max = MAX_AHEAD.as_secs()
    )]
    Ahead { text: String, secs: f64 },
}

fn num(s: &str, what: &'static str, lo: i64, hi: i64) -> Result<i64, DateError> {
    let not_number = || DateError::NotNumber {
        what,
        text: s.to_string(),
    };
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_number());
    }
    let v: i64 = s.parse().map_err(|_| not_number())?;
    if v < lo || v > hi {
        return Err(DateError::OutOfRange { what, v, lo, hi });
    }
    Ok(v)
}

/// Parses RFC 3339 into nanoseconds since the epoch.
pub fn parse_rfc3339(s: &str) -> Result<u64, DateError> {
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(DateError::Shape);
    }
    let y = num(&s[0..4], "year", 1970, 9999)?;
    let mo = num(&s[5..7], "month", 1, 12)?;
    let d = num(&s[8..10], "day", 1, days_in_month(y, mo))?;
    let h = num(&s[11..13], "hour", 0, 23)?;
    let mi = num(&s[14..16], "minute", 0, 59)?;
    // 60: a leap second, read as the next second's start.
    let sec = num(&s[17..19], "second", 0, 60)?;
    let mut rest = &s[19..];
    let mut frac_ns: i64 = 0;
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return Err(DateError::NoFraction);
        }
        let digits = &f[..n];
        let nine: String = digits
            .chars()
            .chain(std::iter::repeat('0'))
            .take(9)
            .collect();
        frac_ns = nine.parse().map_err(|_| DateError::BadFraction)?;
        rest = &f[n..];
    }
    let offset_s: i64 = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let oh = num(&o[1..3], "offset hours", 0, 23)?;
            let om = num(&o[4..6], "offset minutes", 0, 59)?;
            let v = oh * 3600 + om * 60;
            if o.starts_with('-') { -v } else { v }
        }
        "" => return Err(DateError::NoZone),
        o => return Err(DateError::BadZone(o.to_string())),
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    if secs < 0 {
        return Err(DateError::Before1970);
    }
    Ok(secs as u64 * 1_000_000_000 + frac_ns as u64)
}

/// Parses `--start-at` against `now_ns` (CLOCK_REALTIME) and checks that the instant is
/// neither past nor more than [`MAX_AHEAD`] away.
pub fn parse(s: &str, now_ns: u64) -> Result<u64, StartAtError> {
    let s = s.trim();
    let at = if let Some(rel) = s.strip_prefix('+') {
        let d = crate::units::parse_duration(rel)?;
        now_ns.saturating_add(d.as_nanos().min(u128::from(u64::MAX)) as u64)
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>()
            .map_err(|_| StartAtError::TooLarge(s.to_string()))?
    } else {
        parse_rfc3339(s).map_err(|error| StartAtError::Date {
            text: s.to_string(),
            error,
        })?
    };
    if at + (PAST_TOLERANCE.as_nanos() as u64) < now_ns {
        return Err(StartAtError::Past {
            text: s.to_string(),
            secs: (now_ns - at) as f64 / 1e9,
        });
    }
    if at - now_ns.min(at) > MAX_AHEAD.as_nanos() as u64 {
        return Err(StartAtError::Ahead {
            text: s.to_string(),
            secs: (at - now_ns) as f64 / 1e9,
        });
    }
    Ok(at)
}

/// RFC 3339 text of an instant (UTC, nanoseconds), for reports.
pub fn format_rfc3339(ns: u64) -> String {
    let secs = (ns / 1_000_000_000) as i64;
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil_from_days
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ns % 1_000_000_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_796_116_041_764_387_788; // 2026-12-01T...

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(
            parse_rfc3339("2000-03-01T00:00:00Z"),
            Ok(951_868_800 * 1_000_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-12-01T10:00:00.5+01:00"),
            Ok(1_796_115_600 * 1_000_000_000 + 500_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-12-01t09:00:00.123456789z"),
            parse_rfc3339("2026-12-01T10:00:00.123456789+01:00")
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T00:00:00-00:30"),
            Ok((1_709_164_800 + 1800) * 1_000_000_000)
        );
    }

    #[test]
    fn format_and_parse_round_trip() {
        for ns in [0, NOW, 951_868_800_000_000_001, 4_102_444_799_999_999_999] {
            assert_eq!(
                parse_rfc3339(&format_rfc3339(ns)),
                Ok(ns),
                "{}",
                format_rfc3339(ns)
            );
        }
    }

    #[test]
    fn bad_dates_say_what_is_wrong() {
        for (s, what) in [
            ("2026-13-01T00:00:00Z", "month"),
            ("2026-02-29T00:00:00Z", "day"),
            ("2026-12-01T24:00:00Z", "hour"),
            ("2026-12-01T10:00:00", "time zone"),
            ("2026-12-01T10:00:00+1", "time zone"),
            ("2026-12-01T10:00:00.Z", "fraction"),
            ("yesterday", "expected"),
            ("2026-12-01T1a:00:00Z", "hour"),
        ] {
            let e = parse_rfc3339(s).unwrap_err().to_string();
            assert!(e.contains(what), "{s}: {e}");
        }
    }

    #[test]
    fn relative_epoch_and_limits() {
        assert_eq!(parse("+5s", NOW), Ok(NOW + 5_000_000_000));
        assert_eq!(parse(&(NOW + 7).to_string(), NOW), Ok(NOW + 7));
        let e = parse(&(NOW - 2_000_000_000).to_string(), NOW)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2.000 s in the past"), "{e}");
        let e = parse("+2h", NOW).unwrap_err().to_string();
        assert!(e.contains("at most 3600 s"), "{e}");
        assert!(parse("+0s", NOW).is_err());
        assert!(parse("+", NOW).is_err());
        assert!(
            parse("99999999999999999999999", NOW)
                .unwrap_err()
                .to_string()
                .contains("too large")
        );
        let e = parse("2026-12-01T10:00:00Z junk", NOW)
            .unwrap_err()
            .to_string();
        assert!(e.contains("time zone"), "{e}");
    }
}
