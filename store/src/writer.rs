//! Writing one batch in one transaction: account rows upserted only where the incoming
//! `(slot, write_version)` is newer, closures marked the same way, events inserted once by their
//! position in the transaction, and the checkpoint moved forward in the same commit, so a crash
//! at any point loses nothing and a replay writes nothing twice.

use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ActiveValue::NotSet, ActiveValue::Set, ColumnTrait,
    ConnectionTrait, EntityTrait, IdenStatic, Insert, IntoActiveModel, Iterable, QueryFilter,
};

use crate::accounts::AccountEntity;
use crate::batch::{Batch, Closure};
use crate::clock::unix_now;
use crate::entities::*;
use crate::error::StoreError;
use crate::prepared::{PreparedBatch, WriteStats};
use crate::rows::AccountRow;
use crate::Store;

/// Rows per statement: under both backends' bind-parameter limits (SQLite 32766).
const MAX_PARAMETERS: usize = 30_000;

impl Store {
    /// Writes `batch` in one transaction and moves checkpoint `name` to `batch.checkpoint`.
    pub async fn write_batch(&self, name: &str, batch: &Batch) -> Result<WriteStats, StoreError> {
        self.write_prepared(name, &PreparedBatch::new(batch)?).await
    }

    /// Writes a decoded batch in one transaction and moves checkpoint `name` forward.
    pub async fn write_prepared(
        &self,
        name: &str,
        batch: &PreparedBatch,
    ) -> Result<WriteStats, StoreError> {
        if self.backend() == sea_orm::DbBackend::Postgres {
            crate::pg_bulk::write(self.db().get_postgres_connection_pool(), name, batch).await?;
            return Ok(batch.stats());
        }
        let txn = self.begin_write().await?;
        upsert_rows(&txn, batch.rows.clone()).await?;
        for closure in &batch.closures {
            close_everywhere(&txn, closure).await?;
        }
        insert_events(&txn, &batch.events).await?;
        if let Some(slot) = batch.checkpoint {
            advance_checkpoint(&txn, name, slot).await?;
        }
        txn.commit().await?;
        Ok(batch.stats())
    }

    /// The slot checkpoint `name` has reached, if any.
    pub async fn checkpoint(&self, name: &str) -> Result<Option<u64>, StoreError> {
        Ok(indexer_checkpoints::Entity::find_by_id(name.to_owned())
            .one(self.db())
            .await?
            .map(|c| c.slot as u64))
    }
}

async fn upsert_rows<C: ConnectionTrait>(db: &C, rows: Vec<AccountRow>) -> Result<(), StoreError> {
    macro_rules! tables {
        ($($variant:ident => $table:ident),* $(,)?) => {{
            $(let mut $table: Vec<$table::Model> = Vec::new();)*
            for row in rows {
                match row {
                    $(AccountRow::$variant(model) => $table.push(model),)*
                }
            }
            $(upsert_newer::<$table::Entity, $table::ActiveModel, _>(db, $table).await?;)*
        }};
    }
    tables!(
        BinaryProgramState => binary_program_states,
        BinaryConfig => binary_configs,
        Market => markets,
        Backing => backings,
        OracleVote => oracle_votes,
        Dispute => disputes,
        CrucibleState => crucible_states,
        CrucibleAssetPool => crucible_asset_pools,
        CrucibleEpoch => crucible_epochs,
        CrucibleClaim => crucible_claims,
        ShieldProgram => shield_programs,
        ShieldCoverage => shield_coverages,
        ShieldBacking => shield_backings,
        ShieldVote => shield_votes,
        Raw => raw_accounts,
    );
    Ok(())
}

/// `INSERT … ON CONFLICT (address) DO UPDATE SET … WHERE excluded is newer`, the same SQL on
/// SQLite and Postgres: an older or repeated update changes nothing.
async fn upsert_newer<E, A, C>(db: &C, models: Vec<E::Model>) -> Result<(), StoreError>
where
    E: AccountEntity + Default,
    E::Model: IntoActiveModel<A> + Clone,
    A: ActiveModelTrait<Entity = E> + ActiveModelBehavior + Send,
    C: ConnectionTrait,
{
    if models.is_empty() {
        return Ok(());
    }
    let columns: Vec<E::Column> = E::Column::iter().collect();
    let address = E::address().as_str();
    let updated: Vec<E::Column> = columns
        .iter()
        .copied()
        .filter(|c| c.as_str() != address)
        .collect();
    let table = E::default();
    let incoming = |c: E::Column| Expr::col(("excluded", c));
    let stored = |c: E::Column| Expr::col((table, c));
    let newer = incoming(E::slot())
        .gt(stored(E::slot()))
        .or(incoming(E::slot())
            .eq(stored(E::slot()))
            .and(incoming(E::write_version()).gt(stored(E::write_version()))));
    let per_statement = (MAX_PARAMETERS / columns.len()).max(1);
    for chunk in models.chunks(per_statement) {
        Insert::<A>::many(chunk.iter().cloned())
            .on_conflict(
                OnConflict::column(E::address())
                    .update_columns(updated.clone())
                    .action_and_where(newer.clone())
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Marks `closure.address` closed in whichever table holds it, where the closure is newer.
async fn close_everywhere<C: ConnectionTrait>(db: &C, closure: &Closure) -> Result<(), StoreError> {
    let address = closure.address.to_string();
    let slot = i64::try_from(closure.slot).map_err(|_| StoreError::OutOfRange {
        field: "slot",
        value: closure.slot as u128,
    })?;
    let write_version =
        i64::try_from(closure.write_version).map_err(|_| StoreError::OutOfRange {
            field: "write_version",
            value: closure.write_version as u128,
        })?;
    macro_rules! close_in {
        ($($table:ident),*) => {
            $(close_if_newer::<$table::Entity, C>(db, &address, slot, write_version).await?;)*
        };
    }
    close_in!(
        binary_program_states,
        binary_configs,
        markets,
        backings,
        oracle_votes,
        disputes,
        crucible_states,
        crucible_asset_pools,
        crucible_epochs,
        crucible_claims,
        shield_programs,
        shield_coverages,
        shield_backings,
        shield_votes,
        raw_accounts
    );
    Ok(())
}

async fn close_if_newer<E: AccountEntity, C: ConnectionTrait>(
    db: &C,
    address: &str,
    slot: i64,
    write_version: i64,
) -> Result<(), StoreError> {
    let older = E::slot()
        .lt(slot)
        .or(E::slot().eq(slot).and(E::write_version().lt(write_version)));
    E::update_many()
        .col_expr(E::closed(), Expr::value(true))
        .col_expr(E::slot(), Expr::value(slot))
        .col_expr(E::write_version(), Expr::value(write_version))
        .filter(E::address().eq(address))
        .filter(older)
        .exec(db)
        .await?;
    Ok(())
}

/// Events are inserted once: a replayed transaction hits the unique position and is skipped.
async fn insert_events<C: ConnectionTrait>(
    db: &C,
    events: &[program_events::Model],
) -> Result<(), StoreError> {
    use program_events::Column;
    let per_statement = MAX_PARAMETERS / 11;
    for chunk in events.chunks(per_statement) {
        let models = chunk.iter().map(|event| {
            let mut model = event.clone().into_active_model();
            model.id = NotSet;
            model
        });
        program_events::Entity::insert_many(models)
            .on_conflict(
                OnConflict::columns([
                    Column::Signature,
                    Column::InstructionIndex,
                    Column::InnerIndex,
                ])
                .do_nothing()
                .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

async fn advance_checkpoint<C: ConnectionTrait>(
    db: &C,
    name: &str,
    slot: u64,
) -> Result<(), StoreError> {
    use indexer_checkpoints::{Column, Entity};
    let slot = i64::try_from(slot).map_err(|_| StoreError::OutOfRange {
        field: "checkpoint",
        value: slot as u128,
    })?;
    let model = indexer_checkpoints::ActiveModel {
        name: Set(name.to_owned()),
        slot: Set(slot),
        updated_at: Set(unix_now()),
    };
    Entity::insert(model)
        .on_conflict(
            OnConflict::column(Column::Name)
                .update_columns([Column::Slot, Column::UpdatedAt])
                .action_and_where(
                    Expr::col(("excluded", Column::Slot)).gt(Expr::col((Entity, Column::Slot))),
                )
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}
