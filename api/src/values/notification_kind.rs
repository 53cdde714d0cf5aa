//! The 19 notification types of spec 6.2, in the spec's spelling, and the borrow alerts spec 3.4
//! and 6.2 name without a type (one per health level, and a borrow the lender closed): the
//! in-app feed's `type`, and (with Web Push) the keys of a wallet's delivery preferences.

use super::enum_value;

enum_value!(
    /// A notification type (spec 6.2).
    NotificationKind,
    "notification_type",
    "A notification type (spec 6.2; the `borrow_*` types are spec 3.4's health alerts and a borrow the lender closed).",
    [
        NarrativeResolvedTrue => "narrative_resolved_true",
        NarrativeResolvedFalse => "narrative_resolved_false",
        PayoutReceived => "payout_received",
        NewBackerOnMyNarrative => "new_backer_on_my_narrative",
        CreatorRoyaltyPaid => "creator_royalty_paid",
        MissionCompleted => "mission_completed",
        StreakMilestone => "streak_milestone",
        StreakBroken => "streak_broken",
        EchoPoolEpochEnded => "echo_pool_epoch_ended",
        ChallengeOpened => "challenge_opened",
        ChallengeResolved => "challenge_resolved",
        ConvictionTierUp => "conviction_tier_up",
        NftTierUnlocked => "nft_tier_unlocked",
        SystemAnnouncement => "system_announcement",
        AirdropClaimed => "airdrop_claimed",
        ReferralRewarded => "referral_rewarded",
        KycTierUpgraded => "kyc_tier_upgraded",
        RufflerTicketWon => "ruffler_ticket_won",
        RufflerRoundDrawn => "ruffler_round_drawn",
        BorrowHealthWarning => "borrow_health_warning",
        BorrowHealthUrgent => "borrow_health_urgent",
        BorrowHealthCritical => "borrow_health_critical",
        BorrowPositionClosed => "borrow_position_closed",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_nineteen_types_and_four_borrow_alerts_each_parse_back() {
        assert_eq!(NotificationKind::ALL.len(), 23);
        for kind in NotificationKind::ALL {
            assert_eq!(kind.as_str().parse::<NotificationKind>(), Ok(*kind));
        }
        assert!("narrative_resolved".parse::<NotificationKind>().is_err());
    }
}
