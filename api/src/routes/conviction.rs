//! `GET /v1/conviction/:wallet` and `/v1/conviction/creator/:wallet` (spec 2.5, 2.3b, 4.3).
//! Legacy reads: the payload is returned as is, without `ok`.

use std::collections::BTreeMap;
use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::profiles;
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{sol_u64, Wallet};

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
    pub wallet_address: Wallet,
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
    pub wallet_address: Wallet,
    pub creator_score: f64,
    pub creator_tier: String,
    /// Percent of the Crucible forfeit of the creator's markets owed to the creator.
    pub creator_share_pct: f64,
    pub total_creator_earnings_sol: f64,
    pub narratives_submitted: u64,
    pub narratives_resolved_true: u64,
    pub narratives_pending: u64,
}

refusals! {
    ProfileRefusals: [400];
}

#[OpenApi(prefix_path = "/conviction", tag = "Tag::Conviction")]
impl ConvictionApi {
    /// A wallet's conviction profile; an unseen wallet gets the zeroed profile, never 404.
    #[oai(path = "/:wallet", method = "get")]
    async fn profile(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<ConvictionProfile>, ProfileRefusals> {
        let profile = profiles::conviction_profile(&self.state, &wallet.0).await?;
        let s = profile.score;
        Ok(Json(ConvictionProfile {
            wallet_address: wallet.0,
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
            terms_accepted: profile.terms.is_some(),
            terms_version: self.state.shield_terms_version.clone(),
            terms_accepted_at: profile.terms.map(|t| iso(t.acknowledged_at)),
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
    async fn creator(&self, wallet: Path<Wallet>) -> Answer<Json<CreatorProfile>, ProfileRefusals> {
        let s = profiles::creator_profile(&self.state, &wallet.0).await?;
        Ok(Json(CreatorProfile {
            wallet_address: wallet.0,
            creator_score: s.score,
            creator_tier: s.tier.name().into(),
            creator_share_pct: s.share_pct,
            total_creator_earnings_sol: sol_u64(s.earnings_lamports),
            narratives_submitted: s.submitted,
            narratives_resolved_true: s.resolved_true,
            narratives_pending: s.pending,
        }))
    }
}
