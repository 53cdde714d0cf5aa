//! Leaderboards over many wallets, seeded straight into the store in bulk (the api's tests and
//! the benchmark share it): each wallet `i` of `n` has point awards, completed missions,
//! resolved backings (a conviction score) and an agent whose claimed backing realised a PnL, all
//! from formulas of `i` with many ties, so a test can compute the expected rankings.

use narrative_sdk::Pubkey;
use narrative_store::entities::{agents, mission_completions, point_awards};
use sea_orm::{DatabaseConnection, EntityTrait, IntoActiveModel};

use super::fixtures;

/// Markets every wallet may have backed, settled one after another.
pub const SETTLED: i64 = 6;

/// Wallet `i`: its index in the first four bytes.
pub fn wallet(i: usize) -> String {
    let mut bytes = [9u8; 32];
    bytes[..4].copy_from_slice(&(i as u32).to_le_bytes());
    Pubkey::new_from_array(bytes).to_string()
}

/// Its point total: one award, and a second of 5 for every tenth wallet.
pub fn points(i: usize) -> i64 {
    (i as i64 * 37) % 1_000 + if i.is_multiple_of(10) { 5 } else { 0 }
}

/// Missions it completed.
pub fn missions(i: usize) -> usize {
    i % 7
}

/// Its agent's id.
pub fn agent_id(i: usize) -> String {
    format!("ag_{i:032x}")
}

/// Its agent's realised PnL in lamports (payout minus stake of one claimed backing).
pub fn agent_pnl(i: usize) -> i64 {
    ((i as i64 * 53) % 2_000 - 1_000) * 1_000
}

/// Whether wallet `i` backed settled market `k`, and whether on the winning side.
pub fn backed(i: usize, k: i64) -> Option<bool> {
    let i = i as i64;
    ((i >> k) & 1 == 1 || k == 0).then_some((i * (k + 3)) % 3 != 0)
}

fn settled_id(k: i64) -> String {
    format!("{:064x}", 0x5e7_0000 + k)
}

/// Inserts `rows` a few hundred per statement.
pub async fn insert_all<M>(db: &DatabaseConnection, rows: Vec<M>)
where
    M: sea_orm::ModelTrait + IntoActiveModel<<M::Entity as EntityTrait>::ActiveModel>,
    <M::Entity as EntityTrait>::ActiveModel: sea_orm::ActiveModelTrait + Send,
{
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows
            .by_ref()
            .take(500)
            .map(IntoActiveModel::into_active_model)
            .collect();
        M::Entity::insert_many(chunk)
            .exec_without_returning(db)
            .await
            .unwrap();
    }
}

/// Seeds `n` wallets for the three leaderboards (points, missions, agents).
pub async fn seed(db: &DatabaseConnection, n: usize, now: i64) {
    let mut awards = Vec::new();
    let mut completions = Vec::new();
    let mut backing_rows = Vec::new();
    let mut agent_rows = Vec::new();
    let mut market_rows = Vec::new();
    for k in 0..SETTLED {
        let mut market = fixtures::market(
            &format!("Settled{k}"),
            &settled_id(k),
            None,
            &wallet(usize::MAX >> 40),
            (1_000_000_000, 1_000_000_000),
            (1, 1),
        );
        market.finalized = true;
        market.outcome = Some(if k % 2 == 0 { "yes" } else { "no" }.into());
        market.finalized_at = now - 86_400 + k;
        market_rows.push(market);
    }
    // Where the agents' claimed backings are: open, so no conviction comes of it.
    let agents_market = format!("{:064x}", 0xa9e7_u64);
    market_rows.push(fixtures::market(
        "AgentsMarket",
        &agents_market,
        None,
        &wallet(usize::MAX >> 40),
        (1, 1),
        (1, 1),
    ));
    for i in 0..n {
        let owner = wallet(i);
        let award = |points: i64, key: String| point_awards::Model {
            id: 0,
            wallet: owner.clone(),
            points,
            reason: "mission".into(),
            source_key: key,
            detail: None,
            created_at: now,
        };
        awards.push(award((i as i64 * 37) % 1_000, format!("seed:{i}")));
        if i % 10 == 0 {
            awards.push(award(5, format!("seed:{i}:bonus")));
        }
        for m in 0..missions(i) {
            completions.push(mission_completions::Model {
                wallet: owner.clone(),
                mission_id: format!("seed-mission-{m}"),
                points: 10,
                completed_at: now,
            });
        }
        for k in 0..SETTLED {
            if let Some(won) = backed(i, k) {
                let winning = if k % 2 == 0 { "yes" } else { "no" };
                let losing = if k % 2 == 0 { "no" } else { "yes" };
                backing_rows.push(fixtures::backing(
                    &format!("Seed{i}x{k}"),
                    &settled_id(k),
                    &owner,
                    if won { winning } else { losing },
                    50_000_000,
                ));
            }
        }
        let mut claimed = fixtures::backing(
            &format!("SeedAgent{i}"),
            &agents_market,
            &owner,
            "yes",
            2_000_000_000,
        );
        claimed.claimed = true;
        claimed.payout = 2_000_000_000 + agent_pnl(i);
        backing_rows.push(claimed);
        agent_rows.push(agents::Model {
            id: agent_id(i),
            name: format!("agent {i}"),
            description: None,
            wallet_address: owner,
            api_key_id: format!("seed-key-{i}"),
            created_at: now,
            wallet_proven: true,
            oracle_granted_at: None,
            oracle_granted_by: None,
            oracle_revoked_at: None,
        });
    }
    // Point awards have a generated id: insert without it.
    let awards: Vec<point_awards::ActiveModel> = awards
        .into_iter()
        .map(|award| {
            let mut active = award.into_active_model();
            active.id = sea_orm::ActiveValue::NotSet;
            active
        })
        .collect();
    for chunk in awards.chunks(500) {
        point_awards::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(db)
            .await
            .unwrap();
    }
    insert_all(db, market_rows).await;
    insert_all(db, backing_rows).await;
    insert_all(db, completions).await;
    insert_all::<agents::Model>(db, agent_rows).await;
}
