//! `GET /v1/conviction/:wallet` (spec 2.5, 4.3): the profile computed from the wallet's resolved
//! backings in the index. A legacy read: the payload is returned as is, without `ok`.

use std::collections::BTreeMap;
use std::sync::Arc;

use narrative_store::entities::{narratives, shield_terms_acknowledgements};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::conviction::wallet_score;
use crate::creator::{creator_score, Created};
use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::iso;
use crate::validate::{sol, wallet};

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

/// Spec 2.3b.
#[derive(Object)]
pub struct CreatorProfile {
    pub wallet_address: String,
    pub creator_score: f64,
    pub creator_tier: String,
    /// Percent of the Crucible forfeit of the creator's markets owed to the creator.
    pub creator_share_pct: f64,
    pub total_creator_earnings_sol: f64,
    pub narratives_submitted: u64,
    pub narratives_resolved_true: u64,
    pub narratives_pending: u64,
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
        let s = wallet_score(db, &owner).await.map_err(ApiError::from)?;
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

    /// A wallet's creator profile (spec 2.3b) from the narratives it published; an unseen
    /// wallet gets the zeroed profile (tier `ember`), never 404.
    #[oai(path = "/creator/:wallet", method = "get")]
    async fn creator(
        &self,
        #[oai(name = "wallet")] wallet_param: Path<String>,
    ) -> ApiResult<Json<CreatorProfile>> {
        let owner = wallet("wallet", &wallet_param.0)?.to_string();
        let db = self.state.store.db();
        let published = narratives::Entity::find()
            .filter(narratives::Column::WalletAddress.eq(owner.as_str()))
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let market_ids: Vec<String> = published.iter().map(|n| n.market_id.clone()).collect();
        let markets = crate::indexed::markets_by_id(db, market_ids.clone())
            .await
            .map_err(ApiError::from)?;
        // The creator's own stake is not an outside backer.
        let outside = crate::indexed::distinct_backers(db, market_ids, Some(&owner))
            .await
            .map_err(ApiError::from)?;
        let created: Vec<Created> = published
            .iter()
            .map(|n| {
                let market = markets.get(&n.market_id);
                Created {
                    oracle_status: n.oracle_status.clone(),
                    outside_backers: outside.get(&n.market_id).copied().unwrap_or(0) as u64,
                    crucible_lamports: market
                        .filter(|m| m.finalized)
                        .map_or(0, |m| m.crucible_amount.max(0) as u64),
                }
            })
            .collect();
        let s = creator_score(&created);
        Ok(Json(CreatorProfile {
            wallet_address: owner,
            creator_score: s.score,
            creator_tier: s.tier.name().into(),
            creator_share_pct: s.share_pct,
            total_creator_earnings_sol: sol(s.earnings_lamports as i64),
            narratives_submitted: s.submitted,
            narratives_resolved_true: s.resolved_true,
            narratives_pending: s.pending,
        }))
    }
}
