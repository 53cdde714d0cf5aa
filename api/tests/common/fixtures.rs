//! Indexed rows as the indexer would write them, for tests that read them over HTTP.

use narrative_store::entities::{markets, narratives};

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
