//! Borrowing (spec 2.9, 4.7): the venues' borrow rates, a wallet's capacity, simulation, and
//! the one-time signed acceptance of the borrow terms.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, Response};
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::borrow::capacity::{self, Capacity};
use crate::domain::borrow::flow::{self, BorrowRequest, Restated};
use crate::domain::borrow::positions::{AlertLevel, Loans, PositionNow};
use crate::domain::borrow::rates::{self, BorrowRate};
use crate::domain::borrow::{bps_fraction, fast_action, repay, simulate, terms, SPREAD_BPS};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::cache::fresh_until;
use crate::routes::{Tag, ToSign};
use crate::state::AppState;
use crate::values::{
    Base58Signature, FastAction, LendingVenue, MintAddress, PreparedId, TokenSymbol, UnixSeconds,
    UsdAmount, VenueId, Wallet,
};
use narrative_store::entities::borrow_positions;

pub struct BorrowApi {
    pub state: Arc<AppState>,
}

refusals! {
    /// A read: a malformed wallet, venue, asset or amount (400), the price source or a venue
    /// that did not answer (503).
    pub BorrowReadRefusals: [400, 503];
    /// An acceptance: a malformed body (400), a signature that is not the wallet's, stale or
    /// used (401), body too large (413).
    pub AcceptTermsRefusals: [400, 401, 413];
    /// A borrow or repay prepare: bad input, beyond capacity, no collateral (400), terms not
    /// accepted, a tier below the venue's or another wallet's position (403), no such position
    /// (404), a borrow open or a position closed already (409), body too large (413), borrowing
    /// disabled, a venue, price or rate that did not answer (503).
    pub BorrowPrepareRefusals: [400, 403, 404, 409, 413, 503];
    /// A confirm: not the prepared transaction (400), another wallet's or the terms withdrawn
    /// (403), unknown (404), confirmed with another signature (409), body too large (413),
    /// borrowing disabled or not on the ledger yet (503).
    pub BorrowConfirmRefusals: [400, 403, 404, 409, 413, 503];
}

/// A rate per token, percent a year (`null`: the venue has no such market and none is
/// configured).
#[derive(Object)]
pub struct AssetRates {
    pub sol: Option<f64>,
    pub usdc: Option<f64>,
}

/// Where one venue's rate per token came from (additive).
#[derive(Object)]
pub struct RateSource {
    /// `ledger` (the reserve's utilisation on its rate curve), `configured`, or `none`.
    pub source: String,
    /// Its reserve could not be read at the last poll: this is the last good value.
    pub stale: bool,
}

#[derive(Object)]
pub struct AssetSources {
    pub sol: RateSource,
    pub usdc: RateSource,
}

/// One venue's borrow rates.
#[derive(Object)]
pub struct VenueRates {
    /// The venue's borrow APR.
    pub base: AssetRates,
    /// `base` plus the service's spread.
    pub with_spread: AssetRates,
    pub magma_spread_bps: u32,
    pub sources: AssetSources,
}

#[derive(Object)]
pub struct RatesByVenue {
    pub lend_a: VenueRates,
    pub lend_b: VenueRates,
    pub polled_at: String,
}

#[derive(Object)]
pub struct RatesAnswer {
    pub ok: bool,
    /// The sources' common name, or `mixed` (see each venue's `sources`).
    pub source: String,
    pub rates: RatesByVenue,
}

/// The price collateral is valued at (additive).
#[derive(Object)]
pub struct PriceView {
    pub sol_usd: f64,
    /// `coingecko` or `configured`.
    pub source: String,
    /// Seconds since the price was read (0 for a configured price).
    pub age_secs: i64,
}

impl PriceView {
    pub fn of(quote: &capacity::PriceQuote, now: i64) -> PriceView {
        PriceView {
            sol_usd: quote.sol_usd,
            source: quote.source.into(),
            age_secs: quote.age_secs(now),
        }
    }
}

#[derive(Object)]
pub struct CapacityAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    /// The tier borrowing goes by (its conviction tier; a held tier NFT lifts `initiate` to
    /// `ember`).
    pub conviction_tier: String,
    /// The tier's max loan-to-value as a fraction (0.5 for 50 %); 0 below `ember`.
    pub max_ltv: f64,
    pub total_borrowed_usd: f64,
    pub open_positions: u64,
    /// The wallet's `lend_a` and `lend_b` positions valued now, in USD (additive).
    pub collateral_usd: f64,
    /// `collateral_usd` × `max_ltv` (additive).
    pub capacity_usd: f64,
    /// `capacity_usd` less `total_borrowed_usd`, never below 0 (additive).
    pub available_usd: f64,
    pub price: PriceView,
}

#[derive(Object)]
pub struct SimulationView {
    pub borrow_amount_usd: f64,
    /// As a fraction; 0 below `ember`.
    pub max_ltv: f64,
    /// `borrow_amount_usd` / `max_ltv`; `null` below `ember`.
    pub collateral_required_usd: Option<f64>,
    /// The wallet's collateral value over all it would owe; below 1.0 the lender liquidates.
    pub estimated_health_factor: f64,
    /// Why the borrow would be refused or risky (below 1.50, beyond capacity, not open to the
    /// tier), or `null`.
    pub warning: Option<String>,
    /// What the wallet may still borrow, in USD (additive).
    pub available_usd: f64,
}

#[derive(Object)]
pub struct SimulateAnswer {
    pub ok: bool,
    pub simulation: SimulationView,
}

#[derive(Object)]
pub struct AcceptBorrowTerms {
    pub wallet: Wallet,
    /// The wallet's ed25519 signature (base58) of
    /// `narrative-market-service:borrow-terms:<wallet>:issued-at:<issued_at>` (additive: it
    /// proves the wallet accepts, so nobody accepts for another wallet).
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
}

#[derive(Object)]
pub struct BorrowTermsAccepted {
    pub ok: bool,
    pub wallet: Wallet,
    pub borrow_terms_accepted: bool,
    /// When it first accepted (accepting again changes nothing).
    pub accepted_at: String,
}

#[derive(Object)]
pub struct BorrowPrepareBody {
    pub wallet: Wallet,
    pub protocol: LendingVenue,
    pub borrow_asset: TokenSymbol,
    /// The asset's mint, when the client names it: it must be this cluster's.
    pub borrow_asset_mint: Option<MintAddress>,
    pub amount_usd: UsdAmount,
}

#[derive(Object)]
pub struct BorrowPrepared {
    pub ok: bool,
    /// Confirm with it.
    pub borrow_id: String,
    /// The tier's max LTV as a fraction.
    pub max_ltv: f64,
    /// Percent a year, the service's spread included.
    pub borrow_apy: f64,
    pub collateral_required_usd: f64,
    pub estimated_health_factor: f64,
    /// `ready_to_confirm`: sign and send `transaction`, then confirm.
    pub status: String,
    pub protocol: String,
    pub borrow_asset: String,
    /// The amount in the asset's base units (additive).
    pub amount_base: u64,
    /// The venue's borrow transaction and any set-up before it, for the wallet to sign
    /// (additive).
    #[oai(flatten)]
    pub signing: ToSign,
}

#[derive(Object)]
pub struct BorrowConfirmBody {
    pub wallet: Wallet,
    /// The prepare's `borrow_id` (additive: which prepared borrow).
    pub borrow_id: PreparedId,
    /// The signature of the sent borrow transaction (additive).
    pub tx_signature: Base58Signature,
    /// When given, it must be the prepared borrow's (the spec's body restates it; what was
    /// prepared is what is recorded).
    pub protocol: Option<LendingVenue>,
    pub borrow_asset: Option<TokenSymbol>,
}

/// A borrow as recorded.
#[derive(Object)]
pub struct BorrowPositionView {
    pub position_id: String,
    pub wallet: String,
    pub protocol: String,
    pub asset: String,
    pub mint: String,
    /// The principal in the asset's base units, and in USD when borrowed.
    pub amount_base: u64,
    pub amount_usd: f64,
    pub borrow_apy: f64,
    pub max_ltv: f64,
    pub tier: String,
    /// The venue account holding the debt.
    pub obligation: String,
    /// `open`, `repaid`, or `closed_outside` (repaid or liquidated at the venue).
    pub status: String,
    pub borrow_signature: String,
    pub repay_signature: Option<String>,
    pub created_at: String,
    pub closed_at: Option<String>,
}

impl BorrowPositionView {
    fn of(p: &borrow_positions::Model) -> BorrowPositionView {
        BorrowPositionView {
            position_id: p.id.clone(),
            wallet: p.wallet.clone(),
            protocol: p.protocol.clone(),
            asset: p.asset.clone(),
            mint: p.mint.clone(),
            amount_base: u64::try_from(p.amount_base).unwrap_or(0),
            amount_usd: p.amount_usd_micros as f64 / 1e6,
            borrow_apy: p.borrow_apy,
            max_ltv: bps_fraction(u32::try_from(p.max_ltv_bps).unwrap_or(0)),
            tier: p.tier.clone(),
            obligation: p.obligation.clone(),
            status: p.status.clone(),
            borrow_signature: p.borrow_signature.clone(),
            repay_signature: p.repay_signature.clone(),
            created_at: iso(p.created_at),
            closed_at: p.closed_at.map(iso),
        }
    }
}

#[derive(Object)]
pub struct BorrowConfirmed {
    pub ok: bool,
    pub borrow_id: String,
    pub tx_signature: String,
    pub status: String,
    pub position: BorrowPositionView,
}

#[derive(Object)]
pub struct RepayPrepareBody {
    pub wallet: Wallet,
    pub position_id: PreparedId,
}

#[derive(Object)]
pub struct RepayPrepared {
    pub ok: bool,
    pub position_id: String,
    /// Confirm with it (additive).
    pub repay_id: String,
    pub asset: String,
    /// In the asset's units: what was borrowed, the interest accrued at the venue's rate, and
    /// their sum, owed now.
    pub principal: f64,
    pub accrued_interest: f64,
    pub total_repay: f64,
    pub principal_base: u64,
    pub accrued_interest_base: u64,
    pub total_repay_base: u64,
    /// `ready_to_confirm`.
    pub status: String,
    /// The repayment for the wallet to sign: it pays what is owed when it lands (a little more
    /// is set aside for the interest until then, and what is not needed stays the wallet's).
    #[oai(flatten)]
    pub signing: ToSign,
}

#[derive(Object)]
pub struct RepayConfirmBody {
    pub wallet: Wallet,
    pub position_id: PreparedId,
    /// The repay prepare's `repay_id` (additive).
    pub repay_id: PreparedId,
    /// The signature of the sent repayment (additive).
    pub tx_signature: Base58Signature,
}

#[derive(Object)]
pub struct RepayConfirmed {
    pub ok: bool,
    pub position_id: String,
    pub tx_signature: String,
    /// `repaid` (or `closed_outside` when the lender had closed it first).
    pub status: String,
    pub position: BorrowPositionView,
}

/// One open position's health.
#[derive(Object)]
pub struct PositionHealth {
    pub position_id: String,
    pub protocol: String,
    pub asset: String,
    /// Its loan's collateral value over its debt value at current prices.
    pub health_factor: f64,
    /// `warning` (< 1.50), `urgent` (< 1.20), `critical` (< 1.05), or null.
    pub level: Option<String>,
    pub collateral_usd: f64,
    pub debt_usd: f64,
}

#[derive(Object)]
pub struct HealthAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub positions: Vec<PositionHealth>,
    /// The lowest of them, null without open positions.
    pub lowest_health_factor: Option<f64>,
}

/// An open position in full.
#[derive(Object)]
pub struct OpenPositionView {
    #[oai(flatten)]
    pub recorded: BorrowPositionView,
    /// Owed now in the asset's units and base units (interest included), and in USD.
    pub owed: f64,
    pub owed_base: u64,
    pub owed_usd: f64,
    pub accrued_interest: f64,
    pub health_factor: f64,
}

#[derive(Object)]
pub struct PositionsAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub positions: Vec<OpenPositionView>,
}

#[derive(Object)]
pub struct FastActionBody {
    pub wallet: Wallet,
    pub action: FastAction,
    /// Default `lend_a`.
    pub protocol: Option<LendingVenue>,
    /// Default `USDC` (`SOL` for `instant_sol`).
    pub borrow_asset: Option<TokenSymbol>,
}

#[derive(Object)]
pub struct FastActionPrepared {
    pub ok: bool,
    pub action: String,
    /// The tier's max LTV, and the action's share of it, as fractions.
    pub max_ltv: f64,
    pub effective_ltv: f64,
    /// The action's share of the max LTV in percent.
    pub ltv_pct_of_max: f64,
    /// `ready_to_confirm`: sign and send `transaction`, then confirm with `borrow_id`.
    pub status: String,
    /// The borrow it prepared (additive): as `POST /v1/borrow/prepare` answers it.
    pub borrow_id: String,
    pub protocol: String,
    pub borrow_asset: String,
    pub amount_usd: f64,
    pub amount_base: u64,
    pub borrow_apy: f64,
    pub estimated_health_factor: f64,
    #[oai(flatten)]
    pub signing: ToSign,
}

/// `base` units of `asset` in the asset's units.
/// `base` units of `asset` as a UI amount (display).
pub(crate) fn units(asset: TokenSymbol, base: u64) -> f64 {
    base as f64 / 10f64.powi(i32::from(asset.decimals()))
}

fn venue_rates(rates: &rates::Rates, venue: VenueId) -> VenueRates {
    let sol = rates.get(venue, TokenSymbol::Sol);
    let usdc = rates.get(venue, TokenSymbol::Usdc);
    let source = |r: &BorrowRate| RateSource {
        source: r.source.into(),
        stale: r.stale,
    };
    VenueRates {
        base: AssetRates {
            sol: sol.base,
            usdc: usdc.base,
        },
        with_spread: AssetRates {
            sol: sol.with_spread,
            usdc: usdc.with_spread,
        },
        magma_spread_bps: SPREAD_BPS,
        sources: AssetSources {
            sol: source(&sol),
            usdc: source(&usdc),
        },
    }
}

impl CapacityAnswer {
    fn of(wallet: Wallet, c: &Capacity, now: i64) -> CapacityAnswer {
        CapacityAnswer {
            ok: true,
            wallet,
            conviction_tier: c.tier.name().into(),
            max_ltv: c.max_ltv(),
            total_borrowed_usd: c.total_borrowed_usd,
            open_positions: c.open_positions,
            collateral_usd: c.collateral_usd,
            capacity_usd: c.capacity_usd,
            available_usd: c.available_usd(),
            price: PriceView::of(&c.price, now),
        }
    }
}

#[OpenApi(prefix_path = "/borrow", tag = "Tag::Borrow")]
impl BorrowApi {
    /// Each lending venue's borrow APR per token, with the service's 50 bps spread; kept 60 s.
    #[oai(path = "/rates", method = "get")]
    async fn rates(&self) -> Answer<Response<Json<RatesAnswer>>, BorrowReadRefusals> {
        let rates = rates::read(&self.state).await;
        let until = rates.polled_at() + rates::CACHE_SECS;
        Ok(fresh_until(
            Json(RatesAnswer {
                ok: true,
                source: rates.source().into(),
                rates: RatesByVenue {
                    lend_a: venue_rates(&rates, VenueId::LendA),
                    lend_b: venue_rates(&rates, VenueId::LendB),
                    polled_at: iso(rates.polled_at()),
                },
            }),
            Some(until),
        ))
    }

    /// What the wallet may borrow: its lending positions in USD times its tier's max LTV.
    #[oai(path = "/capacity/:wallet", method = "get")]
    async fn capacity(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Response<Json<CapacityAnswer>>, BorrowReadRefusals> {
        let c = capacity::capacity(&self.state, &wallet.0).await?;
        let now = self.state.now();
        Ok(fresh_until(
            Json(CapacityAnswer::of(wallet.0, &c, now)),
            Some(capacity::valued_until(now)),
        ))
    }

    /// A borrow simulated: the collateral it needs and the health factor it would leave.
    /// `protocol` defaults to `lend_a`, `asset` to `USDC`.
    #[oai(path = "/simulate", method = "get")]
    async fn simulate(
        &self,
        wallet: Query<Wallet>,
        amount_usd: Query<UsdAmount>,
        protocol: Query<Option<LendingVenue>>,
        asset: Query<Option<TokenSymbol>>,
    ) -> Answer<Response<Json<SimulateAnswer>>, BorrowReadRefusals> {
        let asset = asset.0.unwrap_or(TokenSymbol::Usdc);
        let venue = protocol.0.map_or(VenueId::LendA, LendingVenue::venue);
        let s = simulate::simulate(&self.state, &wallet.0, venue, asset, amount_usd.0).await?;
        let until = capacity::valued_until(self.state.now());
        let answer = Json(SimulateAnswer {
            ok: true,
            simulation: SimulationView {
                borrow_amount_usd: s.borrow_amount_usd,
                max_ltv: s.capacity.max_ltv(),
                collateral_required_usd: s.collateral_required_usd,
                estimated_health_factor: s.estimated_health_factor,
                warning: s.warning,
                available_usd: s.capacity.available_usd(),
            },
        });
        Ok(fresh_until(answer, Some(until)))
    }

    /// Accept the borrow terms, once, with the wallet's signature (prepare needs it).
    #[oai(path = "/accept-terms", method = "post")]
    async fn accept_terms(
        &self,
        body: Json<AcceptBorrowTerms>,
    ) -> Answer<Json<BorrowTermsAccepted>, AcceptTermsRefusals> {
        let body = body.0;
        let at = terms::accept(
            &self.state,
            Proof {
                wallet: &body.wallet,
                signature: &body.signature,
                issued_at: body.issued_at,
            },
        )
        .await?;
        Ok(Json(BorrowTermsAccepted {
            ok: true,
            wallet: body.wallet,
            borrow_terms_accepted: true,
            accepted_at: iso(at),
        }))
    }

    /// Prepare a borrow: the gates (enabled, terms, tier, capacity), then the venue's borrow
    /// transaction for the wallet to sign.
    #[oai(path = "/prepare", method = "post")]
    async fn prepare(
        &self,
        body: Json<BorrowPrepareBody>,
    ) -> Answer<Json<BorrowPrepared>, BorrowPrepareRefusals> {
        let body = body.0;
        let p = flow::prepare(
            &self.state,
            BorrowRequest {
                wallet: body.wallet,
                protocol: body.protocol.venue(),
                asset: body.borrow_asset,
                asset_mint: body.borrow_asset_mint,
                amount_usd: body.amount_usd,
            },
        )
        .await?;
        let signing = ToSign::new(
            p.setup.clone(),
            p.borrow.transaction.clone(),
            p.borrow.blockhash.clone(),
        );
        Ok(Json(BorrowPrepared {
            ok: true,
            borrow_id: p.borrow.id.to_string(),
            max_ltv: bps_fraction(p.params.max_ltv_bps),
            borrow_apy: p.params.borrow_apy,
            collateral_required_usd: p.collateral_required_usd(),
            estimated_health_factor: p.estimated_health_factor(),
            status: "ready_to_confirm".into(),
            protocol: p.params.protocol.to_string(),
            borrow_asset: p.params.asset.to_string(),
            amount_base: p.params.amount_base,
            signing,
        }))
    }

    /// Confirm a borrow once its transaction landed: verified on the ledger, then recorded.
    #[oai(path = "/confirm", method = "post")]
    async fn confirm(
        &self,
        body: Json<BorrowConfirmBody>,
    ) -> Answer<Json<BorrowConfirmed>, BorrowConfirmRefusals> {
        let body = body.0;
        let signature = body.tx_signature.to_string();
        let position = flow::confirm(
            &self.state,
            body.borrow_id,
            &body.wallet,
            body.tx_signature,
            Restated {
                protocol: body.protocol.map(LendingVenue::venue),
                asset: body.borrow_asset,
            },
        )
        .await?;
        Ok(Json(BorrowConfirmed {
            ok: true,
            borrow_id: position.id.clone(),
            tx_signature: signature,
            status: position.status.clone(),
            position: BorrowPositionView::of(&position),
        }))
    }

    /// Prepare the repayment of a position: what it owes now and the transaction paying it.
    #[oai(path = "/repay/prepare", method = "post")]
    async fn repay_prepare(
        &self,
        body: Json<RepayPrepareBody>,
    ) -> Answer<Json<RepayPrepared>, BorrowPrepareRefusals> {
        let body = body.0;
        let p = repay::prepare(&self.state, &body.wallet, body.position_id).await?;
        let signing = ToSign::new(
            p.setup.clone(),
            p.repay.transaction.clone(),
            p.repay.blockhash.clone(),
        );
        let asset = p.asset;
        Ok(Json(RepayPrepared {
            ok: true,
            position_id: p.position.id.clone(),
            repay_id: p.repay.id.to_string(),
            asset: asset.to_string(),
            principal: units(asset, p.principal_base),
            accrued_interest: units(asset, p.interest_base()),
            total_repay: units(asset, p.owed_base),
            principal_base: p.principal_base,
            accrued_interest_base: p.interest_base(),
            total_repay_base: p.owed_base,
            status: "ready_to_confirm".into(),
            signing,
        }))
    }

    /// Confirm a repayment once it landed: verified on the ledger, then the position closes.
    #[oai(path = "/repay/confirm", method = "post")]
    async fn repay_confirm(
        &self,
        body: Json<RepayConfirmBody>,
    ) -> Answer<Json<RepayConfirmed>, BorrowConfirmRefusals> {
        let body = body.0;
        let signature = body.tx_signature.to_string();
        let position = repay::confirm(
            &self.state,
            &body.wallet,
            body.position_id,
            body.repay_id,
            body.tx_signature,
        )
        .await?;
        Ok(Json(RepayConfirmed {
            ok: true,
            position_id: position.id.clone(),
            tx_signature: signature,
            status: position.status.clone(),
            position: BorrowPositionView::of(&position),
        }))
    }

    /// The health factor of each open position, from its loan on the ledger at current prices.
    #[oai(path = "/health/:wallet", method = "get")]
    async fn health(&self, wallet: Path<Wallet>) -> Answer<Json<HealthAnswer>, BorrowReadRefusals> {
        let open = Loans::of(&self.state).open_now(&wallet.0).await?;
        let views: Vec<PositionHealth> = open
            .iter()
            .map(|p: &PositionNow| PositionHealth {
                position_id: p.row.id.clone(),
                protocol: p.row.protocol.clone(),
                asset: p.row.asset.clone(),
                health_factor: p.health.factor(),
                level: AlertLevel::of(p.health.factor()).map(|l| l.as_str().to_owned()),
                collateral_usd: p.health.collateral_usd,
                debt_usd: p.health.debt_usd,
            })
            .collect();
        Ok(Json(HealthAnswer {
            ok: true,
            lowest_health_factor: views.iter().map(|v| v.health_factor).reduce(f64::min),
            wallet: wallet.0,
            positions: views,
        }))
    }

    /// The wallet's open positions in full, with what each owes now.
    #[oai(path = "/positions/:wallet", method = "get")]
    async fn positions(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<PositionsAnswer>, BorrowReadRefusals> {
        let open = Loans::of(&self.state).open_now(&wallet.0).await?;
        Ok(Json(PositionsAnswer {
            ok: true,
            wallet: wallet.0,
            positions: open
                .iter()
                .map(|p| {
                    let asset = p.asset;
                    OpenPositionView {
                        recorded: BorrowPositionView::of(&p.row),
                        owed: units(asset, p.owed_base),
                        owed_base: p.owed_base,
                        owed_usd: p.owed_usd,
                        accrued_interest: units(
                            asset,
                            p.owed_base.saturating_sub(p.principal_base()),
                        ),
                        health_factor: p.health.factor(),
                    }
                })
                .collect(),
        }))
    }

    /// A borrow at a share of the tier's max LTV (`safe`, `balanced`, `max`, `instant_sol`);
    /// flare tier and up.
    #[oai(path = "/fast-action", method = "post")]
    async fn fast_action(
        &self,
        body: Json<FastActionBody>,
    ) -> Answer<Json<FastActionPrepared>, BorrowPrepareRefusals> {
        let body = body.0;
        let f = fast_action::prepare(
            &self.state,
            body.wallet,
            body.action,
            body.protocol.map(LendingVenue::venue),
            body.borrow_asset,
        )
        .await?;
        let p = &f.borrow;
        let signing = ToSign::new(
            p.setup.clone(),
            p.borrow.transaction.clone(),
            p.borrow.blockhash.clone(),
        );
        Ok(Json(FastActionPrepared {
            ok: true,
            action: f.action.to_string(),
            max_ltv: f.max_ltv,
            effective_ltv: f.effective_ltv,
            ltv_pct_of_max: f64::from(f.action.share_bps()) / 100.0,
            status: "ready_to_confirm".into(),
            borrow_id: p.borrow.id.to_string(),
            protocol: p.params.protocol.to_string(),
            borrow_asset: p.params.asset.to_string(),
            amount_usd: p.amount_usd,
            amount_base: p.params.amount_base,
            borrow_apy: p.params.borrow_apy,
            estimated_health_factor: p.estimated_health_factor(),
            signing,
        }))
    }
}
