//! A wallet proven by its signature: the wallet's ed25519 signature (what wallets'
//! `signMessage` returns) of a domain-separated message that names what it is for, the values it
//! binds and when it was signed:
//!
//! `<domain>:<purpose>:<field>:…:issued-at:<unix seconds>`
//!
//! `<domain>` names the deployment (`WALLET_PROOF_DOMAIN`, by default
//! `narrative-market-service`): a deployment that sets its own, such as its public host, refuses
//! the signatures wallets gave another deployment of this service (a devnet instance, a clone
//! that collected them), which carry that one's domain.
//!
//! A proof is accepted once, and only while its issued-at time is within
//! [`PAST_WINDOW_SECS`] before the server's clock (or [`FUTURE_SKEW_SECS`] after it, for a
//! wallet's clock running ahead). Inside the window each signature is remembered
//! (`used_wallet_signatures`), so the same proof presented twice is refused: a replayed
//! preferences change would otherwise undo a newer one. Past the window the issued-at check refuses
//! it, and the retention job forgets it.

use std::fmt::Display;

use narrative_store::entities::used_wallet_signatures;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, UnixSeconds, Wallet};
pub use crate::values::{ProofDomain, DEFAULT_PROOF_DOMAIN};

/// How old a signed message may be.
pub const PAST_WINDOW_SECS: i64 = 300;
/// How far ahead of the server's clock a wallet's clock may run.
pub const FUTURE_SKEW_SECS: i64 = 60;
/// What a wallet signs, but for its issued-at time.
#[derive(Debug, Clone)]
pub struct Statement {
    purpose: &'static str,
    fields: Vec<String>,
}

impl Statement {
    /// A statement for `purpose` (`terms`, `kyc-start`, …), which no other statement shares.
    pub fn new(purpose: &'static str) -> Statement {
        Statement {
            purpose,
            fields: Vec::new(),
        }
    }

    /// Binds `value` into the message, after the fields before it.
    pub fn field(mut self, value: impl Display) -> Statement {
        self.fields.push(value.to_string());
        self
    }

    pub fn purpose(&self) -> &'static str {
        self.purpose
    }

    /// The exact text the wallet signs for `domain`'s deployment when it signs at `issued_at`.
    pub fn message(&self, domain: &ProofDomain, issued_at: UnixSeconds) -> String {
        self.text(domain, &issued_at.get().to_string())
    }

    /// The message with `<issued_at>` where the time goes, for documentation and clients.
    pub fn template(&self, domain: &ProofDomain) -> String {
        self.text(domain, "<issued_at>")
    }

    fn text(&self, domain: &ProofDomain, issued_at: &str) -> String {
        let mut text = format!("{}:{}", domain.as_str(), self.purpose);
        for field in &self.fields {
            text.push(':');
            text.push_str(field);
        }
        text.push_str(":issued-at:");
        text.push_str(issued_at);
        text
    }
}

/// A wallet's claim to have signed a statement: checked by [`prove`].
#[derive(Debug, Clone, Copy)]
pub struct Proof<'a> {
    pub wallet: &'a Wallet,
    pub signature: &'a Base58Signature,
    pub issued_at: UnixSeconds,
}

/// Whether a message issued at `issued_at` may still be accepted at `now`; why not, if not.
fn check_fresh(issued_at: UnixSeconds, now: i64) -> Result<(), String> {
    let at = issued_at.get();
    if at < now - PAST_WINDOW_SECS {
        return Err(format!(
            "the signed message was issued at {at}, more than {PAST_WINDOW_SECS} s before the \
             server's time {now}: sign a new one"
        ));
    }
    if at > now + FUTURE_SKEW_SECS {
        return Err(format!(
            "the signed message was issued at {at}, more than {FUTURE_SKEW_SECS} s after the \
             server's time {now}: check the clock"
        ));
    }
    Ok(())
}

/// Whether `proof` is its wallet's signature of `statement`, fresh and not used before; on
/// success the signature is used up. 401 `invalid_signature` otherwise (with `server_time` when
/// the issued-at time is outside the window), and nothing is written.
pub async fn prove(
    state: &AppState,
    statement: &Statement,
    proof: Proof<'_>,
) -> Result<(), ApiError> {
    let now = state.now();
    verify(&state.proof_domain, statement, proof, now)?;
    consume(state.store.db(), statement, proof, now).await
}

/// The checks of [`prove`] that need no store: freshness and the signature of `statement` as
/// `domain`'s deployment words it.
pub fn verify(
    domain: &ProofDomain,
    statement: &Statement,
    proof: Proof<'_>,
    now: i64,
) -> Result<(), ApiError> {
    check_fresh(proof.issued_at, now)
        .map_err(|why| ApiError::invalid_signature(why).with("server_time", now))?;
    if !proof.signature.signs(
        proof.wallet,
        statement.message(domain, proof.issued_at).as_bytes(),
    ) {
        return Err(ApiError::invalid_signature(format!(
            "signature is not the wallet's signature of `{}`",
            statement.template(domain)
        )));
    }
    Ok(())
}

/// Uses up a verified proof's signature; 401 `invalid_signature` when it was used before.
pub async fn consume(
    db: &impl ConnectionTrait,
    statement: &Statement,
    proof: Proof<'_>,
    now: i64,
) -> Result<(), ApiError> {
    let inserted = used_wallet_signatures::Entity::insert(used_wallet_signatures::ActiveModel {
        signature: Set(proof.signature.to_string()),
        wallet: Set(proof.wallet.to_string()),
        purpose: Set(statement.purpose().to_owned()),
        issued_at: Set(proof.issued_at.get()),
        used_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(used_wallet_signatures::Column::Signature)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    if inserted == 0 {
        return Err(ApiError::invalid_signature(
            "this signed message was already used: sign a new one",
        ));
    }
    Ok(())
}

/// How long a used signature is remembered after it was issued: twice the window, so a process
/// whose clock runs behind the one that forgets it still refuses it by its time.
pub const REMEMBERED_SECS: i64 = 2 * PAST_WINDOW_SECS;

/// Forgets the used signatures that every process's window refuses anyway; how many.
pub async fn forget_expired(db: &impl ConnectionTrait, now: i64) -> Result<u64, DbErr> {
    Ok(used_wallet_signatures::Entity::delete_many()
        .filter(used_wallet_signatures::Column::IssuedAt.lt(now - REMEMBERED_SECS))
        .exec(db)
        .await?
        .rows_affected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn wallet_and_key() -> (Wallet, SigningKey) {
        let key = SigningKey::from_bytes(&[3; 32]);
        let wallet = Wallet::from(narrative_sdk::Pubkey::new_from_array(
            key.verifying_key().to_bytes(),
        ));
        (wallet, key)
    }

    fn at(secs: i64) -> UnixSeconds {
        UnixSeconds::new(secs).unwrap()
    }

    #[test]
    fn the_message_names_purpose_fields_and_time() {
        let statement = Statement::new("terms").field("v1").field("W");
        let default = ProofDomain::default();
        assert_eq!(
            statement.message(&default, at(1_700_000_000)),
            "narrative-market-service:terms:v1:W:issued-at:1700000000"
        );
        assert_eq!(
            statement.template(&default),
            "narrative-market-service:terms:v1:W:issued-at:<issued_at>"
        );
        let named = ProofDomain::new("app.example.org").unwrap();
        assert_eq!(
            statement.message(&named, at(1_700_000_000)),
            "app.example.org:terms:v1:W:issued-at:1700000000"
        );
    }

    #[test]
    fn freshness_is_a_window_around_now() {
        let now = 1_000_000;
        assert!(check_fresh(at(now), now).is_ok());
        assert!(check_fresh(at(now - PAST_WINDOW_SECS), now).is_ok());
        assert!(check_fresh(at(now - PAST_WINDOW_SECS - 1), now).is_err());
        assert!(check_fresh(at(now + FUTURE_SKEW_SECS), now).is_ok());
        assert!(check_fresh(at(now + FUTURE_SKEW_SECS + 1), now).is_err());
    }

    #[test]
    fn a_proof_verifies_only_its_statement_time_and_wallet() {
        let (wallet, key) = wallet_and_key();
        let statement = Statement::new("terms").field("v1");
        let now = 1_000_000;
        let signed = |text: &str| -> Base58Signature {
            bs58::encode(key.sign(text.as_bytes()).to_bytes())
                .into_string()
                .parse()
                .unwrap()
        };
        let domain = ProofDomain::default();
        let signature = signed(&statement.message(&domain, at(now)));
        let proof = |signature, issued_at| Proof {
            wallet: &wallet,
            signature,
            issued_at,
        };
        assert!(verify(&domain, &statement, proof(&signature, at(now)), now).is_ok());
        // The same signature does not cover another time, purpose or field.
        assert!(verify(&domain, &statement, proof(&signature, at(now - 1)), now).is_err());
        let other = Statement::new("kyc-start").field("v1");
        assert!(verify(&domain, &other, proof(&signature, at(now)), now).is_err());
        let other = Statement::new("terms").field("v2");
        assert!(verify(&domain, &other, proof(&signature, at(now)), now).is_err());
        // Nor the same statement at a deployment that names itself.
        let elsewhere = ProofDomain::new("app.example.org").unwrap();
        assert!(verify(&elsewhere, &statement, proof(&signature, at(now)), now).is_err());
        // A stale one is refused though its signature is good.
        let stale = signed(&statement.message(&domain, at(now - PAST_WINDOW_SECS - 1)));
        let refused = verify(
            &domain,
            &statement,
            proof(&stale, at(now - PAST_WINDOW_SECS - 1)),
            now,
        )
        .unwrap_err();
        assert_eq!(refused.status.as_u16(), 401);
    }
}
