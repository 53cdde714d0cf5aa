//! A wallet's measure on every metric, from the index and the api's records: what missions are
//! checked against.

use std::collections::BTreeSet;

use narrative_store::entities::{backings, crucible_claims, narratives};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};

use super::catalogue::Metric;
use crate::domain::profiles::conviction;
use crate::domain::terms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub backings: u64,
    pub narratives_backed: u64,
    pub lamports_backed: u64,
    pub correct_backings: u64,
    pub longest_streak: u64,
    pub narratives_published: u64,
    pub echo_claims: u64,
    pub terms_accepted: u64,
}

impl Progress {
    pub fn of(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Backings => self.backings,
            Metric::NarrativesBacked => self.narratives_backed,
            Metric::LamportsBacked => self.lamports_backed,
            Metric::CorrectBackings => self.correct_backings,
            Metric::LongestStreak => self.longest_streak,
            Metric::NarrativesPublished => self.narratives_published,
            Metric::EchoClaims => self.echo_claims,
            Metric::TermsAccepted => self.terms_accepted,
        }
    }
}

pub async fn progress(state: &AppState, wallet: &Wallet) -> Result<Progress, ApiError> {
    let db = state.store.db();
    let owner = wallet.to_string();
    let held = backings::Entity::find()
        .filter(backings::Column::Backer.eq(owner.as_str()))
        .filter(backings::Column::Closed.eq(false))
        .all(db)
        .await?;
    let markets: BTreeSet<String> = held.iter().map(|b| b.market_id.clone()).collect();
    let narratives_backed = narratives::Entity::find()
        .filter(narratives::Column::MarketId.is_in(markets))
        .count(db)
        .await?;
    let score = conviction::wallet_score(db, wallet).await?;
    let narratives_published = narratives::Entity::find()
        .filter(narratives::Column::WalletAddress.eq(owner.as_str()))
        .count(db)
        .await?;
    let echo_claims = crucible_claims::Entity::find()
        .filter(crucible_claims::Column::Wallet.eq(owner.as_str()))
        .count(db)
        .await?;
    let terms_accepted = terms::current_acceptance(state, wallet).await?.is_some();
    Ok(Progress {
        backings: held.len() as u64,
        narratives_backed,
        lamports_backed: held.iter().map(|b| b.amount.max(0) as u64).sum(),
        correct_backings: u64::from(score.correct),
        longest_streak: u64::from(score.longest_streak),
        narratives_published,
        echo_claims,
        terms_accepted: u64::from(terms_accepted),
    })
}
