//! From an account update to the row of its table: decoded with the sdk by owner and
//! discriminator, with accounts that decode to nothing known kept raw.

use narrative_sdk::binary_vault::state as binary;
use narrative_sdk::decode::{
    decode_account, hex32, BinaryAccount, CrucibleAccount, ProgramAccount, ShieldAccount,
};
use narrative_sdk::shield_vault::state as shield;
use narrative_sdk::Pubkey;
use serde_json::json;

use crate::batch::AccountUpdate;
use crate::entities::*;
use crate::error::StoreError;

/// A row of one of the account tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountRow {
    BinaryProgramState(binary_program_states::Model),
    BinaryConfig(binary_configs::Model),
    Market(markets::Model),
    Backing(backings::Model),
    OracleVote(oracle_votes::Model),
    Dispute(disputes::Model),
    CrucibleState(crucible_states::Model),
    CrucibleAssetPool(crucible_asset_pools::Model),
    CrucibleEpoch(crucible_epochs::Model),
    CrucibleClaim(crucible_claims::Model),
    ShieldProgram(shield_programs::Model),
    ShieldCoverage(shield_coverages::Model),
    ShieldBacking(shield_backings::Model),
    ShieldVote(shield_votes::Model),
    Raw(raw_accounts::Model),
}

/// An on-chain u64 into a BIGINT column, refusing what would not fit.
fn n(field: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange {
        field,
        value: value as u128,
    })
}

fn key(k: &Pubkey) -> String {
    k.to_string()
}

/// The zero key stands for SOL; the column is null then.
fn mint(k: &Pubkey) -> Option<String> {
    (*k != Pubkey::default()).then(|| k.to_string())
}

/// binary_vault's pending config change: what each setting becomes (null: unchanged), and when
/// it was proposed (it applies after the admin timelock).
fn binary_config_change(
    p: &narrative_sdk::binary_vault::state::PendingConfigChange,
) -> serde_json::Value {
    let u = &p.update;
    json!({
        "proposed_at": p.proposed_at,
        "capital_loss_bps": u.capital_loss_bps,
        "crucible_share_bps": u.crucible_share_bps,
        "resolution_timelock_secs": u.resolution_timelock_secs,
        "max_resolution_delay_secs": u.max_resolution_delay_secs,
        "dispute_bond_lamports": u.dispute_bond_lamports,
        "treasury": u.treasury.as_ref().map(key),
        "oracles": u.oracle_set.as_ref().map(|set| keys(set.listed())),
        "oracle_threshold": u.oracle_set.as_ref().map(|set| set.threshold),
    })
}

fn keys(list: &[Pubkey]) -> serde_json::Value {
    json!(list
        .iter()
        .filter(|k| **k != Pubkey::default())
        .map(key)
        .collect::<Vec<_>>())
}

fn binary_side(side: binary::Side) -> String {
    match side {
        binary::Side::Yes => "yes",
        binary::Side::No => "no",
    }
    .to_owned()
}

fn shield_side(side: shield::ShieldSide) -> String {
    match side {
        shield::ShieldSide::Safe => "safe",
        shield::ShieldSide::Exploit => "exploit",
    }
    .to_owned()
}

/// A shield vote: a side's name, or `unresolvable`.
fn shield_verdict(vote: shield::ShieldVerdict) -> String {
    match vote.side() {
        Some(side) => shield_side(side),
        None => "unresolvable".to_owned(),
    }
}

/// Lower-case name of a unit-only enum value from its Debug form (`Yield` → `yield`).
fn lower<T: std::fmt::Debug>(value: T) -> String {
    format!("{value:?}").to_lowercase()
}

impl AccountRow {
    /// The row for `update`, or a raw row when its data is no known account of ours.
    pub fn from_update(u: &AccountUpdate) -> Result<AccountRow, StoreError> {
        let meta = Meta {
            address: key(&u.address),
            slot: n("slot", u.slot)?,
            write_version: n("write_version", u.write_version)?,
        };
        match decode_account(&u.owner, &u.data) {
            Some(ProgramAccount::Binary(a)) => meta.binary(a),
            Some(ProgramAccount::Crucible(a)) => meta.crucible(a),
            Some(ProgramAccount::Shield(a)) => meta.shield(a),
            None => AccountRow::raw(u),
        }
    }

    /// The account as a raw row, undecoded.
    pub fn raw(u: &AccountUpdate) -> Result<AccountRow, StoreError> {
        Ok(AccountRow::Raw(raw_accounts::Model {
            address: key(&u.address),
            owner: key(&u.owner),
            lamports: n("lamports", u.lamports)?,
            data: u.data.clone(),
            slot: n("slot", u.slot)?,
            write_version: n("write_version", u.write_version)?,
            closed: false,
        }))
    }

    pub fn address(&self) -> &str {
        self.meta().0
    }

    /// `(slot, write_version)` of the update the row comes from.
    pub fn version(&self) -> (i64, i64) {
        let (_, slot, write_version) = self.meta();
        (slot, write_version)
    }

    fn meta(&self) -> (&str, i64, i64) {
        macro_rules! m {
            ($r:expr) => {
                (&$r.address, $r.slot, $r.write_version)
            };
        }
        match self {
            AccountRow::BinaryProgramState(r) => m!(r),
            AccountRow::BinaryConfig(r) => m!(r),
            AccountRow::Market(r) => m!(r),
            AccountRow::Backing(r) => m!(r),
            AccountRow::OracleVote(r) => m!(r),
            AccountRow::Dispute(r) => m!(r),
            AccountRow::CrucibleState(r) => m!(r),
            AccountRow::CrucibleAssetPool(r) => m!(r),
            AccountRow::CrucibleEpoch(r) => m!(r),
            AccountRow::CrucibleClaim(r) => m!(r),
            AccountRow::ShieldProgram(r) => m!(r),
            AccountRow::ShieldCoverage(r) => m!(r),
            AccountRow::ShieldBacking(r) => m!(r),
            AccountRow::ShieldVote(r) => m!(r),
            AccountRow::Raw(r) => m!(r),
        }
    }
}

struct Meta {
    address: String,
    slot: i64,
    write_version: i64,
}

impl Meta {
    fn binary(self, account: BinaryAccount) -> Result<AccountRow, StoreError> {
        let Meta {
            address,
            slot,
            write_version,
        } = self;
        let closed = false;
        Ok(match account {
            BinaryAccount::ProgramState(a) => {
                AccountRow::BinaryProgramState(binary_program_states::Model {
                    address,
                    admin: key(&a.admin),
                    paused: a.paused,
                    market_count: n("market_count", a.market_count)?,
                    pending_admin: a.pending_admin.as_ref().map(key),
                    slot,
                    write_version,
                    closed,
                })
            }
            BinaryAccount::Config(a) => AccountRow::BinaryConfig(binary_configs::Model {
                address,
                capital_loss_bps: a.capital_loss_bps.into(),
                crucible_share_bps: a.crucible_share_bps.into(),
                oracle_threshold: a.oracle_threshold.into(),
                oracles: keys(a.listed_oracles()),
                resolution_timelock_secs: a.resolution_timelock_secs,
                max_resolution_delay_secs: a.max_resolution_delay_secs,
                dispute_bond_lamports: n("dispute_bond_lamports", a.dispute_bond_lamports)?,
                treasury: key(&a.treasury),
                pending_change: a.pending_change.map(|p| binary_config_change(&p)),
                slot,
                write_version,
                closed,
            }),
            BinaryAccount::Market(a) => AccountRow::Market(markets::Model {
                address,
                market_id: hex32(&a.market_id),
                market_uuid: narrative_sdk::market_id::uuid_from_market_id(&a.market_id)
                    .ok()
                    .map(|u| u.to_string()),
                creator: key(&a.creator),
                variant: lower(a.variant),
                source: lower(a.source),
                mint: mint(&a.mint),
                approved: a.approved,
                oracle_status: a.oracle_status.into(),
                finalized: a.finalized,
                outcome: a.outcome.map(binary_side),
                created_at: a.created_at,
                deadline: a.deadline,
                resolution_proposed_at: a.resolution_proposed_at,
                finalized_at: a.finalized_at,
                yes_total: n("yes_total", a.yes_total)?,
                no_total: n("no_total", a.no_total)?,
                yes_backers: n("yes_backers", a.yes_backers.into())? as i32,
                no_backers: n("no_backers", a.no_backers.into())? as i32,
                yes_votes: a.yes_votes.into(),
                no_votes: a.no_votes.into(),
                total_yield: n("total_yield", a.total_yield)?,
                min_backing: n("min_backing", a.min_backing)?,
                capital_loss_bps: a.capital_loss_bps.into(),
                crucible_share_bps: a.crucible_share_bps.into(),
                resolution_timelock_secs: a.resolution_timelock_secs,
                max_resolution_delay_secs: a.max_resolution_delay_secs,
                winner_bonus_pool: n("winner_bonus_pool", a.winner_bonus_pool)?,
                loser_refund_pool: n("loser_refund_pool", a.loser_refund_pool)?,
                crucible_amount: n("crucible_amount", a.crucible_amount)?,
                total_paid_out: n("total_paid_out", a.total_paid_out)?,
                claims_count: n("claims_count", a.claims_count.into())? as i32,
                crucible_forwarded: a.crucible_forwarded,
                oracle_threshold: a.oracle_set.threshold.into(),
                oracles: Some(keys(a.oracle_set.listed())),
                dispute_bond_lamports: n("dispute_bond_lamports", a.dispute_bond_lamports)?,
                slot,
                write_version,
                closed,
            }),
            BinaryAccount::Backing(a) => AccountRow::Backing(backings::Model {
                address,
                market_id: hex32(&a.market_id),
                backer: key(&a.backer),
                side: binary_side(a.side),
                amount: n("amount", a.amount)?,
                claimed: a.claimed,
                payout: n("payout", a.payout)?,
                first_backed_at: a.first_backed_at,
                last_backed_at: a.last_backed_at,
                slot,
                write_version,
                closed,
            }),
            BinaryAccount::OracleVote(a) => AccountRow::OracleVote(oracle_votes::Model {
                address,
                market_id: hex32(&a.market_id),
                oracle: key(&a.oracle),
                vote: binary_side(a.vote),
                confidence_bps: a.confidence_bps.into(),
                submitted_at: a.submitted_at,
                slot,
                write_version,
                closed,
            }),
            BinaryAccount::Dispute(a) => AccountRow::Dispute(disputes::Model {
                address,
                market_id: hex32(&a.market_id),
                disputer: key(&a.disputer),
                status: lower(a.status),
                bond_lamports: n("bond_lamports", a.bond_lamports)?,
                opened_at: a.opened_at,
                settled_at: a.settled_at,
                dispute_count: n("dispute_count", a.dispute_count.into())? as i32,
                bond_forwarded: a.bond_forwarded,
                slot,
                write_version,
                closed,
            }),
        })
    }

    fn crucible(self, account: CrucibleAccount) -> Result<AccountRow, StoreError> {
        let Meta {
            address,
            slot,
            write_version,
        } = self;
        let closed = false;
        Ok(match account {
            CrucibleAccount::State(a) => AccountRow::CrucibleState(crucible_states::Model {
                address,
                admin: key(&a.admin),
                keeper: key(&a.keeper),
                authorized_sources: keys(&a.authorized_sources),
                epoch_duration_secs: a.epoch_duration_secs,
                claim_window_secs: a.claim_window_secs,
                pending_admin: a.pending_admin.as_ref().map(key),
                guardian: (a.guardian != Pubkey::default()).then(|| key(&a.guardian)),
                pending_change: a.pending_change.map(|p| {
                    json!({ "change": format!("{:?}", p.change), "proposed_at": p.proposed_at })
                }),
                slot,
                write_version,
                closed,
            }),
            CrucibleAccount::AssetPool(a) => {
                AccountRow::CrucibleAssetPool(crucible_asset_pools::Model {
                    address,
                    mint: mint(&a.mint),
                    current_epoch: n("current_epoch", a.current_epoch)?,
                    total_deposited: n("total_deposited", a.total_deposited)?,
                    total_claimed: n("total_claimed", a.total_claimed)?,
                    slot,
                    write_version,
                    closed,
                })
            }
            CrucibleAccount::Epoch(a) => AccountRow::CrucibleEpoch(crucible_epochs::Model {
                address,
                mint: mint(&a.mint),
                epoch: n("epoch", a.epoch)?,
                status: lower(a.status),
                started_at: a.started_at,
                closed_at: a.closed_at,
                claim_deadline: a.claim_deadline,
                deposited: n("deposited", a.deposited)?,
                rolled_in: n("rolled_in", a.rolled_in)?,
                conviction_pool: n("conviction_pool", a.conviction_pool)?,
                creator_pool: n("creator_pool", a.creator_pool)?,
                merkle_root: hex32(&a.merkle_root),
                claimed: n("claimed", a.claimed)?,
                claims: n("claims", a.claims.into())? as i32,
                rolled_out: n("rolled_out", a.rolled_out)?,
                claimable_at: a.claimable_at,
                slot,
                write_version,
                closed,
            }),
            CrucibleAccount::ClaimReceipt(a) => AccountRow::CrucibleClaim(crucible_claims::Model {
                address,
                epoch: key(&a.epoch),
                wallet: key(&a.wallet),
                amount: n("amount", a.amount)?,
                claimed_at: a.claimed_at,
                slot,
                write_version,
                closed,
            }),
        })
    }

    fn shield(self, account: ShieldAccount) -> Result<AccountRow, StoreError> {
        let Meta {
            address,
            slot,
            write_version,
        } = self;
        let closed = false;
        Ok(match account {
            ShieldAccount::ProgramState(a) => AccountRow::ShieldProgram(shield_programs::Model {
                address,
                admin: key(&a.admin),
                oracles: keys(a.listed_oracles()),
                oracle_threshold: a.oracle_threshold.into(),
                treasury: key(&a.treasury),
                harvest_authority: key(&a.harvest_authority),
                seam_pool_program: key(&a.seam_pool_program),
                max_self_hedge_bps: a.max_self_hedge_bps.into(),
                paused: a.paused,
                coverage_count: n("coverage_count", a.coverage_count)?,
                pending_change: a.pending_change.map(|p| {
                    json!({ "change": format!("{:?}", p.change), "proposed_at": p.proposed_at })
                }),
                pending_admin: a.pending_admin.as_ref().map(key),
                slot,
                write_version,
                closed,
            }),
            ShieldAccount::Coverage(a) => AccountRow::ShieldCoverage(shield_coverages::Model {
                address,
                protocol_id: hex32(&a.protocol_id),
                kind: lower(a.kind),
                protocol_wallet: mint(&a.protocol_wallet),
                period_days: a.period_days.into(),
                period_start: a.period_start,
                period_end: a.period_end,
                fee_lamports: n("fee_lamports", a.fee_lamports)?,
                status: lower(a.status),
                outcome: a.outcome.map(shield_side),
                safe_votes: a.safe_votes.into(),
                exploit_votes: a.exploit_votes.into(),
                outcome_proposed_at: a.outcome_proposed_at,
                finalized_at: a.finalized_at,
                safe_principal: n("safe_principal", a.safe.principal)?,
                safe_total_assets: n("safe_total_assets", a.safe.total_assets)?,
                safe_shares_total: a.safe.shares_total.to_string(),
                safe_yield_harvested: n("safe_yield_harvested", a.safe.yield_harvested)?,
                safe_yield_paid: n("safe_yield_paid", a.safe.yield_paid)?,
                safe_held: n("safe_held", a.safe.held)?,
                safe_backers: n("safe_backers", a.safe.backers.into())? as i32,
                exploit_principal: n("exploit_principal", a.exploit.principal)?,
                exploit_total_assets: n("exploit_total_assets", a.exploit.total_assets)?,
                exploit_shares_total: a.exploit.shares_total.to_string(),
                exploit_yield_harvested: n("exploit_yield_harvested", a.exploit.yield_harvested)?,
                exploit_yield_paid: n("exploit_yield_paid", a.exploit.yield_paid)?,
                exploit_held: n("exploit_held", a.exploit.held)?,
                exploit_backers: n("exploit_backers", a.exploit.backers.into())? as i32,
                winner_bonus_pool: n("winner_bonus_pool", a.winner_bonus_pool)?,
                protocol_payout: n("protocol_payout", a.protocol_payout)?,
                treasury_payout: n("treasury_payout", a.treasury_payout)?,
                seam_payout: n("seam_payout", a.seam_payout)?,
                principal_returned: n("principal_returned", a.principal_returned)?,
                bonus_paid: n("bonus_paid", a.bonus_paid)?,
                claims_count: n("claims_count", a.claims_count.into())? as i32,
                seam_forwarded: a.seam_forwarded,
                unresolvable_votes: a.unresolvable_votes.into(),
                oracle_threshold: a.oracles.threshold.into(),
                oracles: Some(keys(a.oracles.listed())),
                treasury_forwarded: a.treasury_forwarded,
                protocol_forwarded: a.protocol_forwarded,
                slot,
                write_version,
                closed,
            }),
            ShieldAccount::Backing(a) => AccountRow::ShieldBacking(shield_backings::Model {
                address,
                protocol_id: hex32(&a.protocol_id),
                backer: key(&a.backer),
                side: shield_side(a.side),
                amount_lamports: n("amount_lamports", a.amount_lamports)?,
                shares: a.shares.to_string(),
                multiplier_bps: a.multiplier_bps.into(),
                discovery_lamports: n("discovery_lamports", a.discovery_lamports)?,
                claimed: a.claimed,
                principal_paid: n("principal_paid", a.principal_paid)?,
                bonus_paid: n("bonus_paid", a.bonus_paid)?,
                yield_paid: n("yield_paid", a.yield_paid)?,
                first_backed_at: a.first_backed_at,
                last_backed_at: a.last_backed_at,
                slot,
                write_version,
                closed,
            }),
            ShieldAccount::Vote(a) => AccountRow::ShieldVote(shield_votes::Model {
                address,
                protocol_id: hex32(&a.protocol_id),
                oracle: key(&a.oracle),
                vote: shield_verdict(a.vote),
                submitted_at: a.submitted_at,
                slot,
                write_version,
                closed,
            }),
        })
    }
}
