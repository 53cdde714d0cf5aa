//! Fast actions (spec 4.7 `POST /v1/borrow/fast-action`): a borrow sized at a share of the
//! tier's max LTV (`safe` 30 %, `balanced` 50 %, `max` 100 %, `instant_sol` 40 %) of the
//! wallet's collateral, less what it owes; the flare tier and up. The borrow itself is prepared
//! as any other ([`flow::prepare`], with every gate).

use poem::http::StatusCode;

use super::capacity;
use super::flow::{self, BorrowRequest, PreparedBorrow};
use super::{bps_fraction, may_borrow_from};
use crate::domain::profiles::conviction::Tier;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{FastAction, TokenSymbol, UsdAmount, VenueId, Wallet};

pub struct Prepared {
    pub action: FastAction,
    pub max_ltv: f64,
    pub effective_ltv: f64,
    pub borrow: PreparedBorrow,
}

/// The USD a fast action borrows: the collateral at the action's LTV, less what is owed.
pub fn amount_usd(collateral_usd: f64, borrowed_usd: f64, effective_ltv: f64) -> f64 {
    collateral_usd * effective_ltv - borrowed_usd
}

pub async fn prepare(
    state: &AppState,
    wallet: Wallet,
    action: FastAction,
    protocol: Option<VenueId>,
    asset: Option<TokenSymbol>,
) -> Result<Prepared, ApiError> {
    flow::ensure_enabled(state)?;
    let protocol = protocol.unwrap_or(VenueId::LendA);
    let asset = asset.unwrap_or(match action {
        FastAction::InstantSol => TokenSymbol::Sol,
        _ => TokenSymbol::Usdc,
    });
    let capacity = capacity::capacity(state, &wallet).await?;
    if capacity.tier < Tier::Flare || !may_borrow_from(capacity.tier, protocol) {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "flare_required",
            format!(
                "fast actions need the flare tier (conviction score {}+); the wallet is {}",
                Tier::Flare.min_score(),
                capacity.tier.name()
            ),
        ));
    }
    let max_ltv = capacity.max_ltv();
    let effective_ltv = max_ltv * bps_fraction(action.share_bps());
    let wanted = amount_usd(
        capacity.collateral_usd,
        capacity.total_borrowed_usd,
        effective_ltv,
    );
    let amount = UsdAmount::new((wanted * 100.0).floor() / 100.0).map_err(|_| {
        ApiError::coded(
            StatusCode::BAD_REQUEST,
            "borrow_capacity_exceeded",
            format!(
                "nothing to borrow at {:.0} % of the max LTV: the wallet owes {:.2} USD against \
                 {:.2} USD of collateral",
                f64::from(action.share_bps()) / 100.0,
                capacity.total_borrowed_usd,
                capacity.collateral_usd
            ),
        )
    })?;
    let borrow = flow::prepare(
        state,
        BorrowRequest {
            wallet,
            protocol,
            asset,
            asset_mint: None,
            amount_usd: amount,
        },
    )
    .await?;
    Ok(Prepared {
        action,
        max_ltv,
        effective_ltv,
        borrow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_is_its_share_of_the_max_ltv() {
        let shares: Vec<u32> = FastAction::ALL.iter().map(|a| a.share_bps()).collect();
        assert_eq!(shares, vec![3_000, 5_000, 10_000, 4_000]);
        // 1,500 USD of collateral at 60 % × 50 % = 30 %, 100 owed: 350 more.
        assert!((amount_usd(1_500.0, 100.0, 0.6 * 0.5) - 350.0).abs() < 1e-9);
    }
}
