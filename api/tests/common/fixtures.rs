//! Indexed rows as the indexer would write them, for tests that read them over HTTP.

use narrative_store::entities::{backings, jobs, markets, narratives, shield_coverages};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, DatabaseConnection, EntityTrait, IntoActiveModel,
};

/// An open, approved Yield SOL market with the given id, UUID, creator and side totals.
pub fn market(
    address: &str,
    market_id: &str,
    market_uuid: Option<&str>,
    creator: &str,
    (yes_total, no_total): (i64, i64),
    (yes_backers, no_backers): (i32, i32),
) -> markets::Model {
    markets::Model {
        address: address.into(),
        market_id: market_id.into(),
        market_uuid: market_uuid.map(String::from),
        creator: creator.into(),
        variant: "yield".into(),
        source: "seed".into(),
        mint: None,
        approved: true,
        oracle_status: 0,
        finalized: false,
        outcome: None,
        created_at: 1_767_225_600,
        deadline: 1_769_904_000,
        resolution_proposed_at: 0,
        finalized_at: 0,
        yes_total,
        no_total,
        yes_backers,
        no_backers,
        yes_votes: 0,
        no_votes: 0,
        total_yield: 0,
        min_backing: 10_000_000,
        capital_loss_bps: 3500,
        crucible_share_bps: 5000,
        resolution_timelock_secs: 172_800,
        max_resolution_delay_secs: 604_800,
        winner_bonus_pool: 0,
        loser_refund_pool: 0,
        crucible_amount: 0,
        total_paid_out: 0,
        claims_count: 0,
        crucible_forwarded: false,
        oracle_threshold: 2,
        oracles: None,
        dispute_bond_lamports: 1_000_000_000,
        slot: 5,
        write_version: 1,
        closed: false,
    }
}

/// An active narrative on the market derived from `id`, deadline a week after creation.
pub fn narrative(
    id: &uuid::Uuid,
    wallet: &str,
    title: &str,
    category: &str,
    oracle_status: &str,
    created_at: i64,
) -> narratives::Model {
    narratives::Model {
        id: id.to_string(),
        market_id: hex::encode(narrative_sdk::market_id::market_id_from_uuid(id)),
        wallet_address: wallet.into(),
        title: title.into(),
        thesis: format!("{title}: the thesis"),
        category: category.into(),
        sub_category: None,
        asset_tag: None,
        narrative_type: "standard".into(),
        is_protocol_narrative: false,
        protocol_narrative_label: None,
        status: "active".into(),
        oracle_status: oracle_status.into(),
        score: 0.0,
        uncertainty_score: 0.5,
        deadline_at: created_at + 7 * 86_400,
        deadline_tag: "SHORT".into(),
        opens_at: None,
        created_at,
    }
}

/// A coverage period of protocol `protocol_byte` repeated, with 2.5 SOL on SAFE and 0.5 on EXPLOIT.
pub fn coverage(protocol_byte: u8, status: &str, period_start: i64) -> shield_coverages::Model {
    shield_coverages::Model {
        address: format!("Coverage{protocol_byte:0>36}"),
        protocol_id: format!("{protocol_byte:02x}").repeat(32),
        kind: "community".into(),
        protocol_wallet: None,
        period_days: 30,
        period_start,
        period_end: period_start + 30 * 86_400,
        fee_lamports: 1_000_000_000,
        status: status.into(),
        outcome: None,
        safe_votes: 0,
        exploit_votes: 0,
        outcome_proposed_at: 0,
        finalized_at: 0,
        safe_principal: 2_500_000_000,
        safe_total_assets: 2_500_000_000,
        safe_shares_total: "2500000000000".into(),
        safe_yield_harvested: 0,
        safe_yield_paid: 0,
        safe_held: 2_500_000_000,
        safe_backers: 2,
        exploit_principal: 500_000_000,
        exploit_total_assets: 500_000_000,
        exploit_shares_total: "500000000000".into(),
        exploit_yield_harvested: 0,
        exploit_yield_paid: 0,
        exploit_held: 500_000_000,
        exploit_backers: 1,
        winner_bonus_pool: 0,
        protocol_payout: 0,
        treasury_payout: 0,
        seam_payout: 0,
        principal_returned: 0,
        bonus_paid: 0,
        claims_count: 0,
        seam_forwarded: false,
        unresolvable_votes: 0,
        oracle_threshold: 1,
        oracles: None,
        treasury_forwarded: false,
        protocol_forwarded: false,
        slot: 10,
        write_version: 1,
        closed: false,
    }
}

/// An unclaimed backing of `amount` lamports on `side` (`yes`/`no`) of market `market_id`.
pub fn backing(
    address: &str,
    market_id: &str,
    backer: &str,
    side: &str,
    amount: i64,
) -> backings::Model {
    backings::Model {
        address: address.into(),
        market_id: market_id.into(),
        backer: backer.into(),
        side: side.into(),
        amount,
        claimed: false,
        payout: 0,
        first_backed_at: 1_790_000_000,
        last_backed_at: 1_790_000_000,
        slot: 1,
        write_version: 1,
        closed: false,
    }
}

/// Writes `backers`' resolved results: market `t`, created by `creator`, settled at
/// `1_790_000_000 + t` with `outcome`, each backer on the given side.
pub async fn settled(
    db: &DatabaseConnection,
    creator: &str,
    t: i64,
    outcome: &str,
    backers: &[(&str, &str)],
) {
    let market_id = format!("{t:064x}");
    let mut settled = market(
        &format!("Settled{t}"),
        &market_id,
        None,
        creator,
        (1_000_000_000, 1_000_000_000),
        (1, 1),
    );
    settled.finalized = true;
    settled.outcome = Some(outcome.into());
    settled.finalized_at = 1_790_000_000 + t;
    settled.into_active_model().insert(db).await.unwrap();
    for (wallet, side) in backers {
        backing(
            &format!("Settled{t}{wallet}"),
            &market_id,
            wallet,
            side,
            50_000_000,
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }
}

/// A job of `kind` in `status` with `last_error`, due a day after `now` (so no worker takes it
/// while it waits); its id. A `dead` job has used all its attempts.
pub async fn job(
    db: &DatabaseConnection,
    now: i64,
    kind: &str,
    subject: Option<&str>,
    payload: serde_json::Value,
    status: &str,
    last_error: Option<&str>,
) -> i64 {
    let id = narrative_api::jobs::queue::insert(db, kind, subject, payload, now, now + 86_400)
        .await
        .unwrap();
    let mut job = jobs::Entity::find_by_id(id)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .into_active_model();
    job.status = Set(status.into());
    if status == "dead" {
        job.attempts = Set(narrative_api::jobs::queue::MAX_ATTEMPTS);
    }
    job.last_error = Set(last_error.map(str::to_owned));
    job.update(db).await.unwrap();
    id
}
