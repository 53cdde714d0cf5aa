//! The sides of a market, each in the one spelling its routes use: a narrative's `'true'` (YES)
//! and `'false'` (NO) (spec 4.1), a binary market's `yes` and `no`, a shield's `safe` and
//! `exploit` (spec 4.14).

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::shield_vault::state::ShieldSide as ProgramShieldSide;

use super::enum_value;

enum_value!(
    /// A narrative's side, as spec 4.1 spells it: `'true'` backs YES, `'false'` NO.
    NarrativeSide,
    "narrative_side",
    "`true` backs YES, `false` backs NO.",
    [Yes => "true", No => "false"]
);

enum_value!(
    /// A binary market's side.
    BinarySide,
    "binary_side",
    "`yes` or `no`.",
    [Yes => "yes", No => "no"]
);

enum_value!(
    /// A shield coverage's side (spec 4.14).
    ShieldSide,
    "shield_side",
    "`safe` or `exploit`.",
    [Safe => "safe", Exploit => "exploit"]
);

impl From<NarrativeSide> for Side {
    fn from(side: NarrativeSide) -> Side {
        match side {
            NarrativeSide::Yes => Side::Yes,
            NarrativeSide::No => Side::No,
        }
    }
}

impl From<Side> for NarrativeSide {
    fn from(side: Side) -> NarrativeSide {
        match side {
            Side::Yes => NarrativeSide::Yes,
            Side::No => NarrativeSide::No,
        }
    }
}

impl From<BinarySide> for Side {
    fn from(side: BinarySide) -> Side {
        match side {
            BinarySide::Yes => Side::Yes,
            BinarySide::No => Side::No,
        }
    }
}

impl From<Side> for BinarySide {
    fn from(side: Side) -> BinarySide {
        match side {
            Side::Yes => BinarySide::Yes,
            Side::No => BinarySide::No,
        }
    }
}

impl From<NarrativeSide> for BinarySide {
    fn from(side: NarrativeSide) -> BinarySide {
        Side::from(side).into()
    }
}

impl From<ShieldSide> for ProgramShieldSide {
    fn from(side: ShieldSide) -> ProgramShieldSide {
        match side {
            ShieldSide::Safe => ProgramShieldSide::Safe,
            ShieldSide::Exploit => ProgramShieldSide::Exploit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_has_one_spelling() {
        assert_eq!("true".parse::<NarrativeSide>(), Ok(NarrativeSide::Yes));
        assert_eq!("false".parse::<NarrativeSide>(), Ok(NarrativeSide::No));
        assert!("yes".parse::<NarrativeSide>().is_err());
        assert_eq!(Side::from(BinarySide::No), Side::No);
        assert_eq!(BinarySide::from(NarrativeSide::Yes).to_string(), "yes");
        assert_eq!(
            ProgramShieldSide::from("exploit".parse::<ShieldSide>().unwrap()),
            ProgramShieldSide::Exploit
        );
        assert!("SAFE".parse::<ShieldSide>().is_err());
    }
}
