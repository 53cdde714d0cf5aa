//! Expressions that must read the same on SQLite and Postgres.

use sea_orm::sea_query::{Alias, Expr, ExprTrait, Func, IntoColumnRef};

/// `SUM(column)` as a BIGINT, 0 over no rows: Postgres sums BIGINT into NUMERIC (and NULL over
/// no rows), which would not read back as an integer.
pub fn sum_bigint(column: impl IntoColumnRef) -> Expr {
    sum_bigint_of(Expr::col(column))
}

/// [`sum_bigint`] of any expression.
pub fn sum_bigint_of(expr: impl Into<Expr>) -> Expr {
    Func::coalesce([expr.into().sum(), Expr::val(0i64)]).cast_as(Alias::new("BIGINT"))
}

/// The collation that orders text byte by byte, as Rust's `str` orders it (`COLLATE "C"` on
/// Postgres, whose default follows the locale; SQLite's default is already bytewise), for
/// rankings whose ties are broken by wallet.
pub fn bytewise(backend: sea_orm::DbBackend) -> &'static str {
    match backend {
        sea_orm::DbBackend::Postgres => "COLLATE \"C\"",
        _ => "COLLATE BINARY",
    }
}
