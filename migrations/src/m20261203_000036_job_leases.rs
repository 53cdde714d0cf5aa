//! A job's leases are counted (`jobs.leases`), and the count fences a lease: a worker's outcome
//! (done, failed, later) and its lease renewals apply only while the row still holds the lease it
//! took. Before, they matched the job's id alone, so a worker whose lease had run out (a run
//! longer than the lease, a process paused) overwrote the outcome of the worker that had taken
//! the job over. `attempts` cannot serve: it restarts at 0 when a job is postponed, so a later
//! lease can carry a count an earlier one had.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![("jobs", big_integer("leases").default(0).to_owned())]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        add_columns(m, columns()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(m, columns()).await
    }
}
