//! Verification (spec 2.10, 4.8): a wallet's record and the flows of each method, the identity
//! pass and passport checks, SAS (requests kept, attestations read from the ledger), the
//! providers' callback, and the loyalty-token holder check.

use std::sync::Arc;

use poem::Request;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::verify::{self, HOLD_DAYS};
use crate::error::{refusals, Answer};
use crate::http::auth::WebhookAuth;
use crate::http::client_ip::client_ip;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{ChainAddress, Text, VerifyMethod, Wallet};

pub struct VerifyApi {
    pub state: Arc<AppState>,
}

/// The verification record of spec 2.10.
#[derive(Object)]
pub struct Verification {
    /// A live identity pass of this wallet.
    pub idpass_verified: bool,
    /// The last passport score read (0 before any).
    pub passport_score: f64,
    /// `passport_score` is 10 or more.
    pub passport_verified: bool,
    /// A live attestation under a trusted SAS credential and schema.
    pub sas_verified: bool,
}

#[derive(Object)]
pub struct VerifyStatus {
    pub ok: bool,
    pub wallet: ChainAddress,
    /// `solana` or `evm`, read off the address.
    pub chain: String,
    /// The chain's methods: `idpass`, `passport`, `sas` on Solana; `passport` elsewhere.
    pub available_methods: Vec<VerifyMethod>,
    pub verification: Verification,
    /// A passing proof by any method: `idpass_verified`, a passport score of 20 or more, or
    /// `sas_verified`.
    pub fully_verified: bool,
    /// What to do next (`null` once fully verified): `passport` for an EVM address or a
    /// Solana wallet whose score is already 10 or more, else `idpass`.
    pub recommended_method: Option<VerifyMethod>,
}

#[derive(Object)]
pub struct InitiateRequest {
    pub wallet: ChainAddress,
    /// The method to start; the recommended one when absent. One the chain lacks is 400
    /// `method_not_available`.
    pub preferred_method: Option<VerifyMethod>,
}

#[derive(Object)]
pub struct VerifyFlow {
    pub method: VerifyMethod,
    /// Where to send the user.
    pub url: String,
    /// The providers' callback to this service (`POST /v1/verify/confirm`).
    pub callback: String,
    /// `redirect` (the provider sends the user back with a token for
    /// `POST /v1/verify/idpass`), `external` (the user acts at the provider, then asks for a
    /// check) or `coming_soon`.
    #[oai(rename = "type")]
    pub kind: String,
    pub description: String,
}

#[derive(Object)]
pub struct Initiated {
    pub ok: bool,
    pub chain: String,
    pub flow: VerifyFlow,
}

#[derive(Object)]
pub struct IdPassRequest {
    /// The identity pass token the provider's flow handed back.
    pub token: Text<4096>,
    pub wallet_address: Wallet,
}

#[derive(Object)]
pub struct IdPassVerified {
    pub ok: bool,
    pub wallet_address: Wallet,
    pub method: VerifyMethod,
    /// Always `true`: a token the provider refuses is 400 `idpass_invalid`.
    pub verified: bool,
    /// The pass's id at the provider.
    pub pass_id: String,
    /// When the pass lapses, if it does.
    pub expires_at: Option<String>,
}

#[derive(Object)]
pub struct PassportScore {
    pub ok: bool,
    /// The score reached 20 (the passing score).
    pub verified: bool,
    pub score: f64,
    pub wallet_address: ChainAddress,
}

#[derive(Object)]
pub struct SasRequest {
    pub wallet_address: Wallet,
    /// The attestation account the wallet points to, if any.
    pub attestation_id: Option<Wallet>,
}

/// The 503 `coming_soon` of spec 7, with what became of the request.
#[derive(Object)]
pub struct SasRequested {
    /// `coming_soon`.
    pub error: String,
    pub message: String,
    /// `coming_soon`.
    pub feature: String,
    pub wallet_address: Wallet,
    /// Whether this request was new (a wallet's request is kept once).
    pub recorded: bool,
}

#[derive(ApiResponse)]
pub enum SasAnswer {
    /// SAS verification is not wired yet (spec 7 `coming_soon`); the request is kept.
    #[oai(status = 503)]
    ComingSoon(Json<SasRequested>),
}

#[derive(Object)]
pub struct SasAttestation {
    /// The attestation account.
    pub address: String,
    /// The issuer's credential.
    pub credential: String,
    pub schema: String,
    /// The issuer's key that signed it.
    pub signer: String,
    /// When it lapses; `null` when it never does.
    pub expires_at: Option<String>,
    /// Unexpired now.
    pub live: bool,
    /// The attested data, base64, laid out by the schema.
    pub data: String,
}

#[derive(Object)]
pub struct SasAttestations {
    pub ok: bool,
    pub wallet_address: Wallet,
    /// Under the credentials and schemas this service trusts.
    pub attestations: Vec<SasAttestation>,
}

#[derive(Object)]
pub struct ConfirmVerification {
    pub wallet_address: ChainAddress,
    pub method: VerifyMethod,
    /// For `idpass`, the identity pass token (required); ignored otherwise.
    pub verification_id: Option<Text<4096>>,
    /// `solana` or `evm`: when given, it must be the address's chain.
    pub chain: Option<Text<16>>,
}

#[derive(Object)]
pub struct VerificationConfirmed {
    pub ok: bool,
    pub wallet_address: ChainAddress,
    pub method: VerifyMethod,
    /// What the method's source says now.
    pub verified: bool,
}

#[derive(Object)]
pub struct HolderBoostsBody {
    /// Added to the wallet's Echo Pool tickets, in basis points (0 when not a holder).
    pub echo_pool_ticket_boost_bps: u32,
    /// Taken off the deposit fee, in basis points (0 when not a holder).
    pub deposit_fee_discount_bps: u32,
}

#[derive(Object)]
pub struct HolderStatus {
    pub ok: bool,
    pub wallet_address: Wallet,
    /// At least `min_balance` held for `required_hold_days`.
    pub holder: bool,
    /// Base units in the wallet's associated token account, as a decimal string.
    pub balance: String,
    pub min_balance: String,
    /// Since when it has held at least the minimum (at least since then when the hold is older
    /// than the period looked at); `null` when it does not hold it.
    pub held_since: Option<String>,
    /// Whole days of that hold.
    pub held_days: i64,
    pub required_hold_days: i64,
    pub boosts: HolderBoostsBody,
}

refusals! {
    ReadRefusals: [400];
    /// A method the chain lacks (400 `method_not_available`).
    InitiateRefusals: [400, 413];
    /// A token the provider refuses (400 `idpass_invalid`); the provider unreachable (503
    /// `idpass_unavailable`).
    IdPassRefusals: [400, 413, 503];
    /// The provider unreachable (503 `passport_unavailable`).
    PassportRefusals: [400, 503];
    SasRefusals: [400, 413];
    /// The ledger unreachable (503 `ledger_unavailable`).
    LedgerRefusals: [400, 503];
    /// Without the shared webhook secret (401); the source unreachable (503).
    ConfirmRefusals: [400, 413, 503];
    /// No loyalty token configured (503 `holder_check_unavailable`); the ledger unreachable.
    HolderRefusals: [400, 503];
}

fn verification(record: &verify::Record) -> Verification {
    Verification {
        idpass_verified: record.idpass_verified,
        passport_score: record.passport_score,
        passport_verified: record.passport_verified,
        sas_verified: record.sas_verified,
    }
}

#[OpenApi(tag = "Tag::Verify")]
impl VerifyApi {
    /// The wallet's verification record, its chain's methods and what to do next.
    #[oai(path = "/verify/status/:wallet", method = "get")]
    async fn status(&self, wallet: Path<ChainAddress>) -> Answer<Json<VerifyStatus>, ReadRefusals> {
        let address = wallet.0;
        let record = verify::record(&self.state, &address).await?;
        Ok(Json(VerifyStatus {
            ok: true,
            chain: address.chain().to_owned(),
            available_methods: verify::available_methods(&address).to_vec(),
            verification: verification(&record),
            fully_verified: record.fully_verified(),
            recommended_method: record.recommended_method(&address),
            wallet: address,
        }))
    }

    /// The flow of a verification method for the wallet.
    #[oai(path = "/verify/initiate", method = "post")]
    async fn initiate(
        &self,
        body: Json<InitiateRequest>,
    ) -> Answer<Json<Initiated>, InitiateRefusals> {
        let body = body.0;
        let flow = verify::initiate(&self.state, &body.wallet, body.preferred_method).await?;
        Ok(Json(Initiated {
            ok: true,
            chain: body.wallet.chain().to_owned(),
            flow: VerifyFlow {
                method: flow.method,
                url: flow.url,
                callback: flow.callback,
                kind: flow.kind.to_owned(),
                description: flow.description.to_owned(),
            },
        }))
    }

    /// Check an identity pass token with the provider: a live pass issued to the wallet
    /// verifies it.
    #[oai(path = "/verify/idpass", method = "post")]
    async fn idpass(
        &self,
        req: &Request,
        body: Json<IdPassRequest>,
    ) -> Answer<Json<IdPassVerified>, IdPassRefusals> {
        let body = body.0;
        let pass = verify::idpass_for(
            &self.state,
            client_ip(req),
            &body.wallet_address,
            body.token.as_str(),
        )
        .await?;
        Ok(Json(IdPassVerified {
            ok: true,
            wallet_address: body.wallet_address,
            method: VerifyMethod::IdPass,
            verified: true,
            pass_id: pass.pass_id,
            expires_at: pass.expires_at.map(iso),
        }))
    }

    /// The wallet's passport score, asked of the provider now; the check passes at 20.
    #[oai(path = "/verify/passport/:wallet", method = "get")]
    async fn passport(
        &self,
        req: &Request,
        wallet: Path<ChainAddress>,
    ) -> Answer<Json<PassportScore>, PassportRefusals> {
        let score = verify::passport_for(&self.state, client_ip(req), &wallet.0).await?;
        Ok(Json(PassportScore {
            ok: true,
            verified: verify::passport_passes(score),
            score,
            wallet_address: wallet.0,
        }))
    }

    /// Ask for SAS verification: 503 `coming_soon` (spec 7); the request is kept (spec 4.8:
    /// "records intent"), and `recorded` says whether it was new.
    #[oai(path = "/verify/sas", method = "post")]
    async fn sas(&self, body: Json<SasRequest>) -> Answer<SasAnswer, SasRefusals> {
        let body = body.0;
        let recorded = verify::request_sas(
            &self.state,
            &body.wallet_address,
            body.attestation_id.as_ref(),
        )
        .await?;
        Ok(SasAnswer::ComingSoon(Json(SasRequested {
            error: "coming_soon".to_owned(),
            message: "SAS verification is coming soon; your request is kept".to_owned(),
            feature: "coming_soon".to_owned(),
            wallet_address: body.wallet_address,
            recorded,
        })))
    }

    /// The wallet's Solana Attestation Service attestations under the trusted credentials and
    /// schemas, read from the ledger.
    #[oai(path = "/verify/sas/attestations/:wallet", method = "get")]
    async fn sas_attestations(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<SasAttestations>, LedgerRefusals> {
        use base64::Engine;
        let now = self.state.now();
        let found = verify::attestations(&self.state, &wallet.0).await?;
        Ok(Json(SasAttestations {
            ok: true,
            wallet_address: wallet.0,
            attestations: found
                .into_iter()
                .map(|a| SasAttestation {
                    live: a.is_live(now),
                    address: a.address.to_string(),
                    credential: a.credential.to_string(),
                    schema: a.schema.to_string(),
                    signer: a.signer.to_string(),
                    expires_at: (a.expiry != 0).then(|| iso(a.expiry)),
                    data: base64::engine::general_purpose::STANDARD.encode(&a.data),
                })
                .collect(),
        }))
    }

    /// The verification providers' callback (shared webhook secret): the service asks the
    /// method's source again (the identity pass provider with `verification_id`, the passport
    /// provider, the ledger's attestations) and records what it says.
    #[oai(path = "/verify/confirm", method = "post")]
    async fn confirm(
        &self,
        _auth: WebhookAuth,
        body: Json<ConfirmVerification>,
    ) -> Answer<Json<VerificationConfirmed>, ConfirmRefusals> {
        let ConfirmVerification {
            wallet_address,
            method,
            verification_id,
            chain: named_chain,
        } = body.0;
        let verified = verify::confirm(
            &self.state,
            &wallet_address,
            named_chain.as_ref().map(Text::as_str),
            method,
            verification_id.as_ref().map(Text::as_str),
        )
        .await?;
        Ok(Json(VerificationConfirmed {
            ok: true,
            wallet_address,
            method,
            verified,
        }))
    }

    /// Whether the wallet holds the loyalty token (at least the minimum for 45 days), read from
    /// the ledger, and the boosts that unlocks.
    #[oai(path = "/verify/holder/:wallet", method = "get")]
    async fn holder(
        &self,
        req: &Request,
        wallet: Path<Wallet>,
    ) -> Answer<Json<HolderStatus>, HolderRefusals> {
        let check = verify::check_holder(&self.state, client_ip(req), &wallet.0).await?;
        Ok(Json(HolderStatus {
            ok: true,
            wallet_address: wallet.0,
            holder: check.qualifies,
            balance: check.holding.balance.to_string(),
            min_balance: check.minimum.to_string(),
            held_since: check.holding.held_since.map(iso),
            held_days: check.held_days,
            required_hold_days: HOLD_DAYS,
            boosts: HolderBoostsBody {
                echo_pool_ticket_boost_bps: check.boosts.echo_pool_ticket_boost_bps,
                deposit_fee_discount_bps: check.boosts.deposit_fee_discount_bps,
            },
        }))
    }
}
