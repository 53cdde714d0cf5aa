//! Narrative reads (spec 4.1): the public feed with its query parameters and the single read.
//! Legacy reads: the feed answers `{narratives}` and the single read `{narrative}`, without
//! `ok`. `sol_backed` and `backers` come from the indexed market of each narrative.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use narrative_store::entities::{backings, markets, narratives};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::binary_backing::{self, BinaryBack, BinaryConfirm, BinaryConfirmed, BinaryPrepared};
use crate::error::{ApiError, ApiResult};
use crate::limits::AI_POLISH;
use crate::originality;
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::{iso, now};
use crate::validate::{clamp, sol, wallet};

/// Spec 2.1's 24 categories.
pub const CATEGORIES: [&str; 24] = [
    "MARKET",
    "ECOSYSTEM",
    "SPORTS",
    "ESPORTS",
    "SOCIAL",
    "CULTURAL",
    "LEGAL",
    "POLITICAL",
    "SCIENTIFIC",
    "GEOPOLITICAL",
    "CONVICTION",
    "ECONOMICS",
    "TECHNOLOGY",
    "HEALTH",
    "CLIMATE",
    "BUSINESS",
    "ONCHAIN",
    "SATIRE",
    "BUILDER",
    "CAST",
    "COMMODITIES",
    "MACRO",
    "EQUITIES",
    "FOREX",
];
/// Narratives still taking part in the market (not resolved).
const ACTIVE_STATES: [&str; 3] = ["open", "live", "pending"];
/// `filter=new`: created within this many seconds.
const NEW_WITHIN_SECS: i64 = 72 * 3_600;
/// Rows a filter that ranks in memory (trending, backed) looks at, at most.
const RANKING_WINDOW: u64 = 5_000;

#[derive(Object)]
pub struct OriginalityRequest {
    pub thesis: String,
}

#[derive(Object)]
pub struct OriginalityAnswer {
    pub ok: bool,
    /// Highest similarity to a published thesis, 0 to 1.
    pub similarity: f64,
    /// 100 × (1 − similarity).
    pub score: f64,
    pub suggested_category: String,
    pub message: String,
}

#[derive(Object)]
pub struct PolishText {
    pub thesis: String,
    pub wallet_address: String,
}

#[derive(Object)]
pub struct PolishVoice {
    pub transcript: String,
    pub wallet_address: String,
}

#[derive(Object)]
pub struct Polished {
    pub ok: bool,
    pub polished: String,
    /// polish-text only.
    #[oai(skip_serializing_if_is_none)]
    pub original: Option<String>,
}

const MAX_POLISH_CHARS: usize = 4_000;

/// Narratives in the hero list.
const HERO_SIZE: usize = 5;

#[derive(Object)]
pub struct FilterCounts {
    pub total_active: u64,
    pub categories: BTreeMap<String, u64>,
    pub durations: BTreeMap<String, u64>,
    pub sub_categories: BTreeMap<String, u64>,
}

/// Spec 8: the narrative backing minimum.
const MIN_BACKING_SOL: f64 = 0.01;

#[derive(Object)]
pub struct NarrativeBack {
    /// The backer; it signs and pays the fee.
    pub wallet_address: String,
    pub amount_sol: f64,
    /// `SOL` (the default).
    pub token_type: Option<String>,
    /// `'true'` backs YES, `'false'` NO.
    pub side: String,
}

pub struct NarrativesApi {
    pub state: Arc<AppState>,
}

/// Spec 2.1.
#[derive(Object)]
pub struct Narrative {
    pub id: String,
    pub wallet_address: String,
    pub title: String,
    pub thesis: String,
    pub status: String,
    /// 0 means scoring is pending.
    pub score: f64,
    pub sol_backed: f64,
    pub backers: i64,
    pub deadline_at: String,
    pub deadline_tag: String,
    pub category: String,
    pub sub_category: Option<String>,
    pub asset_tag: Option<String>,
    pub narrative_type: String,
    pub is_protocol_narrative: bool,
    pub protocol_narrative_label: Option<String>,
    pub uncertainty_score: f64,
    pub oracle_status: String,
    pub created_at: String,
}

/// The single read adds the market gate (spec 3.1).
#[derive(Object)]
pub struct NarrativeDetail {
    #[oai(flatten)]
    pub narrative: Narrative,
    pub is_pre_market: bool,
    pub opens_at: Option<String>,
}

#[derive(Object)]
pub struct NarrativeFeed {
    pub narratives: Vec<Narrative>,
}

#[derive(Object)]
pub struct NarrativeWrapped {
    pub narrative: NarrativeDetail,
}

/// The indexed totals of narratives' markets: SOL backed, and distinct backing wallets.
struct Totals {
    markets: HashMap<String, markets::Model>,
    backers: HashMap<String, i64>,
}

impl Totals {
    fn body(&self, n: narratives::Model) -> Narrative {
        let market = self.markets.get(&n.market_id);
        let backers = self.backers.get(&n.market_id).copied().unwrap_or(0);
        body(n, market, backers)
    }
}

fn body(n: narratives::Model, market: Option<&markets::Model>, backers: i64) -> Narrative {
    Narrative {
        sol_backed: market.map_or(0.0, |m| sol(m.yes_total.saturating_add(m.no_total))),
        backers,
        id: n.id,
        wallet_address: n.wallet_address,
        title: n.title,
        thesis: n.thesis,
        status: n.status,
        score: n.score,
        deadline_at: iso(n.deadline_at),
        deadline_tag: n.deadline_tag,
        category: n.category,
        sub_category: n.sub_category,
        asset_tag: n.asset_tag,
        narrative_type: n.narrative_type,
        is_protocol_narrative: n.is_protocol_narrative,
        protocol_narrative_label: n.protocol_narrative_label,
        uncertainty_score: n.uncertainty_score,
        oracle_status: n.oracle_status,
        created_at: iso(n.created_at),
    }
}

impl NarrativesApi {
    /// Counts the wallet's daily polish pool, then asks the polisher.
    async fn polish(&self, owner: &str, text: &str, field: &str) -> Result<String, ApiError> {
        let owner = wallet("wallet_address", owner)?.to_string();
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_POLISH_CHARS {
            return Err(ApiError::validation(format!(
                "{field} required, at most {MAX_POLISH_CHARS} characters"
            )));
        }
        let decision = self.state.limiter.hit(&AI_POLISH, &owner).await;
        if !decision.allowed {
            return Err(ApiError::window_exhausted(
                "daily_limit_reached",
                "3 polishes per wallet per day (text and voice together)",
                decision.retry_after_secs,
            ));
        }
        self.state.polisher.polish(text).await.map_err(|error| {
            tracing::warn!(error = %format!("{error:#}"), "polisher unavailable");
            ApiError::coded(
                poem::http::StatusCode::SERVICE_UNAVAILABLE,
                "polish_unavailable",
                "the polishing provider could not be reached; retry shortly",
            )
        })
    }

    async fn totals_of(&self, rows: &[narratives::Model]) -> Result<Totals, ApiError> {
        let ids: Vec<String> = rows.iter().map(|n| n.market_id.clone()).collect();
        let db = self.state.store.db();
        Ok(Totals {
            markets: crate::indexed::markets_by_id(db, ids.clone()).await?,
            backers: crate::indexed::distinct_backers(db, ids, None).await?,
        })
    }
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativesApi {
    /// The public feed. `filter`: `all` (default), `new` (last 72 h), `trending` (most SOL
    /// backed), `backed` (narratives `wallet` has backed; `wallet` required). `sort`: `newest`
    /// (default), `oldest`, `deadline`, `most_backed`. `limit`: default 20, clamped to 1–100, or
    /// to 1–5000 with `broad=true`.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/", method = "get")]
    async fn feed(
        &self,
        filter: Query<Option<String>>,
        category: Query<Option<String>>,
        sub_category: Query<Option<String>>,
        asset_tag: Query<Option<String>>,
        duration: Query<Option<String>>,
        sort: Query<Option<String>>,
        #[oai(name = "wallet")] wallet_param: Query<Option<String>>,
        limit: Query<Option<i64>>,
        broad: Query<Option<bool>>,
    ) -> ApiResult<Json<NarrativeFeed>> {
        let cap = if broad.0.unwrap_or(false) { 5_000 } else { 100 };
        let limit = clamp(limit.0, 20, 1, cap) as u64;
        let filter = filter.0.unwrap_or_else(|| "all".into());
        let mut condition =
            Condition::all().add(narratives::Column::OracleStatus.is_in(ACTIVE_STATES));
        if let Some(category) = category.0.filter(|c| !c.trim().is_empty()) {
            let category = category.trim().to_ascii_uppercase();
            if !CATEGORIES.contains(&category.as_str()) {
                return Err(
                    ApiError::validation("category must be one of the 24 categories").into(),
                );
            }
            condition = condition.add(narratives::Column::Category.eq(category));
        }
        if let Some(sub) = sub_category.0.filter(|s| !s.trim().is_empty()) {
            condition = condition.add(narratives::Column::SubCategory.eq(sub.trim()));
        }
        if let Some(tag) = asset_tag.0.filter(|s| !s.trim().is_empty()) {
            condition = condition.add(narratives::Column::AssetTag.eq(tag.trim()));
        }
        if let Some(tag) = duration.0.filter(|s| !s.trim().is_empty()) {
            condition =
                condition.add(narratives::Column::DeadlineTag.eq(tag.trim().to_ascii_uppercase()));
        }
        let db = self.state.store.db();
        let backed_markets: Option<HashSet<String>> = match filter.as_str() {
            "all" | "trending" => None,
            "new" => {
                condition =
                    condition.add(narratives::Column::CreatedAt.gte(now() - NEW_WITHIN_SECS));
                None
            }
            "backed" => {
                let owner = wallet_param
                    .0
                    .as_deref()
                    .filter(|w| !w.trim().is_empty())
                    .ok_or_else(|| ApiError::validation("wallet required when filter=backed"))?;
                let owner = wallet("wallet", owner)?.to_string();
                Some(
                    backings::Entity::find()
                        .filter(backings::Column::Backer.eq(owner))
                        .all(db)
                        .await
                        .map_err(ApiError::from)?
                        .into_iter()
                        .map(|b| b.market_id)
                        .collect(),
                )
            }
            _ => {
                return Err(
                    ApiError::validation("filter must be all, new, trending or backed").into(),
                )
            }
        };
        if let Some(markets) = &backed_markets {
            condition = condition.add(narratives::Column::MarketId.is_in(markets.iter().cloned()));
        }
        let sort = sort.0.unwrap_or_else(|| {
            if filter == "trending" {
                "most_backed".into()
            } else {
                "newest".into()
            }
        });
        let query = narratives::Entity::find().filter(condition);
        let query = match sort.as_str() {
            "newest" | "most_backed" => query.order_by_desc(narratives::Column::CreatedAt),
            "oldest" => query.order_by_asc(narratives::Column::CreatedAt),
            "deadline" => query.order_by_asc(narratives::Column::DeadlineAt),
            _ => {
                return Err(ApiError::validation(
                    "sort must be newest, oldest, deadline or most_backed",
                )
                .into())
            }
        }
        .order_by_asc(narratives::Column::Id);
        // Backing totals live in the index, so ranking by them happens here over a bounded window.
        let by_backing = sort == "most_backed";
        let rows = query
            .limit(if by_backing { RANKING_WINDOW } else { limit })
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let totals = self.totals_of(&rows).await?;
        let mut items: Vec<Narrative> = rows.into_iter().map(|n| totals.body(n)).collect();
        if by_backing {
            // Stable: ties keep the newest-first order.
            items.sort_by(|a, b| b.sol_backed.total_cmp(&a.sol_backed));
            items.truncate(limit as usize);
        }
        Ok(Json(NarrativeFeed { narratives: items }))
    }

    /// How original a thesis is against the published ones (cosine similarity of their words),
    /// with a suggested category.
    #[oai(path = "/check-originality", method = "post")]
    async fn check_originality(
        &self,
        body: Json<OriginalityRequest>,
    ) -> ApiResult<Json<OriginalityAnswer>> {
        let thesis = body.0.thesis.trim().to_owned();
        if thesis.is_empty() || thesis.chars().count() > 2_000 {
            return Err(ApiError::validation("thesis required, at most 2000 characters").into());
        }
        let published: Vec<(String, String)> = narratives::Entity::find()
            .select_only()
            .column(narratives::Column::Thesis)
            .column(narratives::Column::Category)
            .order_by_desc(narratives::Column::CreatedAt)
            .limit(RANKING_WINDOW)
            .into_tuple()
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        let result = originality::check(
            &thesis,
            published.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        );
        let message = if result.similarity >= originality::DUPLICATE_AT {
            "a published narrative already makes this claim"
        } else if result.similarity >= 0.5 {
            "close to a published narrative; sharpen what makes it different"
        } else {
            "original"
        };
        Ok(Json(OriginalityAnswer {
            ok: true,
            similarity: result.similarity,
            score: result.score,
            suggested_category: result.suggested_category,
            message: message.into(),
        }))
    }

    /// Polish a thesis into one clear, falsifiable statement, in its own language (shares a
    /// pool of 3 per wallet per day with polish-voice).
    #[oai(path = "/polish-text", method = "post")]
    async fn polish_text(&self, body: Json<PolishText>) -> ApiResult<Json<Polished>> {
        let body = body.0;
        let polished = self
            .polish(&body.wallet_address, &body.thesis, "thesis")
            .await?;
        Ok(Json(Polished {
            ok: true,
            polished,
            original: Some(body.thesis),
        }))
    }

    /// Polish a voice transcript into a thesis, in its own language (the same daily pool).
    #[oai(path = "/polish-voice", method = "post")]
    async fn polish_voice(&self, body: Json<PolishVoice>) -> ApiResult<Json<Polished>> {
        let body = body.0;
        let polished = self
            .polish(&body.wallet_address, &body.transcript, "transcript")
            .await?;
        Ok(Json(Polished {
            ok: true,
            polished,
            original: None,
        }))
    }

    /// The five active narratives with the most SOL backed (ties: newest first).
    #[oai(path = "/hero", method = "get")]
    async fn hero(&self) -> ApiResult<Json<NarrativeFeed>> {
        let rows = narratives::Entity::find()
            .filter(narratives::Column::OracleStatus.is_in(ACTIVE_STATES))
            .order_by_desc(narratives::Column::CreatedAt)
            .order_by_asc(narratives::Column::Id)
            .limit(RANKING_WINDOW)
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        let totals = self.totals_of(&rows).await?;
        let mut items: Vec<Narrative> = rows.into_iter().map(|n| totals.body(n)).collect();
        items.sort_by(|a, b| b.sol_backed.total_cmp(&a.sol_backed));
        items.truncate(HERO_SIZE);
        Ok(Json(NarrativeFeed { narratives: items }))
    }

    /// How many active narratives each filter value would list.
    #[oai(path = "/filter-counts", method = "get")]
    async fn filter_counts(&self) -> ApiResult<Json<FilterCounts>> {
        let rows: Vec<(String, Option<String>, String)> = narratives::Entity::find()
            .select_only()
            .column(narratives::Column::Category)
            .column(narratives::Column::SubCategory)
            .column(narratives::Column::DeadlineTag)
            .filter(narratives::Column::OracleStatus.is_in(ACTIVE_STATES))
            .into_tuple()
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        let mut counts = FilterCounts {
            total_active: rows.len() as u64,
            categories: BTreeMap::new(),
            durations: BTreeMap::new(),
            sub_categories: BTreeMap::new(),
        };
        for (category, sub_category, tag) in rows {
            *counts.categories.entry(category).or_default() += 1;
            *counts.durations.entry(tag).or_default() += 1;
            if let Some(sub) = sub_category {
                *counts.sub_categories.entry(sub).or_default() += 1;
            }
        }
        Ok(Json(counts))
    }

    /// Prepare a `back_market` on the narrative's market for `wallet_address` to sign:
    /// `side` `'true'` (YES) or `'false'` (NO), at least 0.01 SOL; a pre-market narrative
    /// answers 403 `market_not_open` with `opens_at`.
    #[oai(path = "/:id/back", method = "post")]
    async fn back(
        &self,
        id: Path<String>,
        body: Json<NarrativeBack>,
    ) -> ApiResult<Json<BinaryPrepared>> {
        let id = crate::validate::uuid("id", &id.0)?.to_string();
        let narrative = narratives::Entity::find_by_id(id)
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("narrative"))?;
        if let Some(opens_at) = narrative.opens_at.filter(|at| *at > now()) {
            return Err(ApiError::coded(
                poem::http::StatusCode::FORBIDDEN,
                "market_not_open",
                "this narrative is pre-market: backing opens at opens_at",
            )
            .with("opens_at", iso(opens_at))
            .into());
        }
        let body = body.0;
        if !body
            .token_type
            .as_deref()
            .unwrap_or("SOL")
            .eq_ignore_ascii_case("SOL")
        {
            return Err(ApiError::coded(
                poem::http::StatusCode::BAD_REQUEST,
                "unsupported_protocol",
                "narratives are backed in SOL",
            )
            .into());
        }
        let side = match body.side.trim() {
            "true" => "yes",
            "false" => "no",
            _ => return Err(ApiError::validation("side must be 'true' or 'false'").into()),
        };
        if body.amount_sol.is_nan() || body.amount_sol < MIN_BACKING_SOL {
            return Err(ApiError::validation("amount_sol must be at least 0.01").into());
        }
        let prepared = binary_backing::prepare_back_for(
            &self.state,
            BinaryBack {
                wallet: body.wallet_address,
                market_id: narrative.market_id,
                side: side.into(),
                amount_sol: body.amount_sol,
            },
            "narratives",
        )
        .await?;
        Ok(Json(prepared))
    }

    /// Confirm a sent narrative backing by its signature.
    #[oai(path = "/:id/back/confirm", method = "post")]
    async fn back_confirm(
        &self,
        id: Path<String>,
        body: Json<BinaryConfirm>,
    ) -> ApiResult<Json<BinaryConfirmed>> {
        crate::validate::uuid("id", &id.0)?;
        Ok(Json(
            binary_backing::confirm(&self.state, binary_backing::BACK, body.0).await?,
        ))
    }

    /// One narrative with its market gate, wrapped in `narrative`.
    #[oai(path = "/:id", method = "get")]
    async fn single(&self, id: Path<String>) -> ApiResult<Json<NarrativeWrapped>> {
        let id = crate::validate::uuid("id", &id.0)?.to_string();
        let row = narratives::Entity::find_by_id(id)
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("narrative"))?;
        let totals = self.totals_of(std::slice::from_ref(&row)).await?;
        let opens_at = row.opens_at.filter(|at| *at > now());
        Ok(Json(NarrativeWrapped {
            narrative: NarrativeDetail {
                narrative: totals.body(row),
                is_pre_market: opens_at.is_some(),
                opens_at: opens_at.map(iso),
            },
        }))
    }
}
