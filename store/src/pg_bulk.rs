//! The Postgres fast path for a batch: each table's rows are bound as one array per column and
//! merged by a single `INSERT … SELECT … FROM unnest(…) ON CONFLICT … WHERE newer` statement, all
//! in the checkpoint's transaction.
//!
//! A multi-row `INSERT … VALUES` binds one parameter per column per row, which sea-query builds
//! and Postgres parses one by one; arrays bind a column in one parameter. (`COPY` into staging
//! tables was tried first: sqlx sends `CopyDone` as a separate small packet right after the data,
//! and Nagle's algorithm with the server's delayed ACK stalls each `COPY` about 40 ms.) The merge
//! keeps the rules of the portable path exactly: an account row replaces the stored one only
//! where its `(slot, write_version)` is newer, a closure marks whichever table holds the address,
//! an event is inserted once by its position, and the checkpoint never moves back.

use sea_orm::sqlx::{self, PgConnection, PgPool, Postgres};
use sea_orm::{EntityTrait, Iden, Iterable, ModelTrait, Value};

use crate::accounts::AccountEntity;
use crate::batch::Closure;
use crate::entities::*;
use crate::error::StoreError;
use crate::prepared::PreparedBatch;

/// Writes `batch` in one Postgres transaction and moves checkpoint `name` forward.
pub(crate) async fn write(
    pool: &PgPool,
    name: &str,
    batch: &PreparedBatch,
) -> Result<(), StoreError> {
    let mut txn = pool.begin().await.map_err(db_error)?;
    macro_rules! tables {
        ($($variant:ident => $table:ident),* $(,)?) => {{
            $(let mut $table: Vec<&$table::Model> = Vec::new();)*
            for row in &batch.rows {
                match row {
                    $(crate::AccountRow::$variant(model) => $table.push(model),)*
                }
            }
            $(merge_newer::<$table::Entity>(&mut txn, &$table).await?;)*
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
    close_newer(&mut txn, &batch.closures).await?;
    insert_events(&mut txn, &batch.events).await?;
    if let Some(slot) = batch.checkpoint {
        let slot = i64::try_from(slot).map_err(|_| StoreError::OutOfRange {
            field: "checkpoint",
            value: slot as u128,
        })?;
        sqlx::query::<Postgres>(
            "INSERT INTO indexer_checkpoints (name, slot, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET slot = excluded.slot, updated_at = excluded.updated_at \
             WHERE excluded.slot > indexer_checkpoints.slot",
        )
        .bind(name)
        .bind(slot)
        .bind(crate::clock::unix_now())
        .execute(&mut *txn)
        .await
        .map_err(db_error)?;
    }
    txn.commit().await.map_err(db_error)?;
    Ok(())
}

fn db_error(e: sqlx::Error) -> StoreError {
    StoreError::Db(sea_orm::DbErr::Custom(format!("postgres batch: {e}")))
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// One column of a batch as a Postgres array.
enum ColumnArray {
    Text(Vec<Option<String>>),
    Int8(Vec<Option<i64>>),
    Int4(Vec<Option<i32>>),
    Bool(Vec<Option<bool>>),
    Bytea(Vec<Option<Vec<u8>>>),
    /// Sent as text, cast to `jsonb` in the statement.
    Jsonb(Vec<Option<String>>),
}

impl ColumnArray {
    /// An empty array of the type `sample` (a value of the column) has.
    fn like(sample: &Value, capacity: usize) -> Result<ColumnArray, StoreError> {
        Ok(match sample {
            Value::String(_) => ColumnArray::Text(Vec::with_capacity(capacity)),
            Value::BigInt(_) => ColumnArray::Int8(Vec::with_capacity(capacity)),
            Value::Int(_) => ColumnArray::Int4(Vec::with_capacity(capacity)),
            Value::Bool(_) => ColumnArray::Bool(Vec::with_capacity(capacity)),
            Value::Bytes(_) => ColumnArray::Bytea(Vec::with_capacity(capacity)),
            Value::Json(_) => ColumnArray::Jsonb(Vec::with_capacity(capacity)),
            other => {
                return Err(StoreError::Db(sea_orm::DbErr::Custom(format!(
                    "no array binding for column value {other:?}"
                ))))
            }
        })
    }

    fn push(&mut self, value: Value) -> Result<(), StoreError> {
        match (self, value) {
            (ColumnArray::Text(v), Value::String(s)) => v.push(s),
            (ColumnArray::Int8(v), Value::BigInt(n)) => v.push(n),
            (ColumnArray::Int4(v), Value::Int(n)) => v.push(n),
            (ColumnArray::Bool(v), Value::Bool(b)) => v.push(b),
            (ColumnArray::Bytea(v), Value::Bytes(b)) => v.push(b),
            (ColumnArray::Jsonb(v), Value::Json(j)) => v.push(j.map(|j| j.to_string())),
            (_, other) => {
                return Err(StoreError::Db(sea_orm::DbErr::Custom(format!(
                    "column value {other:?} differs from the column's type"
                ))))
            }
        }
        Ok(())
    }

    fn sql_type(&self) -> &'static str {
        match self {
            ColumnArray::Text(_) | ColumnArray::Jsonb(_) => "text[]",
            ColumnArray::Int8(_) => "int8[]",
            ColumnArray::Int4(_) => "int4[]",
            ColumnArray::Bool(_) => "bool[]",
            ColumnArray::Bytea(_) => "bytea[]",
        }
    }

    /// The column as selected from `unnest`, cast where the array carries text.
    fn select(&self, column: &str) -> String {
        match self {
            ColumnArray::Jsonb(_) => format!("{column}::jsonb"),
            _ => column.to_owned(),
        }
    }

    fn bind<'q>(
        self,
        query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
        match self {
            ColumnArray::Text(v) | ColumnArray::Jsonb(v) => query.bind(v),
            ColumnArray::Int8(v) => query.bind(v),
            ColumnArray::Int4(v) => query.bind(v),
            ColumnArray::Bool(v) => query.bind(v),
            ColumnArray::Bytea(v) => query.bind(v),
        }
    }
}

/// The rows column by column, with the column list, the `unnest(…) AS s(…)` source and the
/// select list of a statement reading them.
struct Columns {
    names: Vec<String>,
    arrays: Vec<ColumnArray>,
}

impl Columns {
    fn of<'a, M, C>(models: &[&'a M], columns: &[C]) -> Result<Columns, StoreError>
    where
        M: ModelTrait + 'a,
        C: Copy + Iden + Into<<M::Entity as EntityTrait>::Column>,
    {
        let first = models.first().expect("callers skip empty batches");
        let mut arrays = columns
            .iter()
            .map(|c| ColumnArray::like(&first.get((*c).into()), models.len()))
            .collect::<Result<Vec<_>, _>>()?;
        for model in models {
            for (array, column) in arrays.iter_mut().zip(columns) {
                array.push(model.get((*column).into()))?;
            }
        }
        Ok(Columns {
            names: columns.iter().map(|c| quoted(&c.to_string())).collect(),
            arrays,
        })
    }

    fn list(&self) -> String {
        self.names.join(", ")
    }

    fn source(&self) -> String {
        let params: Vec<String> = self
            .arrays
            .iter()
            .enumerate()
            .map(|(i, a)| format!("${}::{}", i + 1, a.sql_type()))
            .collect();
        format!("unnest({}) AS s({})", params.join(", "), self.list())
    }

    fn select(&self) -> String {
        self.arrays
            .iter()
            .zip(&self.names)
            .map(|(a, n)| a.select(n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    async fn execute(self, conn: &mut PgConnection, sql: &str) -> Result<(), StoreError> {
        let mut query = sqlx::query::<Postgres>(sqlx::AssertSqlSafe(sql.to_owned()));
        for array in self.arrays {
            query = array.bind(query);
        }
        query.execute(conn).await.map_err(db_error)?;
        Ok(())
    }
}

/// `INSERT … SELECT … FROM unnest(…) ON CONFLICT (address) DO UPDATE … WHERE excluded is newer`.
async fn merge_newer<E>(conn: &mut PgConnection, models: &[&E::Model]) -> Result<(), StoreError>
where
    E: AccountEntity + Default,
    E::Model: ModelTrait<Entity = E>,
{
    if models.is_empty() {
        return Ok(());
    }
    let table = E::default().to_string();
    let columns: Vec<E::Column> = E::Column::iter().collect();
    let data = Columns::of(models, &columns)?;
    let address = E::address().to_string();
    let updates: Vec<String> = columns
        .iter()
        .map(|c| c.to_string())
        .filter(|c| *c != address)
        .map(|c| format!("{0} = excluded.{0}", quoted(&c)))
        .collect();
    let (slot, version) = (E::slot().to_string(), E::write_version().to_string());
    let sql = format!(
        "INSERT INTO {table} ({list}) SELECT {select} FROM {source} \
         ON CONFLICT ({address}) DO UPDATE SET {updates} \
         WHERE excluded.{slot} > {table}.{slot} \
            OR (excluded.{slot} = {table}.{slot} AND excluded.{version} > {table}.{version})",
        list = data.list(),
        select = data.select(),
        source = data.source(),
        address = quoted(&address),
        updates = updates.join(", "),
    );
    data.execute(conn, &sql).await
}

/// Every table that mirrors accounts (closures look in all of them).
const ACCOUNT_TABLES: [&str; 15] = [
    "binary_program_states",
    "binary_configs",
    "markets",
    "backings",
    "oracle_votes",
    "disputes",
    "crucible_states",
    "crucible_asset_pools",
    "crucible_epochs",
    "crucible_claims",
    "shield_programs",
    "shield_coverages",
    "shield_backings",
    "shield_votes",
    "raw_accounts",
];

/// Marks each closed address closed in whichever account table holds it, where newer.
async fn close_newer(conn: &mut PgConnection, closures: &[Closure]) -> Result<(), StoreError> {
    if closures.is_empty() {
        return Ok(());
    }
    let addresses: Vec<String> = closures.iter().map(|c| c.address.to_string()).collect();
    let number = |field: &'static str, v: u64| {
        i64::try_from(v).map_err(|_| StoreError::OutOfRange {
            field,
            value: v as u128,
        })
    };
    let slots = closures
        .iter()
        .map(|c| number("slot", c.slot))
        .collect::<Result<Vec<_>, _>>()?;
    let versions = closures
        .iter()
        .map(|c| number("write_version", c.write_version))
        .collect::<Result<Vec<_>, _>>()?;
    for table in ACCOUNT_TABLES {
        let sql = format!(
            "UPDATE {table} t SET closed = true, slot = c.slot, write_version = c.write_version \
             FROM unnest($1::text[], $2::int8[], $3::int8[]) AS c(address, slot, write_version) \
             WHERE t.address = c.address \
             AND (t.slot < c.slot OR (t.slot = c.slot AND t.write_version < c.write_version))"
        );
        sqlx::query::<Postgres>(sqlx::AssertSqlSafe(sql))
            .bind(&addresses)
            .bind(&slots)
            .bind(&versions)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
    }
    Ok(())
}

/// Events, skipping positions already stored (a replayed transaction).
async fn insert_events(
    conn: &mut PgConnection,
    events: &[program_events::Model],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    use program_events::Column;
    let columns: Vec<Column> = Column::iter()
        .filter(|c| !matches!(c, Column::Id))
        .collect();
    let models: Vec<&program_events::Model> = events.iter().collect();
    let data = Columns::of(&models, &columns)?;
    let sql = format!(
        "INSERT INTO program_events ({list}) SELECT {select} FROM {source} \
         ON CONFLICT (signature, instruction_index, inner_index) DO NOTHING",
        list = data.list(),
        select = data.select(),
        source = data.source(),
    );
    data.execute(conn, &sql).await
}
