//! A wallet's feed: its notifications newest first with the unread count, and marking them read
//! with the wallet's signature (a feed anyone could clear for anyone would lose its point).

use narrative_store::entities::notifications;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

pub struct Page {
    pub notifications: Vec<notifications::Model>,
    /// Of the whole feed (or of its unread part when only unread ones were asked for).
    pub total: u64,
    pub unread: u64,
}

pub async fn page(
    state: &AppState,
    wallet: &Wallet,
    unread_only: bool,
    limit: u64,
    offset: u64,
) -> Result<Page, ApiError> {
    let db = state.store.db();
    let mine =
        notifications::Entity::find().filter(notifications::Column::Wallet.eq(wallet.to_string()));
    // Both counts in one statement, so they agree with each other.
    let (all, unread): (i64, i64) = mine
        .clone()
        .select_only()
        .column_as(Expr::col(notifications::Column::Id).count(), "all")
        .column_as(
            narrative_store::sql::sum_bigint_of(
                Expr::case(notifications::Column::ReadAt.is_null(), 1i64).finally(0i64),
            ),
            "unread",
        )
        .into_tuple()
        .one(db)
        .await?
        .unwrap_or((0, 0));
    let (all, unread) = (
        u64::try_from(all).unwrap_or(0),
        u64::try_from(unread).unwrap_or(0),
    );
    let listed = if unread_only {
        mine.filter(notifications::Column::ReadAt.is_null())
    } else {
        mine
    };
    let total = if unread_only { unread } else { all };
    let notifications = listed
        .order_by_desc(notifications::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok(Page {
        notifications,
        total,
        unread,
    })
}

/// What a wallet signs to mark its notifications read: everything up to and including
/// `up_to_id`, or everything (`all`) when none is given, with its issued-at time:
/// `narrative-market-service:notifications-read:<wallet>:<up_to_id | all>:issued-at:<secs>`.
pub fn read_statement(wallet: &Wallet, up_to_id: Option<i64>) -> Statement {
    let target = up_to_id.map_or_else(|| "all".to_owned(), |id| id.to_string());
    Statement::new("notifications-read")
        .field(wallet)
        .field(target)
}

/// Marks the proof's wallet's notifications up to `up_to_id` (all when `None`) read, if the
/// proof is its fresh, unused signature of [`read_statement`] (401 `invalid_signature`
/// otherwise); how many were unread. Marking twice changes nothing more.
pub async fn mark_read(
    state: &AppState,
    proof: Proof<'_>,
    up_to_id: Option<i64>,
) -> Result<u64, ApiError> {
    let wallet = proof.wallet;
    wallet_proof::prove(state, &read_statement(wallet, up_to_id), proof).await?;
    let mut update = notifications::Entity::update_many()
        .col_expr(
            notifications::Column::ReadAt,
            Expr::value(Some(state.now())),
        )
        .filter(notifications::Column::Wallet.eq(wallet.to_string()))
        .filter(notifications::Column::ReadAt.is_null());
    if let Some(id) = up_to_id {
        update = update.filter(notifications::Column::Id.lte(id));
    }
    Ok(update.exec(state.store.db()).await?.rows_affected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::ProofDomain;

    #[test]
    fn the_signed_message_names_what_is_marked() {
        let wallet: Wallet = "So11111111111111111111111111111111111111112"
            .parse()
            .unwrap();
        assert_eq!(
            read_statement(&wallet, Some(12)).template(&ProofDomain::default()),
            format!(
                "narrative-market-service:notifications-read:{wallet}:12:issued-at:<issued_at>"
            )
        );
        assert_eq!(
            read_statement(&wallet, None).template(&ProofDomain::default()),
            format!(
                "narrative-market-service:notifications-read:{wallet}:all:issued-at:<issued_at>"
            )
        );
    }
}
