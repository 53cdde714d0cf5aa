//! A borrow (spec 4.7): prepare checks the gates (borrowing enabled, the terms accepted, the
//! tier's venue access, the amount within capacity) and builds the venue's borrow transaction
//! through the prepare → confirm runner; confirm verifies on the ledger that it landed from that
//! wallet with the prepared instructions, re-checks the gates that can close meanwhile, and
//! records the open position. The venue keeps one debt per token per loan account, so a wallet
//! has at most one open borrow per venue and token: a second is refused until it is repaid.

use narrative_sdk::Pubkey;
use narrative_store::entities::borrow_positions;
use poem::http::StatusCode;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    PaginatorTrait, QueryFilter,
};
use serde::{Deserialize, Serialize};

use super::capacity::{self, Capacity};
use super::simulate::lending_venue;
use super::{bps_fraction, may_borrow_from, rates, terms};
use crate::chain::venues::{Lender, SharedVenue, VenueToken, Venues};
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::defi::venues::unsigned_setup;
use crate::domain::profiles::conviction::Tier;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    Base58Signature, Component, MintAddress, PreparedId, TokenSymbol, UsdAmount, VenueId, Wallet,
};

/// What a borrow prepare is asked.
pub struct BorrowRequest {
    pub wallet: Wallet,
    pub protocol: VenueId,
    pub asset: TokenSymbol,
    /// When given, the asset's mint on this cluster (400 otherwise).
    pub asset_mint: Option<MintAddress>,
    pub amount_usd: UsdAmount,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub protocol: VenueId,
    pub asset: TokenSymbol,
    pub mint: MintAddress,
    pub amount_base: u64,
    pub amount_usd_micros: i64,
    pub borrow_apy: f64,
    pub max_ltv_bps: u32,
    pub tier: String,
    pub obligation: String,
}

/// A prepared borrow: the set-up transactions (none today) and the stored one.
pub struct PreparedBorrow {
    pub setup: Vec<String>,
    pub borrow: Unsigned,
    pub params: Params,
    pub capacity: Capacity,
    pub amount_usd: f64,
}

impl PreparedBorrow {
    pub fn collateral_required_usd(&self) -> f64 {
        self.amount_usd / bps_fraction(self.params.max_ltv_bps)
    }

    /// The wallet's collateral over all it would owe with this borrow.
    pub fn estimated_health_factor(&self) -> f64 {
        self.capacity.collateral_usd / (self.capacity.total_borrowed_usd + self.amount_usd)
    }
}

/// The borrow flow; `landed_slot` is the slot the borrow landed in, read before the confirm
/// records.
#[derive(Default)]
pub struct BorrowFlow {
    pub landed_slot: Option<u64>,
}

/// 503 `borrow_disabled` (spec 4.7) unless `BORROW_ENABLED`.
pub fn ensure_enabled(state: &AppState) -> Result<(), ApiError> {
    if state.borrow_enabled {
        Ok(())
    } else {
        Err(ApiError::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "borrow_disabled",
            "borrowing is not enabled on this deployment",
        ))
    }
}

/// 403 `terms_not_accepted` (spec 4.7) until the wallet accepted the borrow terms.
async fn ensure_terms(state: &AppState, wallet: &Wallet) -> Result<(), ApiError> {
    match terms::accepted_at(state, wallet).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "terms_not_accepted",
            "accept the borrow terms first (POST /v1/borrow/accept-terms)",
        )),
    }
}

/// 403 with the tier the venue needs: `ember_required` below ember, `flare_required` for a
/// venue of the flare tier and up.
pub fn ensure_tier(tier: Tier, venue: VenueId) -> Result<(), ApiError> {
    if may_borrow_from(tier, venue) {
        return Ok(());
    }
    let needed = if tier < Tier::Ember {
        Tier::Ember
    } else {
        Tier::Flare
    };
    Err(ApiError::coded(
        StatusCode::FORBIDDEN,
        &format!("{}_required", needed.name()),
        format!(
            "borrowing from {venue} needs the {} tier (conviction score {}+); the wallet is {}",
            needed.name(),
            needed.min_score(),
            tier.name()
        ),
    ))
}

/// The live venue as a lender, and its token of `asset`.
pub fn lender(
    state: &AppState,
    protocol: VenueId,
    asset: TokenSymbol,
) -> Result<(&SharedVenue, VenueToken), ApiError> {
    lender_in(&state.defi, protocol, asset)
}

/// [`lender`] among `venues`.
pub fn lender_in(
    venues: &Venues,
    protocol: VenueId,
    asset: TokenSymbol,
) -> Result<(&SharedVenue, VenueToken), ApiError> {
    let venue = venues.live(lending_venue(protocol)?)?;
    if venue.lender().is_none() {
        return Err(crate::domain::defi::unsupported(protocol, "borrowing"));
    }
    let token = venues.token(venue, asset)?;
    Ok((venue, token))
}

/// `usd_micros` (the micro-dollars the borrow records) of `asset` in its base units: USDC at
/// par, exactly (a micro-dollar is its base unit, so `2.01` is 2,010,000 and never a float's
/// 2,009,999); SOL at `sol_usd`, rounded down.
fn base_units(asset: TokenSymbol, usd_micros: i64, sol_usd: f64) -> u64 {
    let micros = u64::try_from(usd_micros).unwrap_or(0);
    match asset {
        TokenSymbol::Usdc => micros,
        TokenSymbol::Sol => (micros as f64 * 1e3 / sol_usd).floor() as u64,
    }
}

pub async fn prepare(state: &AppState, request: BorrowRequest) -> Result<PreparedBorrow, ApiError> {
    ensure_enabled(state)?;
    let (venue, token) = lender(state, request.protocol, request.asset)?;
    if request
        .asset_mint
        .is_some_and(|mint| mint.pubkey() != token.mint)
    {
        return Err(ApiError::validation(format!(
            "borrow_asset_mint is not {}'s mint on this cluster",
            request.asset
        )));
    }
    ensure_terms(state, &request.wallet).await?;
    let capacity = capacity::capacity(state, &request.wallet).await?;
    ensure_tier(capacity.tier, request.protocol)?;
    let amount_usd = request.amount_usd.get();
    if amount_usd > capacity.available_usd() {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "borrow_capacity_exceeded",
            format!(
                "the wallet may borrow {:.2} USD more (capacity {:.2}, borrowed {:.2})",
                capacity.available_usd(),
                capacity.capacity_usd,
                capacity.total_borrowed_usd
            ),
        )
        .with("available_usd", capacity.available_usd()));
    }
    let open = borrow_positions::Entity::find()
        .filter(borrow_positions::Column::Wallet.eq(request.wallet.to_string()))
        .filter(borrow_positions::Column::Protocol.eq(request.protocol.to_string()))
        .filter(borrow_positions::Column::Asset.eq(request.asset.to_string()))
        .filter(borrow_positions::Column::Status.eq("open"))
        .count(state.store.db())
        .await?;
    let wallet = request.wallet.pubkey();
    let lender: &dyn Lender = venue.lender().expect("checked by `lender`");
    // The store shows confirmed borrows; a borrow that landed and is not confirmed yet (or one
    // taken at the venue directly) is a debt only the venue's loan shows, and a second one in
    // the same token would join it.
    let owed_at_venue = if open == 0 {
        lender
            .loan(state.chain.ledger.as_ref(), &wallet)
            .await?
            .loan
            .map_or(0, |loan| loan.owed(request.asset))
    } else {
        0
    };
    if open > 0 || owed_at_venue > 0 {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "borrow_open",
            format!(
                "the wallet already borrows {} from {}: the venue keeps one debt per token, \
                 repay it first",
                request.asset, request.protocol
            ),
        ));
    }
    let amount_base = base_units(
        request.asset,
        request.amount_usd.micros(),
        capacity.price.sol_usd,
    );
    if amount_base == 0 {
        return Err(ApiError::validation(
            "amount_usd is less than one base unit",
        ));
    }
    let rate = rates::read(state)
        .await
        .get(request.protocol, request.asset);
    let borrow_apy = rate.with_spread.ok_or_else(|| {
        ApiError::unavailable(
            "rate_unavailable",
            format!(
                "no borrow rate for {} at {}",
                request.asset, request.protocol
            ),
        )
    })?;
    let mut transactions = lender
        .borrow(state.chain.ledger.as_ref(), &wallet, &token, amount_base)
        .await?;
    let money = transactions
        .pop()
        .ok_or_else(|| ApiError::internal("a venue built no borrow"))?;
    let params = Params {
        protocol: request.protocol,
        asset: request.asset,
        mint: MintAddress::from(token.mint),
        amount_base,
        amount_usd_micros: request.amount_usd.micros(),
        borrow_apy,
        max_ltv_bps: capacity.max_ltv_bps.expect("ensure_tier refuses no LTV"),
        tier: capacity.tier.name().into(),
        obligation: lender
            .loan_account(state.chain.ledger.as_ref(), &wallet)
            .await?
            .to_string(),
    };
    let blockhash = state.chain.blockhash().await?;
    let setup = unsigned_setup(&transactions, &wallet, blockhash);
    let borrow = state
        .chain
        .prepare(&BorrowFlow::default(), &request.wallet, &money, &params)
        .await?;
    Ok(PreparedBorrow {
        setup,
        borrow,
        params,
        capacity,
        amount_usd,
    })
}

/// 403 `not_position_owner`: the borrow belongs to another wallet.
pub fn not_yours() -> ApiError {
    ApiError::coded(
        StatusCode::FORBIDDEN,
        "not_position_owner",
        "this borrow belongs to another wallet",
    )
}

/// What a confirm may restate of the prepared borrow (the spec's body); each, when given, must
/// be what was prepared.
#[derive(Default)]
pub struct Restated {
    pub protocol: Option<VenueId>,
    pub asset: Option<TokenSymbol>,
}

/// Confirms a borrow: the wallet's own, what it restates as prepared; then the runner verifies
/// the landed transaction and records the position with its slot. The gates (`BORROW_ENABLED`,
/// the terms) are the prepare's: a borrow that landed is a debt at the venue whatever they say
/// now, and a position left unrecorded would get no health alerts.
pub async fn confirm(
    state: &AppState,
    borrow_id: PreparedId,
    wallet: &Wallet,
    signature: Base58Signature,
    restated: Restated,
) -> Result<borrow_positions::Model, ApiError> {
    let opened = state
        .chain
        .open::<BorrowFlow>(borrow_id, &signature)
        .await?;
    let prepared = opened.prepared();
    if prepared.wallet != *wallet {
        return Err(not_yours());
    }
    if restated
        .protocol
        .is_some_and(|p| p != prepared.params.protocol)
        || restated.asset.is_some_and(|a| a != prepared.params.asset)
    {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
            "the protocol or asset is not the prepared borrow's",
        ));
    }
    state
        .chain
        .confirm_landed(
            &BorrowFlow::default(),
            opened,
            signature,
            async |landed, _| {
                Ok(BorrowFlow {
                    landed_slot: Some(landed.slot),
                })
            },
        )
        .await
}

#[async_trait::async_trait]
impl MoneyFlow for BorrowFlow {
    const KIND: &'static str = "borrow";
    type Params = Params;
    type Confirmed = borrow_positions::Model;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        // Loans are read from the ledger, not indexed.
        vec![]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let p = &prepared.params;
        borrow_positions::Entity::insert(borrow_positions::ActiveModel {
            id: Set(prepared.id.to_string()),
            wallet: Set(prepared.wallet.to_string()),
            protocol: Set(p.protocol.to_string()),
            asset: Set(p.asset.to_string()),
            mint: Set(p.mint.to_string()),
            amount_base: Set(i64::try_from(p.amount_base).map_err(ApiError::internal)?),
            amount_usd_micros: Set(p.amount_usd_micros),
            borrow_apy: Set(p.borrow_apy),
            max_ltv_bps: Set(i32::try_from(p.max_ltv_bps).map_err(ApiError::internal)?),
            tier: Set(p.tier.clone()),
            obligation: Set(p.obligation.clone()),
            status: Set("open".into()),
            borrow_signature: Set(signature.to_string()),
            repay_signature: Set(None),
            last_health: Set(None),
            health_checked_at: Set(None),
            alert_level: Set(None),
            created_at: Set(now),
            closed_at: Set(None),
            landed_slot: Set(self
                .landed_slot
                .map(i64::try_from)
                .transpose()
                .map_err(ApiError::internal)?),
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
    ) -> Result<borrow_positions::Model, ApiError> {
        borrow_positions::Entity::find_by_id(prepared.id.to_string())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a confirmed borrow without its position"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_becomes_base_units_rounded_down() {
        let micros = |usd: f64| UsdAmount::new(usd).unwrap().micros();
        assert_eq!(
            base_units(TokenSymbol::Sol, micros(300.0), 150.0),
            2_000_000_000
        );
        assert_eq!(base_units(TokenSymbol::Sol, micros(1.0), 3.0), 333_333_333);
        // The micro-dollars recorded are the USDC borrowed, for every cent.
        assert_eq!(
            base_units(TokenSymbol::Usdc, micros(12.345_678_9), 150.0),
            12_345_679
        );
        assert_eq!(
            base_units(TokenSymbol::Usdc, micros(2.01), 150.0),
            2_010_000
        );
        for cents in 1..=2_000_000u64 {
            let usd = UsdAmount::new(cents as f64 / 100.0).unwrap();
            assert_eq!(
                base_units(TokenSymbol::Usdc, usd.micros(), 150.0),
                cents * 10_000
            );
        }
    }

    #[test]
    fn the_refusal_names_the_tier_the_venue_needs() {
        assert!(ensure_tier(Tier::Ember, VenueId::LendA).is_ok());
        assert_eq!(
            ensure_tier(Tier::Ember, VenueId::LendB).unwrap_err().code(),
            "flare_required"
        );
        assert_eq!(
            ensure_tier(Tier::Initiate, VenueId::LendA)
                .unwrap_err()
                .code(),
            "ember_required"
        );
    }
}
