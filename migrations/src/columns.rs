//! Column helpers shared by the migrations.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// A table mirroring on-chain accounts: address key plus the update bookkeeping.
pub fn account_table(name: &'static str) -> TableCreateStatement {
    Table::create()
        .table(name)
        .if_not_exists()
        .col(string("address").primary_key())
        .col(big_integer("slot"))
        .col(big_integer("write_version"))
        .col(boolean("closed").default(false))
        .to_owned()
}

pub fn index(
    table: &'static str,
    name: &'static str,
    columns: &[&'static str],
) -> IndexCreateStatement {
    let mut index = Index::create();
    index.if_not_exists().name(name).table(table);
    for column in columns {
        index.col(*column);
    }
    index.to_owned()
}

/// Adds `columns` (table, column) one statement each: SQLite alters one column at a time.
pub async fn add_columns(
    m: &SchemaManager<'_>,
    columns: Vec<(&'static str, ColumnDef)>,
) -> Result<(), DbErr> {
    for (table, mut column) in columns {
        m.alter_table(
            Table::alter()
                .table(table)
                .add_column(&mut column)
                .to_owned(),
        )
        .await?;
    }
    Ok(())
}

/// Drops `columns` in the reverse order of [`add_columns`].
pub async fn drop_columns(
    m: &SchemaManager<'_>,
    columns: Vec<(&'static str, ColumnDef)>,
) -> Result<(), DbErr> {
    for (table, column) in columns.into_iter().rev() {
        m.alter_table(
            Table::alter()
                .table(table)
                .drop_column(column.get_column_name())
                .to_owned(),
        )
        .await?;
    }
    Ok(())
}
