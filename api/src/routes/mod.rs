//! The `/v1` route groups: one poem-openapi `OpenApi` type per group, each file holding its
//! handlers and their request and response types only. Handlers parse nothing by hand (values
//! arrive typed), query nothing and call no ledger: they call `domain` and shape its answer.

use std::sync::Arc;

use poem_openapi::{Object, OpenApiService, Tags};

use crate::error::refusals;
use crate::state::AppState;
use crate::values::{Base58Signature, PreparedId};

pub mod agents;
pub mod apikeys;
pub mod binary;
pub mod conviction;
pub mod groups;
pub mod markets;
pub mod narrative_creation;
pub mod narrative_history;
pub mod narratives;
pub mod nft;
pub mod shield;
pub mod system;

#[derive(Tags)]
pub enum Tag {
    /// Health of the service and halt flags per component.
    System,
    /// Exploit-coverage markets (spec 4.14).
    Shield,
    /// Binary markets (spec 4.13), gated.
    Binary,
    /// Agent API keys (spec 4.11, 5.5).
    ApiKeys,
    /// Fee-gated creation of native binary markets (spec 4.13).
    Markets,
    /// Inbound tier-NFT webhooks (spec 4.12).
    Nft,
    /// Agents: registration and the narrative feed (spec 4.10).
    Agents,
    /// Conviction profiles (spec 2.5, 4.3).
    Conviction,
    /// Narratives: the feed, single reads, histories, creation and AI drafts (spec 4.1).
    Narratives,
}

/// The second half of every prepare → sign → confirm (spec 5.2): which prepared transaction,
/// and the signature of the transaction the wallet sent.
#[derive(Object)]
pub struct ConfirmRequest {
    pub prepared_id: PreparedId,
    /// Signature of the sent transaction.
    pub signature: Base58Signature,
}

refusals! {
    /// A prepare of a money move: bounds (400), the market or coverage not open (403), not
    /// found (404), body too large (413), halted or the ledger unreachable (503).
    pub BackRefusals: [400, 403, 404, 413, 503];
    /// A confirm: what landed is not what was prepared (400), no such prepared transaction
    /// (404), confirmed with another signature (409), body too large (413), halted or not on
    /// the ledger yet (503).
    pub ConfirmRefusals: [400, 404, 409, 413, 503];
}

pub type Service = OpenApiService<
    (
        system::SystemApi,
        shield::ShieldApi,
        binary::BinaryApi,
        apikeys::ApiKeysApi,
        markets::MarketsApi,
        nft::NftApi,
        agents::AgentsApi,
        conviction::ConvictionApi,
        narratives::NarrativesApi,
        narrative_creation::NarrativeCreationApi,
        narrative_history::NarrativeHistoryApi,
        groups::GroupsApi,
    ),
    (),
>;

pub fn service(state: Arc<AppState>) -> Service {
    OpenApiService::new(
        (
            system::SystemApi {
                state: state.clone(),
            },
            shield::ShieldApi {
                state: state.clone(),
            },
            binary::BinaryApi {
                state: state.clone(),
            },
            apikeys::ApiKeysApi {
                state: state.clone(),
            },
            markets::MarketsApi {
                state: state.clone(),
            },
            nft::NftApi {
                state: state.clone(),
            },
            agents::AgentsApi {
                state: state.clone(),
            },
            conviction::ConvictionApi {
                state: state.clone(),
            },
            narratives::NarrativesApi {
                state: state.clone(),
            },
            narrative_creation::NarrativeCreationApi {
                state: state.clone(),
            },
            narrative_history::NarrativeHistoryApi {
                state: state.clone(),
            },
            groups::GroupsApi { state },
        ),
        "Narrative Market Service",
        env!("CARGO_PKG_VERSION"),
    )
    .server("/v1")
}
