//! Registering an agent: a Free-tier key bound to its wallet, issued in the same database
//! transaction as the agent; about 5 registrations per hour per IP (spec 8).
//!
//! The wallet is proven when the registration carries the wallet's signature of
//! [`statement`] (a [`wallet_proof`]); without one it is a label, recorded unproven, that
//! confers nothing (in particular no oracle authority: `super::oracle`). A proof that fails
//! (not the wallet's, stale, or used before) refuses the registration: 401 `invalid_signature`,
//! nothing written.

use std::net::IpAddr;

use narrative_store::entities::agents;
use sea_orm::{ActiveValue::Set, EntityTrait};

use crate::domain::keys::{self, AccessTier, KeyOrigin};
use crate::domain::quota;
use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::limits::client::Subject;
use crate::limits::AGENT_REGISTRATION;
use crate::state::AppState;
use crate::values::{Base58Signature, UnixSeconds, Wallet};

pub struct Registered {
    pub agent: agents::Model,
    /// The whole key, shown once.
    pub api_key: String,
}

/// What a wallet signs to register an agent named `name` (as registered: trimmed) under it.
pub fn statement(wallet: &Wallet, name: &str) -> Statement {
    Statement::new("agent-register").field(wallet).field(name)
}

/// The wallet's signature of [`statement`] and when it signed.
pub struct WalletSignature {
    pub signature: Base58Signature,
    pub issued_at: UnixSeconds,
}

pub async fn register(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: Wallet,
    name: String,
    description: Option<String>,
    signed: Option<WalletSignature>,
) -> Result<Registered, ApiError> {
    // Per caller as every limit counts it: an IPv6 caller per /64.
    let subject = ip.map(Subject::of);
    let subject = subject.as_ref().map_or("unknown", Subject::as_str);
    quota::rate(state, &AGENT_REGISTRATION, subject).await?;
    let now = state.now();
    let statement = statement(&wallet, &name);
    let proof = signed.as_ref().map(|s| Proof {
        wallet: &wallet,
        signature: &s.signature,
        issued_at: s.issued_at,
    });
    if let Some(proof) = proof {
        wallet_proof::verify(&state.proof_domain, &statement, proof, now)?;
    }
    let txn = state.store.begin_write().await?;
    // Used up in the agent's transaction: a replay is refused before anything is written, and
    // a registration that fails later leaves the proof unused.
    if let Some(proof) = proof {
        wallet_proof::consume(&txn, &statement, proof, now).await?;
    }
    // Filed under the wallet only when the wallet proved it: a named wallet is a label, and
    // its holder neither lists nor revokes a stranger's key (the operator revokes any).
    let issued = keys::issue(
        &txn,
        AccessTier::Free,
        KeyOrigin::SelfRegistered,
        proof.is_some().then_some(wallet),
        Some(name.clone()),
        now,
    )
    .await?;
    let agent = agents::Model {
        id: format!("ag_{}", uuid::Uuid::new_v4().simple()),
        name,
        description,
        wallet_address: wallet.to_string(),
        api_key_id: issued.row.id.clone(),
        created_at: now,
        wallet_proven: proof.is_some(),
        oracle_granted_at: None,
        oracle_granted_by: None,
        oracle_revoked_at: None,
    };
    agents::Entity::insert(agents::ActiveModel {
        id: Set(agent.id.clone()),
        name: Set(agent.name.clone()),
        description: Set(agent.description.clone()),
        wallet_address: Set(agent.wallet_address.clone()),
        api_key_id: Set(agent.api_key_id.clone()),
        created_at: Set(agent.created_at),
        wallet_proven: Set(agent.wallet_proven),
        oracle_granted_at: Set(None),
        oracle_granted_by: Set(None),
        oracle_revoked_at: Set(None),
    })
    .exec_without_returning(&txn)
    .await?;
    txn.commit().await?;
    Ok(Registered {
        agent,
        api_key: issued.key,
    })
}
