//! Verification (spec 2.10, 4.8): proofs that a person stands behind a wallet, by method.
//!
//! - `idpass`: a biometric identity pass; the provider checks its token and that it was issued
//!   to this wallet.
//! - `passport`: a scored passport; `passport_verified` from a score of
//!   [`PASSPORT_VERIFIED_SCORE`], the check passes from [`PASSPORT_PASSING_SCORE`].
//! - `sas`: an attestation of the Solana Attestation Service under a trusted credential and
//!   schema, read from the ledger. Requesting one is `coming_soon`; the request is kept.
//!
//! Solana wallets have all three; an EVM address has only `passport` (the chain is read off the
//! address). Only a provider's answer or a ledger read writes a verification: the providers'
//! callback (`confirm`) makes the service ask again, it does not carry a verdict.
//!
//! `holder` is apart from the three: a loyalty-token balance held for [`HOLD_DAYS`], read from
//! the ledger, which unlocks the boosts of [`HolderBoosts`].

use std::net::IpAddr;

use narrative_sdk::Pubkey;
use narrative_store::entities::wallet_verifications;
use poem::http::StatusCode;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};

use crate::chain::attestations::{attestations_of, Attestation};
use crate::chain::holdings::{holding, Holding};
use crate::clock::DAY_SECS;
use crate::domain::quota;
use crate::error::ApiError;
use crate::providers::identity_pass::PassCheck;
use crate::state::AppState;
use crate::values::{ChainAddress, VerifyMethod, Wallet};

/// `passport_verified` from this score on (spec 8).
pub const PASSPORT_VERIFIED_SCORE: f64 = 10.0;
/// The passport check passes from this score on (spec 8).
pub const PASSPORT_PASSING_SCORE: f64 = 20.0;

/// Whether a Gitcoin Passport score passes the check: the one rule the profile, the callback
/// and `passport/:wallet` share.
pub fn passport_passes(score: f64) -> bool {
    score >= PASSPORT_PASSING_SCORE
}

/// How long a holder keeps the minimum balance (spec 8).
pub const HOLD_DAYS: i64 = 45;

/// How long a holder check's ledger reading is reused for the same wallet: a hold is counted in
/// days, so five minutes changes nothing worth another walk of the ledger.
pub const HOLDER_CHECK_TTL_SECS: i64 = 300;

/// How long a wallet's passport score is answered from memory before the provider is asked
/// again. This, not a per-wallet cap, bounds the provider calls per wallet: the route is public,
/// and a cap keyed by the wallet in its path let anyone spend a wallet's checks for the day.
pub const PASSPORT_CHECK_TTL_SECS: i64 = 300;

/// What a holder gets, in basis points (decided; `docs/decisions.md`, "Verification").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HolderBoosts {
    /// Added to the wallet's Echo Pool tickets.
    pub echo_pool_ticket_boost_bps: u32,
    /// Taken off the deposit fee.
    pub deposit_fee_discount_bps: u32,
}

impl HolderBoosts {
    /// What a holder gets.
    pub const HOLDER: HolderBoosts = HolderBoosts {
        echo_pool_ticket_boost_bps: 1_000,
        deposit_fee_discount_bps: 2_500,
    };
    /// What anyone else gets.
    pub const NONE: HolderBoosts = HolderBoosts {
        echo_pool_ticket_boost_bps: 0,
        deposit_fee_discount_bps: 0,
    };
}

const VERIFIED: &str = "verified";
const UNVERIFIED: &str = "unverified";
const REQUESTED: &str = "requested";
const HOLDER: &str = "holder";

/// The methods `address`'s chain has, in the order they are recommended.
pub fn available_methods(address: &ChainAddress) -> &'static [VerifyMethod] {
    match address {
        ChainAddress::Solana(_) => VerifyMethod::ALL,
        ChainAddress::Evm(_) => &[VerifyMethod::Passport],
    }
}

/// The verification record of spec 2.10, as of `now`.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub idpass_verified: bool,
    pub passport_score: f64,
    pub passport_verified: bool,
    pub sas_verified: bool,
}

impl Record {
    /// A passing proof by any method: a live identity pass, a passport at the passing score,
    /// or a live trusted attestation.
    pub fn fully_verified(&self) -> bool {
        self.idpass_verified || passport_passes(self.passport_score) || self.sas_verified
    }

    /// What to do next: nothing when fully verified; the passport when it is what the chain
    /// has or when the score is already past [`PASSPORT_VERIFIED_SCORE`] (a few stamps from
    /// passing); otherwise the identity pass, which proves it in one step. `sas` is never
    /// recommended while it is `coming_soon`.
    pub fn recommended_method(&self, address: &ChainAddress) -> Option<VerifyMethod> {
        if self.fully_verified() {
            return None;
        }
        match address {
            ChainAddress::Evm(_) => Some(VerifyMethod::Passport),
            ChainAddress::Solana(_) if self.passport_verified => Some(VerifyMethod::Passport),
            ChainAddress::Solana(_) => Some(VerifyMethod::IdPass),
        }
    }
}

/// The wallet's verification record: what its rows say, lapsed proofs not counted.
pub async fn record(state: &AppState, address: &ChainAddress) -> Result<Record, ApiError> {
    let rows = wallet_verifications::Entity::find()
        .filter(wallet_verifications::Column::Wallet.eq(address.to_string()))
        .all(state.store.db())
        .await?;
    let now = state.now();
    let live = |method: VerifyMethod| {
        rows.iter().any(|row| {
            row.method == method.as_str()
                && row.status == VERIFIED
                && row.expires_at.is_none_or(|at| at > now)
        })
    };
    let passport_score = rows
        .iter()
        .find(|row| row.method == VerifyMethod::Passport.as_str())
        .and_then(|row| row.score)
        .unwrap_or(0.0);
    Ok(Record {
        idpass_verified: live(VerifyMethod::IdPass),
        passport_score,
        passport_verified: passport_score >= PASSPORT_VERIFIED_SCORE,
        sas_verified: live(VerifyMethod::Sas),
    })
}

/// One row written as a provider or the ledger said it.
struct Finding {
    method: &'static str,
    status: &'static str,
    score: Option<f64>,
    reference: Option<String>,
    expires_at: Option<i64>,
}

async fn write(state: &AppState, wallet: &str, finding: Finding) -> Result<(), ApiError> {
    let now = state.now();
    let verified_at = (finding.status == VERIFIED).then_some(now);
    wallet_verifications::Entity::insert(wallet_verifications::ActiveModel {
        wallet: Set(wallet.to_owned()),
        method: Set(finding.method.to_owned()),
        status: Set(finding.status.to_owned()),
        score: Set(finding.score),
        reference: Set(finding.reference),
        checked_at: Set(now),
        verified_at: Set(verified_at),
        expires_at: Set(finding.expires_at),
    })
    .on_conflict(
        OnConflict::columns([
            wallet_verifications::Column::Wallet,
            wallet_verifications::Column::Method,
        ])
        .update_columns([
            wallet_verifications::Column::Status,
            wallet_verifications::Column::Score,
            wallet_verifications::Column::Reference,
            wallet_verifications::Column::CheckedAt,
            wallet_verifications::Column::VerifiedAt,
            wallet_verifications::Column::ExpiresAt,
        ])
        .to_owned(),
    )
    .exec_without_returning(state.store.db())
    .await?;
    Ok(())
}

/// 400 `method_not_available`: the method is not one of the address's chain.
fn not_available(method: VerifyMethod, address: &ChainAddress) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "method_not_available",
        format!(
            "{} is not available for {} wallets",
            method.as_str(),
            address.chain()
        ),
    )
}

/// A flow the user follows to verify by one method.
pub struct Flow {
    pub method: VerifyMethod,
    pub url: String,
    pub callback: String,
    /// `redirect` (the provider sends the user back with a token), `external` (the user acts
    /// at the provider, then asks for a check) or `coming_soon`.
    pub kind: &'static str,
    pub description: &'static str,
}

/// The flow of `preferred`, or else of the recommended method (the chain's first when none is
/// left to recommend).
pub async fn initiate(
    state: &AppState,
    address: &ChainAddress,
    preferred: Option<VerifyMethod>,
) -> Result<Flow, ApiError> {
    let methods = available_methods(address);
    let method = match preferred {
        Some(method) if methods.contains(&method) => method,
        Some(method) => return Err(not_available(method, address)),
        None => record(state, address)
            .await?
            .recommended_method(address)
            .unwrap_or(methods[0]),
    };
    let callback = state.verify.callback_url.clone();
    Ok(match method {
        VerifyMethod::IdPass => {
            let mut url = reqwest::Url::parse(state.identity_pass.flow_url())
                .map_err(|e| ApiError::internal(format!("IDPASS_FLOW_URL: {e}")))?;
            url.query_pairs_mut()
                .append_pair("wallet", &address.to_string())
                .append_pair("redirect_uri", &callback);
            Flow {
                method,
                url: url.into(),
                callback,
                kind: "redirect",
                description: "Scan your face with the identity pass provider; it hands back a \
                              token that POST /v1/verify/idpass checks.",
            }
        }
        VerifyMethod::Passport => Flow {
            method,
            url: state.passport.app_url().to_owned(),
            callback,
            kind: "external",
            description: "Collect stamps in your passport until its score reaches 20, then \
                          GET /v1/verify/passport/:wallet.",
        },
        VerifyMethod::Sas => Flow {
            method,
            url: "https://attest.solana.com".to_owned(),
            callback,
            kind: "coming_soon",
            description: "An attestation from a trusted issuer of the Solana Attestation \
                          Service: coming soon.",
        },
    })
}

/// The outcome of an identity pass check.
pub struct PassVerified {
    pub pass_id: String,
    pub expires_at: Option<i64>,
}

/// [`check_idpass`] for a caller at `ip`, counted against its daily cap first
/// (`IDPASS_PER_IP_DAILY`): every check is a call to the provider, a refused token included.
pub async fn idpass_for(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: &Wallet,
    token: &str,
) -> Result<PassVerified, ApiError> {
    quota::charge_cost_per_ip(state, &state.cost_caps.idpass, ip, "identity pass checks").await?;
    check_idpass(state, wallet, token).await
}

/// Checks an identity pass token with the provider and records the wallet verified. A token
/// the provider refuses is 400 `idpass_invalid` and changes nothing: anyone may send a token,
/// and only a pass of this wallet speaks for it.
pub async fn check_idpass(
    state: &AppState,
    wallet: &Wallet,
    token: &str,
) -> Result<PassVerified, ApiError> {
    let checked = state
        .identity_pass
        .check(token, &wallet.to_string(), state.now())
        .await
        .map_err(|e| {
            ApiError::provider_unavailable("idpass_unavailable", "the identity pass provider", &e)
        })?;
    match checked {
        PassCheck::Refused(reason) => Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "idpass_invalid",
            reason,
        )),
        PassCheck::Valid {
            pass_id,
            expires_at,
        } => {
            write(
                state,
                &wallet.to_string(),
                Finding {
                    method: VerifyMethod::IdPass.as_str(),
                    status: VERIFIED,
                    score: None,
                    reference: Some(pass_id.clone()),
                    expires_at,
                },
            )
            .await?;
            Ok(PassVerified {
                pass_id,
                expires_at,
            })
        }
    }
}

/// Asks the passport provider for the address's score and records it.
pub async fn check_passport(state: &AppState, address: &ChainAddress) -> Result<f64, ApiError> {
    let score = state
        .passport
        .score(&address.to_string())
        .await
        .map_err(|e| {
            ApiError::provider_unavailable("passport_unavailable", "the passport provider", &e)
        })?;
    write(
        state,
        &address.to_string(),
        Finding {
            method: VerifyMethod::Passport.as_str(),
            status: if score >= PASSPORT_VERIFIED_SCORE {
                VERIFIED
            } else {
                UNVERIFIED
            },
            score: Some(score),
            reference: None,
            expires_at: None,
        },
    )
    .await?;
    Ok(score)
}

/// `GET /v1/verify/passport/:wallet` from `ip`: the wallet's score checked within the last
/// [`PASSPORT_CHECK_TTL_SECS`], or [`check_passport`] after the per-IP daily cap
/// (`PASSPORT_PER_IP_DAILY`), since that asks the provider.
pub async fn passport_for(
    state: &AppState,
    ip: Option<IpAddr>,
    address: &ChainAddress,
) -> Result<f64, ApiError> {
    let key = address.to_string();
    let now = state.now();
    if let Some(score) = state.passport_checks.get(&key, now) {
        return Ok(score);
    }
    quota::charge_cost_per_ip(state, &state.cost_caps.passport, ip, "passport checks").await?;
    let score = check_passport(state, address).await?;
    state
        .passport_checks
        .put(key, score, now, now + PASSPORT_CHECK_TTL_SECS);
    Ok(score)
}

/// Keeps a wallet's request for SAS verification (`coming_soon`); a verified wallet stays
/// verified. Whether the request was new.
pub async fn request_sas(
    state: &AppState,
    wallet: &Wallet,
    attestation: Option<&Wallet>,
) -> Result<bool, ApiError> {
    let inserted = wallet_verifications::Entity::insert(wallet_verifications::ActiveModel {
        wallet: Set(wallet.to_string()),
        method: Set(VerifyMethod::Sas.as_str().to_owned()),
        status: Set(REQUESTED.to_owned()),
        score: Set(None),
        reference: Set(attestation.map(Wallet::to_string)),
        checked_at: Set(state.now()),
        verified_at: Set(None),
        expires_at: Set(None),
    })
    // Kept once; a request after a check that found nothing (`unverified`) is kept again.
    .on_conflict(
        OnConflict::columns([
            wallet_verifications::Column::Wallet,
            wallet_verifications::Column::Method,
        ])
        .update_columns([
            wallet_verifications::Column::Status,
            wallet_verifications::Column::Reference,
            wallet_verifications::Column::CheckedAt,
        ])
        .action_and_where(
            Expr::col((
                wallet_verifications::Entity,
                wallet_verifications::Column::Status,
            ))
            .eq(UNVERIFIED),
        )
        .to_owned(),
    )
    .exec_without_returning(state.store.db())
    .await?;
    Ok(inserted > 0)
}

/// The wallet's attestations under the trusted schemas, from the ledger.
pub async fn attestations(state: &AppState, wallet: &Wallet) -> Result<Vec<Attestation>, ApiError> {
    Ok(attestations_of(
        state.chain.ledger.as_ref(),
        &wallet.pubkey(),
        &state.verify.trusted_schemas,
    )
    .await?)
}

/// Reads the wallet's attestations and records whether a live one verifies it.
pub async fn check_sas(state: &AppState, wallet: &Wallet) -> Result<bool, ApiError> {
    let now = state.now();
    let found = attestations(state, wallet).await?;
    let live = found.iter().find(|a| a.is_live(now));
    write(
        state,
        &wallet.to_string(),
        Finding {
            method: VerifyMethod::Sas.as_str(),
            status: if live.is_some() { VERIFIED } else { UNVERIFIED },
            score: None,
            reference: live.map(|a| a.address.to_string()),
            expires_at: live.and_then(|a| (a.expiry != 0).then_some(a.expiry)),
        },
    )
    .await?;
    Ok(live.is_some())
}

/// The providers' callback (`POST /v1/verify/confirm`): the service asks the method's source
/// again and records its answer. `verification_id` is the identity pass token for `idpass`;
/// `chain`, when the provider names one, must be the address's (400 otherwise). Whether the
/// wallet is verified by the method now.
pub async fn confirm(
    state: &AppState,
    address: &ChainAddress,
    chain: Option<&str>,
    method: VerifyMethod,
    verification_id: Option<&str>,
) -> Result<bool, ApiError> {
    if let Some(chain) = chain.filter(|chain| *chain != address.chain()) {
        return Err(ApiError::validation(format!(
            "chain {chain} is not the address's chain ({})",
            address.chain()
        )));
    }
    match (method, address) {
        // Verified as the passport check says (`passport/:wallet`'s `verified`).
        (VerifyMethod::Passport, _) => Ok(passport_passes(check_passport(state, address).await?)),
        (VerifyMethod::IdPass, ChainAddress::Solana(wallet)) => {
            let token = verification_id.ok_or_else(|| {
                ApiError::validation(
                    "verification_id (the identity pass token) is required for idpass",
                )
            })?;
            check_idpass(state, wallet, token).await.map(|_| true)
        }
        (VerifyMethod::Sas, ChainAddress::Solana(wallet)) => check_sas(state, wallet).await,
        (_, ChainAddress::Evm(_)) => Err(not_available(method, address)),
    }
}

/// A holder check: the holding, whether it qualifies, and what that unlocks.
pub struct HolderCheck {
    pub holding: Holding,
    pub minimum: u64,
    /// Whole days the minimum has been held (0 when it is not).
    pub held_days: i64,
    pub qualifies: bool,
    pub boosts: HolderBoosts,
}

/// Reads the wallet's loyalty tokens from the ledger: it qualifies with at least the minimum
/// held for [`HOLD_DAYS`]. The answer is recorded (`holder`). 503
/// `holder_check_unavailable` while no loyalty mint is configured.
///
/// What the ledger said is kept per wallet for [`HOLDER_CHECK_TTL_SECS`]: a check within it
/// reads nothing. A check that reads the ledger counts against the caller's per-IP daily cap
/// (`HOLDER_PER_IP_DAILY`), and its walk is bounded (`chain::holdings`).
pub async fn check_holder(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: &Wallet,
) -> Result<HolderCheck, ApiError> {
    let mint: Pubkey = state.verify.loyalty_mint.ok_or_else(|| {
        ApiError::unavailable(
            "holder_check_unavailable",
            "no loyalty token is configured (LOYALTY_MINT)",
        )
    })?;
    let now = state.now();
    let period_start = now - HOLD_DAYS * DAY_SECS;
    let minimum = state.verify.loyalty_min_balance;
    let key = wallet.to_string();
    let found = match state.holder_checks.get(&key, now) {
        Some(kept) => kept,
        None => {
            quota::charge_cost_per_ip(state, &state.cost_caps.holder, ip, "holder checks").await?;
            let found = holding(
                state.chain.ledger.as_ref(),
                &wallet.pubkey(),
                &mint,
                minimum,
                period_start,
            )
            .await?;
            let qualifies = found.held_since.is_some_and(|since| since <= period_start);
            write(
                state,
                &key,
                Finding {
                    method: HOLDER,
                    status: if qualifies { VERIFIED } else { UNVERIFIED },
                    score: None,
                    reference: Some(found.balance.to_string()),
                    expires_at: None,
                },
            )
            .await?;
            state
                .holder_checks
                .put(key, found.clone(), now, now + HOLDER_CHECK_TTL_SECS);
            found
        }
    };
    let qualifies = found.held_since.is_some_and(|since| since <= period_start);
    Ok(HolderCheck {
        held_days: found
            .held_since
            .map_or(0, |since| Ord::max(now - since, 0) / DAY_SECS),
        holding: found,
        minimum,
        qualifies,
        boosts: if qualifies {
            HolderBoosts::HOLDER
        } else {
            HolderBoosts::NONE
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(idpass: bool, score: f64, sas: bool) -> Record {
        Record {
            idpass_verified: idpass,
            passport_score: score,
            passport_verified: score >= PASSPORT_VERIFIED_SCORE,
            sas_verified: sas,
        }
    }

    #[test]
    fn any_passing_proof_fully_verifies_and_the_recommendation_follows_the_record() {
        let solana = ChainAddress::Solana(
            "So11111111111111111111111111111111111111112"
                .parse()
                .unwrap(),
        );
        let evm: ChainAddress = "0x0000000000000000000000000000000000000001"
            .parse()
            .unwrap();
        assert!(!record(false, 19.99, false).fully_verified());
        for passing in [
            record(true, 0.0, false),
            record(false, 20.0, false),
            record(false, 0.0, true),
        ] {
            assert!(passing.fully_verified());
            assert_eq!(passing.recommended_method(&solana), None);
        }
        assert_eq!(
            record(false, 0.0, false).recommended_method(&solana),
            Some(VerifyMethod::IdPass)
        );
        assert_eq!(
            record(false, 10.0, false).recommended_method(&solana),
            Some(VerifyMethod::Passport)
        );
        assert_eq!(
            record(false, 0.0, false).recommended_method(&evm),
            Some(VerifyMethod::Passport)
        );
        assert_eq!(available_methods(&evm), &[VerifyMethod::Passport]);
        assert_eq!(available_methods(&solana).len(), 3);
    }
}
