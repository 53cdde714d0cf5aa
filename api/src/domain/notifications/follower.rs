//! The event follower (`follow_events`, one perpetual job): reads the indexed program events in
//! the order they were stored, after its cursor, and turns each into what it causes:
//!
//! | event | causes |
//! |---|---|
//! | `MarketBacked` | backing points for the backer (what it added to its side's total's); the referrer's reward on a referred wallet's first backing (`referral_rewarded`); `new_backer_on_my_narrative` for the narrative's creator |
//! | `Claimed` | `payout_received` |
//! | `DisputeOpened` / `DisputeSettled` | `challenge_opened` for the market's creator and backers but the disputer; `challenge_resolved` for them and the disputer |
//! | `MarketFinalized` | per backer: `streak_milestone`, `streak_broken`, `conviction_tier_up`, `nft_tier_unlocked` |
//! | crucible `EpochClaimed` (SOL) | `airdrop_claimed` |
//!
//! Facts on chain reach every client this way, whoever sent the transaction. A batch of events
//! and the cursor move in one transaction; everything written is unique by its cause, so a
//! batch repeated after a crash writes nothing twice. The cursor assumes the events table grows
//! in id order as transactions commit, which holds with one indexer writing (the lease).

use std::collections::BTreeSet;

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::decode::{decode_event, hex32, BinaryEvent, CrucibleEvent, ProgramEvent};
use narrative_sdk::{crucible_pool::SOL_MINT, Pubkey};
use narrative_store::entities::{
    backings, event_cursors, markets, narratives, program_events, waitlist_entries,
};
use narrative_store::indexed::ResolvedBacking;
use narrative_store::Store;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use serde_json::json;

use super::notices;
use super::notify;
use crate::clock::SharedClock;
use crate::domain::points::{self, Award, Reason};
use crate::domain::profiles::conviction::{self, Tier};
use crate::domain::profiles::eruption::MILESTONES;
use crate::jobs::follow_events::FollowEvents;
use crate::jobs::{Handler, JobOutcome, Leased};

/// The follower's cursor.
const CURSOR: &str = "follow_events";
/// Events per batch (one transaction).
const BATCH: u64 = 500;
/// How soon a follower that caught up looks again.
const IDLE_SECS: i64 = 2;
/// A streak at least this long that ends is a `streak_broken`.
const NOTABLE_STREAK: u32 = 2;

pub struct EventFollower {
    pub store: Store,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<FollowEvents> for EventFollower {
    async fn run(&self, _: Leased<FollowEvents>) -> anyhow::Result<JobOutcome> {
        let now = self.clock.now();
        let handled = self.follow(now).await?;
        Ok(JobOutcome::Later(if handled == BATCH {
            now
        } else {
            now + IDLE_SECS
        }))
    }
}

impl EventFollower {
    /// Handles the next batch of events; how many.
    pub async fn follow(&self, now: i64) -> Result<u64, DbErr> {
        let db = self.store.db();
        let after = event_cursors::Entity::find_by_id(CURSOR)
            .one(db)
            .await?
            .map_or(0, |c| c.last_event_id);
        let events = program_events::Entity::find()
            .filter(program_events::Column::Id.gt(after))
            .order_by_asc(program_events::Column::Id)
            .limit(BATCH)
            .all(db)
            .await?;
        let Some(last) = events.last().map(|e| e.id) else {
            return Ok(0);
        };
        let txn = self.store.begin_write().await?;
        for event in &events {
            handle(&txn, event, now).await?;
        }
        event_cursors::Entity::insert(event_cursors::ActiveModel {
            name: Set(CURSOR.into()),
            last_event_id: Set(last),
            updated_at: Set(now),
        })
        .on_conflict(
            OnConflict::column(event_cursors::Column::Name)
                .update_columns([
                    event_cursors::Column::LastEventId,
                    event_cursors::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await?;
        txn.commit().await?;
        Ok(events.len() as u64)
    }
}

fn program_id(name: &str) -> Option<Pubkey> {
    match name {
        "binary_vault" => Some(narrative_sdk::ids::BINARY_VAULT),
        "crucible_pool" => Some(narrative_sdk::ids::CRUCIBLE_POOL),
        "shield_vault" => Some(narrative_sdk::ids::SHIELD_VAULT),
        _ => None,
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Yes => "yes",
        Side::No => "no",
    }
}

async fn handle(
    db: &impl ConnectionTrait,
    event: &program_events::Model,
    now: i64,
) -> Result<(), DbErr> {
    let Some(decoded) = program_id(&event.program).and_then(|p| decode_event(&p, &event.data))
    else {
        return Ok(());
    };
    // Where the event sits: unique per event.
    let position = format!(
        "{}:{}:{}",
        event.signature, event.instruction_index, event.inner_index
    );
    match decoded {
        ProgramEvent::Binary(BinaryEvent::MarketBacked(e)) => backed(db, &e, &position, now).await,
        ProgramEvent::Binary(BinaryEvent::Claimed(e)) => {
            let market_id = hex32(&e.market_id);
            let narrative = narrative_of(db, &market_id).await?;
            let notice = notices::payout(
                &e.backer.to_string(),
                &market_id,
                side_name(e.side),
                e.principal,
                e.payout,
                narrative.as_ref().map(|n| n.id.as_str()),
            );
            notify(db, notice, now).await.map(drop)
        }
        ProgramEvent::Binary(BinaryEvent::DisputeOpened(e)) => {
            let market_id = hex32(&e.market_id);
            let disputer = e.disputer.to_string();
            // Everyone in the market but the disputer, who knows.
            for wallet in involved(db, &market_id)
                .await?
                .into_iter()
                .filter(|w| *w != disputer)
            {
                let notice = notices::challenge_opened(
                    &wallet,
                    &market_id,
                    &e.disputer.to_string(),
                    &position,
                );
                notify(db, notice, now).await?;
            }
            Ok(())
        }
        ProgramEvent::Binary(BinaryEvent::DisputeSettled(e)) => {
            let market_id = hex32(&e.market_id);
            let ruling = format!("{:?}", e.action).to_lowercase();
            // Everyone in the market, and the disputer, whose bond the ruling decided.
            let mut audience = involved(db, &market_id).await?;
            audience.extend(disputer_before(db, &market_id, event.id).await?);
            for wallet in audience {
                let notice = notices::challenge_resolved(
                    &wallet,
                    &market_id,
                    &ruling,
                    e.outcome.map(side_name),
                    &position,
                );
                notify(db, notice, now).await?;
            }
            Ok(())
        }
        ProgramEvent::Binary(BinaryEvent::MarketFinalized(e)) => {
            finalized(db, &hex32(&e.market_id), e.outcome, now).await
        }
        ProgramEvent::Crucible(CrucibleEvent::EpochClaimed(e)) if e.mint == SOL_MINT => {
            let epoch = narrative_sdk::pda::crucible::epoch(&e.mint, e.epoch);
            let notice = notices::airdrop_claimed(
                &e.wallet.to_string(),
                e.epoch,
                &epoch.to_string(),
                e.amount,
            );
            notify(db, notice, now).await.map(drop)
        }
        _ => Ok(()),
    }
}

async fn narrative_of(
    db: &impl ConnectionTrait,
    market_id: &str,
) -> Result<Option<narratives::Model>, DbErr> {
    narratives::Entity::find()
        .filter(narratives::Column::MarketId.eq(market_id))
        .one(db)
        .await
}

/// The market's creator and every wallet backing it.
async fn involved(db: &impl ConnectionTrait, market_id: &str) -> Result<BTreeSet<String>, DbErr> {
    let mut wallets: BTreeSet<String> = backings::Entity::find()
        .select_only()
        .column(backings::Column::Backer)
        .filter(backings::Column::MarketId.eq(market_id))
        .filter(backings::Column::Closed.eq(false))
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    if let Some(market) = markets::Entity::find()
        .filter(markets::Column::MarketId.eq(market_id))
        .one(db)
        .await?
    {
        wallets.insert(market.creator);
    }
    Ok(wallets)
}

/// Who opened the dispute a `DisputeSettled` at event `before` rules on: the disputer of the
/// market's latest `DisputeOpened` before it.
async fn disputer_before(
    db: &impl ConnectionTrait,
    market_id: &str,
    before: i64,
) -> Result<Option<String>, DbErr> {
    let opened = program_events::Entity::find()
        .filter(program_events::Column::Program.eq("binary_vault"))
        .filter(program_events::Column::Name.eq("DisputeOpened"))
        .filter(program_events::Column::Subject.eq(market_id))
        .filter(program_events::Column::Id.lt(before))
        .order_by_desc(program_events::Column::Id)
        .one(db)
        .await?;
    Ok(opened.and_then(|row| row.actor))
}

async fn backed(
    db: &impl ConnectionTrait,
    e: &narrative_sdk::binary_vault::events::MarketBacked,
    position: &str,
    now: i64,
) -> Result<(), DbErr> {
    let market_id = hex32(&e.market_id);
    let backer = e.backer.to_string();
    let side = side_name(e.side);
    // What this backing added to the points of the wallet's total on its side (none for one
    // that crosses no 0.1 SOL step: no row is written for nothing).
    let earned = points::backing_points(e.amount, e.backing_amount);
    if earned > 0 {
        points::award(
            db,
            Award {
                wallet: &backer,
                points: earned,
                reason: Reason::Backing,
                source_key: format!("backing:{position}"),
                detail: Some(json!({
                    "market_id": market_id, "side": side, "amount_lamports": e.amount,
                    "side_total_lamports": e.backing_amount,
                })),
            },
            now,
        )
        .await?;
    }
    // A referred wallet's first backing that earns points rewards its referrer, once: a flat
    // reward for a backing worth no point would pay for splitting across fresh wallets.
    let referrer = if earned > 0 {
        waitlist_entries::Entity::find()
            .filter(waitlist_entries::Column::Wallet.eq(backer.as_str()))
            .one(db)
            .await?
            .and_then(|entry| entry.referrer)
    } else {
        None
    };
    if let Some(referrer) = referrer {
        let rewarded = points::award(
            db,
            Award {
                wallet: &referrer,
                points: points::REFERRAL_POINTS,
                reason: Reason::Referral,
                source_key: format!("referral:{backer}"),
                detail: Some(json!({"referred": backer, "first_backing": position})),
            },
            now,
        )
        .await?;
        if rewarded {
            notify(
                db,
                notices::referral_rewarded(&referrer, &backer, points::REFERRAL_POINTS),
                now,
            )
            .await?;
        }
    }
    // A hidden narrative's title is in no public read, the notices included.
    if let Some(narrative) = narrative_of(db, &market_id)
        .await?
        .filter(|n| n.status != narratives::HIDDEN)
    {
        if narrative.wallet_address != backer {
            let notice = notices::new_backer(
                &narrative.wallet_address,
                &narrative.id,
                &narrative.title,
                &backer,
                e.side == Side::Yes,
                e.amount,
                position,
            );
            notify(db, notice, now).await?;
        }
    }
    Ok(())
}

/// What `market_id`'s result (`outcome`) did to each backer's streak and tier: the backer's
/// profile just before the market's result and just after it, from its resolved history.
async fn finalized(
    db: &impl ConnectionTrait,
    market_id: &str,
    outcome: Side,
    now: i64,
) -> Result<(), DbErr> {
    let held = backings::Entity::find()
        .filter(backings::Column::MarketId.eq(market_id))
        .filter(backings::Column::Closed.eq(false))
        .all(db)
        .await?;
    let backers: BTreeSet<String> = held.iter().map(|b| b.backer.clone()).collect();
    if backers.is_empty() {
        return Ok(());
    }
    let mut histories = conviction::histories(db, Some(backers.iter().cloned().collect())).await?;
    for wallet in backers {
        let mut history = histories.remove(&wallet).unwrap_or_default();
        let at = match history.iter().position(|r| r.market_id == market_id) {
            Some(first) => first,
            None => {
                // The market's own row is not settled in the store yet: its result is the
                // latest the wallet has.
                let first = history.len();
                history.extend(held.iter().filter(|b| b.backer == wallet).map(|b| {
                    ResolvedBacking {
                        backer: wallet.clone(),
                        market_id: market_id.to_owned(),
                        side: b.side.clone(),
                        amount: b.amount,
                        outcome: side_name(outcome).to_owned(),
                        finalized_at: i64::MAX,
                        mint: None,
                        category: None,
                    }
                }));
                first
            }
        };
        let end = at
            + history[at..]
                .iter()
                .take_while(|r| r.market_id == market_id)
                .count();
        let before = conviction::score_history(&history[..at]);
        let after = conviction::score_history(&history[..end]);
        for milestone in MILESTONES {
            if before.current_streak < milestone && milestone <= after.current_streak {
                notify(
                    db,
                    notices::streak_milestone(&wallet, milestone, market_id),
                    now,
                )
                .await?;
            }
        }
        if before.current_streak >= NOTABLE_STREAK && after.current_streak == 0 {
            notify(
                db,
                notices::streak_broken(&wallet, before.current_streak, market_id),
                now,
            )
            .await?;
        }
        if after.tier > before.tier && after.tier >= Tier::Ember {
            notify(
                db,
                notices::tier_up(&wallet, before.tier.name(), after.tier.name(), market_id),
                now,
            )
            .await?;
            notify(
                db,
                notices::nft_unlocked(&wallet, after.tier.name(), market_id),
                now,
            )
            .await?;
        }
    }
    Ok(())
}
