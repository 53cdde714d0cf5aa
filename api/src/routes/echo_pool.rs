//! The Echo Pool under `/v1/conviction` (spec 2.6, 4.3): the open epoch with its projected pools,
//! the last closed epochs, a wallet's projection and preview for the open epoch, its history of
//! shares, and the prepared claim of a share (additive under `/v1`).

use std::collections::BTreeMap;
use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::{iso, DAY_SECS};
use crate::domain::echo::claim::{self, Confirmed, PreparedClaim};
use crate::domain::echo::reads::{self, ClosedEpoch, Projection};
use crate::domain::echo::rules::Split;
use crate::error::{refusals, Answer};
use crate::routes::{ConfirmRefusals, ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{sol, sol_u64, Base58Signature, PreparedId, Wallet};

pub struct EchoPoolApi {
    pub state: Arc<AppState>,
    /// The open epoch's projection, shared by its reads.
    pub projections: Arc<reads::ProjectionMemo>,
}

/// `{conviction, creator}` in SOL.
fn pools(conviction: u64, creator: u64) -> BTreeMap<String, f64> {
    BTreeMap::from([
        ("conviction".to_owned(), sol_u64(conviction)),
        ("creator".to_owned(), sol_u64(creator)),
    ])
}

fn projected_pools(split: &Split) -> BTreeMap<String, f64> {
    pools(split.conviction_pool, split.creator_pool)
}

/// Whole days left until `end`, rounded up; 0 once it has passed.
fn days_remaining(end: i64, now: i64) -> u64 {
    let left = (end - now).max(0);
    (left + DAY_SECS - 1).div_euclid(DAY_SECS) as u64
}

/// Spec 2.6: the epoch now receiving forfeits.
#[derive(Object)]
pub struct CurrentEpoch {
    pub ok: bool,
    pub epoch_number: u64,
    /// When it opened.
    pub start_date: String,
    /// When the keeper may close it.
    pub end_date: String,
    pub days_remaining: u64,
    /// What it holds: forfeits and seam shares received, and what earlier epochs carried in.
    pub total_accumulated_sol: f64,
    /// The split it would close with now: `conviction` and `creator`, in SOL.
    pub pools: BTreeMap<String, f64>,
    /// What it would carry into the next epoch (rounding, or no winners to pay).
    pub projected_carry_sol: f64,
    /// Results finalized from here count for this epoch.
    pub window_start: String,
    /// Wallets that would share in it now.
    pub participants: u64,
}

/// A drawn ruffler round.
#[derive(Object)]
pub struct RufflerRound {
    pub round: u64,
    pub tickets: u64,
    /// The winning wallet; null when nobody held a ticket.
    pub winner: Option<String>,
    pub prize_points: u64,
    /// Hex; the draw is its first eight bytes (LE) modulo the tickets.
    pub seed: String,
}

/// A closed epoch.
#[derive(Object)]
pub struct EpochRecord {
    pub epoch_number: u64,
    pub start_date: String,
    /// When its root was posted.
    pub end_date: String,
    /// `closed`, `rolled_over` (its claim window passed), `vetoed` or `superseded`.
    pub status: String,
    pub total_accumulated_sol: f64,
    /// What its root distributes: `conviction` and `creator`, in SOL.
    pub pools: BTreeMap<String, f64>,
    pub claimed_sol: f64,
    pub claims: u32,
    /// What it did not distribute and carried into the next epoch at once.
    pub carried_to_next_sol: f64,
    /// What its wallets left unclaimed and moved on after the claim window.
    pub rolled_over_sol: f64,
    pub claimable_at: String,
    pub claim_deadline: String,
    /// Hex.
    pub merkle_root: String,
    /// The results it covered, when the keeper's record is at hand.
    pub window_start: Option<String>,
    pub window_end: Option<String>,
    pub ruffler: Option<RufflerRound>,
}

impl From<ClosedEpoch> for EpochRecord {
    fn from(c: ClosedEpoch) -> Self {
        let status = c.status().to_owned();
        let e = c.epoch;
        let available = e.deposited.max(0) + e.rolled_in.max(0);
        let distributed = e.conviction_pool.max(0) + e.creator_pool.max(0);
        EpochRecord {
            epoch_number: e.epoch.max(0) as u64,
            start_date: iso(e.started_at),
            end_date: iso(e.closed_at),
            status,
            total_accumulated_sol: sol(available),
            pools: pools(
                e.conviction_pool.max(0) as u64,
                e.creator_pool.max(0) as u64,
            ),
            claimed_sol: sol(e.claimed),
            claims: e.claims.max(0) as u32,
            carried_to_next_sol: sol((available - distributed).max(0)),
            rolled_over_sol: sol(e.rolled_out),
            claimable_at: iso(e.claimable_at),
            claim_deadline: iso(e.claim_deadline),
            merkle_root: e.merkle_root,
            window_start: c.distribution.as_ref().map(|d| iso(d.window_start)),
            window_end: c.distribution.as_ref().map(|d| iso(d.window_end)),
            ruffler: c.ruffler.map(|r| RufflerRound {
                round: r.round.max(0) as u64,
                tickets: r.tickets.max(0) as u64,
                winner: r.winner,
                prize_points: r.prize_points.max(0) as u64,
                seed: r.seed,
            }),
        }
    }
}

#[derive(Object)]
pub struct EpochHistory {
    pub ok: bool,
    /// The last 12 closed epochs, newest first.
    pub epochs: Vec<EpochRecord>,
}

/// A wallet's projection for the open epoch.
#[derive(Object)]
pub struct EpochProjection {
    pub ok: bool,
    pub wallet: Wallet,
    pub epoch_number: u64,
    pub start_date: String,
    pub end_date: String,
    pub days_remaining: u64,
    /// The epoch's projected split, in SOL.
    pub pools: BTreeMap<String, f64>,
    /// The wallet's projected share, in SOL.
    pub projected_sol: f64,
    /// Its percentage of what the epoch would distribute.
    pub share_pct: f64,
    pub conviction_tier: String,
    pub combined_multiplier: f64,
    /// Its tickets in this epoch's ruffler round.
    pub ruffler_tickets: u64,
}

/// A backing that weighs in the conviction pool.
#[derive(Object)]
pub struct EligibleBacking {
    pub market_id: String,
    pub amount_sol: f64,
    /// The wallet's combined multiplier its amount is weighed with.
    pub multiplier: f64,
}

/// A forfeit whose creator share goes to the wallet.
#[derive(Object)]
pub struct CreatorForfeit {
    pub market_id: String,
    pub forfeit_sol: f64,
    /// The creator's share of it, percent.
    pub share_pct: f64,
}

/// What the wallet would receive if the open epoch closed now, by the keeper's own rules.
#[derive(Object)]
pub struct EchoPreview {
    pub ok: bool,
    pub wallet: Wallet,
    pub epoch_number: u64,
    /// When the keeper may close the epoch.
    pub closes_at: String,
    pub estimated_sol: f64,
    pub estimated_lamports: u64,
    pub conviction_sol: f64,
    pub creator_sol: f64,
    pub conviction_lamports: u64,
    pub creator_lamports: u64,
    pub eligible_backings: Vec<EligibleBacking>,
    pub creator_forfeits: Vec<CreatorForfeit>,
}

/// The wallet's share of one closed epoch.
#[derive(Object)]
pub struct EchoHistoryEntry {
    pub epoch_number: u64,
    pub closed_at: String,
    /// `none`, `pending` (the root's challenge delay), `claimable`, `claimed`, `expired`, `void`.
    pub status: String,
    pub amount_sol: f64,
    pub conviction_sol: f64,
    pub creator_sol: f64,
    pub claimable_at: String,
    pub claim_deadline: String,
    pub claimed_at: Option<String>,
}

#[derive(Object)]
pub struct EchoHistory {
    pub ok: bool,
    pub wallet: Wallet,
    /// The last 12 closed epochs, newest first.
    pub epochs: Vec<EchoHistoryEntry>,
    pub total_allocated_sol: f64,
    pub total_claimed_sol: f64,
}

#[derive(Object)]
pub struct EchoClaimRequest {
    pub wallet: Wallet,
    /// The epoch to claim from; the oldest claimable one when absent. The schema states the
    /// minimum (an unsigned integer's format alone does not bound it for clients).
    #[oai(validator(minimum(value = "0")))]
    pub epoch_number: Option<u64>,
}

#[derive(Object)]
pub struct EchoClaimPrepared {
    pub ok: bool,
    /// Base64 of the unsigned `claim_sol` transaction (the wallet pays the fee).
    pub transaction: String,
    /// `ready_to_confirm`.
    pub status: String,
    pub prepared_id: PreparedId,
    pub epoch_number: u64,
    pub amount_lamports: u64,
    pub amount_sol: f64,
    pub conviction_sol: f64,
    pub creator_sol: f64,
}

impl From<PreparedClaim> for EchoClaimPrepared {
    fn from(p: PreparedClaim) -> Self {
        EchoClaimPrepared {
            ok: true,
            transaction: p.unsigned.transaction,
            status: "ready_to_confirm".into(),
            prepared_id: p.unsigned.id,
            epoch_number: p.params.epoch_number,
            amount_lamports: p.params.amount_lamports,
            amount_sol: sol_u64(p.params.amount_lamports),
            conviction_sol: sol_u64(p.params.conviction_lamports),
            creator_sol: sol_u64(p.params.creator_lamports),
        }
    }
}

#[derive(Object)]
pub struct EchoClaimConfirmed {
    pub ok: bool,
    /// `confirmed`.
    pub status: String,
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub epoch_number: u64,
    pub amount_lamports: u64,
    pub amount_sol: f64,
}

impl From<Confirmed> for EchoClaimConfirmed {
    fn from(c: Confirmed) -> Self {
        EchoClaimConfirmed {
            ok: true,
            status: "confirmed".into(),
            prepared_id: c.prepared_id,
            signature: c.signature,
            epoch_number: c.params.epoch_number,
            amount_lamports: c.params.amount_lamports,
            amount_sol: sol_u64(c.params.amount_lamports),
        }
    }
}

refusals! {
    /// 404 while crucible_pool is not indexed.
    EpochRefusals: [400, 404];
    HistoryRefusals: [400];
    /// Nothing to claim (404), the claim not open or its window closed (403), claimed already
    /// (409), halted or the ledger unreachable (503).
    ClaimRefusals: [400, 403, 404, 409, 413, 503];
}

fn share_pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 10_000.0 / whole as f64).round() / 100.0
}

#[OpenApi(prefix_path = "/conviction", tag = "Tag::Conviction")]
impl EchoPoolApi {
    /// The open Echo Pool epoch (spec 2.6) with the pools it would close with now.
    #[oai(path = "/epoch/current", method = "get")]
    async fn current(&self) -> Answer<Json<CurrentEpoch>, EpochRefusals> {
        let projection = reads::current(&self.state, &self.projections).await?;
        let Projection { epoch, computed } = projection.as_ref();
        let split = &computed.split;
        Ok(Json(CurrentEpoch {
            ok: true,
            epoch_number: epoch.number,
            start_date: iso(epoch.started_at),
            end_date: iso(epoch.ends_at()),
            days_remaining: days_remaining(epoch.ends_at(), self.state.now()),
            total_accumulated_sol: sol_u64(epoch.available),
            pools: projected_pools(split),
            projected_carry_sol: sol_u64(split.carried()),
            window_start: iso(computed.window_start),
            participants: split.shares.len() as u64,
        }))
    }

    /// The last 12 closed epochs, newest first.
    #[oai(path = "/epoch/history", method = "get")]
    async fn history(&self) -> Answer<Json<EpochHistory>, HistoryRefusals> {
        let epochs = reads::history(&self.state).await?;
        Ok(Json(EpochHistory {
            ok: true,
            epochs: epochs.into_iter().map(EpochRecord::from).collect(),
        }))
    }

    /// The wallet's projection for the open epoch: the epoch's split and its part of it.
    #[oai(path = "/epoch/preview/:wallet", method = "get")]
    async fn epoch_preview(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<EpochProjection>, EpochRefusals> {
        let preview = reads::preview(&self.state, &self.projections, &wallet.0).await?;
        let epoch = &preview.projection.epoch;
        let split = &preview.projection.computed.split;
        Ok(Json(EpochProjection {
            ok: true,
            wallet: wallet.0,
            epoch_number: epoch.number,
            start_date: iso(epoch.started_at),
            end_date: iso(epoch.ends_at()),
            days_remaining: days_remaining(epoch.ends_at(), self.state.now()),
            pools: projected_pools(split),
            projected_sol: sol_u64(preview.share.total()),
            share_pct: share_pct(preview.share.total(), split.distributed()),
            conviction_tier: preview.score.tier.name().into(),
            combined_multiplier: preview.score.combined_multiplier,
            ruffler_tickets: preview.tickets,
        }))
    }

    /// What the wallet would receive if the open epoch closed now, computed exactly as the
    /// keeper computes the close: it equals the claim when nothing changes in between.
    #[oai(path = "/echo-pool/preview/:wallet", method = "get")]
    async fn echo_preview(&self, wallet: Path<Wallet>) -> Answer<Json<EchoPreview>, EpochRefusals> {
        let preview = reads::preview(&self.state, &self.projections, &wallet.0).await?;
        let key = wallet.0.to_string();
        let computed = &preview.projection.computed;
        Ok(Json(EchoPreview {
            ok: true,
            wallet: wallet.0,
            epoch_number: preview.projection.epoch.number,
            closes_at: iso(preview.projection.epoch.ends_at()),
            estimated_sol: sol_u64(preview.share.total()),
            estimated_lamports: preview.share.total(),
            conviction_sol: sol_u64(preview.share.conviction),
            creator_sol: sol_u64(preview.share.creator),
            conviction_lamports: preview.share.conviction,
            creator_lamports: preview.share.creator,
            eligible_backings: computed
                .wins
                .iter()
                .filter(|w| w.wallet == key)
                .map(|w| EligibleBacking {
                    market_id: w.market_id.clone(),
                    amount_sol: sol_u64(w.lamports),
                    multiplier: w.multiplier_bps as f64 / 10_000.0,
                })
                .collect(),
            creator_forfeits: computed
                .forfeits
                .iter()
                .filter(|f| f.creator == key)
                .map(|f| CreatorForfeit {
                    market_id: f.market_id.clone(),
                    forfeit_sol: sol_u64(f.lamports),
                    share_pct: f.creator_share_bps as f64 / 100.0,
                })
                .collect(),
        }))
    }

    /// The wallet's shares of the last 12 closed epochs and their claims.
    #[oai(path = "/echo-pool/history/:wallet", method = "get")]
    async fn echo_history(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<EchoHistory>, HistoryRefusals> {
        let rows = reads::wallet_history(&self.state, &wallet.0).await?;
        let mut allocated = 0i64;
        let mut claimed = 0i64;
        let epochs = rows
            .into_iter()
            .map(|row| {
                let (amount, conviction, creator) =
                    row.allocation.as_ref().map_or((0, 0, 0), |a| {
                        (a.amount, a.conviction_amount, a.creator_amount)
                    });
                allocated += amount;
                if let Some(claim) = &row.claim {
                    claimed += claim.amount;
                }
                EchoHistoryEntry {
                    epoch_number: row.closed.epoch.epoch.max(0) as u64,
                    closed_at: iso(row.closed.epoch.closed_at),
                    status: row.status.as_str().to_owned(),
                    amount_sol: sol(amount),
                    conviction_sol: sol(conviction),
                    creator_sol: sol(creator),
                    claimable_at: iso(row.closed.epoch.claimable_at),
                    claim_deadline: iso(row.closed.epoch.claim_deadline),
                    claimed_at: row.claim.as_ref().map(|c| iso(c.claimed_at)),
                }
            })
            .collect();
        Ok(Json(EchoHistory {
            ok: true,
            wallet: wallet.0,
            epochs,
            total_allocated_sol: sol(allocated),
            total_claimed_sol: sol(claimed),
        }))
    }

    /// Prepare the claim of the wallet's share of a closed epoch (`claim_sol` with its proof).
    #[oai(path = "/echo-pool/claim", method = "post")]
    async fn claim(
        &self,
        body: Json<EchoClaimRequest>,
    ) -> Answer<Json<EchoClaimPrepared>, ClaimRefusals> {
        let prepared = claim::prepare(&self.state, body.0.wallet, body.0.epoch_number).await?;
        Ok(Json(prepared.into()))
    }

    /// Confirm a sent claim by its signature.
    #[oai(path = "/echo-pool/claim/confirm", method = "post")]
    async fn claim_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<EchoClaimConfirmed>, ConfirmRefusals> {
        let confirmed = claim::confirm(&self.state, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(confirmed.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_remaining_round_up_and_stop_at_zero() {
        assert_eq!(days_remaining(100, 100), 0);
        assert_eq!(days_remaining(100, 200), 0);
        assert_eq!(days_remaining(DAY_SECS, 0), 1);
        assert_eq!(days_remaining(DAY_SECS + 1, 0), 2);
        assert_eq!(share_pct(1, 3), 33.33);
        assert_eq!(share_pct(5, 0), 0.0);
    }
}
