//! The Postgres fast path for a batch: every row travels by `COPY` into a temporary staging
//! table, and one set-based statement per table merges it, all in the checkpoint's transaction.
//!
//! A multi-row `INSERT … VALUES` binds one parameter per column per row, which sea-query builds
//! and Postgres parses one by one; `COPY` streams the same rows as text. The merge keeps the
//! rules of the portable path exactly: an account row replaces the stored one only where its
//! `(slot, write_version)` is newer, a closure marks whichever table holds the address, an event
//! is inserted once by its position, and the checkpoint never moves back.

use sea_orm::sqlx::{self, AssertSqlSafe, PgConnection, PgPool};
use sea_orm::{EntityTrait, Iden, Iterable, ModelTrait, Value};

use crate::accounts::AccountEntity;
use crate::batch::Closure;
use crate::entities::*;
use crate::error::StoreError;
use crate::writer::PreparedBatch;

/// Writes `batch` in one Postgres transaction and moves checkpoint `name` forward.
pub(crate) async fn write(
    pool: &PgPool,
    name: &str,
    batch: &PreparedBatch,
) -> Result<(), StoreError> {
    let mut txn = pool.begin().await.map_err(copy_error)?;
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
        sqlx::query::<sqlx::Postgres>(
            "INSERT INTO indexer_checkpoints (name, slot, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET slot = excluded.slot, updated_at = excluded.updated_at \
             WHERE excluded.slot > indexer_checkpoints.slot",
        )
        .bind(name)
        .bind(slot)
        .bind(crate::writer::unix_now())
        .execute(&mut *txn)
        .await
        .map_err(copy_error)?;
    }
    txn.commit().await.map_err(copy_error)?;
    Ok(())
}

fn copy_error(e: sqlx::Error) -> StoreError {
    StoreError::Db(sea_orm::DbErr::Custom(format!("postgres batch: {e}")))
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `COPY`s `lines` (CSV, one row per line) into a fresh staging table shaped like `columns` of
/// `table`, dropped at commit. Returns the staging table's name.
async fn stage(
    conn: &mut PgConnection,
    staging: &str,
    table: &str,
    columns: &str,
    lines: &str,
) -> Result<(), StoreError> {
    // Simple-query protocol: no prepared statement outlives the table it names.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "CREATE TEMP TABLE {staging} ON COMMIT DROP AS SELECT {columns} FROM {table} WITH NO DATA"
    )))
    .execute(&mut *conn)
    .await
    .map_err(copy_error)?;
    let mut copy = conn
        .copy_in_raw(&format!(
            "COPY {staging} ({columns}) FROM STDIN (FORMAT csv)"
        ))
        .await
        .map_err(copy_error)?;
    copy.send(lines.as_bytes()).await.map_err(copy_error)?;
    copy.finish().await.map_err(copy_error)?;
    Ok(())
}

/// `INSERT … SELECT … ON CONFLICT (address) DO UPDATE … WHERE excluded is newer` from staging.
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
    let list = column_list(&columns);
    let staging = format!("stage_{table}");
    let lines = csv_rows(models.iter().copied(), &columns);
    stage(conn, &staging, &table, &list, &lines).await?;
    let address = E::address().to_string();
    let updates: Vec<String> = columns
        .iter()
        .map(|c| c.to_string())
        .filter(|c| *c != address)
        .map(|c| format!("{0} = excluded.{0}", quoted(&c)))
        .collect();
    let (slot, version) = (E::slot().to_string(), E::write_version().to_string());
    let sql = format!(
        "INSERT INTO {table} ({list}) SELECT {list} FROM {staging} \
         ON CONFLICT ({address}) DO UPDATE SET {updates} \
         WHERE excluded.{slot} > {table}.{slot} \
            OR (excluded.{slot} = {table}.{slot} AND excluded.{version} > {table}.{version})",
        address = quoted(&address),
        updates = updates.join(", "),
    );
    sqlx::raw_sql(AssertSqlSafe(sql))
        .execute(conn)
        .await
        .map_err(copy_error)?;
    Ok(())
}

/// Marks each closed address closed in whichever account table holds it, where newer.
async fn close_newer(conn: &mut PgConnection, closures: &[Closure]) -> Result<(), StoreError> {
    if closures.is_empty() {
        return Ok(());
    }
    let mut lines = String::new();
    for c in closures {
        lines.push_str(&format!("{},{},{}\n", c.address, c.slot, c.write_version));
    }
    // Shaped like any account table's key and version columns.
    let staging = "stage_closures";
    stage(
        conn,
        staging,
        "markets",
        "address, slot, write_version",
        &lines,
    )
    .await?;
    let mut sql = String::new();
    for table in ACCOUNT_TABLES {
        sql.push_str(&format!(
            "UPDATE {table} t SET closed = true, slot = c.slot, write_version = c.write_version \
             FROM {staging} c WHERE t.address = c.address \
             AND (t.slot < c.slot OR (t.slot = c.slot AND t.write_version < c.write_version));"
        ));
    }
    sqlx::raw_sql(AssertSqlSafe(sql))
        .execute(conn)
        .await
        .map_err(copy_error)?;
    Ok(())
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

/// Events by `COPY`, skipping positions already stored (a replayed transaction).
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
    let list = column_list(&columns);
    let staging = "stage_program_events";
    let lines = csv_rows(events.iter(), &columns);
    stage(conn, staging, "program_events", &list, &lines).await?;
    sqlx::raw_sql(AssertSqlSafe(format!(
        "INSERT INTO program_events ({list}) SELECT {list} FROM {staging} \
         ON CONFLICT (signature, instruction_index, inner_index) DO NOTHING"
    )))
    .execute(conn)
    .await
    .map_err(copy_error)?;
    Ok(())
}

fn column_list<C: Iden>(columns: &[C]) -> String {
    columns
        .iter()
        .map(|c| quoted(&c.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The models as CSV lines, in `columns` order.
pub fn csv_rows<'a, M, C>(models: impl Iterator<Item = &'a M>, columns: &[C]) -> String
where
    M: ModelTrait + 'a,
    C: Copy + Into<<M::Entity as EntityTrait>::Column>,
{
    let mut out = String::new();
    for model in models {
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_csv_field(&mut out, model.get((*column).into()));
        }
        out.push('\n');
    }
    out
}

/// One value in Postgres' CSV: NULL is an empty unquoted field, text is always quoted (so an
/// empty string stays a string), bytea in its hex form.
fn push_csv_field(out: &mut String, value: Value) {
    use std::fmt::Write;
    let quote = |out: &mut String, s: &str| {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    };
    match value {
        Value::Bool(Some(b)) => out.push_str(if b { "t" } else { "f" }),
        Value::TinyInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::SmallInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::Int(Some(v)) => write!(out, "{v}").expect("string"),
        Value::BigInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::String(Some(s)) => quote(out, &s),
        Value::Json(Some(j)) => quote(out, &j.to_string()),
        Value::Bytes(Some(b)) => {
            out.push_str("\\x");
            for byte in b.iter() {
                write!(out, "{byte:02x}").expect("string");
            }
        }
        // Every column type the schema uses is above; anything else is NULL only.
        _ => {}
    }
}
