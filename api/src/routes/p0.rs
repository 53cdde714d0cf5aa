//! p0, the unified-margin integration (spec 4.5; marginfi v2): deposits into the wallet's margin
//! account and withdrawals from it (prepare, sign, confirm), and reads of its health, positions,
//! account and strategies. Every route answers 503 `p0_disabled` unless `P0_ENABLED`.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::domain::p0::reads::{self, AccountNow, BalanceNow, PositionNow};
use crate::domain::p0::{deposit, withdraw};
use crate::error::{refusals, Answer};
use crate::routes::borrow::{units, PriceView};
use crate::routes::{Tag, ToSign};
use crate::state::AppState;
use crate::values::{
    Base58Signature, MintAddress, NarrativeId, PreparedId, TokenSymbol, UiAmount, Wallet,
};
use narrative_store::entities::p0_positions;

pub struct P0Api {
    pub state: Arc<AppState>,
}

refusals! {
    /// A read: a malformed wallet (400), a wallet below `core` where the read is gated (403),
    /// p0 disabled, the price source or the venue that did not answer (503).
    pub P0ReadRefusals: [400, 403, 503];
    /// A prepare: bad input, an asset without a bank, below the minimum or beyond the balance
    /// (400), a wallet below `core` (403), no position to withdraw from (404), body too large
    /// (413), p0 disabled, the price source or the venue that did not answer (503).
    pub P0PrepareRefusals: [400, 403, 404, 413, 503];
    /// A confirm: not the prepared transaction or another position's (400), another wallet's
    /// (403), unknown (404), confirmed with another signature (409), body too large (413), p0
    /// disabled or not on the ledger yet (503).
    pub P0ConfirmRefusals: [400, 403, 404, 409, 413, 503];
}

#[derive(Object)]
pub struct P0DepositBody {
    pub wallet_address: Wallet,
    /// The mint of the token to deposit (a bank of the group must take it).
    pub asset_mint: MintAddress,
    /// A UI amount (1.5 SOL is 1.5); at least 0.01 SOL or its USD value.
    pub amount_ui: UiAmount,
    pub narrative_id: Option<NarrativeId>,
}

/// A prepared deposit: sign and send `transactions_to_sign` in order (the last is
/// `transaction`, the one to confirm).
#[derive(Object)]
pub struct P0DepositPrepared {
    pub ok: bool,
    /// `p0`.
    pub protocol: String,
    /// The wallet's margin account.
    pub account_address: String,
    /// The margin account is created by the first transaction.
    pub needs_account_creation: bool,
    /// `ready_to_sign`.
    pub status: String,
    pub note: String,
    /// The prepared deposit (additive; its confirm names it).
    pub deposit_id: PreparedId,
    #[oai(flatten)]
    pub signing: ToSign,
    pub asset: TokenSymbol,
    pub amount_base: u64,
}

#[derive(Object)]
pub struct P0DepositConfirmBody {
    pub wallet_address: Wallet,
    pub deposit_id: PreparedId,
    pub tx_signature: Base58Signature,
}

/// A position as recorded: deposited less withdrawn.
#[derive(Object)]
pub struct P0PositionView {
    pub position_id: String,
    pub account_address: String,
    pub bank: String,
    pub asset: String,
    pub mint: String,
    pub principal: f64,
    pub principal_base: i64,
    /// `open` or `closed`.
    pub status: String,
    pub narrative_id: Option<String>,
    pub last_signature: String,
    pub opened_at: i64,
    pub closed_at: Option<i64>,
}

impl P0PositionView {
    fn of(p: &p0_positions::Model) -> P0PositionView {
        let principal = p.token_symbol.parse::<TokenSymbol>().map_or(0.0, |t| {
            units(t, u64::try_from(p.principal_base).unwrap_or(0))
        });
        P0PositionView {
            position_id: p.id.clone(),
            account_address: p.account.clone(),
            bank: p.bank.clone(),
            asset: p.token_symbol.clone(),
            mint: p.mint.clone(),
            principal,
            principal_base: p.principal_base,
            status: p.status.clone(),
            narrative_id: p.narrative_id.clone(),
            last_signature: p.last_signature.clone(),
            opened_at: p.created_at,
            closed_at: p.closed_at,
        }
    }
}

#[derive(Object)]
pub struct P0Confirmed {
    pub ok: bool,
    pub tx_signature: String,
    pub position: P0PositionView,
}

#[derive(Object)]
pub struct P0WithdrawBody {
    pub wallet_address: Wallet,
    pub asset_mint: MintAddress,
    /// A UI amount; give this or `withdraw_all`.
    pub amount_ui: Option<UiAmount>,
    /// Everything the balance holds, closing it.
    pub withdraw_all: Option<bool>,
}

#[derive(Object)]
pub struct P0WithdrawPrepared {
    pub ok: bool,
    pub protocol: String,
    /// `ready_to_sign`.
    pub status: String,
    #[oai(flatten)]
    pub signing: ToSign,
    /// The prepared withdrawal (its confirm may name it).
    pub withdrawal_id: PreparedId,
    pub position_id: String,
    pub account_address: String,
    pub asset: TokenSymbol,
    pub withdraw_all: bool,
    /// What it pays out at the bank's share value now, base units.
    pub expected_amount_base: u64,
}

#[derive(Object)]
pub struct P0WithdrawConfirmBody {
    pub wallet_address: Wallet,
    pub position_id: PreparedId,
    pub tx_signature: Base58Signature,
    /// The prepared withdrawal; when absent, the wallet's one of the position that the
    /// signature landed, else its newest.
    pub withdrawal_id: Option<PreparedId>,
}

/// One balance of the margin account now.
#[derive(Object)]
pub struct P0BalanceView {
    pub bank: String,
    /// The bank's token, `null` when the service does not know its mint.
    pub asset: Option<String>,
    pub mint: String,
    pub asset_base: u64,
    pub liability_base: u64,
    /// `null` for a token the service cannot price.
    pub asset_usd: Option<f64>,
    pub liability_usd: Option<f64>,
    pub asset_weight_maint: f64,
    pub liability_weight_maint: f64,
    pub supply_apr_pct: f64,
    pub borrow_apr_pct: f64,
}

impl P0BalanceView {
    fn of(b: &BalanceNow, sol_usd: f64) -> P0BalanceView {
        P0BalanceView {
            bank: b.bank.address.to_string(),
            asset: b.token.map(|t| t.to_string()),
            mint: b.bank.mint.to_string(),
            asset_base: b.asset_base,
            liability_base: b.liability_base,
            asset_usd: b.asset_usd(sol_usd),
            liability_usd: b.liability_usd(sol_usd),
            asset_weight_maint: b.bank.asset_weight_maint,
            liability_weight_maint: b.bank.liability_weight_maint,
            supply_apr_pct: b.bank.lending_apr_pct,
            borrow_apr_pct: b.bank.borrowing_apr_pct,
        }
    }
}

#[derive(Object)]
pub struct P0HealthAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub account_address: String,
    /// The wallet has a margin account.
    pub exists: bool,
    pub assets_usd: f64,
    pub liabilities_usd: f64,
    /// Assets and debts weighted by their banks' maintenance weights.
    pub weighted_assets_usd: f64,
    pub weighted_liabilities_usd: f64,
    /// Weighted assets over weighted debts; below 1.0 the account can be liquidated. `null`
    /// while nothing is owed.
    pub health_factor: Option<f64>,
    /// `warning` (< 1.50), `urgent` (< 1.20), `critical` (< 1.05), or `null`.
    pub level: Option<String>,
    /// Banks the account holds a balance in whose token the service cannot price (not counted).
    pub unpriced_banks: Vec<String>,
    pub price: PriceView,
}

impl P0HealthAnswer {
    fn of(wallet: Wallet, a: &AccountNow, now: i64) -> P0HealthAnswer {
        P0HealthAnswer {
            ok: true,
            wallet,
            account_address: a.address.to_string(),
            exists: a.exists,
            assets_usd: a.assets_usd(),
            liabilities_usd: a.liabilities_usd(),
            weighted_assets_usd: a.weighted_assets_usd(),
            weighted_liabilities_usd: a.weighted_liabilities_usd(),
            health_factor: a.health_factor(),
            level: a.level().map(|l| l.as_str().to_owned()),
            unpriced_banks: a.unpriced_banks().iter().map(|k| k.to_string()).collect(),
            price: PriceView::of(&a.price, now),
        }
    }
}

/// A recorded open position with its balance now.
#[derive(Object)]
pub struct P0OpenPositionView {
    #[oai(flatten)]
    pub recorded: P0PositionView,
    /// What the balance holds now, principal and interest.
    pub balance: f64,
    pub balance_base: u64,
    /// The balance beyond the principal.
    pub yield_earned: f64,
    pub yield_earned_base: u64,
    /// The bank's supply APR now; `null` when the account no longer holds the balance.
    pub supply_apr_pct: Option<f64>,
}

#[derive(Object)]
pub struct P0PositionsAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    pub account_address: String,
    pub positions: Vec<P0OpenPositionView>,
}

#[derive(Object)]
pub struct P0AccountAnswer {
    pub ok: bool,
    pub wallet: Wallet,
    /// The wallet's conviction tier (`core` or above).
    pub tier: String,
    pub account_address: String,
    pub exists: bool,
    pub balances: Vec<P0BalanceView>,
    pub health: P0HealthAnswer,
}

/// A strategy: supplying one bank's token.
#[derive(Object)]
pub struct P0StrategyView {
    pub id: String,
    /// `supply`.
    pub kind: String,
    pub asset: TokenSymbol,
    pub mint: String,
    pub bank: String,
    /// The bank's supply APR now (its rate cache), percent.
    pub supply_apr_pct: f64,
    /// What borrowing it costs now, percent.
    pub borrow_apr_pct: f64,
    pub description: String,
}

#[derive(Object)]
pub struct P0StrategiesAnswer {
    pub ok: bool,
    pub protocol: String,
    pub strategies: Vec<P0StrategyView>,
}

#[OpenApi(prefix_path = "/defi/p0", tag = "Tag::Defi")]
impl P0Api {
    /// Prepare a deposit into the wallet's p0 margin account (`core` tier; created by a first
    /// transaction when missing). Sign and send `transactions_to_sign` in order.
    #[oai(path = "/deposit", method = "post")]
    async fn deposit(
        &self,
        body: Json<P0DepositBody>,
    ) -> Answer<Json<P0DepositPrepared>, P0PrepareRefusals> {
        let b = body.0;
        let p = deposit::prepare(
            &self.state,
            deposit::DepositRequest {
                wallet: b.wallet_address,
                asset_mint: b.asset_mint,
                amount_ui: b.amount_ui,
                narrative_id: b.narrative_id,
            },
        )
        .await?;
        let note = if p.needs_account_creation {
            "sign and send both transactions in order: the first creates the margin account, \
             the second deposits; then confirm the second's signature"
        } else {
            "sign and send the transaction, then confirm its signature"
        };
        Ok(Json(P0DepositPrepared {
            ok: true,
            protocol: "p0".into(),
            account_address: p.params.account,
            needs_account_creation: p.needs_account_creation,
            status: "ready_to_sign".into(),
            note: note.into(),
            deposit_id: p.deposit.id,
            signing: ToSign::new(p.setup, p.deposit.transaction, p.deposit.blockhash),
            asset: p.params.token_symbol,
            amount_base: p.params.amount_base,
        }))
    }

    /// Confirm a deposit by its signature: recorded once the ledger shows it landed from that
    /// wallet as prepared; a replay answers the position.
    #[oai(path = "/deposit/confirm", method = "post")]
    async fn deposit_confirm(
        &self,
        body: Json<P0DepositConfirmBody>,
    ) -> Answer<Json<P0Confirmed>, P0ConfirmRefusals> {
        let b = body.0;
        let signature = b.tx_signature.to_string();
        let position =
            deposit::confirm(&self.state, b.deposit_id, &b.wallet_address, b.tx_signature).await?;
        Ok(Json(P0Confirmed {
            ok: true,
            tx_signature: signature,
            position: P0PositionView::of(&position),
        }))
    }

    /// Prepare a withdrawal from the wallet's position in a bank: `amount_ui`, or
    /// `withdraw_all` to take everything and close it.
    #[oai(path = "/withdraw", method = "post")]
    async fn withdraw(
        &self,
        body: Json<P0WithdrawBody>,
    ) -> Answer<Json<P0WithdrawPrepared>, P0PrepareRefusals> {
        let b = body.0;
        let p = withdraw::prepare(
            &self.state,
            withdraw::WithdrawRequest {
                wallet: b.wallet_address,
                asset_mint: b.asset_mint,
                amount_ui: b.amount_ui,
                withdraw_all: b.withdraw_all,
            },
        )
        .await?;
        Ok(Json(P0WithdrawPrepared {
            ok: true,
            protocol: "p0".into(),
            status: "ready_to_sign".into(),
            signing: ToSign::new(vec![], p.withdrawal.transaction, p.withdrawal.blockhash),
            withdrawal_id: p.withdrawal.id,
            position_id: p.params.position_id,
            account_address: p.params.account,
            asset: p.params.token_symbol,
            withdraw_all: p.params.amount_base.is_none(),
            expected_amount_base: p.params.expected_base,
        }))
    }

    /// Confirm a withdrawal by its signature; the position's principal goes down, and a
    /// withdrawal of everything closes it.
    #[oai(path = "/withdraw/confirm", method = "post")]
    async fn withdraw_confirm(
        &self,
        body: Json<P0WithdrawConfirmBody>,
    ) -> Answer<Json<P0Confirmed>, P0ConfirmRefusals> {
        let b = body.0;
        let signature = b.tx_signature.to_string();
        let position = withdraw::confirm(
            &self.state,
            b.withdrawal_id,
            &b.position_id.to_string(),
            &b.wallet_address,
            b.tx_signature,
        )
        .await?;
        Ok(Json(P0Confirmed {
            ok: true,
            tx_signature: signature,
            position: P0PositionView::of(&position),
        }))
    }

    /// The margin account's health from the ledger at current prices.
    #[oai(path = "/health/:wallet", method = "get")]
    async fn health(&self, wallet: Path<Wallet>) -> Answer<Json<P0HealthAnswer>, P0ReadRefusals> {
        let account = reads::health(&self.state, &wallet.0).await?;
        Ok(Json(P0HealthAnswer::of(
            wallet.0,
            &account,
            self.state.now(),
        )))
    }

    /// The wallet's open positions with their balances and what they earned.
    #[oai(path = "/positions/:wallet", method = "get")]
    async fn positions(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<P0PositionsAnswer>, P0ReadRefusals> {
        let (account, positions) = reads::positions(&self.state, &wallet.0).await?;
        let view = |p: &PositionNow| {
            let asset = p.row.token_symbol.parse::<TokenSymbol>().ok();
            let ui = |base: u64| asset.map_or(0.0, |a| units(a, base));
            P0OpenPositionView {
                recorded: P0PositionView::of(&p.row),
                balance: ui(p.balance_base),
                balance_base: p.balance_base,
                yield_earned: ui(p.yield_base()),
                yield_earned_base: p.yield_base(),
                supply_apr_pct: p.supply_apr_pct,
            }
        };
        Ok(Json(P0PositionsAnswer {
            ok: true,
            wallet: wallet.0,
            account_address: account.address.to_string(),
            positions: positions.iter().map(view).collect(),
        }))
    }

    /// The account summary: every balance and the health (`core` tier).
    #[oai(path = "/account/:wallet", method = "get")]
    async fn account(&self, wallet: Path<Wallet>) -> Answer<Json<P0AccountAnswer>, P0ReadRefusals> {
        let (tier, account) = reads::account(&self.state, &wallet.0).await?;
        let sol_usd = account.price.sol_usd;
        Ok(Json(P0AccountAnswer {
            ok: true,
            tier: tier.name().into(),
            account_address: account.address.to_string(),
            exists: account.exists,
            balances: account
                .balances
                .iter()
                .map(|b| P0BalanceView::of(b, sol_usd))
                .collect(),
            health: P0HealthAnswer::of(wallet.0, &account, self.state.now()),
            wallet: wallet.0,
        }))
    }

    /// The strategies p0 offers, at the banks' rates now; with `wallet`, only for a `core` one.
    #[oai(path = "/strategies", method = "get")]
    async fn strategies(
        &self,
        wallet: Query<Option<Wallet>>,
    ) -> Answer<Json<P0StrategiesAnswer>, P0ReadRefusals> {
        let strategies = reads::strategies(&self.state, wallet.0.as_ref()).await?;
        Ok(Json(P0StrategiesAnswer {
            ok: true,
            protocol: "p0".into(),
            strategies: strategies
                .into_iter()
                .map(|s| P0StrategyView {
                    description: format!(
                        "supply {} to the p0 bank and earn its supply rate; withdraw any time \
                         the bank's liquidity allows",
                        s.asset
                    ),
                    id: s.id,
                    kind: "supply".into(),
                    asset: s.asset,
                    mint: s.mint.to_string(),
                    bank: s.bank.to_string(),
                    supply_apr_pct: s.supply_apr_pct,
                    borrow_apr_pct: s.borrow_apr_pct,
                })
                .collect(),
        }))
    }
}
