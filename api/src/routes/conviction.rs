//! `GET /v1/conviction/:wallet` (spec 2.5, 4.3): the profile computed from the wallet's resolved
//! backings in the index. A legacy read: the payload is returned as is, without `ok`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use narrative_store::entities::{backings, markets, narratives, shield_terms_acknowledgements};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::conviction::{score, Resolved};
use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::iso;
use crate::validate::wallet;

pub struct ConvictionApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct CategoryStatsBody {
    pub backed: u32,
    pub correct: u32,
    /// Percent.
    pub accuracy: f64,
}

/// Spec 2.5.
#[derive(Object)]
pub struct ConvictionProfile {
    pub wallet_address: String,
    pub conviction_score: f64,
    pub conviction_tier: String,
    pub correct_backings: u32,
    pub incorrect_backings: u32,
    /// Percent.
    pub accuracy_rate: f64,
    pub current_streak: u32,
    pub longest_streak: u32,
    pub conviction_multiplier: f64,
    pub streak_multiplier: f64,
    pub combined_multiplier: f64,
    /// Percent.
    pub fee_pct: f64,
    pub terms_accepted: bool,
    pub terms_version: String,
    pub terms_accepted_at: Option<String>,
    pub per_category_stats: BTreeMap<String, CategoryStatsBody>,
}

#[OpenApi(prefix_path = "/conviction", tag = "Tag::Conviction")]
impl ConvictionApi {
    /// A wallet's conviction profile; an unseen wallet gets the zeroed profile, never 404.
    #[oai(path = "/:wallet", method = "get")]
    async fn profile(
        &self,
        #[oai(name = "wallet")] wallet_param: Path<String>,
    ) -> ApiResult<Json<ConvictionProfile>> {
        let owner = wallet("wallet", &wallet_param.0)?.to_string();
        let db = self.state.store.db();
        let held = backings::Entity::find()
            .filter(backings::Column::Backer.eq(owner.as_str()))
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let market_ids: Vec<String> = held.iter().map(|b| b.market_id.clone()).collect();
        let settled: HashMap<String, markets::Model> = markets::Entity::find()
            .filter(markets::Column::MarketId.is_in(market_ids.clone()))
            .filter(markets::Column::Finalized.eq(true))
            .filter(markets::Column::Outcome.is_not_null())
            .all(db)
            .await
            .map_err(ApiError::from)?
            .into_iter()
            .map(|m| (m.market_id.clone(), m))
            .collect();
        let categories: HashMap<String, String> = narratives::Entity::find()
            .filter(narratives::Column::MarketId.is_in(market_ids))
            .all(db)
            .await
            .map_err(ApiError::from)?
            .into_iter()
            .map(|n| (n.market_id, n.category))
            .collect();
        // In the order the markets settled, so streaks mean consecutive results.
        let mut resolved: Vec<(i64, String, Resolved)> = held
            .iter()
            .filter_map(|b| {
                let market = settled.get(&b.market_id)?;
                Some((
                    market.finalized_at,
                    b.market_id.clone(),
                    Resolved {
                        correct: market.outcome.as_deref() == Some(b.side.as_str()),
                        category: categories.get(&b.market_id).cloned(),
                    },
                ))
            })
            .collect();
        resolved.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let resolved: Vec<Resolved> = resolved.into_iter().map(|(_, _, r)| r).collect();
        let s = score(&resolved);
        let current = &self.state.shield_terms_version;
        let terms = shield_terms_acknowledgements::Entity::find_by_id(owner.clone())
            .one(db)
            .await
            .map_err(ApiError::from)?
            .filter(|t| &t.terms_version == current);
        Ok(Json(ConvictionProfile {
            wallet_address: owner,
            conviction_score: s.score,
            conviction_tier: s.tier.name().into(),
            correct_backings: s.correct,
            incorrect_backings: s.incorrect,
            accuracy_rate: s.accuracy_rate,
            current_streak: s.current_streak,
            longest_streak: s.longest_streak,
            conviction_multiplier: s.conviction_multiplier,
            streak_multiplier: s.streak_multiplier,
            combined_multiplier: s.combined_multiplier,
            fee_pct: s.fee_pct,
            terms_accepted: terms.is_some(),
            terms_version: current.clone(),
            terms_accepted_at: terms.map(|t| iso(t.acknowledged_at)),
            per_category_stats: s
                .per_category
                .iter()
                .map(|(category, stats)| {
                    (
                        category.clone(),
                        CategoryStatsBody {
                            backed: stats.backed,
                            correct: stats.correct,
                            accuracy: stats.accuracy(),
                        },
                    )
                })
                .collect(),
        }))
    }
}
