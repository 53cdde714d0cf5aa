//! DeFi earn positions (spec 2.8, 3.3): a deposit into a venue, recorded once its transaction is
//! verified on the ledger. Its id is the `backing_id` prepare answered (the prepared
//! transaction's id), so before confirm the backing exists only as that prepared transaction.
//! `rate_liquidity` / `rate_receipt` are the venue's exchange rate read when the deposit was
//! confirmed (`rate_receipt` receipt units were worth `rate_liquidity` base units): the
//! position's value now is its principal scaled by the rate now over that one. Its writes bump the
//! `defi` generation, under which allocation and yield reads are kept.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::columns::index;
use crate::m20261124_000018_read_models::watch;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TOPIC: &str = "defi";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("defi_positions")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("wallet"))
                // The venue (`lend_a`, ...), the token symbol and its mint.
                .col(string("protocol"))
                .col(string("token_symbol"))
                .col(string("mint"))
                // The principal in the token's base units, and its SOL value when deposited.
                .col(big_integer("amount_base"))
                .col(big_integer("amount_lamports"))
                // The receipt units the deposit bought (collateral tokens, shares), as estimated
                // from the rate at confirm; a withdrawal redeems them.
                .col(big_integer("receipt_amount"))
                .col(string("rate_liquidity"))
                .col(string("rate_receipt"))
                .col(string_null("narrative_id"))
                // `confirmed` (earning) or `withdrawn`.
                .col(string("status"))
                .col(string("deposit_signature"))
                .col(string_null("withdraw_signature"))
                // The value paid out when it was withdrawn, in base units.
                .col(big_integer_null("withdrawn_base"))
                .col(big_integer("created_at"))
                .col(big_integer_null("withdrawn_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "defi_positions",
            "idx_defi_positions_wallet",
            &["wallet", "status"],
        ))
        .await?;
        m.exec_stmt(
            Query::insert()
                .into_table("cache_generations")
                .columns(["topic", "generation"])
                .values_panic([TOPIC.into(), 0i64.into()])
                .on_conflict(OnConflict::new().do_nothing().to_owned())
                .to_owned(),
        )
        .await?;
        watch(m, "defi_positions", TOPIC).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let postgres = m.get_database_backend() == DbBackend::Postgres;
        if !postgres {
            for tag in ["ins", "upd", "del"] {
                m.get_connection()
                    .execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS nms_gen_defi_positions_{tag}"
                    ))
                    .await?;
            }
        }
        m.drop_table(Table::drop().table("defi_positions").to_owned())
            .await
    }
}
