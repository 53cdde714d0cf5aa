//! `/v1/users` (spec 4.15): a wallet's backings, paged.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::users::{self, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{clamp, sol, Wallet};

pub struct UsersApi {
    pub state: Arc<AppState>,
}

/// One backing position (a market and side) of the wallet.
#[derive(Object)]
pub struct UserBacking {
    /// The backing account.
    pub id: String,
    pub market_id: String,
    /// The narrative whose market it is, if any.
    pub narrative_id: Option<String>,
    pub title: Option<String>,
    /// `'true'` (YES) or `'false'` (NO), as narratives spell sides.
    pub side: String,
    pub amount_sol: f64,
    /// `open`, `won`, `lost` or `refunded`.
    pub status: String,
    pub claimed: bool,
    pub payout_sol: f64,
    pub first_backed_at: String,
    pub last_backed_at: String,
}

impl From<users::Backing> for UserBacking {
    fn from(b: users::Backing) -> Self {
        let status = b.status().to_owned();
        let side = if b.backing.side == "yes" {
            "true"
        } else {
            "false"
        };
        UserBacking {
            id: b.backing.address,
            market_id: b.backing.market_id,
            narrative_id: b.narrative.as_ref().map(|n| n.id.clone()),
            title: b.narrative.map(|n| n.title),
            side: side.into(),
            amount_sol: sol(b.backing.amount),
            status,
            claimed: b.backing.claimed,
            payout_sol: sol(b.backing.payout),
            first_backed_at: iso(b.backing.first_backed_at),
            last_backed_at: iso(b.backing.last_backed_at),
        }
    }
}

#[derive(Object)]
pub struct UserBackings {
    pub ok: bool,
    pub wallet: Wallet,
    /// This page, most recently backed first.
    pub backings: Vec<UserBacking>,
    /// Backings in all pages.
    pub total: u64,
    /// What the wallet backed in all.
    pub total_backed_sol: f64,
    pub page: u64,
    pub limit: u64,
}

refusals! {
    UserRefusals: [400];
}

#[OpenApi(prefix_path = "/users", tag = "Tag::Users")]
impl UsersApi {
    /// The wallet's backings: `page` from 1 (default 1), `limit` default 50, at most 200.
    #[oai(path = "/:wallet/backings", method = "get")]
    async fn backings(
        &self,
        wallet: Path<Wallet>,
        page: Query<Option<i64>>,
        limit: Query<Option<i64>>,
    ) -> Answer<Json<UserBackings>, UserRefusals> {
        let page = clamp(page.0, 1, 1, i64::MAX) as u64;
        let limit = clamp(limit.0, DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE) as u64;
        let found = users::backings(&self.state, &wallet.0, page, limit).await?;
        Ok(Json(UserBackings {
            ok: true,
            wallet: wallet.0,
            backings: found.backings.into_iter().map(UserBacking::from).collect(),
            total: found.total,
            total_backed_sol: sol(found.total_backed_lamports),
            page,
            limit,
        }))
    }
}
