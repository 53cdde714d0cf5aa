//! Withdrawing a backing (spec 4.5): only its own wallet, only from a venue that takes
//! withdrawals (`stake_a` answers 503 `jito_unstake_not_supported`), once. The receipt units
//! redeemed are the ones the deposit bought; the wallet's last open position at a venue also
//! redeems the dust its recorded receipt leaves (at most a tenth of a per cent more), never what
//! the wallet holds beyond that. Confirm verifies the
//! transaction on the ledger, then marks the position withdrawn with what it paid.

use narrative_sdk::Pubkey;
use narrative_store::entities::defi_positions;
use poem::http::StatusCode;
use sea_orm::{
    ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};

use super::deposit::not_yours;
use super::venues::Withdrawals;
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, PreparedId, TokenSymbol, VenueId, Wallet};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub backing_id: PreparedId,
    pub protocol: VenueId,
    pub token_symbol: TokenSymbol,
    pub receipt_amount: u64,
    /// What redeeming the receipt paid when prepared, in base units: its value at the venue's
    /// rate less the venue's exit fee (`Venue::payout`).
    pub expected_base: u64,
}

pub struct PreparedWithdrawal {
    pub setup: Vec<String>,
    pub withdrawal: Unsigned,
    pub params: Params,
}

pub struct Withdrawn {
    pub position: defi_positions::Model,
    pub signature: Base58Signature,
}

/// The withdrawal flow; `versioned` whether the venue takes versioned transactions (at
/// prepare; a confirm reads either kind).
pub struct DefiWithdrawal {
    pub versioned: bool,
}

/// The position `backing_id` of `wallet`, open.
async fn open_position(
    state: &AppState,
    backing_id: PreparedId,
    wallet: &Wallet,
) -> Result<defi_positions::Model, ApiError> {
    let position = defi_positions::Entity::find_by_id(backing_id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("backing"))?;
    if position.wallet != wallet.to_string() {
        return Err(not_yours());
    }
    if position.status != "confirmed" {
        return Err(already_withdrawn());
    }
    Ok(position)
}

/// The wallet's open backing at `venue` of `symbol` whose deposit was `amount_base`, the
/// oldest when several were: the per-venue withdrawals of spec 4.5 take an amount, and a
/// backing is withdrawn whole, so the amount names the backing (docs/decisions.md).
pub async fn backing_of_amount(
    state: &AppState,
    wallet: &Wallet,
    venue: VenueId,
    symbol: TokenSymbol,
    amount_base: u64,
) -> Result<PreparedId, ApiError> {
    state.defi.live(venue)?;
    let amount = i64::try_from(amount_base)
        .map_err(|_| ApiError::not_found("open backing of this amount at this venue"))?;
    defi_positions::Entity::find()
        .filter(defi_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(defi_positions::Column::Protocol.eq(venue.to_string()))
        .filter(defi_positions::Column::TokenSymbol.eq(symbol.to_string()))
        .filter(defi_positions::Column::Status.eq("confirmed"))
        .filter(defi_positions::Column::AmountBase.eq(amount))
        .order_by_asc(defi_positions::Column::CreatedAt)
        .order_by_asc(defi_positions::Column::Id)
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("open backing of this amount at this venue"))?
        .id
        .parse()
        .map_err(ApiError::internal)
}

/// The most a wallet's last open backing at a venue redeems: what it bought, and a tenth of a
/// per cent more. Its recorded receipt is the deposit at the rate read at its confirm, a little
/// under what was minted when interest accrued in between, so the last withdrawal takes that
/// dust too. Beyond it, what the wallet holds came from elsewhere (a later deposit not yet
/// confirmed, receipt tokens bought outside) and is not this backing's to redeem.
fn with_dust(bought: u64) -> u64 {
    bought.saturating_add(bought / 1_000).saturating_add(1)
}

fn already_withdrawn() -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "already_withdrawn",
        "this backing was withdrawn already",
    )
}

/// [`prepare`] for a per-venue withdrawal whose body names the backing and its amount in SOL
/// (`lend_a/withdraw`'s `receipt` and `amount_sol`): 400 `unsupported_protocol` for a backing
/// made at another venue, 400 when `amount_lamports` is not the backing's amount in SOL as the
/// allocation shows it (its deposit for a SOL backing, the deposit's value in SOL when it was
/// made for another token). A backing is withdrawn whole, so a smaller amount is refused rather
/// than taken as the whole.
pub async fn prepare_named(
    state: &AppState,
    backing_id: PreparedId,
    wallet: Wallet,
    venue: VenueId,
    amount_lamports: u64,
) -> Result<PreparedWithdrawal, ApiError> {
    let position = open_position(state, backing_id, &wallet).await?;
    if position.protocol != venue.as_str() {
        return Err(super::unsupported(
            venue,
            &format!("withdrawing a backing made at {}", position.protocol),
        ));
    }
    let backing_lamports = u64::try_from(position.amount_lamports).map_err(ApiError::internal)?;
    if backing_lamports != amount_lamports {
        return Err(ApiError::validation(format!(
            "amount_sol: this backing is {} SOL, and a backing is withdrawn whole",
            crate::values::sol_u64(backing_lamports)
        )));
    }
    prepare_open(state, position, wallet).await
}

pub async fn prepare(
    state: &AppState,
    backing_id: PreparedId,
    wallet: Wallet,
) -> Result<PreparedWithdrawal, ApiError> {
    let position = open_position(state, backing_id, &wallet).await?;
    prepare_open(state, position, wallet).await
}

/// Prepares the withdrawal of `position`, open and `wallet`'s.
async fn prepare_open(
    state: &AppState,
    position: defi_positions::Model,
    wallet: Wallet,
) -> Result<PreparedWithdrawal, ApiError> {
    let backing_id: PreparedId = position.id.parse().map_err(ApiError::internal)?;
    let protocol: VenueId = position.protocol.parse().map_err(ApiError::internal)?;
    let symbol: TokenSymbol = position.token_symbol.parse().map_err(ApiError::internal)?;
    let venue = state.defi.live(protocol)?;
    if let Withdrawals::Refused(_) = venue.withdrawals() {
        return Err(super::unstake_refused());
    }
    let token = state.defi.token(venue, symbol)?;
    let ledger = state.chain.ledger.as_ref();
    let held = venue
        .receipt_balance(ledger, &wallet.pubkey(), &token)
        .await?;
    let others_open = defi_positions::Entity::find()
        .filter(defi_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(defi_positions::Column::Protocol.eq(protocol.to_string()))
        .filter(defi_positions::Column::TokenSymbol.eq(symbol.to_string()))
        .filter(defi_positions::Column::Status.eq("confirmed"))
        .filter(defi_positions::Column::Id.ne(position.id.clone()))
        .count(state.store.db())
        .await?;
    let bought = u64::try_from(position.receipt_amount).map_err(ApiError::internal)?;
    let receipt = if others_open == 0 && held <= with_dust(bought) {
        held
    } else {
        bought.min(held)
    };
    if receipt == 0 {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "nothing_to_withdraw",
            "the wallet holds none of this venue's receipt any more",
        ));
    }
    let expected_base = venue.payout(ledger, &token, receipt).await?;
    let mut transactions = venue
        .withdraw(ledger, &wallet.pubkey(), &token, receipt)
        .await?;
    let money = transactions
        .pop()
        .ok_or_else(|| ApiError::internal("a venue built no withdrawal"))?;
    let params = Params {
        backing_id,
        protocol,
        token_symbol: symbol,
        receipt_amount: receipt,
        expected_base,
    };
    let blockhash = state.chain.blockhash().await?;
    let setup = super::venues::unsigned_setup(&transactions, &wallet.pubkey(), blockhash);
    let withdrawal = state
        .chain
        .prepare(
            &DefiWithdrawal {
                versioned: venue.versioned(),
            },
            &wallet,
            &money,
            &params,
        )
        .await?;
    Ok(PreparedWithdrawal {
        setup,
        withdrawal,
        params,
    })
}

/// Which prepared withdrawal a confirm names: the one given, else the one this signature
/// confirmed already (a replay), else the wallet's unconfirmed withdrawal of the backing that
/// the signature landed, or its newest (spec 4.5's confirm body names only the backing).
async fn withdrawal_for(
    state: &AppState,
    given: Option<PreparedId>,
    backing_id: PreparedId,
    wallet: &Wallet,
    signature: &Base58Signature,
) -> Result<PreparedId, ApiError> {
    prepared_of::<DefiWithdrawal>(state, given, wallet, signature, |p| {
        p.backing_id == backing_id
    })
    .await?
    .ok_or_else(|| ApiError::not_found("prepared withdrawal of this backing"))
}

/// The prepared `F` a confirm means when it may not name it: `given` when named; else the one
/// `signature` confirmed already (a replay); else, of the wallet's unconfirmed ones whose
/// parameters `matches`, the one whose instructions `signature` landed: the one its memo names,
/// however many were prepared for the wallet since (anyone may ask for a prepare naming any
/// wallet), else among its 50 newest (rows from before the memo); the newest of those when none
/// was landed (the runner then answers why).
pub async fn prepared_of<F: MoneyFlow>(
    state: &AppState,
    given: Option<PreparedId>,
    wallet: &Wallet,
    signature: &Base58Signature,
    matches: impl Fn(&F::Params) -> bool,
) -> Result<Option<PreparedId>, ApiError> {
    use narrative_store::entities::prepared_transactions as rows;
    use sea_orm::QueryOrder;
    if let Some(id) = given {
        return Ok(Some(id));
    }
    let db = state.store.db();
    let matching = |found: Vec<rows::Model>| -> Vec<rows::Model> {
        found
            .into_iter()
            .filter(|row| {
                serde_json::from_value::<F::Params>(row.params.clone()).is_ok_and(|p| matches(&p))
            })
            .collect()
    };
    let chosen = |mut rows: Vec<rows::Model>, at: usize| -> Result<Option<PreparedId>, ApiError> {
        rows.swap_remove(at)
            .id
            .parse()
            .map(Some)
            .map_err(ApiError::internal)
    };
    let by_signature = rows::Entity::find()
        .filter(rows::Column::Signature.eq(signature.to_string()))
        .filter(rows::Column::Kind.eq(F::KIND))
        .one(db)
        .await?;
    if let Some(row) = by_signature {
        let replayed = matching(vec![row]);
        return if replayed.is_empty() {
            Ok(None)
        } else {
            chosen(replayed, 0)
        };
    }
    let unconfirmed = || {
        rows::Entity::find()
            .filter(rows::Column::Kind.eq(F::KIND))
            .filter(rows::Column::Wallet.eq(wallet.to_string()))
            .filter(rows::Column::Signature.is_null())
            .order_by_desc(rows::Column::CreatedAt)
    };
    if let Some(landed) = state.chain.landed_now(signature).await? {
        let signed = state.chain.signed_as::<F>(wallet, &landed).await?;
        let signed = matching(signed.into_iter().collect());
        if !signed.is_empty() {
            return chosen(signed, 0);
        }
    }
    let newest = matching(unconfirmed().limit(50).all(db).await?);
    if newest.is_empty() {
        return Ok(None);
    }
    // A wallet that prepared again (a retry, a second tab) may have signed an older one, and
    // the two differ when a balance or a rate moved in between: the ledger says which.
    let at = if newest.len() > 1 {
        state
            .chain
            .carried_by(&newest, signature)
            .await?
            .unwrap_or(0)
    } else {
        0
    };
    chosen(newest, at)
}

/// Confirms a withdrawal of `backing_id` by `wallet` (the prepared one named, or found).
pub async fn confirm(
    state: &AppState,
    withdrawal_id: Option<PreparedId>,
    backing_id: PreparedId,
    wallet: &Wallet,
    signature: Base58Signature,
) -> Result<Withdrawn, ApiError> {
    let prepared_id = withdrawal_for(state, withdrawal_id, backing_id, wallet, &signature).await?;
    let opened = state
        .chain
        .open::<DefiWithdrawal>(prepared_id, &signature)
        .await?;
    let prepared = opened.prepared();
    if prepared.wallet != *wallet {
        return Err(not_yours());
    }
    if prepared.params.backing_id != backing_id {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "backing_mismatch",
            "this withdrawal was prepared for another backing",
        ));
    }
    state
        .chain
        .confirm(&DefiWithdrawal { versioned: false }, prepared_id, signature)
        .await
}

#[async_trait::async_trait]
impl MoneyFlow for DefiWithdrawal {
    const KIND: &'static str = "defi_withdrawal";
    type Params = Params;
    type Confirmed = Withdrawn;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn versioned(&self, _: &Params) -> bool {
        self.versioned
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        vec![]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        use sea_orm::sea_query::Expr;
        let p = &prepared.params;
        let updated = defi_positions::Entity::update_many()
            .col_expr(defi_positions::Column::Status, Expr::value("withdrawn"))
            .col_expr(
                defi_positions::Column::WithdrawSignature,
                Expr::value(Some(signature.to_string())),
            )
            .col_expr(
                defi_positions::Column::WithdrawnBase,
                Expr::value(Some(
                    i64::try_from(p.expected_base).map_err(ApiError::internal)?,
                )),
            )
            .col_expr(defi_positions::Column::WithdrawnAt, Expr::value(Some(now)))
            .filter(defi_positions::Column::Id.eq(p.backing_id.to_string()))
            .filter(defi_positions::Column::Wallet.eq(prepared.wallet.to_string()))
            .filter(defi_positions::Column::Status.eq("confirmed"))
            .exec(txn)
            .await?;
        if updated.rows_affected != 1 {
            // Another withdrawal of the same backing recorded first: this one rolls back.
            return Err(already_withdrawn());
        }
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Withdrawn, ApiError> {
        let position = defi_positions::Entity::find_by_id(prepared.params.backing_id.to_string())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a withdrawn backing vanished"))?;
        let signature = prepared
            .signature
            .ok_or_else(|| ApiError::internal("answering an unconfirmed withdrawal"))?;
        Ok(Withdrawn {
            position,
            signature,
        })
    }
}
