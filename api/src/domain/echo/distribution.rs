//! An epoch's distribution from the index, computed one way for the keeper that posts it and for
//! every preview, so a preview equals the claim when nothing changes in between: the window of
//! results the epoch covers, the forfeits it received, the winning backings in the window with
//! their wallets' multipliers, and the split of [`rules`].
//!
//! Windows tile time: an epoch covers results finalized from where the previous distribution's
//! window ended (the epoch's own start for the first one) up to [`SETTLE_MARGIN_SECS`] before
//! the moment its distribution is computed, so a result counts in exactly one epoch however late
//! the keeper runs. The margin leaves the indexer time to store a result finalized just before
//! the close: one that reached the index late would otherwise fall between two windows.

use std::collections::{BTreeSet, HashMap};

use narrative_sdk::crucible_pool::SOL_MINT;
use narrative_sdk::decode::{decode_event, CrucibleEvent, ProgramEvent};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{
    crucible_asset_pools, crucible_epochs, crucible_states, echo_distributions, markets,
    program_events,
};
use narrative_store::indexed::{resolved_backings, ResolvedFilter};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{json, Value};

use super::rules::{self, Forfeit, Split, Win};
use crate::domain::profiles::{conviction, creator, creator_scores};

/// How old a result must be to count in a window: more than the indexer ever lags.
pub const SETTLE_MARGIN_SECS: i64 = 60;

/// The SOL pool's open epoch as indexed, with the program's settings.
#[derive(Debug, Clone)]
pub struct OpenEpoch {
    pub address: Pubkey,
    pub number: u64,
    pub started_at: i64,
    /// What it holds: deposits plus what earlier epochs carried in.
    pub available: u64,
    pub duration_secs: i64,
    pub claim_window_secs: i64,
}

impl OpenEpoch {
    /// When the keeper may close it.
    pub fn ends_at(&self) -> i64 {
        self.started_at.saturating_add(self.duration_secs)
    }
}

/// The open SOL epoch from the index, or `None` while crucible_pool is not indexed.
pub async fn open_epoch(db: &impl ConnectionTrait) -> Result<Option<OpenEpoch>, DbErr> {
    let Some(state) = crucible_states::Entity::find_by_id(pda::crucible::state().to_string())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let Some(pool) =
        crucible_asset_pools::Entity::find_by_id(pda::crucible::sol_asset_pool().to_string())
            .one(db)
            .await?
    else {
        return Ok(None);
    };
    let number = pool.current_epoch.max(0) as u64;
    let address = pda::crucible::epoch(&SOL_MINT, number);
    let Some(epoch) = crucible_epochs::Entity::find_by_id(address.to_string())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(Some(OpenEpoch {
        address,
        number,
        started_at: epoch.started_at,
        available: (epoch.deposited.max(0) as u64).saturating_add(epoch.rolled_in.max(0) as u64),
        duration_secs: state.epoch_duration_secs,
        claim_window_secs: state.claim_window_secs,
    }))
}

/// Where epoch `number`'s window starts: the end of the latest earlier distribution's window,
/// or the epoch's own start when there is none.
pub async fn window_start(
    db: &impl ConnectionTrait,
    number: u64,
    started_at: i64,
) -> Result<i64, DbErr> {
    Ok(echo_distributions::Entity::find()
        .filter(echo_distributions::Column::Mint.is_null())
        .filter(echo_distributions::Column::EpochNumber.lt(number as i64))
        .filter(echo_distributions::Column::Status.ne("vetoed"))
        .order_by_desc(echo_distributions::Column::EpochNumber)
        .one(db)
        .await?
        .map_or(started_at, |previous| previous.window_end))
}

/// An epoch's distribution as computed at one moment.
#[derive(Debug, Clone)]
pub struct Computed {
    pub window_start: i64,
    pub window_end: i64,
    pub forfeits: Vec<Forfeit>,
    pub wins: Vec<Win>,
    pub split: Split,
}

impl Computed {
    /// What earned `wallet` its share: its winning backings and its markets' forfeits.
    pub fn detail(&self, wallet: &str) -> Value {
        let wins: Vec<Value> = self
            .wins
            .iter()
            .filter(|w| w.wallet == wallet)
            .map(|w| {
                json!({
                    "market_id": w.market_id, "amount_lamports": w.lamports,
                    "multiplier_bps": w.multiplier_bps,
                })
            })
            .collect();
        let forfeits: Vec<Value> = self
            .forfeits
            .iter()
            .filter(|f| f.creator == wallet)
            .map(|f| {
                json!({
                    "market_id": f.market_id, "forfeit_lamports": f.lamports,
                    "creator_share_bps": f.creator_share_bps,
                })
            })
            .collect();
        json!({"wins": wins, "forfeits": forfeits})
    }
}

/// The distribution of `epoch` computed at `now`: its window closes [`SETTLE_MARGIN_SECS`]
/// earlier.
pub async fn compute(
    db: &impl ConnectionTrait,
    epoch: &OpenEpoch,
    now: i64,
) -> Result<Computed, DbErr> {
    let start = window_start(db, epoch.number, epoch.started_at).await?;
    let end = now.saturating_sub(SETTLE_MARGIN_SECS).max(start);
    let forfeits = forfeits(db, &epoch.address).await?;
    let wins = wins(db, start, end).await?;
    let split = rules::split(epoch.available, &forfeits, &wins);
    Ok(Computed {
        window_start: start,
        window_end: end,
        forfeits,
        wins,
        split,
    })
}

/// Winning backings in SOL markets finalized in `[start, end)`, weighed by their wallets'
/// combined multipliers.
async fn wins(db: &impl ConnectionTrait, start: i64, end: i64) -> Result<Vec<Win>, DbErr> {
    let rows = resolved_backings(
        db,
        ResolvedFilter {
            backers: None,
            finalized_between: Some((start, end)),
        },
    )
    .await?;
    let winning: Vec<_> = rows
        .into_iter()
        .filter(|r| r.correct() && r.mint.is_none() && r.amount > 0)
        .collect();
    let wallets: BTreeSet<String> = winning.iter().map(|r| r.backer.clone()).collect();
    let scores = conviction::scores(db, Some(wallets.into_iter().collect())).await?;
    Ok(winning
        .into_iter()
        .map(|r| Win {
            multiplier_bps: scores
                .get(&r.backer)
                .map_or(10_000, |s| s.combined_multiplier_bps),
            wallet: r.backer,
            market_id: r.market_id,
            lamports: r.amount as u64,
        })
        .collect())
}

/// The forfeits `epoch` received from binary markets: each crucible deposit into it paired with
/// the `CrucibleShareForwarded` of the same instruction, which names the market, whose creator
/// gets its creator share. Deposits from other sources (shield seam shares) name no market and
/// feed the conviction pool only.
async fn forfeits(db: &impl ConnectionTrait, epoch: &Pubkey) -> Result<Vec<Forfeit>, DbErr> {
    let deposits = program_events::Entity::find()
        .filter(program_events::Column::Program.eq("crucible_pool"))
        .filter(program_events::Column::Name.eq("Deposited"))
        .filter(program_events::Column::Subject.eq(epoch.to_string()))
        .order_by_asc(program_events::Column::Id)
        .all(db)
        .await?;
    if deposits.is_empty() {
        return Ok(vec![]);
    }
    let signatures: Vec<String> = deposits.iter().map(|d| d.signature.clone()).collect();
    let forwards = program_events::Entity::find()
        .filter(program_events::Column::Program.eq("binary_vault"))
        .filter(program_events::Column::Name.eq("CrucibleShareForwarded"))
        .filter(program_events::Column::Signature.is_in(signatures))
        .all(db)
        .await?;
    let market_of: HashMap<(String, i32), String> = forwards
        .into_iter()
        .filter_map(|f| Some(((f.signature, f.instruction_index), f.subject?)))
        .collect();
    let mut received: Vec<(String, u64)> = Vec::new();
    for deposit in &deposits {
        let Some(market_id) =
            market_of.get(&(deposit.signature.clone(), deposit.instruction_index))
        else {
            continue;
        };
        match decode_event(&narrative_sdk::ids::CRUCIBLE_POOL, &deposit.data) {
            Some(ProgramEvent::Crucible(CrucibleEvent::Deposited(e))) => {
                received.push((market_id.clone(), e.amount))
            }
            _ => tracing::warn!(
                id = deposit.id,
                "an indexed crucible deposit does not decode"
            ),
        }
    }
    let market_ids: Vec<String> = received.iter().map(|(m, _)| m.clone()).collect();
    let creators: HashMap<String, String> = markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id, m.creator))
        .collect();
    let creator_wallets: BTreeSet<String> = creators.values().cloned().collect();
    let profiles = creator_scores(db, Some(creator_wallets.into_iter().collect())).await?;
    let share_of = |wallet: &str| {
        let tier = profiles
            .get(wallet)
            .map_or(conviction::Tier::Ember, |p| p.tier);
        creator::share_bps(tier)
    };
    Ok(received
        .into_iter()
        .filter_map(|(market_id, lamports)| {
            let creator = creators.get(&market_id)?.clone();
            Some(Forfeit {
                creator_share_bps: share_of(&creator),
                creator,
                market_id,
                lamports,
            })
        })
        .collect())
}

/// The leaves of a split: each wallet with its share, by address. (A wallet the index holds in
/// a form that is no address is left out; it cannot sign a claim.)
pub fn leaves(split: &Split) -> Vec<(Pubkey, rules::Share)> {
    split
        .shares
        .iter()
        .filter(|(_, share)| share.total() > 0)
        .filter_map(|(wallet, share)| Some((wallet.parse::<Pubkey>().ok()?, *share)))
        .collect()
}
