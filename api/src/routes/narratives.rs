//! Narrative reads and interactions (spec 4.1): the public feed with its query parameters, the
//! hero list, the filter counts, the single read, originality checks, polishing, and backing.
//! Legacy reads: the feed answers `{narratives}` and the single read `{narrative}`, without `ok`.

use std::collections::BTreeMap;
use std::sync::Arc;

use poem::Request;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, Response};
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::binary::backing::BackingSol;
use crate::domain::narratives::backing::{self, BackNarrative, TokenType};
use crate::domain::narratives::feed::{self, FeedFilter, FeedQuery, FeedSort, NarrativeView};
use crate::domain::narratives::{originality, polish};
use crate::error::{refusals, Answer};
use crate::http::cache::fresh_until;
use crate::http::client_ip::client_ip;
use crate::routes::binary::{BinaryConfirmed, BinaryPrepared};
use crate::routes::Tag;
use crate::routes::{BackRefusals, ConfirmRefusals, ConfirmRequest};
use crate::state::AppState;
use crate::values::{clamp, Category, NarrativeId, NarrativeSide, Text, Wallet};

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

impl From<NarrativeView> for Narrative {
    fn from(view: NarrativeView) -> Self {
        let n = view.narrative;
        Narrative {
            sol_backed: view.sol_backed,
            backers: view.backers,
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

#[derive(Object)]
pub struct FilterCounts {
    pub total_active: u64,
    pub categories: BTreeMap<String, u64>,
    pub durations: BTreeMap<String, u64>,
    pub sub_categories: BTreeMap<String, u64>,
}

#[derive(Object)]
pub struct OriginalityRequest {
    pub thesis: Text<2000>,
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
    pub thesis: Text<4000>,
    pub wallet_address: Wallet,
}

#[derive(Object)]
pub struct PolishVoice {
    pub transcript: Text<4000>,
    pub wallet_address: Wallet,
}

#[derive(Object)]
pub struct Polished {
    pub ok: bool,
    pub polished: String,
    /// polish-text only.
    #[oai(skip_serializing_if_is_none)]
    pub original: Option<String>,
}

#[derive(Object)]
pub struct NarrativeBack {
    /// The backer; it signs and pays the fee.
    pub wallet_address: Wallet,
    /// At least 0.01 SOL.
    pub amount_sol: BackingSol,
    /// `SOL` (the default).
    pub token_type: Option<TokenType>,
    pub side: NarrativeSide,
}

refusals! {
    FeedRefusals: [400];
    ReadRefusals: [400, 404];
    SimpleRefusals: [];
    OriginalityRefusals: [400, 413];
    PolishRefusals: [400, 413, 503];
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativesApi {
    /// The public feed of narratives that can still be resolved. `filter`: `all` (default),
    /// `new` (last 72 h), `trending` (most SOL backed), `backed` (narratives `wallet` has
    /// backed; `wallet` required). `sort`: `newest` (default), `oldest`, `deadline`,
    /// `most_backed`. `limit`: default 20, clamped to 1–100, or to 1–5000 with `broad=true`.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/", method = "get")]
    async fn feed(
        &self,
        filter: Query<Option<FeedFilter>>,
        category: Query<Option<Category>>,
        sub_category: Query<Option<String>>,
        asset_tag: Query<Option<String>>,
        /// A deadline tag, `SHORT` or `LONG` (any case).
        duration: Query<Option<String>>,
        sort: Query<Option<FeedSort>>,
        wallet: Query<Option<Wallet>>,
        limit: Query<Option<i64>>,
        broad: Query<Option<bool>>,
    ) -> Answer<Response<Json<NarrativeFeed>>, FeedRefusals> {
        let cap = if broad.0.unwrap_or(false) { 5_000 } else { 100 };
        let listed = feed::feed(
            &self.state,
            FeedQuery {
                filter: filter.0.unwrap_or(FeedFilter::All),
                category: category.0,
                sub_category: sub_category.0,
                asset_tag: asset_tag.0,
                duration: duration.0,
                sort: sort.0,
                wallet: wallet.0,
                limit: clamp(limit.0, 20, 1, cap) as u64,
            },
        )
        .await?;
        Ok(fresh_until(
            Json(NarrativeFeed {
                narratives: listed.views.into_iter().map(Narrative::from).collect(),
            }),
            listed.fresh_until,
        ))
    }

    /// How original a thesis is against the published ones (cosine similarity of their
    /// words), with a suggested category.
    #[oai(path = "/check-originality", method = "post")]
    async fn check_originality(
        &self,
        body: Json<OriginalityRequest>,
    ) -> Answer<Json<OriginalityAnswer>, OriginalityRefusals> {
        let checked = originality::check_thesis(&self.state, body.0.thesis.as_str()).await?;
        Ok(Json(OriginalityAnswer {
            ok: true,
            similarity: checked.originality.similarity,
            score: checked.originality.score,
            suggested_category: checked.originality.suggested_category,
            message: checked.message.into(),
        }))
    }

    /// Polish a thesis into one clear, falsifiable statement, in its own language (shares a
    /// pool of 3 per wallet per day with polish-voice).
    #[oai(path = "/polish-text", method = "post")]
    async fn polish_text(
        &self,
        req: &Request,
        body: Json<PolishText>,
    ) -> Answer<Json<Polished>, PolishRefusals> {
        let body = body.0;
        let polished = polish::polish(
            &self.state,
            client_ip(req),
            &body.wallet_address,
            body.thesis.as_str(),
        )
        .await?;
        Ok(Json(Polished {
            ok: true,
            polished,
            original: Some(body.thesis.into_string()),
        }))
    }

    /// Polish a voice transcript into a thesis, in its own language (the same daily pool).
    #[oai(path = "/polish-voice", method = "post")]
    async fn polish_voice(
        &self,
        req: &Request,
        body: Json<PolishVoice>,
    ) -> Answer<Json<Polished>, PolishRefusals> {
        let body = body.0;
        let polished = polish::polish(
            &self.state,
            client_ip(req),
            &body.wallet_address,
            body.transcript.as_str(),
        )
        .await?;
        Ok(Json(Polished {
            ok: true,
            polished,
            original: None,
        }))
    }

    /// The five active narratives with the most SOL backed (ties: newest first).
    #[oai(path = "/hero", method = "get")]
    async fn hero(&self) -> Answer<Json<NarrativeFeed>, SimpleRefusals> {
        let views = feed::hero(&self.state).await?;
        Ok(Json(NarrativeFeed {
            narratives: views.into_iter().map(Narrative::from).collect(),
        }))
    }

    /// How many active narratives each filter value would list.
    #[oai(path = "/filter-counts", method = "get")]
    async fn filter_counts(&self) -> Answer<Json<FilterCounts>, SimpleRefusals> {
        let counts = feed::filter_counts(&self.state).await?;
        Ok(Json(FilterCounts {
            total_active: counts.total_active,
            categories: counts.categories,
            durations: counts.durations,
            sub_categories: counts.sub_categories,
        }))
    }

    /// Prepare a `back_market` on the narrative's market for `wallet_address` to sign:
    /// `side` `'true'` (YES) or `'false'` (NO), at least 0.01 SOL; a pre-market narrative
    /// answers 403 `market_not_open` with `opens_at`.
    #[oai(path = "/:id/back", method = "post")]
    async fn back(
        &self,
        id: Path<NarrativeId>,
        body: Json<NarrativeBack>,
    ) -> Answer<Json<BinaryPrepared>, BackRefusals> {
        let body = body.0;
        let prepared = backing::prepare(
            &self.state,
            id.0,
            BackNarrative {
                wallet: body.wallet_address,
                amount: body.amount_sol,
                side: body.side,
            },
        )
        .await?;
        Ok(Json(prepared.into()))
    }

    /// Confirm a sent narrative backing by its signature.
    #[oai(path = "/:id/back/confirm", method = "post")]
    async fn back_confirm(
        &self,
        #[oai(name = "id")] _id: Path<NarrativeId>,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<BinaryConfirmed>, ConfirmRefusals> {
        let confirmed = backing::confirm(&self.state, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(confirmed.into()))
    }

    /// One narrative with its market gate, wrapped in `narrative`.
    #[oai(path = "/:id", method = "get")]
    async fn single(
        &self,
        id: Path<NarrativeId>,
    ) -> Answer<Response<Json<NarrativeWrapped>>, ReadRefusals> {
        let view = feed::single(&self.state, id.0).await?;
        let opens_at = feed::opens_at(&view.narrative, self.state.now());
        // A pre-market narrative opens without a write.
        Ok(fresh_until(
            Json(NarrativeWrapped {
                narrative: NarrativeDetail {
                    narrative: view.into(),
                    is_pre_market: opens_at.is_some(),
                    opens_at: opens_at.map(iso),
                },
            }),
            opens_at,
        ))
    }
}
