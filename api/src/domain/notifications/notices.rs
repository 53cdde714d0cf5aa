//! The text and data of each notification type, one constructor per cause, so every producer
//! words a type the same way. Amounts are lamports in `data` and SOL in the text.

use serde_json::{json, Value};

use super::Notice;
use crate::values::{sol_u64, NotificationKind as Kind};

/// Keys of `data` that a feed, readable by anyone, never shows: older notifications carried
/// them (the KYC provider's inquiry id, which lets its holder into the inquiry's records).
const PRIVATE_DATA_KEYS: [&str; 1] = ["inquiry_id"];

/// A notification's `data` as a public read shows it: without [`PRIVATE_DATA_KEYS`].
pub fn public_data(mut data: Value) -> Value {
    if let Some(object) = data.as_object_mut() {
        for key in PRIVATE_DATA_KEYS {
            object.remove(key);
        }
    }
    data
}

/// `1.5 SOL`, without trailing zeros.
pub fn sol_text(lamports: u64) -> String {
    let text = format!("{:.9}", sol_u64(lamports));
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} SOL")
}

/// What a wallet had to do with a narrative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Creator,
    Backer,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Creator => "creator",
            Role::Backer => "backer",
        }
    }
}

/// A narrative the wallet created or backed was resolved by a verdict.
pub fn narrative_resolved(
    wallet: &str,
    narrative_id: &str,
    title: &str,
    resolved_true: bool,
    role: Role,
) -> Notice {
    let (kind, verdict) = if resolved_true {
        (Kind::NarrativeResolvedTrue, "TRUE")
    } else {
        (Kind::NarrativeResolvedFalse, "FALSE")
    };
    Notice {
        wallet: wallet.to_owned(),
        kind,
        title: format!("Resolved {verdict}: {title}"),
        body: format!(
            "A narrative you {} resolved {verdict}. Payouts follow the 48-hour hold.",
            if role == Role::Creator {
                "created"
            } else {
                "backed"
            }
        ),
        data: json!({"narrative_id": narrative_id, "role": role.as_str()}),
        event: narrative_id.to_owned(),
    }
}

/// Someone else backed the wallet's narrative.
pub fn new_backer(
    creator: &str,
    narrative_id: &str,
    title: &str,
    backer: &str,
    side_yes: bool,
    lamports: u64,
    event: &str,
) -> Notice {
    let side = if side_yes { "true" } else { "false" };
    Notice {
        wallet: creator.to_owned(),
        kind: Kind::NewBackerOnMyNarrative,
        title: format!("New backer on {title}"),
        body: format!(
            "{} backed {} on your narrative.",
            sol_text(lamports),
            if side_yes { "YES" } else { "NO" }
        ),
        data: json!({
            "narrative_id": narrative_id, "backer": backer, "side": side,
            "amount_lamports": lamports,
        }),
        event: event.to_owned(),
    }
}

/// A claim paid the wallet (winnings, the loser return or a refund).
pub fn payout(
    wallet: &str,
    market_id: &str,
    side: &str,
    principal: u64,
    payout: u64,
    narrative_id: Option<&str>,
) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::PayoutReceived,
        title: format!("Payout received: {}", sol_text(payout)),
        body: format!(
            "Your {} backing of {} paid out {}.",
            side.to_uppercase(),
            sol_text(principal),
            sol_text(payout)
        ),
        data: json!({
            "market_id": market_id, "narrative_id": narrative_id, "side": side,
            "principal_lamports": principal, "payout_lamports": payout,
        }),
        // One claim per backing (market and side).
        event: format!("{market_id}:{side}"),
    }
}

/// The wallet's narratives earned a creator share of a closed Echo Pool epoch.
pub fn creator_royalty(wallet: &str, epoch_number: u64, epoch: &str, lamports: u64) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::CreatorRoyaltyPaid,
        title: format!("Creator royalty: {}", sol_text(lamports)),
        body: format!(
            "Your narratives' forfeits earned you {} in Echo Pool epoch {epoch_number}; claim it \
             once the epoch's challenge delay is over.",
            sol_text(lamports)
        ),
        data: json!({"epoch_number": epoch_number, "epoch": epoch, "amount_lamports": lamports}),
        event: epoch.to_owned(),
    }
}

pub fn mission_completed(wallet: &str, mission_id: &str, title: &str, points: u64) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::MissionCompleted,
        title: format!("Mission complete: {title}"),
        body: format!("You earned {points} points."),
        data: json!({"mission_id": mission_id, "points": points}),
        event: mission_id.to_owned(),
    }
}

/// The wallet's streak of correct backings reached `streak` with `market_id`'s result.
pub fn streak_milestone(wallet: &str, streak: u32, market_id: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::StreakMilestone,
        title: format!("{streak} correct in a row"),
        body: format!("Your backing streak reached {streak}."),
        data: json!({"streak": streak, "market_id": market_id}),
        event: format!("{streak}:{market_id}"),
    }
}

/// `market_id`'s result ended a streak of `previous`.
pub fn streak_broken(wallet: &str, previous: u32, market_id: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::StreakBroken,
        title: "Streak broken".into(),
        body: format!("Your streak of {previous} correct backings ended."),
        data: json!({"previous_streak": previous, "market_id": market_id}),
        event: market_id.to_owned(),
    }
}

/// An Echo Pool epoch closed with an allocation for the wallet.
pub fn epoch_ended(
    wallet: &str,
    epoch_number: u64,
    epoch: &str,
    lamports: u64,
    claimable_at: &str,
) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::EchoPoolEpochEnded,
        title: format!("Echo Pool epoch {epoch_number} closed"),
        body: format!(
            "You have {} to claim from {claimable_at}.",
            sol_text(lamports)
        ),
        data: json!({
            "epoch_number": epoch_number, "epoch": epoch, "amount_lamports": lamports,
            "claimable_at": claimable_at,
        }),
        event: epoch.to_owned(),
    }
}

/// A market the wallet created or backed was disputed.
pub fn challenge_opened(wallet: &str, market_id: &str, disputer: &str, event: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::ChallengeOpened,
        title: "Outcome challenged".into(),
        body: "The proposed outcome of a market you are in was disputed; payouts wait for the \
               ruling."
            .into(),
        data: json!({"market_id": market_id, "disputer": disputer}),
        event: event.to_owned(),
    }
}

/// The dispute of a market the wallet created or backed was settled (`ruling`: uphold,
/// overturn, refund, lapse).
pub fn challenge_resolved(
    wallet: &str,
    market_id: &str,
    ruling: &str,
    outcome: Option<&str>,
    event: &str,
) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::ChallengeResolved,
        title: "Challenge resolved".into(),
        body: format!("The dispute ended: {ruling}."),
        data: json!({"market_id": market_id, "ruling": ruling, "outcome": outcome}),
        event: event.to_owned(),
    }
}

pub fn tier_up(wallet: &str, from: &str, to: &str, market_id: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::ConvictionTierUp,
        title: format!("You reached {to}"),
        body: format!("Your conviction tier rose from {from} to {to}."),
        data: json!({"from": from, "to": to, "market_id": market_id}),
        event: format!("{to}:{market_id}"),
    }
}

/// Reaching `tier` makes its tier NFT available to mint.
pub fn nft_unlocked(wallet: &str, tier: &str, market_id: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::NftTierUnlocked,
        title: format!("The {tier} NFT is unlocked"),
        body: format!("Your {tier} tier NFT can now be minted."),
        data: json!({"tier": tier, "market_id": market_id}),
        event: tier.to_owned(),
    }
}

pub fn announcement(wallet: &str, id: i64, title: &str, body: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::SystemAnnouncement,
        title: title.to_owned(),
        body: body.to_owned(),
        data: json!({"announcement_id": id}),
        event: id.to_string(),
    }
}

/// The KYC provider approved an inquiry that raised the wallet's tier. The inquiry keys the
/// notification (one per inquiry) but is not in its data: the feed is a public read.
pub fn kyc_tier_upgraded(wallet: &str, tier: i32, inquiry_id: &str) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::KycTierUpgraded,
        title: format!("KYC tier {tier} verified"),
        body: format!("Your identity verification passed: your wallet is now at KYC tier {tier}."),
        data: json!({"tier": tier}),
        event: inquiry_id.to_owned(),
    }
}

/// The wallet claimed its Echo Pool share (a Merkle airdrop) of an epoch.
pub fn airdrop_claimed(wallet: &str, epoch_number: u64, epoch: &str, lamports: u64) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::AirdropClaimed,
        title: format!("Claimed {}", sol_text(lamports)),
        body: format!("Your Echo Pool share of epoch {epoch_number} is in your wallet."),
        data: json!({"epoch_number": epoch_number, "epoch": epoch, "amount_lamports": lamports}),
        event: epoch.to_owned(),
    }
}

/// A wallet the referrer brought made its first backing.
pub fn referral_rewarded(referrer: &str, referred: &str, points: u64) -> Notice {
    Notice {
        wallet: referrer.to_owned(),
        kind: Kind::ReferralRewarded,
        title: format!("Referral reward: {points} points"),
        body: "A wallet you referred made its first backing.".into(),
        data: json!({"referred": referred, "points": points}),
        event: referred.to_owned(),
    }
}

/// The wallet's ticket won a ruffler round.
pub fn ruffler_ticket_won(wallet: &str, round: u64, ticket: i64, prize_points: u64) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::RufflerTicketWon,
        title: format!("Your ticket won round {round}"),
        body: format!("Ticket {ticket} was drawn: {prize_points} points are yours."),
        data: json!({"round": round, "ticket": ticket, "prize_points": prize_points}),
        event: round.to_string(),
    }
}

/// A round the wallet held tickets in was drawn.
pub fn ruffler_round_drawn(
    wallet: &str,
    round: u64,
    held: u64,
    tickets: u64,
    winner: &str,
) -> Notice {
    Notice {
        wallet: wallet.to_owned(),
        kind: Kind::RufflerRoundDrawn,
        title: format!("Ruffler round {round} drawn"),
        body: format!("{tickets} tickets took part; you held {held}."),
        data: json!({"round": round, "held": held, "tickets": tickets, "winner": winner}),
        event: round.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sol_amounts_read_without_trailing_zeros() {
        assert_eq!(sol_text(1_500_000_000), "1.5 SOL");
        assert_eq!(sol_text(2_000_000_000), "2 SOL");
        assert_eq!(sol_text(1), "0.000000001 SOL");
    }

    #[test]
    fn public_data_drops_the_inquiry_id() {
        assert_eq!(
            public_data(json!({"tier": 1, "inquiry_id": "inq_1"})),
            json!({"tier": 1})
        );
        assert_eq!(public_data(json!(null)), json!(null));
        let upgraded = kyc_tier_upgraded("w", 2, "inq_9");
        assert_eq!(upgraded.data, json!({"tier": 2}));
        assert!(upgraded.dedupe_key().contains("inq_9"), "one per inquiry");
    }

    #[test]
    fn one_event_keys_one_notification_per_wallet_and_type() {
        let a = payout("w1", "m", "yes", 1, 2, None);
        let b = payout("w2", "m", "yes", 1, 2, None);
        assert_ne!(a.dedupe_key(), b.dedupe_key());
        assert_eq!(
            a.dedupe_key(),
            payout("w1", "m", "yes", 5, 9, None).dedupe_key()
        );
        assert_ne!(
            a.dedupe_key(),
            payout("w1", "m", "no", 1, 2, None).dedupe_key()
        );
    }
}
