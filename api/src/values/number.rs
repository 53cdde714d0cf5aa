//! Bounded numbers of the requests: an oracle's confidence, a resolution window in days, a unix
//! time.

use poem_openapi::registry::MetaSchema;
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON};
use serde_json::Value;

use super::value_type;

/// Implements poem-openapi's traits for `$ty($inner)`, a JSON number checked by `$ty::new`.
macro_rules! number_value {
    ($ty:ident($inner:ty), $name:literal, $schema:expr, $read:expr) => {
        value_type!([] $ty, $name, $schema);

        impl ParseFromJSON for $ty {
            fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
                match value.unwrap_or_default() {
                    Value::Number(n) => {
                        let read: fn(&serde_json::Number) -> Option<$inner> = $read;
                        read(&n)
                            .ok_or_else(|| ParseError::custom("out of range"))
                            .and_then(|v| $ty::new(v).map_err(ParseError::custom))
                    }
                    other => Err(ParseError::expected_type(other)),
                }
            }
        }

        impl ToJSON for $ty {
            fn to_json(&self) -> Option<Value> {
                Some(serde_json::json!(self.0))
            }
        }

        // As a header or query value: the number's text.
        impl poem_openapi::types::ParseFromParameter for $ty {
            fn parse_from_parameter(value: &str) -> ParseResult<Self> {
                value
                    .trim()
                    .parse::<$inner>()
                    .map_err(|_| ParseError::custom("must be a number"))
                    .and_then(|v| $ty::new(v).map_err(ParseError::custom))
            }
        }
    };
}

/// A whole JSON number as `i64` (an integral float such as `30.0` counts).
fn whole(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// An oracle's confidence in its verdict: 0.7 to 1.0 (spec 4.10, 8).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Confidence(f64);

impl Confidence {
    pub const MIN: f64 = 0.7;
    pub const MAX: f64 = 1.0;
    /// Certainty: an operator's forced verdict.
    pub const FULL: Confidence = Confidence(Self::MAX);

    pub fn new(value: f64) -> Result<Self, String> {
        if (Self::MIN..=Self::MAX).contains(&value) {
            Ok(Confidence(value))
        } else {
            Err("must be between 0.7 and 1.0".into())
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// In basis points, as binary_vault takes it (7000–10000).
    pub fn bps(self) -> u16 {
        (self.0 * 10_000.0).round() as u16
    }
}

number_value!(
    Confidence(f64),
    "confidence",
    MetaSchema {
        description: Some("Confidence in the verdict, 0.7 to 1.0."),
        minimum: Some(Confidence::MIN),
        maximum: Some(Confidence::MAX),
        ..MetaSchema::new_with_format("number", "double")
    },
    serde_json::Number::as_f64
);

/// Days until a market's deadline: 1 to 730 (binary_vault allows 731; a day is kept as margin
/// for the time between preparing and landing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeadlineDays(i64);

impl DeadlineDays {
    pub const MIN: i64 = 1;
    pub const MAX: i64 = 730;

    pub fn new(days: i64) -> Result<Self, String> {
        if (Self::MIN..=Self::MAX).contains(&days) {
            Ok(DeadlineDays(days))
        } else {
            Err(format!("must be between {} and {}", Self::MIN, Self::MAX))
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }

    pub fn secs(self) -> i64 {
        self.0 * 86_400
    }
}

number_value!(
    DeadlineDays(i64),
    "deadline_days",
    MetaSchema {
        description: Some("Days until the market's deadline, 1 to 730."),
        minimum: Some(DeadlineDays::MIN as f64),
        maximum: Some(DeadlineDays::MAX as f64),
        ..MetaSchema::new_with_format("integer", "int64")
    },
    whole
);

/// A USD amount a borrow names: at least a cent, at most a billion dollars (no lending market
/// this service routes to is deeper); never NaN or infinite.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct UsdAmount(f64);

impl UsdAmount {
    pub const MIN: f64 = 0.01;
    pub const MAX: f64 = 1e9;

    pub fn new(value: f64) -> Result<Self, String> {
        if (Self::MIN..=Self::MAX).contains(&value) {
            Ok(UsdAmount(value))
        } else {
            Err("must be a USD amount from 0.01 to 1000000000".into())
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// In micro-dollars (the store's integer), rounded to the nearest.
    pub fn micros(self) -> i64 {
        (self.0 * 1e6).round() as i64
    }
}

number_value!(
    UsdAmount(f64),
    "usd_amount",
    MetaSchema {
        description: Some("A USD amount, 0.01 to 1000000000."),
        minimum: Some(UsdAmount::MIN),
        maximum: Some(UsdAmount::MAX),
        ..MetaSchema::new_with_format("number", "usd")
    },
    serde_json::Number::as_f64
);

/// A moment as unix seconds, from 1970 to the end of year 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnixSeconds(i64);

impl UnixSeconds {
    pub const MAX: i64 = 253_402_300_799;

    pub fn new(secs: i64) -> Result<Self, String> {
        if (0..=Self::MAX).contains(&secs) {
            Ok(UnixSeconds(secs))
        } else {
            Err("must be unix seconds between 1970 and 9999".into())
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

number_value!(
    UnixSeconds(i64),
    "unix_seconds",
    MetaSchema {
        description: Some("Unix seconds (UTC)."),
        minimum: Some(0.0),
        maximum: Some(UnixSeconds::MAX as f64),
        ..MetaSchema::new_with_format("integer", "int64")
    },
    whole
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold() {
        assert!(Confidence::new(0.69).is_err());
        assert_eq!(Confidence::new(0.7).unwrap().bps(), 7_000);
        assert!(Confidence::new(1.01).is_err());
        assert!(Confidence::new(f64::NAN).is_err());
        assert!(DeadlineDays::new(0).is_err());
        assert_eq!(DeadlineDays::new(30).unwrap().secs(), 30 * 86_400);
        assert!(DeadlineDays::new(731).is_err());
        assert!(UnixSeconds::new(-1).is_err());
        let parse = |v: Value| DeadlineDays::parse_from_json(Some(v));
        assert!(parse(serde_json::json!(30.0)).is_ok());
        assert!(parse(serde_json::json!(30.5)).is_err());
        assert!(parse(serde_json::json!(1e300)).is_err());
        assert!(parse(serde_json::json!(u64::MAX)).is_err());
    }
}
