//! `GET /v1/conviction/:wallet` and `/v1/conviction/creator/:wallet` (spec 2.5, 2.3b, 4.3;
//! legacy reads: the payload is returned as is, without `ok`), a wallet's eruption state and the
//! two leaderboards. The Echo Pool's routes under `/v1/conviction` are in `echo_pool`.

use std::collections::BTreeMap;
use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::profiles::{self, eruption, leaderboards};
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{page, sol_u64, NftTier, Wallet};

pub struct ConvictionApi {
    pub state: Arc<AppState>,
    /// The leaderboards' rankings, shared by their pages.
    pub boards: Arc<leaderboards::Boards>,
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
    /// The score's tier, raised to the highest tier NFT the wallet holds (spec 4.7: an `ember`
    /// NFT holder qualifies as `ember`). Multipliers and `fee_pct` follow the score alone.
    pub conviction_tier: String,
    /// The highest tier NFT the ledger last showed the wallet holding.
    pub nft_tier: Option<NftTier>,
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

/// The burst part of an eruption.
#[derive(Object)]
pub struct Burst {
    /// Backings within the window make a burst from 3.
    pub active: bool,
    pub backings: u64,
    pub backed_sol: f64,
    pub window_hours: u64,
}

/// A wallet's streak and burst state.
#[derive(Object)]
pub struct EruptionState {
    pub ok: bool,
    pub wallet: Wallet,
    /// `erupting` (a streak of 5 or more), `warming` (any streak, or a burst) or `dormant`.
    pub state: String,
    pub erupting: bool,
    pub current_streak: u32,
    pub longest_streak: u32,
    pub streak_multiplier: f64,
    /// The next streak milestone (3, 5, 10, 25, 50); null past the last.
    pub next_milestone: Option<u32>,
    pub burst: Burst,
    /// The ledger time of the wallet's latest backing.
    pub last_backed_at: Option<String>,
}

#[derive(Object)]
pub struct ConvictionLeader {
    pub rank: u64,
    pub wallet_address: String,
    pub conviction_score: f64,
    pub conviction_tier: String,
    pub correct_backings: u32,
    pub incorrect_backings: u32,
    /// Percent.
    pub accuracy_rate: f64,
    pub current_streak: u32,
    pub longest_streak: u32,
}

#[derive(Object)]
pub struct ConvictionLeaderboard {
    pub ok: bool,
    pub leaderboard: Vec<ConvictionLeader>,
    /// Wallets ranked.
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

#[derive(Object)]
pub struct CreatorLeader {
    pub rank: u64,
    pub wallet_address: String,
    pub creator_score: f64,
    pub creator_tier: String,
    pub creator_share_pct: f64,
    pub narratives_submitted: u64,
    pub narratives_resolved_true: u64,
    pub total_creator_earnings_sol: f64,
}

#[derive(Object)]
pub struct CreatorLeaderboard {
    pub ok: bool,
    pub leaderboard: Vec<CreatorLeader>,
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

/// Spec 8: leaderboards hold 50 by default; at most this many a page.
pub const MAX_LEADERBOARD: i64 = 100;

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
            conviction_tier: s.tier.honouring(profile.nft_tier).name().into(),
            nft_tier: profile.nft_tier,
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
            terms_version: self.state.terms_version.clone(),
            terms_accepted_at: profile.terms.map(|t| iso(t.accepted_at)),
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

    /// The wallet's streak and burst state (rules in docs/decisions.md).
    #[oai(path = "/eruption/:wallet", method = "get")]
    async fn eruption(&self, wallet: Path<Wallet>) -> Answer<Json<EruptionState>, ProfileRefusals> {
        let e = eruption::eruption(&self.state, &wallet.0).await?;
        Ok(Json(EruptionState {
            ok: true,
            wallet: wallet.0,
            state: e.state().into(),
            erupting: e.score.current_streak >= eruption::ERUPTION_STREAK,
            current_streak: e.score.current_streak,
            longest_streak: e.score.longest_streak,
            streak_multiplier: e.score.streak_multiplier,
            next_milestone: e.next_milestone,
            burst: Burst {
                active: e.burst_active(),
                backings: e.burst_backings,
                backed_sol: sol_u64(e.burst_lamports),
                window_hours: (eruption::BURST_WINDOW_SECS / 3_600) as u64,
            },
            last_backed_at: e.last_backed_at.map(iso),
        }))
    }

    /// Top wallets by conviction score (`limit` default 50, clamped to 1–100; `offset`).
    #[oai(path = "/leaderboard/conviction", method = "get")]
    async fn conviction_leaderboard(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<ConvictionLeaderboard>, ProfileRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, MAX_LEADERBOARD);
        let (rows, total) =
            leaderboards::conviction(&self.state, &self.boards, limit, offset).await?;
        Ok(Json(ConvictionLeaderboard {
            ok: true,
            leaderboard: rows
                .into_iter()
                .enumerate()
                .map(|(i, (wallet, s))| ConvictionLeader {
                    rank: offset + i as u64 + 1,
                    wallet_address: wallet,
                    conviction_score: s.score,
                    conviction_tier: s.tier.name().into(),
                    correct_backings: s.correct,
                    incorrect_backings: s.incorrect,
                    accuracy_rate: s.accuracy_rate,
                    current_streak: s.current_streak,
                    longest_streak: s.longest_streak,
                })
                .collect(),
            total,
            limit,
            offset,
        }))
    }

    /// Top wallets by creator score (`limit` default 50, clamped to 1–100; `offset`).
    #[oai(path = "/leaderboard/creators", method = "get")]
    async fn creator_leaderboard(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<CreatorLeaderboard>, ProfileRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, MAX_LEADERBOARD);
        let (rows, total) =
            leaderboards::creators(&self.state, &self.boards, limit, offset).await?;
        Ok(Json(CreatorLeaderboard {
            ok: true,
            leaderboard: rows
                .into_iter()
                .enumerate()
                .map(|(i, (wallet, s))| CreatorLeader {
                    rank: offset + i as u64 + 1,
                    wallet_address: wallet,
                    creator_score: s.score,
                    creator_tier: s.tier.name().into(),
                    creator_share_pct: s.share_pct,
                    narratives_submitted: s.submitted,
                    narratives_resolved_true: s.resolved_true,
                    total_creator_earnings_sol: sol_u64(s.earnings_lamports),
                })
                .collect(),
            total,
            limit,
            offset,
        }))
    }
}
