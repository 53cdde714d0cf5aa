//! `/v1/terms` (spec 4.10, 4.15): the current terms version and the message to sign, a wallet's
//! acceptance status, and its signed acceptance.

use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::terms;
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, Text, UnixSeconds, Wallet};

pub struct TermsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct CurrentTerms {
    pub ok: bool,
    pub terms_version: String,
    /// What a wallet signs to accept them, `<wallet>` standing for its address and
    /// `<issued_at>` for the unix seconds it signs at.
    pub message_template: String,
}

#[derive(Object)]
pub struct TermsStatus {
    pub ok: bool,
    pub wallet: Wallet,
    /// Whether the wallet accepted the current version.
    pub accepted: bool,
    /// The current version.
    pub terms_version: String,
    /// When it accepted the current version.
    pub accepted_at: Option<String>,
    /// The latest version it accepted, current or not.
    pub accepted_version: Option<String>,
}

#[derive(Object)]
pub struct TermsAccept {
    pub wallet: Wallet,
    /// The wallet's ed25519 signature (base58) of
    /// `narrative-market-service:terms:<terms_version>:<wallet>:issued-at:<issued_at>`.
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
    /// The version accepted; must be the current one.
    pub terms_version: Option<Text<64>>,
}

#[derive(Object)]
pub struct TermsAccepted {
    pub ok: bool,
    pub wallet: Wallet,
    pub terms_version: String,
    /// When it was first accepted (accepting again changes nothing).
    pub accepted_at: String,
}

refusals! {
    StatusRefusals: [400];
    /// A stale version (400), a signature that is not the wallet's (401).
    AcceptRefusals: [400, 413];
}

#[OpenApi(prefix_path = "/terms", tag = "Tag::Terms")]
impl TermsApi {
    /// The current terms version and what to sign.
    #[oai(path = "/current", method = "get")]
    async fn current(&self) -> Answer<Json<CurrentTerms>, StatusRefusals> {
        let version = self.state.terms_version.clone();
        Ok(Json(CurrentTerms {
            ok: true,
            message_template: terms::statement(&version, "<wallet>")
                .template(&self.state.proof_domain),
            terms_version: version,
        }))
    }

    /// Whether the wallet accepted the current terms.
    #[oai(path = "/status/:wallet", method = "get")]
    async fn status(&self, wallet: Path<Wallet>) -> Answer<Json<TermsStatus>, StatusRefusals> {
        let status = terms::status(&self.state, &wallet.0).await?;
        Ok(Json(TermsStatus {
            ok: true,
            wallet: wallet.0,
            accepted: status.current.is_some(),
            terms_version: status.current_version,
            accepted_at: status.current.map(|a| iso(a.accepted_at)),
            accepted_version: status.latest.map(|a| a.terms_version),
        }))
    }

    /// Record the wallet's signed acceptance of the current terms (once; accepting again
    /// answers the first acceptance).
    #[oai(path = "/accept", method = "post")]
    async fn accept(&self, body: Json<TermsAccept>) -> Answer<Json<TermsAccepted>, AcceptRefusals> {
        let body = body.0;
        let accepted = terms::accept(
            &self.state,
            Proof {
                wallet: &body.wallet,
                signature: &body.signature,
                issued_at: body.issued_at,
            },
            body.terms_version.as_ref().map(Text::as_str),
        )
        .await?;
        Ok(Json(TermsAccepted {
            ok: true,
            wallet: body.wallet,
            terms_version: accepted.terms_version,
            accepted_at: iso(accepted.accepted_at),
        }))
    }
}
