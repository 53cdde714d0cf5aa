//! Backing a shield: a prepared `back_shield` for a wallet that acknowledged the current terms,
//! and, once the signature is on the ledger as prepared, the `shield_positions` row and a refresh
//! of the accounts it changed, in one database transaction. The row's window is the one the
//! backing landed in, as the program counted it, however late the wallet confirms.

use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{shield_coverages, shield_positions};
use narrative_store::freshness::{Generations, Topic};
use poem::http::StatusCode;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter,
};
use serde::{Deserialize, Serialize};

use crate::chain::halts::ensure_running_as_of;
use crate::chain::{Admission, MoneyFlow, Prepared, Unsigned};
use crate::domain::shield::{protocols, terms};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, PreparedId, ProtocolId, ShieldSide, Sol, Wallet};

/// Spec 8: a shield backing is 0.1 to 100 SOL.
pub type ShieldAmount = Sol<100_000_000, 100_000_000_000>;
/// The discovery window is the first fifth of a coverage period (`DISCOVERY_WINDOW_PCT`).
const DISCOVERY_WINDOW_PCT: i64 = 20;

pub struct BackShield {
    pub wallet: Wallet,
    pub protocol_id: ProtocolId,
    pub side: ShieldSide,
    pub amount: ShieldAmount,
    pub arcium_enabled: bool,
}

/// What prepare stores for confirm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub protocol_id: ProtocolId,
    pub side: ShieldSide,
    pub amount_lamports: u64,
    pub arcium_enabled: bool,
}

pub struct PreparedBacking {
    pub unsigned: Unsigned,
    pub params: Params,
}

/// A recorded backing.
pub struct Confirmed {
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub position: shield_positions::Model,
}

/// The shield backing flow; `landed_at` is when the confirmed transaction's block was produced
/// (the program's clock for the discovery window), once the confirm has read it.
#[derive(Default)]
pub struct ShieldBacking {
    landed_at: Option<i64>,
}

/// What a shield prepare checks: the component runs, the wallet acknowledged the current
/// terms, the coverage takes backings now.
struct ShieldAdmission<'a> {
    state: &'a AppState,
    back: &'a BackShield,
}

#[async_trait::async_trait]
impl Admission for ShieldAdmission<'_> {
    fn topics(&self) -> &'static [Topic] {
        &[Topic::System, Topic::Terms, Topic::Shield]
    }

    async fn check(&self, at: &Generations) -> Result<(), ApiError> {
        let (state, back) = (self.state, self.back);
        ensure_running_as_of(state.store.db(), &state.memos.halts, at, Component::Shield).await?;
        if !terms::acknowledged_as_of(state, at, &back.wallet).await? {
            return Err(ApiError::coded(
                StatusCode::FORBIDDEN,
                "terms_not_accepted",
                "acknowledge the current shield terms first (POST /v1/shield/terms-ack)",
            )
            .with("terms_version", state.shield_terms_version.as_str()));
        }
        let coverage = protocols::get_as_of(state, at, back.protocol_id).await?;
        if !protocols::backing_open(&coverage, state.now()) {
            return Err(ApiError::coded(
                StatusCode::FORBIDDEN,
                "coverage_not_open",
                "this coverage period does not take backings now",
            ));
        }
        Ok(())
    }
}

pub async fn prepare(state: &AppState, back: BackShield) -> Result<PreparedBacking, ApiError> {
    // The reads come from memory while nothing they read changed (`crate::freshness`), and
    // are verified against the generations the write itself reads.
    let ix = narrative_sdk::shield::back_shield(
        back.wallet.pubkey(),
        &back.protocol_id.0,
        back.side.into(),
        back.amount.lamports(),
    );
    let params = Params {
        protocol_id: back.protocol_id,
        side: back.side,
        amount_lamports: back.amount.lamports(),
        arcium_enabled: back.arcium_enabled,
    };
    let admission = ShieldAdmission { state, back: &back };
    let unsigned = state
        .chain
        .prepare_checked(
            &admission,
            &ShieldBacking::default(),
            &back.wallet,
            &[ix],
            &params,
        )
        .await?;
    Ok(PreparedBacking { unsigned, params })
}

pub async fn confirm(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    let opened = state
        .chain
        .open::<ShieldBacking>(prepared_id, &signature)
        .await?;
    state
        .chain
        .confirm_landed(
            &ShieldBacking::default(),
            opened,
            signature,
            async |landed, _| {
                Ok(ShieldBacking {
                    landed_at: landed.block_time,
                })
            },
        )
        .await
}

/// `discovery` in the first 20 % of the coverage period (2.0x conviction multiplier), else
/// `standard`: at `at`, when the backing landed.
fn window(coverage: Option<&shield_coverages::Model>, at: i64) -> &'static str {
    match coverage {
        Some(c)
            if at
                < c.period_start + (c.period_end - c.period_start) * DISCOVERY_WINDOW_PCT / 100 =>
        {
            "discovery"
        }
        _ => "standard",
    }
}

#[async_trait::async_trait]
impl MoneyFlow for ShieldBacking {
    const KIND: &'static str = "shield_back";
    type Params = Params;
    type Confirmed = Confirmed;

    fn component(&self, _: &Self::Params) -> Component {
        Component::Shield
    }

    fn changed(&self, prepared: &Prepared<Params>) -> Vec<Pubkey> {
        let id = &prepared.params.protocol_id.0;
        vec![
            pda::shield::coverage(id),
            pda::shield::backing(id, &prepared.wallet.pubkey(), prepared.params.side.into()),
        ]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let params = &prepared.params;
        let coverage = shield_coverages::Entity::find()
            .filter(shield_coverages::Column::ProtocolId.eq(params.protocol_id.to_string()))
            .one(txn)
            .await?;
        shield_positions::Entity::insert(shield_positions::ActiveModel {
            id: Set(uuid::Uuid::new_v4().to_string()),
            wallet: Set(prepared.wallet.to_string()),
            protocol: Set(params.protocol_id.to_string()),
            side: Set(params.side.to_string()),
            amount_lamports: Set(i64::try_from(params.amount_lamports).map_err(ApiError::internal)?),
            arcium_enabled: Set(params.arcium_enabled),
            // A node that does not say when the block was produced: the confirm's time,
            // which is never earlier.
            window: Set(window(coverage.as_ref(), self.landed_at.unwrap_or(now)).into()),
            yield_earned: Set(0),
            status: Set("confirmed".into()),
            tx_signature: Set(Some(signature.to_string())),
            created_at: Set(now),
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
    ) -> Result<Confirmed, ApiError> {
        let signature = prepared
            .signature
            .ok_or_else(|| ApiError::internal("answering an unconfirmed backing"))?;
        let position = shield_positions::Entity::find()
            .filter(shield_positions::Column::TxSignature.eq(signature.to_string()))
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("confirmed backing without its position"))?;
        Ok(Confirmed {
            prepared_id: prepared.id,
            signature,
            position,
        })
    }
}
