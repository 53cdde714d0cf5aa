//! The ruffler: a draw of points per Echo Pool epoch. Wallets win tickets into the round of the
//! epoch that is open (by completing missions that give tickets, and one each for a share of the
//! epoch's conviction pool); when the keeper closes the epoch it draws the round once: the
//! winning ticket is the seed's first eight bytes (little-endian) modulo the number of tickets,
//! counted in the order they were won, and its wallet wins [`PRIZE_POINTS`] points. The seed is
//! SHA-256 of `ruffler`, the epoch account and the Merkle root the keeper posted, so anyone can
//! recompute the draw from public data. It moves points, never money.

use narrative_sdk::Pubkey;
use narrative_store::entities::{crucible_asset_pools, ruffler_rounds, ruffler_tickets};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::domain::notifications::{notices, notify};
use crate::domain::points::{self, Award, Reason};

/// What a round's winner gets.
pub const PRIZE_POINTS: u64 = 250;

/// The round a ticket won now goes into: the SOL pool's open epoch (0 before it is indexed).
pub async fn current_round(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    Ok(crucible_asset_pools::Entity::find_by_id(
        narrative_sdk::pda::crucible::sol_asset_pool().to_string(),
    )
    .one(db)
    .await?
    .map_or(0, |pool| pool.current_epoch.max(0) as u64))
}

/// Gives `wallet` a ticket in `round` for `cause`, once per cause; whether it is new.
pub async fn win_ticket(
    db: &impl ConnectionTrait,
    wallet: &str,
    round: u64,
    cause: String,
    now: i64,
) -> Result<bool, DbErr> {
    let written = ruffler_tickets::Entity::insert(ruffler_tickets::ActiveModel {
        id: NotSet,
        round: Set(round as i64),
        wallet: Set(wallet.to_owned()),
        source_key: Set(cause),
        created_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(ruffler_tickets::Column::SourceKey)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(written == 1)
}

/// How many tickets `wallet` holds in `round`.
pub async fn tickets_held(
    db: &impl ConnectionTrait,
    wallet: &str,
    round: u64,
) -> Result<u64, DbErr> {
    ruffler_tickets::Entity::find()
        .filter(ruffler_tickets::Column::Round.eq(round as i64))
        .filter(ruffler_tickets::Column::Wallet.eq(wallet))
        .count(db)
        .await
}

/// The draw's seed.
pub fn seed(epoch: &Pubkey, merkle_root: &[u8; 32]) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"ruffler")
        .chain_update(epoch.as_ref())
        .chain_update(merkle_root)
        .finalize()
        .into()
}

/// The index of the winning ticket among `tickets`.
pub fn winning_index(seed: &[u8; 32], tickets: u64) -> Option<u64> {
    let first = u64::from_le_bytes(seed[..8].try_into().expect("eight bytes"));
    (tickets > 0).then(|| first % tickets)
}

/// Draws `round` (the epoch at `epoch`, closed with `merkle_root`) unless it was drawn already:
/// records it, pays the prize and tells every ticket holder. The drawn round.
pub async fn draw(
    db: &impl ConnectionTrait,
    round: u64,
    epoch: &Pubkey,
    merkle_root: &[u8; 32],
    now: i64,
) -> Result<ruffler_rounds::Model, DbErr> {
    if let Some(drawn) = ruffler_rounds::Entity::find_by_id(round as i64)
        .one(db)
        .await?
    {
        return Ok(drawn);
    }
    let tickets = ruffler_tickets::Entity::find()
        .filter(ruffler_tickets::Column::Round.eq(round as i64))
        .order_by_asc(ruffler_tickets::Column::Id)
        .all(db)
        .await?;
    let seed = seed(epoch, merkle_root);
    let winner = winning_index(&seed, tickets.len() as u64).map(|i| &tickets[i as usize]);
    let drawn = ruffler_rounds::Model {
        round: round as i64,
        epoch_address: epoch.to_string(),
        seed: hex::encode(seed),
        tickets: tickets.len() as i32,
        winner: winner.map(|t| t.wallet.clone()),
        winning_ticket: winner.map(|t| t.id),
        prize_points: PRIZE_POINTS as i64,
        drawn_at: now,
    };
    let inserted = ruffler_rounds::Entity::insert(ruffler_rounds::ActiveModel {
        round: Set(drawn.round),
        epoch_address: Set(drawn.epoch_address.clone()),
        seed: Set(drawn.seed.clone()),
        tickets: Set(drawn.tickets),
        winner: Set(drawn.winner.clone()),
        winning_ticket: Set(drawn.winning_ticket),
        prize_points: Set(drawn.prize_points),
        drawn_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(ruffler_rounds::Column::Round)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    let Some(winner) = winner.filter(|_| inserted == 1) else {
        return Ok(drawn);
    };
    points::award(
        db,
        Award {
            wallet: &winner.wallet,
            points: PRIZE_POINTS,
            reason: Reason::Ruffler,
            source_key: format!("ruffler:{round}"),
            detail: Some(json!({"round": round, "ticket": winner.id})),
        },
        now,
    )
    .await?;
    notify(
        db,
        notices::ruffler_ticket_won(&winner.wallet, round, winner.id, PRIZE_POINTS),
        now,
    )
    .await?;
    let mut held: std::collections::BTreeMap<&str, u64> = Default::default();
    for ticket in &tickets {
        *held.entry(ticket.wallet.as_str()).or_default() += 1;
    }
    for (wallet, count) in held {
        notify(
            db,
            notices::ruffler_round_drawn(
                wallet,
                round,
                count,
                tickets.len() as u64,
                &winner.wallet,
            ),
            now,
        )
        .await?;
    }
    Ok(drawn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers, computed outside this code (Python's hashlib): anyone holding the epoch's
    /// address and the posted root can redo the draw.
    #[test]
    fn the_draw_is_a_function_of_public_data() {
        let epoch = Pubkey::new_from_array([7; 32]);
        let root = [9u8; 32];
        let seed = seed(&epoch, &root);
        assert_eq!(
            hex::encode(seed),
            "a059f00b547a21b810bb36723b59892f45870858d1586762598598619a71421e"
        );
        assert_ne!(seed, super::seed(&epoch, &[8; 32]));
        // The first eight bytes, little-endian, are 13268020478606334368.
        assert_eq!(winning_index(&seed, 7), Some(4));
        assert_eq!(winning_index(&seed, 1_000), Some(368));
        assert_eq!(winning_index(&seed, 1), Some(0));
        assert_eq!(winning_index(&seed, 0), None);
    }
}
