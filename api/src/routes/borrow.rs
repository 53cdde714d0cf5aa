//! Borrowing (spec 2.9, 4.7): the venues' borrow rates, a wallet's capacity, simulation, and
//! the one-time signed acceptance of the borrow terms.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, Response};
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::borrow::capacity::{self, Capacity};
use crate::domain::borrow::rates::{self, BorrowRate};
use crate::domain::borrow::{simulate, terms, SPREAD_BPS};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::cache::fresh_until;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, TokenSymbol, UnixSeconds, UsdAmount, VenueId, Wallet};

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
            price: PriceView {
                sol_usd: c.price.sol_usd,
                source: c.price.source.into(),
                age_secs: c.price.age_secs(now),
            },
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
    ) -> Answer<Json<CapacityAnswer>, BorrowReadRefusals> {
        let c = capacity::capacity(&self.state, &wallet.0).await?;
        Ok(Json(CapacityAnswer::of(wallet.0, &c, self.state.now())))
    }

    /// A borrow simulated: the collateral it needs and the health factor it would leave.
    /// `protocol` defaults to `lend_a`, `asset` to `USDC`.
    #[oai(path = "/simulate", method = "get")]
    async fn simulate(
        &self,
        wallet: Query<Wallet>,
        amount_usd: Query<UsdAmount>,
        protocol: Query<Option<VenueId>>,
        asset: Query<Option<TokenSymbol>>,
    ) -> Answer<Json<SimulateAnswer>, BorrowReadRefusals> {
        let asset = asset.0.unwrap_or(TokenSymbol::Usdc);
        let venue = protocol.0.unwrap_or(VenueId::LendA);
        let s = simulate::simulate(&self.state, &wallet.0, venue, asset, amount_usd.0).await?;
        Ok(Json(SimulateAnswer {
            ok: true,
            simulation: SimulationView {
                borrow_amount_usd: s.borrow_amount_usd,
                max_ltv: s.capacity.max_ltv(),
                collateral_required_usd: s.collateral_required_usd,
                estimated_health_factor: s.estimated_health_factor,
                warning: s.warning,
                available_usd: s.capacity.available_usd(),
            },
        }))
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
}
