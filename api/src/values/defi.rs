//! DeFi values (spec 4.5): the venue identifiers, the tokens routed into them, and a UI amount
//! (`amount`, `amount_sol`, `amount_ui`) kept as the exact decimal the client wrote, so it
//! becomes base units with the mint's decimals without float rounding.

use std::num::NonZeroU64;

use poem_openapi::registry::MetaSchema;
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON};
use serde_json::Value;

use super::{enum_value, value_type};

enum_value!(
    /// A venue, by the neutral identifier of spec 4.5.
    VenueId,
    "venue_id",
    "A DeFi venue: `lend_a`, `lend_b`, `lend_c` (lending), `stake_a`, `stake_b` (liquid staking), `pool_a` (liquidity pool), `p0` (unified margin).",
    [
        LendA => "lend_a",
        LendB => "lend_b",
        LendC => "lend_c",
        StakeA => "stake_a",
        StakeB => "stake_b",
        PoolA => "pool_a",
        P0 => "p0",
    ]
);

enum_value!(
    /// The ledger network the venues are wired for (`SOLANA_CLUSTER`).
    Cluster,
    "cluster",
    "`devnet` or `mainnet-beta`.",
    [Devnet => "devnet", Mainnet => "mainnet-beta"]
);

enum_value!(
    /// A token the venues take, by symbol (any case on input).
    TokenSymbol,
    "token_symbol",
    "The token to deposit: `SOL` or `USDC`.",
    [Sol => "SOL", Usdc => "USDC"],
    any_case
);

enum_value!(
    /// A venue that lends (spec 4.7): what a borrow may name.
    LendingVenue,
    "lending_venue",
    "A lending venue to borrow from: `lend_a` or `lend_b`.",
    [LendA => "lend_a", LendB => "lend_b"]
);

impl LendingVenue {
    pub fn venue(self) -> VenueId {
        match self {
            LendingVenue::LendA => VenueId::LendA,
            LendingVenue::LendB => VenueId::LendB,
        }
    }
}

enum_value!(
    /// A borrow fast action (spec 4.7): a borrow at a share of the tier's max LTV.
    FastAction,
    "fast_action",
    "`safe` (30 % of the tier's max LTV), `balanced` (50 %), `max` (100 %), `instant_sol` (40 %, SOL unless `borrow_asset` says otherwise).",
    [Safe => "safe", Balanced => "balanced", Max => "max", InstantSol => "instant_sol"]
);

impl FastAction {
    /// Its share of the tier's max LTV, in basis points.
    pub fn share_bps(self) -> u32 {
        match self {
            FastAction::Safe => 3_000,
            FastAction::Balanced => 5_000,
            FastAction::Max => 10_000,
            FastAction::InstantSol => 4_000,
        }
    }
}

impl TokenSymbol {
    /// The token's decimals on every cluster (native SOL 9; USDC 6).
    pub fn decimals(self) -> u8 {
        match self {
            TokenSymbol::Sol => 9,
            TokenSymbol::Usdc => 6,
        }
    }
}

/// The most digits a UI amount may carry: 10^20 base units exceed any u64.
const MAX_DIGITS: usize = 30;
/// The largest UI amount the schema admits (no token has a supply near it).
pub const MAX_UI_AMOUNT: f64 = 1e12;

/// A positive decimal amount as the client wrote it: `digits × 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiAmount {
    digits: u128,
    scale: u32,
}

impl UiAmount {
    /// Parses a decimal written as `123`, `0.05` or `5e-2` (a JSON number's text).
    pub fn parse(text: &str) -> Result<UiAmount, String> {
        const REFUSED: &str = "must be a positive decimal number";
        let text = text.trim();
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (
                &text[..at],
                text[at + 1..].parse::<i32>().map_err(|_| REFUSED)?,
            ),
            None => (text, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() && fraction.is_empty()
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return Err(REFUSED.into());
        }
        let all = format!("{whole}{fraction}");
        let all = all.trim_start_matches('0');
        if all.len() > MAX_DIGITS {
            return Err("has too many digits".into());
        }
        let digits: u128 = if all.is_empty() {
            0
        } else {
            all.parse().map_err(|_| REFUSED)?
        };
        if digits == 0 {
            return Err("must be greater than 0".into());
        }
        // value = digits × 10^(exponent − fraction digits)
        let shift = i64::from(exponent) - fraction.len() as i64;
        let (digits, scale) = if shift >= 0 {
            let factor = u32::try_from(shift)
                .ok()
                .and_then(|s| 10u128.checked_pow(s))
                .ok_or("is too large")?;
            (digits.checked_mul(factor).ok_or("is too large")?, 0)
        } else {
            let scale = u32::try_from(-shift).map_err(|_| "has too many decimals")?;
            (digits, scale)
        };
        Ok(UiAmount { digits, scale }.normalised())
    }

    /// Trailing zeros after the point removed (`1.50` is `1.5`).
    fn normalised(mut self) -> UiAmount {
        while self.scale > 0 && self.digits.is_multiple_of(10) {
            self.digits /= 10;
            self.scale -= 1;
        }
        self
    }

    /// The amount in base units of a token with `decimals`: refused when it has more decimals
    /// than the token or does not fit a u64.
    pub fn to_base_units(self, decimals: u8) -> Result<u64, String> {
        let decimals = u32::from(decimals);
        if self.scale > decimals {
            return Err(format!("has more than {decimals} decimals"));
        }
        10u128
            .checked_pow(decimals - self.scale)
            .and_then(|factor| self.digits.checked_mul(factor))
            .and_then(|base| u64::try_from(base).ok())
            .ok_or_else(|| "is too large for the token".into())
    }

    /// `base` base units of a token with `decimals`, exactly (the inverse of
    /// [`UiAmount::to_base_units`]).
    pub fn from_base_units(base: NonZeroU64, decimals: u8) -> UiAmount {
        UiAmount {
            digits: u128::from(base.get()),
            scale: u32::from(decimals),
        }
        .normalised()
    }

    /// For display only (never for money).
    pub fn as_f64(self) -> f64 {
        self.digits as f64 / 10f64.powi(self.scale as i32)
    }
}

impl std::fmt::Display for UiAmount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.digits.to_string();
        let scale = self.scale as usize;
        if scale == 0 {
            return f.write_str(&text);
        }
        let padded = format!("{text:0>width$}", width = scale + 1);
        let (whole, fraction) = padded.split_at(padded.len() - scale);
        write!(f, "{whole}.{fraction}")
    }
}

/// The finest step any token taken here has: a lamport (SOL has 9 decimals, USDC 6). The
/// schemas state it as `multipleOf`, so a generated or validated amount is one the parser can
/// take; a JSON number's text is what is checked, as a decimal, not its f64.
pub const FINEST_UI_STEP: f64 = 1e-9;

value_type!([] UiAmount, "ui_amount", MetaSchema {
    description: Some("A positive decimal amount of the token (UI units, e.g. 1.5 SOL), as a JSON number or a decimal string; it may not carry more decimals than the token's mint (SOL 9, USDC 6)."),
    minimum: Some(FINEST_UI_STEP),
    multiple_of: Some(FINEST_UI_STEP),
    maximum: Some(MAX_UI_AMOUNT),
    ..MetaSchema::new_with_format("number", "decimal")
});

/// The text of a decimal written as a JSON number or string. serde_json writes a number back as
/// the shortest text that reads as the same f64: what the client wrote for any amount a wallet
/// would send.
fn decimal_text<T: poem_openapi::types::Type>(
    value: Option<Value>,
) -> Result<String, ParseError<T>> {
    match value.unwrap_or_default() {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) => Ok(s),
        other => Err(ParseError::expected_type(other)),
    }
}

impl ParseFromJSON for UiAmount {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        let amount = UiAmount::parse(&decimal_text(value)?).map_err(ParseError::custom)?;
        if amount.as_f64() > MAX_UI_AMOUNT {
            return Err(ParseError::custom("is too large"));
        }
        Ok(amount)
    }
}

impl ToJSON for UiAmount {
    fn to_json(&self) -> Option<Value> {
        Some(Value::from(self.as_f64()))
    }
}

/// The largest SOL amount the schema admits: u64::MAX lamports (18,446,744,073.709551615 SOL),
/// rounded down to the nearest value a JSON number written as an f64 still parses within.
pub const MAX_SOL_AMOUNT: f64 = 18_446_744_073.709_55;

/// A positive amount of SOL as the client wrote it (UI units), parsed at the boundary into
/// lamports: refused, not rounded, past nine decimals, and beyond what a u64 of lamports holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolAmount(NonZeroU64);

impl SolAmount {
    pub fn lamports(self) -> u64 {
        self.0.get()
    }

    /// The same amount as a token-generic UI amount (exact: lamports at nine decimals).
    pub fn ui(self) -> UiAmount {
        UiAmount::from_base_units(self.0, TokenSymbol::Sol.decimals())
    }
}

value_type!([] SolAmount, "sol_amount", MetaSchema {
    description: Some("A positive amount of SOL (UI units, e.g. 1.5), as a JSON number or a decimal string, with at most 9 decimals (a lamport), at most u64::MAX lamports."),
    minimum: Some(FINEST_UI_STEP),
    multiple_of: Some(FINEST_UI_STEP),
    maximum: Some(MAX_SOL_AMOUNT),
    ..MetaSchema::new_with_format("number", "decimal")
});

impl ParseFromJSON for SolAmount {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        UiAmount::parse(&decimal_text(value)?)
            .map_err(ParseError::custom)?
            .to_base_units(TokenSymbol::Sol.decimals())
            .and_then(|lamports| NonZeroU64::new(lamports).ok_or("must be greater than 0".into()))
            .map(SolAmount)
            .map_err(ParseError::custom)
    }
}

impl ToJSON for SolAmount {
    fn to_json(&self) -> Option<Value> {
        self.ui().to_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_become_exact_base_units() {
        let base = |text: &str, decimals| UiAmount::parse(text).unwrap().to_base_units(decimals);
        assert_eq!(base("0.01", 9), Ok(10_000_000));
        assert_eq!(base("1.5", 9), Ok(1_500_000_000));
        assert_eq!(base("0.1", 6), Ok(100_000));
        assert_eq!(base("5e-2", 9), Ok(50_000_000));
        assert_eq!(base("1.50", 6), Ok(1_500_000));
        assert_eq!(base("12", 6), Ok(12_000_000));
        assert_eq!(base("0.000000001", 9), Ok(1));
        assert_eq!(base("18446744073.709551615", 9), Ok(u64::MAX));
        assert!(base("18446744073.709551616", 9).is_err(), "beyond u64");
        assert!(base("0.0000001", 6).is_err(), "more decimals than USDC has");
        assert!(
            base("0.0000000001", 9).is_err(),
            "more decimals than SOL has"
        );
        assert_eq!(UiAmount::parse("0.25").unwrap().to_string(), "0.25");
        assert_eq!(UiAmount::parse("7e3").unwrap().to_string(), "7000");
    }

    #[test]
    fn base_units_become_the_ui_amount_they_came_from() {
        let ui = |base: u64, decimals| {
            UiAmount::from_base_units(NonZeroU64::new(base).unwrap(), decimals).to_string()
        };
        assert_eq!(ui(1, 9), "0.000000001");
        assert_eq!(ui(1_500_000_000, 9), "1.5");
        assert_eq!(ui(12_000_000, 6), "12");
        assert_eq!(ui(100_000, 6), "0.1");
        assert_eq!(ui(u64::MAX, 9), "18446744073.709551615");
        assert_eq!(ui(7, 0), "7");
        // Base units -> UI amount -> the same base units, at every digit count from 1 to 20:
        // 10^k, 10^k - 1 (all nines) and a pseudo-random value below 10^k.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for decimals in [0u8, 6, 9] {
            for k in 0..=19u32 {
                let power = 10u64.pow(k);
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                for value in [power, power - 1, seed % power] {
                    let Some(value) = NonZeroU64::new(value) else {
                        continue;
                    };
                    let amount = UiAmount::from_base_units(value, decimals);
                    assert_eq!(amount.to_base_units(decimals), Ok(value.get()));
                    assert_eq!(UiAmount::parse(&amount.to_string()), Ok(amount), "{value}");
                }
            }
        }
    }

    /// What a client (or a schema-driven generator) writes for an amount on the schema's grid:
    /// the f64 nearest to k lamports, as the shortest JSON number text that reads back as it.
    /// Each is taken, and is exactly k lamports while k has at most 15 digits (an f64 holds 15
    /// significant decimal digits; past that it is a neighbouring amount, still on the grid).
    #[test]
    fn every_amount_on_the_schemas_grid_is_taken() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut lamports: Vec<u64> = vec![1, 7, 10, 999_999_999, 1_000_000_001, 123_456_789_012];
        for _ in 0..2_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            lamports.push(seed % 10u64.pow(1 + (seed % 19) as u32) + 1);
        }
        for k in lamports {
            let decimal = format!("{}.{:09}", k / 1_000_000_000, k % 1_000_000_000);
            let number: f64 = decimal.parse().unwrap();
            let written = serde_json::json!(number);
            let taken = SolAmount::parse_from_json(Some(written.clone()))
                .unwrap_or_else(|e| panic!("{written} ({k} lamports) refused: {e:?}"))
                .lamports();
            if k < 10u64.pow(15) {
                assert_eq!(taken, k, "{written}");
            }
        }
    }

    #[test]
    fn what_is_not_a_positive_decimal_is_refused() {
        for text in [
            "",
            ".",
            "-1",
            "0",
            "0.000",
            "abc",
            "1.2.3",
            "NaN",
            "inf",
            "1e",
            "1e99999999999",
            "+1",
            "1_000",
        ] {
            assert!(UiAmount::parse(text).is_err(), "{text:?} accepted");
        }
        assert!(UiAmount::parse("1e40").is_err(), "too large");
    }

    #[test]
    fn a_sol_amount_is_parsed_into_lamports_within_its_schema() {
        let parse = |value: Value| SolAmount::parse_from_json(Some(value)).map(SolAmount::lamports);
        assert_eq!(parse(serde_json::json!(1.5)).unwrap(), 1_500_000_000);
        assert_eq!(parse(serde_json::json!("0.000000001")).unwrap(), 1);
        assert_eq!(
            parse(serde_json::json!("18446744073.709551615")).unwrap(),
            u64::MAX
        );
        // The schema's maximum, as a client's JSON number, is an amount the type takes; the
        // next number up is not.
        assert_eq!(
            parse(serde_json::json!(MAX_SOL_AMOUNT)).unwrap(),
            18_446_744_073_709_550_000
        );
        let above = f64::from_bits(MAX_SOL_AMOUNT.to_bits() + 1);
        assert!(parse(serde_json::json!(above)).is_err(), "{above} taken");
        for refused in [
            serde_json::json!("18446744073.709551616"),
            serde_json::json!(5e-324),
            serde_json::json!("0.0000000001"),
            serde_json::json!(0),
            serde_json::json!(-1),
            serde_json::json!("NaN"),
            serde_json::json!(true),
        ] {
            assert!(parse(refused.clone()).is_err(), "{refused} taken");
        }
        // The schema's step is a lamport and its minimum the smallest amount there is.
        let schema = <SolAmount as poem_openapi::types::Type>::schema_ref();
        let schema = match schema {
            poem_openapi::registry::MetaSchemaRef::Inline(schema) => schema,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (schema.minimum, schema.multiple_of, schema.exclusive_minimum),
            (Some(FINEST_UI_STEP), Some(FINEST_UI_STEP), None)
        );
        assert_eq!(parse(serde_json::json!(FINEST_UI_STEP)).unwrap(), 1);
        let amount = SolAmount::parse_from_json(Some(serde_json::json!("2.50"))).unwrap();
        assert_eq!(amount.ui().to_string(), "2.5");
        assert_eq!(amount.to_json(), Some(serde_json::json!(2.5)));
    }
}
