//! DeFi earn (spec 4.5) and staking (4.6): the APY read, generic deposits and withdrawals
//! (prepare → sign → confirm), allocation and yield, and the per-venue endpoints, which are the
//! generic flows with the venue and token fixed.

use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::{Json, Response};
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::defi::deposit::{self, DepositRequest, PreparedDeposit};
use crate::domain::defi::withdrawal::{self, PreparedWithdrawal};
use crate::domain::defi::{apys, reads, MAINNET_COMING_AT};
use crate::error::{refusals, Answer, ApiError};
use crate::http::cache::fresh_until;
use crate::routes::{Tag, ToSign};
use crate::state::AppState;
use crate::values::{
    sol_u64, Base58Signature, Lamports, NarrativeId, PreparedId, SolAmount, TokenSymbol, UiAmount,
    VenueId, Wallet,
};

pub struct DefiApi {
    pub state: Arc<AppState>,
}

refusals! {
    /// A read: a malformed wallet (400), a venue or price source that did not answer (503).
    pub ReadRefusals: [400, 503];
    /// A DeFi prepare: bad amount, token or venue (400), another wallet's backing or a blocked
    /// wallet (403), no such backing or narrative (404), withdrawn already (409), body too large
    /// (413), a venue not live or unreadable, halted, the ledger or prices down (503).
    pub PrepareRefusals: [400, 403, 404, 409, 413, 503];
    /// A DeFi confirm: not the prepared transaction (400), another wallet's (403), unknown (404),
    /// confirmed otherwise (409), body too large (413), halted or not on the ledger yet (503).
    pub DefiConfirmRefusals: [400, 403, 404, 409, 413, 503];
    /// A gated flow: 503 `coming_soon` until it is wired.
    pub GatedRefusals: [400, 413, 503];
}

#[derive(Object)]
pub struct ApyValues {
    pub lend_a: f64,
    pub lend_a_sol: f64,
    pub lend_a_usdc: f64,
    pub lend_b: f64,
    pub stake_a: f64,
    pub stake_b: f64,
    pub pool_a: f64,
    pub lend_c: f64,
    pub p0: f64,
}

/// A venue's metadata (spec 2.8).
#[derive(Object)]
pub struct ProtocolInfo {
    pub label: String,
    pub token: String,
    pub testnet_available: bool,
    pub coming_at: Option<String>,
}

/// Where one APY came from (additive).
#[derive(Object)]
pub struct ApySource {
    /// `ledger`, `rate_api`, `configured`, or `none`.
    pub source: String,
    pub polled_at: String,
    /// Its source failed at the last poll: this is its last good value.
    pub stale: bool,
}

#[derive(Object)]
pub struct ApysAnswer {
    pub ok: bool,
    /// The sources' common name, or `mixed` (see `sources`).
    pub source: String,
    pub polled_at: String,
    /// Percent (9.2 means 9.2 %).
    pub apys: ApyValues,
    pub protocols: BTreeMap<String, ProtocolInfo>,
    pub borrow_enabled: bool,
    pub sources: BTreeMap<String, ApySource>,
}

#[derive(Object)]
pub struct DepositBody {
    pub wallet: Wallet,
    pub token_symbol: TokenSymbol,
    pub amount: UiAmount,
    /// A venue instead of automatic routing.
    pub protocol: Option<VenueId>,
    pub narrative_id: Option<NarrativeId>,
}

/// A prepared deposit: sign and send `transactions_to_sign` in order (the last is
/// `transaction`, the one to confirm).
#[derive(Object)]
pub struct DepositPrepared {
    pub ok: bool,
    /// `ready_to_confirm` (one transaction) or `ready_to_sign` (several).
    pub status: String,
    #[oai(flatten)]
    pub signing: ToSign,
    pub backing_id: PreparedId,
    pub protocol: VenueId,
    pub amount_sol: f64,
    pub amount_base: u64,
    pub token_symbol: TokenSymbol,
}

impl DepositPrepared {
    fn from(prepared: PreparedDeposit) -> DepositPrepared {
        let signing = ToSign::new(
            prepared.setup,
            prepared.deposit.transaction,
            prepared.deposit.blockhash,
        );
        DepositPrepared {
            ok: true,
            status: signing.status().into(),
            signing,
            backing_id: prepared.deposit.id,
            protocol: prepared.params.protocol,
            amount_sol: sol_u64(prepared.params.amount_lamports),
            amount_base: prepared.params.amount_base,
            token_symbol: prepared.params.token_symbol,
        }
    }
}

#[derive(Object)]
pub struct DefiConfirmBody {
    pub backing_id: PreparedId,
    pub tx_signature: Base58Signature,
    pub wallet: Wallet,
}

#[derive(Object)]
pub struct DepositConfirmed {
    pub ok: bool,
    pub backing_id: String,
    pub tx_signature: String,
    pub amount_sol: f64,
    pub protocol: String,
    pub status: String,
}

#[derive(Object)]
pub struct WithdrawalBody {
    pub backing_id: PreparedId,
    pub wallet: Wallet,
}

#[derive(Object)]
pub struct WithdrawalPrepared {
    pub ok: bool,
    /// `ready_to_confirm` (one transaction) or `ready_to_sign` (several).
    pub status: String,
    #[oai(flatten)]
    pub signing: ToSign,
    /// The prepared withdrawal (a confirm may name it).
    pub withdrawal_id: PreparedId,
    pub backing_id: PreparedId,
    pub protocol: VenueId,
    /// What the receipt redeems for at the venue's current rate, in the token's base units.
    pub expected_amount_base: u64,
}

impl WithdrawalPrepared {
    fn from(prepared: PreparedWithdrawal) -> WithdrawalPrepared {
        let signing = ToSign::new(
            prepared.setup,
            prepared.withdrawal.transaction,
            prepared.withdrawal.blockhash,
        );
        WithdrawalPrepared {
            ok: true,
            status: signing.status().into(),
            signing,
            withdrawal_id: prepared.withdrawal.id,
            backing_id: prepared.params.backing_id,
            protocol: prepared.params.protocol,
            expected_amount_base: prepared.params.expected_base,
        }
    }
}

#[derive(Object)]
pub struct WithdrawalConfirmBody {
    pub backing_id: PreparedId,
    pub tx_signature: Base58Signature,
    pub wallet: Wallet,
    /// The prepared withdrawal; when absent, the wallet's one of the backing that the
    /// signature landed, else its newest.
    pub withdrawal_id: Option<PreparedId>,
}

#[derive(Object)]
pub struct WithdrawalConfirmed {
    pub ok: bool,
    pub backing_id: String,
    pub tx_signature: String,
    pub protocol: String,
    /// `withdrawn`.
    pub status: String,
    /// What the withdrawal paid, in the token's base units (at the rate when prepared).
    pub withdrawn_base: i64,
    pub yield_earned_base: i64,
}

#[derive(Object)]
pub struct PositionView {
    pub backing_id: String,
    pub protocol: String,
    pub token_symbol: String,
    pub narrative_id: Option<String>,
    pub amount_sol: f64,
    pub value_sol: f64,
    pub yield_earned_sol: f64,
    pub status: String,
    pub can_withdraw: bool,
}

impl PositionView {
    fn of(p: &reads::Position) -> PositionView {
        PositionView {
            backing_id: p.backing_id.clone(),
            protocol: p.protocol.to_string(),
            token_symbol: p.token_symbol.to_string(),
            narrative_id: p.narrative_id.clone(),
            amount_sol: p.amount_sol,
            value_sol: p.value_sol,
            yield_earned_sol: p.yield_earned_sol,
            status: p.status.clone(),
            can_withdraw: p.can_withdraw,
        }
    }
}

#[derive(Object)]
pub struct AllocationEntry {
    pub protocol: String,
    pub amount_sol: f64,
    pub percentage: f64,
    pub backing_id: String,
}

#[derive(Object)]
pub struct AllocationAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub positions: Vec<PositionView>,
    pub allocation: Vec<AllocationEntry>,
    pub total_sol: f64,
    pub empty: bool,
}

#[derive(Object)]
pub struct YieldBreakdown {
    pub narrative_yield_sol: f64,
    pub echo_pool_sol: f64,
}

#[derive(Object)]
pub struct YieldAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub yield_earned_sol: f64,
    pub breakdown: YieldBreakdown,
}

#[derive(Object)]
pub struct StakingAnswer {
    pub ok: bool,
    pub wallet_address: Wallet,
    /// SOL staked through the liquid-staking venues.
    pub staked_amount: f64,
    /// The wallet's conviction tier.
    pub tier: String,
    pub positions: Vec<PositionView>,
}

/// `lend_a`'s deposit (spec 4.5): SOL only.
#[derive(Object)]
pub struct LendADepositBody {
    pub wallet_address: Wallet,
    pub amount_sol: SolAmount,
    pub narrative_id: Option<NarrativeId>,
}

#[derive(Object)]
pub struct LendADeposited {
    #[oai(flatten)]
    pub prepared: DepositPrepared,
    /// The receipt to withdraw with later: the backing id.
    pub receipt: PreparedId,
}

#[derive(Object)]
pub struct LendAWithdrawBody {
    pub wallet_address: Wallet,
    pub amount_sol: SolAmount,
    pub narrative_id: Option<NarrativeId>,
    /// The receipt the deposit answered (its backing id).
    pub receipt: PreparedId,
}

#[derive(Object)]
pub struct LendAWithdrawn {
    #[oai(flatten)]
    pub prepared: WithdrawalPrepared,
    /// The position's yield so far, at the venue's current rate.
    pub yield_earned_sol: f64,
}

/// A venue deposit in base units (`lend_b`, `lend_c`).
#[derive(Object)]
pub struct BaseUnitsBody {
    pub wallet_address: Wallet,
    pub symbol: TokenSymbol,
    /// Base units of the token (`amount_base` for lend_b, `amount_raw` for lend_c).
    #[oai(rename = "amount_base")]
    pub amount: Lamports<1>,
}

#[derive(Object)]
pub struct RawUnitsBody {
    pub wallet_address: Wallet,
    pub symbol: TokenSymbol,
    pub amount_raw: Lamports<1>,
}

#[derive(Object)]
pub struct StakeBody {
    pub wallet_address: Wallet,
    pub amount_sol: SolAmount,
}

/// `stake_a`'s deposit answer (spec 4.5).
#[derive(Object)]
pub struct StakeADeposited {
    #[oai(flatten)]
    pub prepared: DepositPrepared,
    /// The wallet's associated token account of the pool's token (jitoSOL), base58: created
    /// by the transaction when missing.
    pub stake_a_token_account: String,
}

/// `stake_b`'s deposit answer (spec 4.5).
#[derive(Object)]
pub struct StakeBDeposited {
    #[oai(flatten)]
    pub prepared: DepositPrepared,
    /// The wallet's associated token account of mSOL, base58: created by the transaction
    /// when missing.
    pub stake_b_token_account: String,
}

/// A base-unit amount as a UI amount of `symbol`.
fn ui(base: u64, symbol: TokenSymbol) -> Result<UiAmount, ApiError> {
    let base =
        NonZeroU64::new(base).ok_or_else(|| ApiError::validation("must be greater than 0"))?;
    Ok(UiAmount::from_base_units(base, symbol.decimals()))
}

impl DefiApi {
    /// How long a read of `positions` stays true: their values follow the venues' rates, kept
    /// [`apys::RATE_CACHE_SECS`]; without positions, until the wallet's positions change.
    fn valued_until(&self, positions: &[reads::Position]) -> Option<i64> {
        (!positions.is_empty()).then(|| self.state.now() + apys::RATE_CACHE_SECS)
    }

    async fn deposit(
        &self,
        wallet: Wallet,
        token: TokenSymbol,
        amount: UiAmount,
        protocol: Option<VenueId>,
        narrative_id: Option<NarrativeId>,
    ) -> Result<DepositPrepared, ApiError> {
        let prepared = deposit::prepare(
            &self.state,
            DepositRequest {
                wallet,
                token,
                amount,
                protocol,
                narrative_id,
            },
        )
        .await?;
        Ok(DepositPrepared::from(prepared))
    }

    /// A liquid-staking deposit of SOL into `venue`, and the wallet's token account its
    /// liquid token is minted to.
    async fn stake(
        &self,
        body: StakeBody,
        venue: VenueId,
    ) -> Result<(DepositPrepared, String), ApiError> {
        let request = DepositRequest {
            wallet: body.wallet_address,
            token: TokenSymbol::Sol,
            amount: body.amount_sol.ui(),
            protocol: Some(venue),
            narrative_id: None,
        };
        let prepared = deposit::prepare(&self.state, request).await?;
        let token_account = prepared.receipt_account.to_string();
        Ok((DepositPrepared::from(prepared), token_account))
    }
}

#[OpenApi(tag = "Tag::Defi")]
impl DefiApi {
    /// The venues' APYs (percent), their metadata and where each value came from; kept 60 s.
    #[oai(path = "/defi/apys", method = "get")]
    async fn apys(&self) -> Answer<Response<Json<ApysAnswer>>, ReadRefusals> {
        let board = apys::read(&self.state).await;
        let get = |key: &str| board.values.get(key).map_or(0.0, |a| a.pct);
        let mut protocols = BTreeMap::new();
        for id in VenueId::ALL {
            let venue = self.state.defi.get(*id);
            // p0 is its own integration: available wherever it is enabled.
            let live = venue.is_some_and(|v| self.state.defi.is_live(v))
                || (*id == VenueId::P0 && self.state.p0.is_some());
            // Coming with mainnet: a venue this cluster does not wire (one wired here but
            // without a configured market is not coming; its operator has not set it up).
            let coming = !live && !venue.is_some_and(|v| self.state.defi.is_wired(v));
            let (label, token) = match venue {
                Some(v) => (
                    v.label().to_owned(),
                    v.tokens()
                        .iter()
                        .map(|t| t.symbol.as_str())
                        .collect::<Vec<_>>()
                        .join("/"),
                ),
                None if *id == VenueId::PoolA => ("Liquidity Pool".into(), "SOL".into()),
                None => ("Unified Margin".into(), "SOL/USDC".into()),
            };
            protocols.insert(
                id.to_string(),
                ProtocolInfo {
                    label,
                    token,
                    testnet_available: live,
                    coming_at: coming.then(|| MAINNET_COMING_AT.to_owned()),
                },
            );
        }
        let until = board.polled_at + apys::CACHE_SECS;
        Ok(fresh_until(
            Json(ApysAnswer {
                ok: true,
                source: board.source().into(),
                polled_at: iso(board.polled_at),
                apys: ApyValues {
                    lend_a: get("lend_a"),
                    lend_a_sol: get("lend_a_sol"),
                    lend_a_usdc: get("lend_a_usdc"),
                    lend_b: get("lend_b"),
                    stake_a: get("stake_a"),
                    stake_b: get("stake_b"),
                    pool_a: get("pool_a"),
                    lend_c: get("lend_c"),
                    p0: get("p0"),
                },
                protocols,
                borrow_enabled: self.state.borrow_enabled,
                sources: board
                    .values
                    .iter()
                    .map(|(k, a)| {
                        (
                            (*k).to_owned(),
                            ApySource {
                                source: a.source.into(),
                                polled_at: iso(a.polled_at),
                                stale: a.stale,
                            },
                        )
                    })
                    .collect(),
            }),
            Some(until),
        ))
    }

    /// Prepare a deposit: `token_symbol` routes to the best live venue unless `protocol` names
    /// one; at least 0.01 SOL (or its USD value). Sign and send `transactions` in order.
    #[oai(path = "/defi/deposit/prepare", method = "post")]
    async fn deposit_prepare(
        &self,
        body: Json<DepositBody>,
    ) -> Answer<Json<DepositPrepared>, PrepareRefusals> {
        let b = body.0;
        Ok(Json(
            self.deposit(
                b.wallet,
                b.token_symbol,
                b.amount,
                b.protocol,
                b.narrative_id,
            )
            .await?,
        ))
    }

    /// Confirm a deposit by the signature of its last transaction: recorded once the ledger
    /// shows it landed from that wallet as prepared; a replay answers what was recorded.
    #[oai(path = "/defi/deposit/confirm", method = "post")]
    async fn deposit_confirm(
        &self,
        body: Json<DefiConfirmBody>,
    ) -> Answer<Json<DepositConfirmed>, DefiConfirmRefusals> {
        let b = body.0;
        let recorded =
            deposit::confirm(&self.state, b.backing_id, &b.wallet, b.tx_signature).await?;
        let p = recorded.position;
        Ok(Json(DepositConfirmed {
            ok: true,
            backing_id: p.id,
            tx_signature: p.deposit_signature,
            amount_sol: crate::values::sol(p.amount_lamports),
            protocol: p.protocol,
            status: p.status,
        }))
    }

    /// Prepare the withdrawal of a backing (its own wallet only; `stake_a` answers 503
    /// `jito_unstake_not_supported`).
    #[oai(path = "/defi/withdrawal/prepare", method = "post")]
    async fn withdrawal_prepare(
        &self,
        body: Json<WithdrawalBody>,
    ) -> Answer<Json<WithdrawalPrepared>, PrepareRefusals> {
        let prepared = withdrawal::prepare(&self.state, body.0.backing_id, body.0.wallet).await?;
        Ok(Json(WithdrawalPrepared::from(prepared)))
    }

    /// Confirm a withdrawal by its signature; the backing is marked withdrawn.
    #[oai(path = "/defi/withdrawal/confirm", method = "post")]
    async fn withdrawal_confirm(
        &self,
        body: Json<WithdrawalConfirmBody>,
    ) -> Answer<Json<WithdrawalConfirmed>, DefiConfirmRefusals> {
        let b = body.0;
        let done = withdrawal::confirm(
            &self.state,
            b.withdrawal_id,
            b.backing_id,
            &b.wallet,
            b.tx_signature,
        )
        .await?;
        let p = done.position;
        let withdrawn = p.withdrawn_base.unwrap_or(0);
        Ok(Json(WithdrawalConfirmed {
            ok: true,
            backing_id: p.id,
            tx_signature: done.signature.to_string(),
            protocol: p.protocol,
            status: p.status,
            withdrawn_base: withdrawn,
            yield_earned_base: (withdrawn - p.amount_base).max(0),
        }))
    }

    /// The wallet's open positions and how its principal is split across venues.
    #[oai(path = "/defi/allocation/:wallet", method = "get")]
    async fn allocation(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Response<Json<AllocationAnswer>>, ReadRefusals> {
        let positions = reads::positions(&self.state, &wallet.0).await?;
        let total: f64 = positions.iter().map(|p| p.amount_sol).sum();
        let until = self.valued_until(&positions);
        let answer = Json(AllocationAnswer {
            ok: true,
            wallet: wallet.0,
            allocation: positions
                .iter()
                .map(|p| AllocationEntry {
                    protocol: p.protocol.to_string(),
                    amount_sol: p.amount_sol,
                    percentage: if total > 0.0 {
                        p.amount_sol / total * 100.0
                    } else {
                        0.0
                    },
                    backing_id: p.backing_id.clone(),
                })
                .collect(),
            empty: positions.is_empty(),
            positions: positions.iter().map(PositionView::of).collect(),
            total_sol: total,
        });
        Ok(fresh_until(answer, until))
    }

    /// The wallet's yield: value at each venue's current exchange rate less principal.
    #[oai(path = "/defi/yield/:wallet", method = "get")]
    async fn yield_earned(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Response<Json<YieldAnswer>>, ReadRefusals> {
        let positions = reads::positions(&self.state, &wallet.0).await?;
        let (total, narrative, echo) = reads::split_yield(&positions);
        let until = self.valued_until(&positions);
        let answer = Json(YieldAnswer {
            ok: true,
            wallet: wallet.0,
            yield_earned_sol: total,
            breakdown: YieldBreakdown {
                narrative_yield_sol: narrative,
                echo_pool_sol: echo,
            },
        });
        Ok(fresh_until(answer, until))
    }

    /// `lend_a` deposit of SOL; the answer's `receipt` withdraws it.
    #[oai(path = "/defi/lend_a/deposit", method = "post")]
    async fn lend_a_deposit(
        &self,
        body: Json<LendADepositBody>,
    ) -> Answer<Json<LendADeposited>, PrepareRefusals> {
        let b = body.0;
        let prepared = self
            .deposit(
                b.wallet_address,
                TokenSymbol::Sol,
                b.amount_sol.ui(),
                Some(VenueId::LendA),
                b.narrative_id,
            )
            .await?;
        Ok(Json(LendADeposited {
            receipt: prepared.backing_id,
            prepared,
        }))
    }

    /// `lend_a` withdrawal of the deposit `receipt` names.
    #[oai(path = "/defi/lend_a/withdraw", method = "post")]
    async fn lend_a_withdraw(
        &self,
        body: Json<LendAWithdrawBody>,
    ) -> Answer<Json<LendAWithdrawn>, PrepareRefusals> {
        let b = body.0;
        let yield_earned_sol = reads::yield_of(&self.state, &b.wallet_address, b.receipt).await?;
        let prepared = withdrawal::prepare_named(
            &self.state,
            b.receipt,
            b.wallet_address,
            VenueId::LendA,
            b.amount_sol.lamports(),
        )
        .await?;
        Ok(Json(LendAWithdrawn {
            prepared: WithdrawalPrepared::from(prepared),
            yield_earned_sol,
        }))
    }

    /// `lend_b` (Kamino) deposit in base units: a first deposit also sets up the wallet's
    /// user metadata and obligation (`ready_to_sign`, two transactions).
    #[oai(path = "/defi/lend_b/deposit", method = "post")]
    async fn lend_b_deposit(
        &self,
        body: Json<BaseUnitsBody>,
    ) -> Answer<Json<DepositPrepared>, PrepareRefusals> {
        let b = body.0;
        let amount = ui(b.amount.get(), b.symbol)?;
        Ok(Json(
            self.deposit(
                b.wallet_address,
                b.symbol,
                amount,
                Some(VenueId::LendB),
                None,
            )
            .await?,
        ))
    }

    /// `lend_b` withdrawal of the wallet's backing there of `symbol` whose deposit was
    /// `amount_base` (a backing is withdrawn whole; 404 when none was of that amount).
    #[oai(path = "/defi/lend_b/withdraw", method = "post")]
    async fn lend_b_withdraw(
        &self,
        body: Json<BaseUnitsBody>,
    ) -> Answer<Json<WithdrawalPrepared>, PrepareRefusals> {
        let b = body.0;
        let backing = withdrawal::backing_of_amount(
            &self.state,
            &b.wallet_address,
            VenueId::LendB,
            b.symbol,
            b.amount.get(),
        )
        .await?;
        let prepared = withdrawal::prepare(&self.state, backing, b.wallet_address).await?;
        Ok(Json(WithdrawalPrepared::from(prepared)))
    }

    /// `stake_a` (Jito) deposit of SOL; mainnet. `stake_a_token_account` is the wallet's
    /// jitoSOL account the pool tokens are minted to.
    #[oai(path = "/defi/stake_a/deposit", method = "post")]
    async fn stake_a_deposit(
        &self,
        body: Json<StakeBody>,
    ) -> Answer<Json<StakeADeposited>, PrepareRefusals> {
        let (prepared, stake_a_token_account) = self.stake(body.0, VenueId::StakeA).await?;
        Ok(Json(StakeADeposited {
            prepared,
            stake_a_token_account,
        }))
    }

    /// `stake_b` (Marinade) deposit of SOL; mainnet. `stake_b_token_account` is the wallet's
    /// mSOL account the liquid tokens are minted to.
    #[oai(path = "/defi/stake_b/deposit", method = "post")]
    async fn stake_b_deposit(
        &self,
        body: Json<StakeBody>,
    ) -> Answer<Json<StakeBDeposited>, PrepareRefusals> {
        let (prepared, stake_b_token_account) = self.stake(body.0, VenueId::StakeB).await?;
        Ok(Json(StakeBDeposited {
            prepared,
            stake_b_token_account,
        }))
    }

    /// `stake_b` liquid unstake of the wallet's backing there whose deposit was `amount_sol`;
    /// mainnet.
    #[oai(path = "/defi/stake_b/withdraw", method = "post")]
    async fn stake_b_withdraw(
        &self,
        body: Json<StakeBody>,
    ) -> Answer<Json<WithdrawalPrepared>, PrepareRefusals> {
        let b = body.0;
        let backing = withdrawal::backing_of_amount(
            &self.state,
            &b.wallet_address,
            VenueId::StakeB,
            TokenSymbol::Sol,
            b.amount_sol.lamports(),
        )
        .await?;
        let prepared = withdrawal::prepare(&self.state, backing, b.wallet_address).await?;
        Ok(Json(WithdrawalPrepared::from(prepared)))
    }

    /// `lend_c` deposit in base units; mainnet (versioned transactions).
    #[oai(path = "/defi/lend_c/deposit", method = "post")]
    async fn lend_c_deposit(
        &self,
        body: Json<RawUnitsBody>,
    ) -> Answer<Json<DepositPrepared>, PrepareRefusals> {
        let b = body.0;
        let amount = ui(b.amount_raw.get(), b.symbol)?;
        Ok(Json(
            self.deposit(
                b.wallet_address,
                b.symbol,
                amount,
                Some(VenueId::LendC),
                None,
            )
            .await?,
        ))
    }

    /// `lend_c` withdrawal of the wallet's backing there whose deposit was `amount_raw`;
    /// mainnet.
    #[oai(path = "/defi/lend_c/withdraw", method = "post")]
    async fn lend_c_withdraw(
        &self,
        body: Json<RawUnitsBody>,
    ) -> Answer<Json<WithdrawalPrepared>, PrepareRefusals> {
        let b = body.0;
        let backing = withdrawal::backing_of_amount(
            &self.state,
            &b.wallet_address,
            VenueId::LendC,
            b.symbol,
            b.amount_raw.get(),
        )
        .await?;
        let prepared = withdrawal::prepare(&self.state, backing, b.wallet_address).await?;
        Ok(Json(WithdrawalPrepared::from(prepared)))
    }

    /// `pool_a`: not wired (503 `coming_soon`).
    #[oai(path = "/defi/pool_a/deposit", method = "post")]
    async fn pool_a_deposit(&self) -> Answer<Json<DepositPrepared>, GatedRefusals> {
        Err(ApiError::coming_soon("pool_a").into())
    }

    /// The wallet's liquid-staking positions and conviction tier (spec 4.6).
    #[oai(path = "/staking/:wallet", method = "get")]
    async fn staking(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Response<Json<StakingAnswer>>, ReadRefusals> {
        let (staked, tier) = reads::staking(&self.state, &wallet.0).await?;
        let until = self.valued_until(&staked);
        let answer = Json(StakingAnswer {
            ok: true,
            wallet_address: wallet.0,
            staked_amount: staked.iter().map(|p| p.amount_sol).sum(),
            tier: tier.into(),
            positions: staked.iter().map(PositionView::of).collect(),
        });
        Ok(fresh_until(answer, until))
    }

    /// The staking deposit flow: 503 `coming_soon` until mainnet (spec 4.6).
    #[oai(path = "/staking/deposit", method = "post")]
    async fn staking_deposit(&self) -> Answer<Json<DepositPrepared>, GatedRefusals> {
        Err(ApiError::coming_soon("staking").into())
    }
}
