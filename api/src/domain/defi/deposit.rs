//! A deposit into a venue (spec 3.3): prepare routes the token to a live venue and builds the
//! wallet's transactions; the one that moves the money is stored through the prepare → confirm
//! runner, and its id is the `backing_id`. Confirm verifies on the ledger that it landed from
//! that wallet with the prepared instructions, then records the position with the venue's
//! exchange rate read after it landed. Set-up transactions before it (Kamino's user metadata
//! and obligation) record nothing: the deposit cannot land without them.

use narrative_sdk::Pubkey;
use narrative_store::entities::defi_positions;
use poem::http::StatusCode;
use sea_orm::{ActiveValue::Set, DatabaseConnection, DatabaseTransaction, EntityTrait};
use serde::{Deserialize, Serialize};

use super::venues::{refuses_as_it_stands, Bought, Deposit, SharedVenue, VenueToken};
use super::{ensure_minimum, lamports_of, rate_strings};
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    Base58Signature, Component, MintAddress, NarrativeId, PreparedId, TokenSymbol, UiAmount,
    VenueId, Wallet,
};

/// What a deposit prepare is asked.
pub struct DepositRequest {
    pub wallet: Wallet,
    pub token: TokenSymbol,
    pub amount: UiAmount,
    /// An explicit venue; automatic routing otherwise.
    pub protocol: Option<VenueId>,
    pub narrative_id: Option<NarrativeId>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub protocol: VenueId,
    pub token_symbol: TokenSymbol,
    pub mint: MintAddress,
    pub amount_base: u64,
    pub amount_lamports: u64,
    pub narrative_id: Option<NarrativeId>,
}

/// The transactions for the wallet, in order; the last is the stored one.
pub struct PreparedDeposit {
    pub setup: Vec<String>,
    pub deposit: Unsigned,
    pub params: Params,
    /// Where the venue credits the deposit's receipt (the wallet's receipt-token account, or
    /// its obligation).
    pub receipt_account: Pubkey,
}

pub struct Recorded {
    pub position: defi_positions::Model,
}

/// The deposit flow; `bought` is what the venue credited, read before the confirm records,
/// `versioned` whether the venue takes versioned transactions (at prepare).
pub struct DefiDeposit {
    pub bought: Option<Bought>,
    pub versioned: bool,
}

pub async fn prepare(
    state: &AppState,
    request: DepositRequest,
) -> Result<PreparedDeposit, ApiError> {
    let venues = &state.defi;
    let candidates = match request.protocol {
        Some(id) => vec![venues.live(id)?],
        None => {
            let board = super::apys::read(state).await;
            venues.ranked(request.token, |id| board.apy(id, request.token))?
        }
    };
    // Every venue's token of a symbol has the mint's decimals; the best venue's is parsed with.
    let decimals = venues.token(candidates[0], request.token)?.decimals;
    let amount_base = request
        .amount
        .to_base_units(decimals)
        .map_err(|e| ApiError::validation(format!("amount {e}")))?;
    let sol_usd = super::sol_usd_for(state, request.token).await?;
    ensure_minimum(request.token, amount_base, sol_usd)?;
    if let Some(narrative) = request.narrative_id {
        crate::domain::narratives::feed::get(state, narrative).await?;
    }
    let wallet = request.wallet.pubkey();
    let (venue, token, built) =
        first_taking(state, &candidates, request.token, &wallet, amount_base).await?;
    let Deposit {
        mut transactions,
        receipt_account,
    } = built;
    let money = transactions
        .pop()
        .ok_or_else(|| ApiError::internal("a venue built no deposit"))?;
    let params = Params {
        protocol: venue.id(),
        token_symbol: request.token,
        mint: MintAddress::from(token.mint),
        amount_base,
        amount_lamports: lamports_of(request.token, amount_base, sol_usd),
        narrative_id: request.narrative_id,
    };
    let blockhash = state.chain.blockhash().await?;
    let setup = super::venues::unsigned_setup(&transactions, &wallet, blockhash);
    let deposit = state
        .chain
        .prepare(
            &DefiDeposit {
                bought: None,
                versioned: venue.versioned(),
            },
            &request.wallet,
            &money,
            &params,
        )
        .await?;
    Ok(PreparedDeposit {
        setup,
        deposit,
        params,
        receipt_account,
    })
}

/// The deposit built at the first of `candidates` (best first) that takes it as it stands: a
/// venue that would refuse it (full, paused, ...) passes it to the next, and when every one
/// refuses, the best one's refusal is the answer. Any other failure (the node, the wallet's
/// funds) is answered at once.
async fn first_taking<'v>(
    state: &AppState,
    candidates: &[&'v SharedVenue],
    symbol: TokenSymbol,
    wallet: &Pubkey,
    amount_base: u64,
) -> Result<(&'v SharedVenue, VenueToken, Deposit), ApiError> {
    let mut first_refusal = None;
    for venue in candidates {
        let token = state.defi.token(venue, symbol)?;
        match venue
            .deposit(state.chain.ledger.as_ref(), wallet, &token, amount_base)
            .await
        {
            Ok(built) => return Ok((venue, token, built)),
            Err(refused) if refuses_as_it_stands(&refused) => {
                first_refusal.get_or_insert(refused);
            }
            Err(error) => return Err(error),
        }
    }
    Err(first_refusal.unwrap_or_else(|| ApiError::internal("no venue to deposit into")))
}

/// Confirms a deposit: the runner's steps, with what it bought read from the venue between the
/// landing and the record.
pub async fn confirm(
    state: &AppState,
    backing_id: PreparedId,
    wallet: &Wallet,
    signature: Base58Signature,
) -> Result<Recorded, ApiError> {
    let opened = state
        .chain
        .open::<DefiDeposit>(backing_id, &signature)
        .await?;
    if opened.prepared().wallet != *wallet {
        return Err(not_yours());
    }
    let landing = DefiDeposit {
        bought: None,
        versioned: false,
    };
    // What it bought is read once it landed, not before: until then the venue holds the rate
    // of its last refresh, and the deposit's own refresh moves it, so a receipt read from the
    // older rate would be more than was minted (a wallet confirms while its transaction is on
    // the way, and the confirm waits for it).
    let recording = async |_, prepared: &Prepared<Params>| {
        let venue = state.defi.live(prepared.params.protocol)?;
        let token = state.defi.token(venue, prepared.params.token_symbol)?;
        let bought = venue
            .bought(
                state.chain.ledger.as_ref(),
                &token,
                prepared.params.amount_base,
            )
            .await?;
        Ok(DefiDeposit {
            bought: Some(bought),
            versioned: false,
        })
    };
    state
        .chain
        .confirm_landed(&landing, opened, signature, recording)
        .await
}

/// 403 `not_backing_owner`: the backing belongs to another wallet.
pub fn not_yours() -> ApiError {
    ApiError::coded(
        StatusCode::FORBIDDEN,
        "not_backing_owner",
        "this backing belongs to another wallet",
    )
}

#[async_trait::async_trait]
impl MoneyFlow for DefiDeposit {
    const KIND: &'static str = "defi_deposit";
    type Params = Params;
    type Confirmed = Recorded;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn versioned(&self, _: &Params) -> bool {
        self.versioned
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        // The venues' accounts are not indexed; reads go to the ledger through the rate cache.
        vec![]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let Bought { rate, receipt } = self
            .bought
            .ok_or_else(|| ApiError::internal("a deposit recorded without its receipt"))?;
        let p = &prepared.params;
        let (rate_liquidity, rate_receipt) = rate_strings(&rate);
        let int = |v: u64| i64::try_from(v).map_err(ApiError::internal);
        defi_positions::Entity::insert(defi_positions::ActiveModel {
            id: Set(prepared.id.to_string()),
            wallet: Set(prepared.wallet.to_string()),
            protocol: Set(p.protocol.to_string()),
            token_symbol: Set(p.token_symbol.to_string()),
            mint: Set(p.mint.to_string()),
            amount_base: Set(int(p.amount_base)?),
            amount_lamports: Set(int(p.amount_lamports)?),
            receipt_amount: Set(int(receipt)?),
            rate_liquidity: Set(rate_liquidity),
            rate_receipt: Set(rate_receipt),
            narrative_id: Set(p.narrative_id.map(|n| n.to_string())),
            status: Set("confirmed".into()),
            deposit_signature: Set(signature.to_string()),
            withdraw_signature: Set(None),
            withdrawn_base: Set(None),
            created_at: Set(now),
            withdrawn_at: Set(None),
        })
        .exec_without_returning(txn)
        .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Recorded, ApiError> {
        let position = defi_positions::Entity::find_by_id(prepared.id.to_string())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a confirmed deposit without its position"))?;
        Ok(Recorded { position })
    }
}
