//! The `/v1` route groups: one poem-openapi `OpenApi` type per group, each file holding its
//! handlers and their request and response types only. Handlers parse nothing by hand (values
//! arrive typed), query nothing and call no ledger: they call `domain` and shape its answer.

use std::sync::Arc;

use poem_openapi::{Object, OpenApiService, Tags};

use crate::domain::echo::reads::ProjectionMemo;
use crate::domain::profiles::leaderboards::Boards;
use crate::error::refusals;
use crate::state::AppState;
use crate::values::{Base58Signature, PreparedId};

pub mod admin;
pub mod agents;
pub mod apikeys;
pub mod binary;
pub mod borrow;
pub mod conviction;
pub mod defi;
pub mod echo_pool;
pub mod groups;
pub mod kyc;
pub mod markets;
pub mod missions;
pub mod narrative_creation;
pub mod narrative_history;
pub mod narratives;
pub mod nft;
pub mod notifications;
pub mod p0;
pub mod points;
pub mod queues_page;
pub mod shield;
pub mod system;
pub mod terms;
pub mod users;
pub mod verify;
pub mod waitlist;

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
    /// Tier NFTs: reads, the mint, metadata and the inbound webhooks (spec 4.12).
    Nft,
    /// Agents: registration and the narrative feed (spec 4.10).
    Agents,
    /// Conviction profiles (spec 2.5, 4.3).
    Conviction,
    /// Narratives: the feed, single reads, histories, creation and AI drafts (spec 4.1).
    Narratives,
    /// Missions and their leaderboard (spec 4.4).
    Missions,
    /// Points and their leaderboard (spec 4.10).
    Points,
    /// A user's records (spec 4.15).
    Users,
    /// The platform terms (spec 4.10, 4.15).
    Terms,
    /// The waitlist (spec 4.15).
    Waitlist,
    /// The in-app notification feed (spec 6.2) and its Web Push delivery (spec 4.11).
    Notifications,
    /// KYC with the provider's hosted inquiries (spec 4.9).
    Kyc,
    /// Verification by identity pass, passport or SAS attestation, and the loyalty-token
    /// holder check (spec 2.10, 4.8).
    Verify,
    /// The operators' surface: dashboard, Classic market review, narrative moderation, score
    /// recalculation (spec 5.6, 9.2); admin header pair.
    Admin,
    /// DeFi earn and staking: APYs, deposits and withdrawals into the venues, allocation,
    /// yield (spec 4.5, 4.6).
    Defi,
    /// Borrowing against lending positions: rates, capacity, simulation, terms (spec 4.7).
    Borrow,
}

/// The second half of every prepare → sign → confirm (spec 5.2): which prepared transaction,
/// and the signature of the transaction the wallet sent.
#[derive(Object)]
pub struct ConfirmRequest {
    pub prepared_id: PreparedId,
    /// Signature of the sent transaction.
    pub signature: Base58Signature,
}

/// The transactions a prepare gives the wallet (spec 4.0): sign and send `transactions_to_sign`
/// in order; the last is `transaction`, the one its confirm names.
#[derive(Object)]
pub struct ToSign {
    /// The transaction that moves the money: base64, unsigned, the wallet pays the fee.
    pub transaction: String,
    /// How many transactions to sign (spec 4.0 gives `transactions` as the count).
    pub transactions: u32,
    /// Every transaction to sign and send, in order (base64): set-up ones first, `transaction`
    /// last.
    pub transactions_to_sign: Vec<String>,
    pub blockhash: String,
}

impl ToSign {
    /// `setup` (the set-up transactions, in order), then `transaction`.
    pub fn new(setup: Vec<String>, transaction: String, blockhash: String) -> ToSign {
        let mut all = setup;
        all.push(transaction.clone());
        ToSign {
            transaction,
            transactions: u32::try_from(all.len()).unwrap_or(u32::MAX),
            transactions_to_sign: all,
            blockhash,
        }
    }

    /// `ready_to_sign` for several transactions, `ready_to_confirm` for one (docs/decisions.md,
    /// "Prepare status").
    pub fn status(&self) -> &'static str {
        if self.transactions > 1 {
            "ready_to_sign"
        } else {
            "ready_to_confirm"
        }
    }
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

/// The route groups, nested by area (a tuple of `OpenApi` types is one, up to 16 of them).
pub type Service = OpenApiService<
    (
        (
            system::SystemApi,
            shield::ShieldApi,
            binary::BinaryApi,
            apikeys::ApiKeysApi,
            markets::MarketsApi,
            nft::NftApi,
            agents::AgentsApi,
        ),
        (
            narratives::NarrativesApi,
            narrative_creation::NarrativeCreationApi,
            narrative_history::NarrativeHistoryApi,
            groups::GroupsApi,
        ),
        (
            conviction::ConvictionApi,
            echo_pool::EchoPoolApi,
            missions::MissionsApi,
            points::PointsApi,
            defi::DefiApi,
            p0::P0Api,
            borrow::BorrowApi,
        ),
        (
            users::UsersApi,
            terms::TermsApi,
            waitlist::WaitlistApi,
            notifications::NotificationsApi,
            kyc::KycApi,
            verify::VerifyApi,
            admin::AdminApi,
        ),
    ),
    (),
>;

/// Reads built once and shared by the requests that read the same: kept beside the routes,
/// since the state's layer cannot name the domain's types.
#[derive(Default)]
pub struct SharedReads {
    /// The open Echo Pool epoch's projection.
    pub echo_projections: Arc<ProjectionMemo>,
    /// The conviction and creator rankings.
    pub boards: Arc<Boards>,
}

impl SharedReads {
    /// Their `/metrics` lines.
    pub fn render(&self) -> String {
        self.echo_projections.render() + &self.boards.render()
    }
}

/// The api's operations over `state`, with the reads they share.
pub fn service(state: Arc<AppState>, shared: &SharedReads) -> Service {
    let s = || state.clone();
    OpenApiService::new(
        (
            (
                system::SystemApi { state: s() },
                shield::ShieldApi { state: s() },
                binary::BinaryApi { state: s() },
                apikeys::ApiKeysApi { state: s() },
                markets::MarketsApi { state: s() },
                nft::NftApi { state: s() },
                agents::AgentsApi { state: s() },
            ),
            (
                narratives::NarrativesApi { state: s() },
                narrative_creation::NarrativeCreationApi { state: s() },
                narrative_history::NarrativeHistoryApi { state: s() },
                groups::GroupsApi { state: s() },
            ),
            (
                conviction::ConvictionApi {
                    state: s(),
                    boards: shared.boards.clone(),
                },
                echo_pool::EchoPoolApi {
                    state: s(),
                    projections: shared.echo_projections.clone(),
                },
                missions::MissionsApi { state: s() },
                points::PointsApi { state: s() },
                defi::DefiApi { state: s() },
                p0::P0Api { state: s() },
                borrow::BorrowApi { state: s() },
            ),
            (
                users::UsersApi { state: s() },
                terms::TermsApi { state: s() },
                waitlist::WaitlistApi { state: s() },
                notifications::NotificationsApi { state: s() },
                kyc::KycApi { state: s() },
                verify::VerifyApi { state: s() },
                admin::AdminApi { state: s() },
            ),
        ),
        "Narrative Market Service",
        env!("CARGO_PKG_VERSION"),
    )
    .server("/v1")
}
