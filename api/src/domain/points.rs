//! Points: a ledger of awards, one row per award with its reason and the cause it came from
//! (unique, so a cause pays once however often it is seen), from which every total and rank is
//! summed, so any figure can be audited row by row. Awards come from missions
//! (`domain::missions`), backings and referrals (the event follower), and the ruffler's draw.
//!
//! Rules (also in docs/decisions.md): backings earn one point per whole 0.1 SOL a wallet holds
//! on one side of one market (at most 100 there), each backing earning what it adds to that
//! figure, so splitting a backing into many earns nothing extra; a referral 50 when the referred
//! wallet first backs; missions what their catalogue row says; a ruffler round its prize.

use narrative_store::entities::point_awards;
use sea_orm::sea_query::{Condition, Expr, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::Value;

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{enum_value, Wallet, LAMPORTS_PER_SOL};

enum_value!(
    /// Why points were awarded.
    Reason,
    "point_reason",
    "Why points were awarded: a completed `mission`, a `backing`, a `referral` whose wallet \
     made its first backing, or a won `ruffler` round.",
    [
        Mission => "mission",
        Backing => "backing",
        Referral => "referral",
        Ruffler => "ruffler",
    ]
);

/// What the referrer earns when a wallet it referred makes its first backing.
pub const REFERRAL_POINTS: u64 = 50;
/// What one point of backing costs: a tenth of a SOL.
pub const LAMPORTS_PER_BACKING_POINT: u64 = LAMPORTS_PER_SOL / 10;
/// A wallet's backing on one side of one market earns at most this many points.
pub const MAX_BACKING_POINTS: u64 = 100;

/// Points for holding `lamports` on one side of one market: one per whole 0.1 SOL (rounded
/// down), at most [`MAX_BACKING_POINTS`], so a whale cannot buy the board.
pub fn held_points(lamports: u64) -> u64 {
    (lamports / LAMPORTS_PER_BACKING_POINT).min(MAX_BACKING_POINTS)
}

/// Points for a backing of `amount` that brought the wallet's backing on its side of the market
/// to `total` (the `MarketBacked` event's `backing_amount`): what it added to
/// [`held_points`]. The points of a wallet's backings on a side sum to [`held_points`] of their
/// sum however they were split: ten backings of 0.05 SOL earn 5, as one of 0.5 SOL does. A
/// backing that crosses no 0.1 SOL step earns 0 (its lamports count towards the next).
pub fn backing_points(amount: u64, total: u64) -> u64 {
    held_points(total).saturating_sub(held_points(total.saturating_sub(amount)))
}

/// An award to record.
pub struct Award<'a> {
    pub wallet: &'a str,
    pub points: u64,
    pub reason: Reason,
    /// The cause, unique across all awards (`mission:<id>:<wallet>`, `backing:<signature>:…`).
    pub source_key: String,
    pub detail: Option<Value>,
}

/// Records `award` unless its cause was already awarded; whether it was recorded now.
pub async fn award(db: &impl ConnectionTrait, award: Award<'_>, now: i64) -> Result<bool, DbErr> {
    let written = point_awards::Entity::insert(point_awards::ActiveModel {
        id: NotSet,
        wallet: Set(award.wallet.to_owned()),
        points: Set(award.points.min(i64::MAX as u64) as i64),
        reason: Set(award.reason.as_str().to_owned()),
        source_key: Set(award.source_key),
        detail: Set(award.detail),
        created_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(point_awards::Column::SourceKey)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(written == 1)
}

/// A wallet's standing.
pub struct Standing {
    pub total: i64,
    /// 1-based among wallets with points; `None` without any.
    pub rank: Option<u64>,
    /// Total per reason.
    pub by_reason: Vec<(Reason, i64)>,
    /// How many awards the wallet has.
    pub awards_count: u64,
    pub awards: Vec<point_awards::Model>,
}

/// Each wallet's total, largest first (ties by wallet), paged; and how many wallets have points.
pub async fn leaderboard(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<(String, i64)>, u64), ApiError> {
    let db = state.store.db();
    let totals = point_awards::Entity::find()
        .select_only()
        .column(point_awards::Column::Wallet)
        .column_as(
            narrative_store::sql::sum_bigint(point_awards::Column::Points),
            "total",
        )
        .group_by(point_awards::Column::Wallet);
    let wallets = point_awards::Entity::find()
        .select_only()
        .column(point_awards::Column::Wallet)
        .distinct()
        .count(db)
        .await?;
    let rows: Vec<(String, i64)> = totals
        .order_by_desc(Expr::col(sea_orm::sea_query::Alias::new("total")))
        .order_by(wallet_bytewise(db), sea_orm::Order::Asc)
        .limit(limit)
        .offset(offset)
        .into_tuple()
        .all(db)
        .await?;
    Ok((rows, wallets))
}

/// The awards' wallet compared byte by byte, whatever the database's locale: how the board
/// breaks ties, and so how a rank counts the wallets ahead.
fn wallet_bytewise(db: &impl ConnectionTrait) -> Expr {
    Expr::cust(format!(
        "wallet {}",
        narrative_store::sql::bytewise(db.get_database_backend())
    ))
}

pub async fn standing(
    state: &AppState,
    wallet: &Wallet,
    limit: u64,
    offset: u64,
) -> Result<Standing, ApiError> {
    let db = state.store.db();
    let owner = wallet.to_string();
    let mine = point_awards::Entity::find().filter(point_awards::Column::Wallet.eq(&owner));
    let by_reason_rows: Vec<(String, i64)> = mine
        .clone()
        .select_only()
        .column(point_awards::Column::Reason)
        .column_as(
            narrative_store::sql::sum_bigint(point_awards::Column::Points),
            "total",
        )
        .group_by(point_awards::Column::Reason)
        .into_tuple()
        .all(db)
        .await?;
    let by_reason: Vec<(Reason, i64)> = Reason::ALL
        .iter()
        .map(|reason| {
            let total = by_reason_rows
                .iter()
                .find(|(r, _)| r == reason.as_str())
                .map_or(0, |(_, t)| *t);
            (*reason, total)
        })
        .collect();
    let total: i64 = by_reason.iter().map(|(_, t)| t).sum();
    let awards_count = mine.clone().count(db).await?;
    let rank = if awards_count == 0 {
        None
    } else {
        // Wallets ahead: a larger total, or the same total and a smaller wallet (the
        // leaderboard's order, wallets compared byte by byte), counted by the database.
        let sum = || narrative_store::sql::sum_bigint(point_awards::Column::Points);
        let wallet = wallet_bytewise(db);
        let ahead = point_awards::Entity::find()
            .select_only()
            .column(point_awards::Column::Wallet)
            .group_by(point_awards::Column::Wallet)
            .having({
                use sea_orm::ExprTrait;
                Condition::any().add(sum().gt(total)).add(
                    Condition::all()
                        .add(sum().eq(total))
                        .add(wallet.lt(owner.as_str())),
                )
            })
            .count(db)
            .await?;
        Some(ahead + 1)
    };
    let awards = mine
        .order_by_desc(point_awards::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok(Standing {
        total,
        rank,
        by_reason,
        awards_count,
        awards,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backing_earns_what_it_adds_to_the_points_of_the_sides_total() {
        const TENTH: u64 = LAMPORTS_PER_SOL / 10;
        assert_eq!(backing_points(TENTH / 10, TENTH / 10), 0, "0.01 SOL alone");
        assert_eq!(backing_points(TENTH, TENTH), 1);
        assert_eq!(backing_points(25 * TENTH, 25 * TENTH), 25);
        assert_eq!(
            backing_points(10_000 * LAMPORTS_PER_SOL, 10_000 * LAMPORTS_PER_SOL),
            MAX_BACKING_POINTS
        );
        // Split any way, the points are those of the sum.
        for (whole, parts) in [
            (5 * TENTH, 10),
            (TENTH, 10),
            (TENTH + 7, 3),
            (200 * LAMPORTS_PER_SOL, 10),
            (2 * LAMPORTS_PER_SOL + 12_345, 7),
        ] {
            let part = whole / parts;
            let mut total = 0;
            let mut earned = 0;
            for i in 0..parts {
                // The last part takes the remainder.
                let amount = if i + 1 == parts {
                    whole - part * (parts - 1)
                } else {
                    part
                };
                total += amount;
                earned += backing_points(amount, total);
            }
            assert_eq!(earned, backing_points(whole, whole), "{whole} in {parts}");
        }
        // Nonsense from a decoded event (a total below the amount) cannot underflow.
        assert_eq!(backing_points(5 * TENTH, TENTH), 1);
    }
}
