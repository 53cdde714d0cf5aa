//! Amounts of SOL: decimal SOL as a JSON number (`amount_sol`, seeds), or integer lamports
//! (`amount_lamports`), each held as lamports within the bounds its type states, so arithmetic
//! on them cannot overflow: the largest amount any request may name is a billion SOL (more
//! than exists), and a sum of a few of them still fits in a `u64`.

use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON};
use serde_json::Value;

use super::{sol_u64, value_type};

pub const LAMPORTS_PER_SOL: u64 = 1_000_000_000;
/// A billion SOL.
pub const MAX_LAMPORTS: u64 = 1_000_000_000 * LAMPORTS_PER_SOL;

/// SOL as a number, to lamports: float noise below a thousandth of a lamport is rounded away,
/// and digits past the lamport are dropped, so a wallet is never asked for more than it named.
fn lamports_of(sol: f64) -> u64 {
    let exact = sol * LAMPORTS_PER_SOL as f64;
    let nearest = exact.round();
    let tolerance = (exact * 1e-15).max(1e-3);
    if (exact - nearest).abs() <= tolerance {
        nearest as u64
    } else {
        exact.floor() as u64
    }
}

/// An amount of SOL (a JSON number) between `MIN` and `MAX` lamports, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sol<const MIN: u64, const MAX: u64 = MAX_LAMPORTS>(u64);

impl<const MIN: u64, const MAX: u64> Sol<MIN, MAX> {
    pub fn lamports(self) -> u64 {
        self.0
    }

    /// `sol` when it lies within the bounds (compared as the schema states them, in SOL).
    pub fn from_sol(sol: f64) -> Result<Self, String> {
        let (min, max) = (sol_u64(MIN), sol_u64(MAX));
        if !sol.is_finite() || sol < min || sol > max {
            return Err(format!("must be a number of SOL from {min} to {max}"));
        }
        Ok(Sol(lamports_of(sol).clamp(MIN, MAX)))
    }

    fn schema() -> MetaSchema {
        MetaSchema {
            description: Some("An amount of SOL (1 SOL = 1,000,000,000 lamports); digits past the lamport are dropped."),
            minimum: Some(sol_u64(MIN)),
            maximum: Some(sol_u64(MAX)),
            ..MetaSchema::new_with_format("number", "sol")
        }
    }
}

/// Like [`Sol`], or exactly 0 (an optional seed left empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SolOrZero<const MIN: u64, const MAX: u64 = MAX_LAMPORTS>(u64);

impl<const MIN: u64, const MAX: u64> SolOrZero<MIN, MAX> {
    pub fn lamports(self) -> u64 {
        self.0
    }

    pub fn from_sol(sol: f64) -> Result<Self, String> {
        if sol == 0.0 {
            return Ok(SolOrZero(0));
        }
        Sol::<MIN, MAX>::from_sol(sol)
            .map(|s| SolOrZero(s.lamports()))
            .map_err(|e| format!("{e}, or 0"))
    }
}

/// An amount in lamports (a JSON integer) between `MIN` and `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lamports<const MIN: u64 = 0, const MAX: u64 = MAX_LAMPORTS>(u64);

impl<const MIN: u64, const MAX: u64> Lamports<MIN, MAX> {
    pub fn get(self) -> u64 {
        self.0
    }

    pub fn new(lamports: u64) -> Result<Self, String> {
        if (MIN..=MAX).contains(&lamports) {
            Ok(Lamports(lamports))
        } else {
            Err(format!(
                "must be a whole number of lamports from {MIN} to {MAX}"
            ))
        }
    }
}

/// A JSON number as `f64`.
fn number(value: Option<Value>) -> ParseResult<f64> {
    match value.unwrap_or_default() {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| ParseError::custom("must be a number")),
        other => Err(ParseError::expected_type(other)),
    }
}

/// Implements poem-openapi's traits for an amount type over `$parse` and `$schema`.
macro_rules! amount_value {
    ($ty:ident, $name:literal, |$value:ident| $parse:expr, $schema:expr, $json:expr) => {
        value_type!([const MIN: u64, const MAX: u64] $ty<MIN, MAX>, $name, $schema);

        impl<const MIN: u64, const MAX: u64> ParseFromJSON for $ty<MIN, MAX> {
            fn parse_from_json($value: Option<Value>) -> ParseResult<Self> {
                $parse.map_err(ParseError::custom)
            }
        }

        impl<const MIN: u64, const MAX: u64> ToJSON for $ty<MIN, MAX> {
            fn to_json(&self) -> Option<Value> {
                let amount = self.0;
                Some($json(amount))
            }
        }
    };
}

amount_value!(
    Sol,
    "sol_amount",
    |value| number(value)
        .map_err(|e| e.into_message())
        .and_then(Self::from_sol),
    Self::schema(),
    |lamports: u64| serde_json::json!(sol_u64(lamports))
);

amount_value!(
    SolOrZero,
    "sol_amount",
    |value| number(value)
        .map_err(|e| e.into_message())
        .and_then(Self::from_sol),
    MetaSchema {
        description: Some("An amount of SOL, or 0 for none."),
        any_of: vec![
            MetaSchemaRef::Inline(Box::new(MetaSchema {
                enum_items: vec![serde_json::json!(0)],
                ..MetaSchema::new_with_format("number", "sol")
            })),
            Sol::<MIN, MAX>::schema_ref(),
        ],
        ..MetaSchema::ANY
    },
    |lamports: u64| serde_json::json!(sol_u64(lamports))
);

amount_value!(
    Lamports,
    "lamports",
    |value| {
        let refused = || format!("must be a whole number of lamports from {MIN} to {MAX}");
        match value.unwrap_or_default() {
            // Read as an integer first: as a float, 10^18 + 1 would round to 10^18.
            Value::Number(n) => match n.as_u64() {
                Some(lamports) => Self::new(lamports),
                None => n
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && (0.0..=9.0e15).contains(f))
                    .map_or_else(|| Err(refused()), |f| Self::new(f as u64)),
            },
            other => Err(ParseError::<Self>::expected_type(other).into_message()),
        }
    },
    MetaSchema {
        description: Some("An amount in lamports (1 SOL = 1,000,000,000 lamports)."),
        minimum: Some(MIN as f64),
        maximum: Some(MAX as f64),
        ..MetaSchema::new_with_format("integer", "lamports")
    },
    |lamports: u64| serde_json::json!(lamports)
);

#[cfg(test)]
mod tests {
    use super::*;

    type Backing = Sol<10_000_000>;

    #[test]
    fn sol_becomes_lamports_dropping_what_is_past_the_lamport() {
        assert_eq!(Backing::from_sol(0.01).unwrap().lamports(), 10_000_000);
        assert_eq!(Backing::from_sol(0.57).unwrap().lamports(), 570_000_000);
        assert_eq!(
            Backing::from_sol(12.345678901).unwrap().lamports(),
            12_345_678_901
        );
        assert_eq!(
            Backing::from_sol(0.0100000004).unwrap().lamports(),
            10_000_000
        );
    }

    #[test]
    fn bounds_are_the_schema_bounds() {
        assert!(Backing::from_sol(0.0099999999).is_err());
        assert!(Backing::from_sol(-1.0).is_err());
        assert!(Backing::from_sol(f64::NAN).is_err());
        assert!(Backing::from_sol(1e9).is_ok());
        assert!(Backing::from_sol(1e9 + 1.0).is_err());
        assert!(Backing::from_sol(1.8446744073709552e19).is_err());
        assert_eq!(Backing::from_sol(1e9).unwrap().lamports(), MAX_LAMPORTS);
        let schema = Backing::schema();
        assert_eq!((schema.minimum, schema.maximum), (Some(0.01), Some(1e9)));
    }

    #[test]
    fn a_seed_is_zero_or_within_bounds() {
        type Seed = SolOrZero<10_000_000>;
        assert_eq!(Seed::from_sol(0.0).unwrap().lamports(), 0);
        assert_eq!(Seed::from_sol(0.5).unwrap().lamports(), 500_000_000);
        assert!(Seed::from_sol(0.001).is_err());
    }

    #[test]
    fn lamports_are_whole_and_bounded() {
        type Fee = Lamports<5, 10>;
        let parse = |v: Value| Fee::parse_from_json(Some(v));
        assert_eq!(parse(serde_json::json!(7)).unwrap().get(), 7);
        assert_eq!(parse(serde_json::json!(7.0)).unwrap().get(), 7);
        assert!(parse(serde_json::json!(7.5)).is_err());
        assert!(parse(serde_json::json!(11)).is_err());
        assert!(parse(serde_json::json!(-1)).is_err());
        assert!(parse(serde_json::json!(1e30)).is_err());
        type Big = Lamports<0, MAX_LAMPORTS>;
        let big = |v: Value| Big::parse_from_json(Some(v));
        assert!(big(serde_json::json!(MAX_LAMPORTS)).is_ok());
        assert!(
            big(serde_json::json!(MAX_LAMPORTS + 1)).is_err(),
            "no float rounding"
        );
        assert!(parse(serde_json::json!("7")).is_err());
    }
}
