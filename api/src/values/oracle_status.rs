//! Where a narrative's resolution stands: spec 3.2's names for narratives, and binary_vault's
//! integer `oracle_status` (spec 3.5: 0 open, 1 resolved, 3 disputed, 4 refund) read into the
//! same names, so that one enum answers both.

use narrative_sdk::binary_vault::constants::{
    ORACLE_STATUS_DISPUTED, ORACLE_STATUS_OPEN, ORACLE_STATUS_REFUND, ORACLE_STATUS_RESOLVED,
};
use narrative_sdk::binary_vault::state::Side;

use super::enum_value;

enum_value!(
    /// A narrative's `oracle_status`.
    OracleStatus,
    "oracle_status",
    "Where the narrative's resolution stands: `open`, `live` and `pending` may be resolved; \
     `resolved_true` / `resolved_false` after a verdict; `disputed` and `refund_triggered` as \
     its market on chain says.",
    [
        Open => "open",
        Live => "live",
        Pending => "pending",
        ResolvedTrue => "resolved_true",
        ResolvedFalse => "resolved_false",
        Disputed => "disputed",
        RefundTriggered => "refund_triggered",
    ]
);

impl OracleStatus {
    /// The statuses a narrative can be resolved from, listed in the agent feed and the public
    /// feed (spec 2.2, 3.2).
    pub const ELIGIBLE: [OracleStatus; 3] = [
        OracleStatus::Open,
        OracleStatus::Live,
        OracleStatus::Pending,
    ];

    /// The status after a verdict.
    pub fn resolved(outcome: Side) -> OracleStatus {
        match outcome {
            Side::Yes => OracleStatus::ResolvedTrue,
            Side::No => OracleStatus::ResolvedFalse,
        }
    }

    /// binary_vault's `oracle_status` with the market's outcome; `None` for a value the
    /// program does not use (2, or anything past 4).
    pub fn from_program(code: u8, outcome: Option<Side>) -> Option<OracleStatus> {
        match code {
            ORACLE_STATUS_OPEN => Some(OracleStatus::Open),
            ORACLE_STATUS_RESOLVED => outcome.map(OracleStatus::resolved),
            ORACLE_STATUS_DISPUTED => Some(OracleStatus::Disputed),
            ORACLE_STATUS_REFUND => Some(OracleStatus::RefundTriggered),
            _ => None,
        }
    }

    /// The names eligible for resolution, as stored.
    pub fn eligible_names() -> [&'static str; 3] {
        Self::ELIGIBLE.map(OracleStatus::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_codes_and_spec_names_are_one_enum() {
        assert_eq!(
            OracleStatus::from_program(0, None),
            Some(OracleStatus::Open)
        );
        assert_eq!(
            OracleStatus::from_program(1, Some(Side::No)),
            Some(OracleStatus::ResolvedFalse)
        );
        assert_eq!(OracleStatus::from_program(1, None), None);
        assert_eq!(OracleStatus::from_program(2, None), None);
        assert_eq!(
            OracleStatus::from_program(3, Some(Side::Yes)),
            Some(OracleStatus::Disputed)
        );
        assert_eq!(
            OracleStatus::from_program(4, None),
            Some(OracleStatus::RefundTriggered)
        );
        assert_eq!(OracleStatus::eligible_names(), ["open", "live", "pending"]);
        assert!(!OracleStatus::ELIGIBLE.contains(&OracleStatus::ResolvedTrue));
        assert_eq!("resolved_true".parse(), Ok(OracleStatus::ResolvedTrue));
    }
}
