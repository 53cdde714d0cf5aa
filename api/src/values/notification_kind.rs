//! The 19 notification types of spec 6.2, in the spec's spelling: the in-app feed's `type`, and
//! (with Web Push) the keys of a wallet's delivery preferences.

use super::enum_value;

enum_value!(
    /// A notification type (spec 6.2).
    NotificationKind,
    "notification_type",
    "A notification type (spec 6.2).",
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
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_lists_nineteen_types_and_each_parses_back() {
        assert_eq!(NotificationKind::ALL.len(), 19);
        for kind in NotificationKind::ALL {
            assert_eq!(kind.as_str().parse::<NotificationKind>(), Ok(*kind));
        }
        assert!("narrative_resolved".parse::<NotificationKind>().is_err());
    }
}
