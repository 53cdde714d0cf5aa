//! Borrowing against lending positions (spec 2.9, 3.4, 4.7).
//!
//! `borrow_terms_acceptances`: a wallet's signed acceptance of the borrow terms, once (prepare
//! refuses a wallet without one).
//!
//! `borrow_positions`: a borrow recorded once its transaction is verified on the ledger. Its id
//! is the `borrow_id` prepare answered. USD amounts are kept in micro-dollars (integers, as every
//! amount the store keeps); the venue's debt itself is `amount_base` of the borrowed token.
//! `alert_level` is the lowest health-alert level already sent for the current fall (`warning`,
//! `urgent`, `critical`), cleared when the position recovers, so each downward crossing alerts
//! once. Its writes bump the `defi` generation (capacity reads are kept under it).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::index;
use crate::m20261124_000018_read_models::watch;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("borrow_terms_acceptances")
                .if_not_exists()
                .col(string("wallet").primary_key())
                // The wallet's signature (base58) of the borrow-terms message.
                .col(string("signature"))
                .col(big_integer("accepted_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("borrow_positions")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("wallet"))
                // The venue (`lend_a`, `lend_b`), the borrowed token's symbol and mint.
                .col(string("protocol"))
                .col(string("asset"))
                .col(string("mint"))
                // The debt in the token's base units when borrowed, and its USD value then.
                .col(big_integer("amount_base"))
                .col(big_integer("amount_usd_micros"))
                // The borrow APY (percent, spread included) and the tier's max LTV (bps) then.
                .col(double("borrow_apy"))
                .col(integer("max_ltv_bps"))
                .col(string("tier"))
                // The venue account holding the debt (an obligation).
                .col(string("obligation"))
                // `open`, `repaid` (through the service), `closed_outside` (repaid or liquidated
                // at the venue).
                .col(string("status"))
                .col(string("borrow_signature"))
                .col(string_null("repay_signature"))
                .col(double_null("last_health"))
                .col(big_integer_null("health_checked_at"))
                .col(string_null("alert_level"))
                .col(big_integer("created_at"))
                .col(big_integer_null("closed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "borrow_positions",
            "idx_borrow_positions_wallet",
            &["wallet", "status"],
        ))
        .await?;
        m.create_index(index(
            "borrow_positions",
            "idx_borrow_positions_status",
            &["status"],
        ))
        .await?;
        watch(m, "borrow_positions", "defi").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() != DbBackend::Postgres {
            for tag in ["ins", "upd", "del"] {
                m.get_connection()
                    .execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS nms_gen_borrow_positions_{tag}"
                    ))
                    .await?;
            }
        }
        m.drop_table(Table::drop().table("borrow_positions").to_owned())
            .await?;
        m.drop_table(Table::drop().table("borrow_terms_acceptances").to_owned())
            .await
    }
}
