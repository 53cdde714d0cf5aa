//! `POST /v1/markets` and its confirm (spec 4.13 market creation).

use std::sync::Arc;

use poem::Request;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::markets::creation::{self, CreateMarket, Seed, Variant};
use crate::error::{refusals, Answer};
use crate::http::client_ip::client_ip;
use crate::routes::{ConfirmRefusals, ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{Base58Signature, PreparedId, Text, UnixSeconds, Wallet};

pub struct MarketsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct CreateMarketRequest {
    /// Human-verification token (Turnstile, at most 2,048 characters).
    pub cf_token: Option<Text<2048, 0>>,
    /// The creator's ed25519 signature (base58) of
    /// `narrative-market-service:create-market:<variant>:<deadline>:<seed_yes_lamports>:<seed_no_lamports>:<fee_tx_signature>:<question>:issued-at:<issued_at>`
    /// (the seeds in lamports, 0 when absent; the question without the ASCII whitespace around
    /// it, as the service holds it).
    pub signature: Option<Base58Signature>,
    /// When the creator signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: Option<UnixSeconds>,
    /// Signature of the confirmed fee payment to the treasury.
    pub fee_tx_signature: Option<Base58Signature>,
    pub variant: Variant,
    /// A falsifiable YES/NO question.
    pub question: Text<500>,
    /// Unix seconds, at least an hour ahead.
    pub deadline: UnixSeconds,
    /// Seed liquidity in SOL (Yield markets; an ordinary backing by the creator).
    pub seed_yes: Option<Seed>,
    pub seed_no: Option<Seed>,
    /// The creator's wallet; the fee transaction's payer when omitted.
    pub creator: Option<Wallet>,
}

#[derive(Object)]
pub struct MarketPrepared {
    pub ok: bool,
    /// The market's UUID (its on-chain `market_id` is derived from it).
    pub market_id: String,
    pub variant: Variant,
    pub question: String,
    pub deadline: String,
    pub creator: Wallet,
    /// `ready_to_confirm`: sign and send `transaction`, then `POST /v1/markets/confirm`.
    pub status: String,
    pub transaction: String,
    pub prepared_id: PreparedId,
    pub fee_lamports: u64,
}

#[derive(ApiResponse)]
pub enum MarketCreated {
    /// The market's creation transaction, ready for the creator to sign.
    #[oai(status = 201)]
    Created(Json<MarketPrepared>),
}

#[derive(Object)]
pub struct MarketConfirmed {
    pub ok: bool,
    pub market_id: String,
    /// `open` (Yield) or `pending_review` (Classic, until an admin approves it).
    pub status: String,
    pub address: String,
    pub signature: Base58Signature,
}

refusals! {
    CreateRefusals: [400, 409, 413, 503];
}

#[OpenApi(prefix_path = "/markets", tag = "Tag::Markets")]
impl MarketsApi {
    /// Create a native binary market: human verification, the creator's signature over the
    /// request, and the creation fee paid to the treasury, verified on the ledger.
    #[oai(path = "/", method = "post")]
    async fn create(
        &self,
        req: &Request,
        body: Json<CreateMarketRequest>,
    ) -> Answer<MarketCreated, CreateRefusals> {
        let body = body.0;
        let request = CreateMarket {
            cf_token: body.cf_token.and_then(Text::non_empty),
            signature: body.signature,
            issued_at: body.issued_at,
            fee_tx_signature: body.fee_tx_signature,
            variant: body.variant,
            question: body.question.into_string(),
            deadline: body.deadline,
            seed_yes: body.seed_yes.map_or(0, Seed::lamports),
            seed_no: body.seed_no.map_or(0, Seed::lamports),
            creator: body.creator,
        };
        let (variant, question, deadline) =
            (request.variant, request.question.clone(), request.deadline);
        let prepared = creation::create(&self.state, request, client_ip(req)).await?;
        Ok(MarketCreated::Created(Json(MarketPrepared {
            ok: true,
            market_id: prepared.market_id.to_string(),
            variant,
            question,
            deadline: iso(deadline.get()),
            creator: prepared.creator,
            status: "ready_to_confirm".into(),
            transaction: prepared.unsigned.transaction,
            prepared_id: prepared.unsigned.id,
            fee_lamports: prepared.fee_lamports,
        })))
    }

    /// Confirm the signed creation transaction: a Yield market opens, a Classic one waits for
    /// admin review.
    #[oai(path = "/confirm", method = "post")]
    async fn confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<MarketConfirmed>, ConfirmRefusals> {
        let confirmed =
            creation::confirm(&self.state, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(MarketConfirmed {
            ok: true,
            address: confirmed.address.to_string(),
            market_id: confirmed.creation.market_id,
            status: confirmed.creation.status,
            signature: confirmed.signature,
        }))
    }
}
