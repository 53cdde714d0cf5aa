//! Time in the api: unix seconds inside, ISO 8601 UTC outside (spec 4.0).

use chrono::{DateTime, SecondsFormat, Utc};

pub fn now() -> i64 {
    Utc::now().timestamp()
}

/// `2026-01-01T00:00:00Z`.
pub fn iso(unix: i64) -> String {
    DateTime::<Utc>::from_timestamp(unix, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_is_utc_with_a_z() {
        assert_eq!(super::iso(1_767_225_600), "2026-01-01T00:00:00Z");
    }
}
