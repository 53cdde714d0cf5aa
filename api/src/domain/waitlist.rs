//! The waitlist (spec 4.15): join with an email, a wallet or both, optionally naming the wallet
//! that referred you. An address or wallet already on the list answers its existing place and
//! writes nothing (both are unique, so two racing joins write one row). A place is the number of
//! entries that joined up to and including it.
//!
//! Trust: a join naming a wallet (and so any referrer, which only a wallet's entry carries)
//! needs that wallet's signature of [`statement`]; an email-only join needs none. No answer
//! links an email to a wallet: a join answers only the place, a wallet's place never its email.
//! A referrer is kept only for a wallet that had not backed before joining (no indexed backing),
//! since a referral rewards bringing a new backer.

use narrative_store::entities::{backings, waitlist_entries};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, Condition, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Email, UnixSeconds, Wallet};

pub struct Join {
    pub email: Option<Email>,
    pub wallet: Option<Wallet>,
    pub referrer: Option<Wallet>,
    /// The wallet's signature of [`statement`] (needed with a wallet).
    pub signature: Option<Base58Signature>,
    pub issued_at: Option<UnixSeconds>,
}

/// What became of a named referrer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Referral {
    /// The new entry carries it: the referrer earns its reward at the wallet's first backing.
    Recorded,
    /// The wallet had backed before joining, so the referrer was not kept.
    NotEligible,
}

impl Referral {
    pub fn as_str(self) -> &'static str {
        match self {
            Referral::Recorded => "recorded",
            Referral::NotEligible => "not_eligible",
        }
    }
}

pub struct Place {
    pub entry: waitlist_entries::Model,
    /// From 1, and the entries on the list; `None` for a join that found an entry it did not
    /// prove its own (matched by email, or by an email beside another wallet): a wallet's place
    /// is public (`GET /v1/waitlist/:wallet`), so answering the place of an email's entry would
    /// say which wallet joined with it.
    pub standing: Option<(u64, u64)>,
    /// False when the email or wallet was on the list already.
    pub created: bool,
    /// Set when this join named a referrer and wrote the entry.
    pub referral: Option<Referral>,
}

/// What a wallet signs to join (with `referrer`, or `none`):
/// `narrative-market-service:waitlist-join:<wallet>:<referrer|none>:issued-at:<issued_at>`.
pub fn statement(wallet: &Wallet, referrer: Option<&Wallet>) -> Statement {
    Statement::new("waitlist-join")
        .field(wallet)
        .field(referrer.map_or_else(|| "none".to_owned(), Wallet::to_string))
}

/// The entry holding `email` or `wallet`, the email's first.
async fn existing(
    state: &AppState,
    email: Option<&Email>,
    wallet: Option<&Wallet>,
) -> Result<Option<waitlist_entries::Model>, ApiError> {
    let mut any = Condition::any();
    if let Some(email) = email {
        any = any.add(waitlist_entries::Column::Email.eq(email.as_str()));
    }
    if let Some(wallet) = wallet {
        any = any.add(waitlist_entries::Column::Wallet.eq(wallet.to_string()));
    }
    let found = waitlist_entries::Entity::find()
        .filter(any)
        .order_by_asc(waitlist_entries::Column::Id)
        .all(state.store.db())
        .await?;
    let by_email = found
        .iter()
        .find(|e| email.is_some() && e.email.as_deref() == email.map(Email::as_str));
    Ok(by_email.or(found.first()).cloned())
}

/// Whether `entry` is the proven `wallet`'s.
fn owns(wallet: Option<&Wallet>, entry: &waitlist_entries::Model) -> bool {
    wallet.is_some_and(|w| entry.wallet.as_deref() == Some(w.to_string().as_str()))
}

/// `entry` as answered, with its place and the list's length only when `shown`.
async fn place(
    state: &AppState,
    entry: waitlist_entries::Model,
    shown: bool,
    created: bool,
    referral: Option<Referral>,
) -> Result<Place, ApiError> {
    let standing = if shown {
        let db = state.store.db();
        let position = waitlist_entries::Entity::find()
            .filter(waitlist_entries::Column::Id.lte(entry.id))
            .count(db)
            .await?;
        let total = waitlist_entries::Entity::find().count(db).await?;
        Some((position, total))
    } else {
        None
    };
    Ok(Place {
        entry,
        standing,
        created,
        referral,
    })
}

/// Whether `wallet` holds or held any indexed backing (open, claimed or closed).
async fn has_backed(state: &AppState, wallet: &Wallet) -> Result<bool, ApiError> {
    Ok(backings::Entity::find()
        .filter(backings::Column::Backer.eq(wallet.to_string()))
        .count(state.store.db())
        .await?
        > 0)
}

pub async fn join(state: &AppState, join: Join) -> Result<Place, ApiError> {
    if join.email.is_none() && join.wallet.is_none() {
        return Err(ApiError::validation("give an email, a wallet or both"));
    }
    if join.referrer.is_some() && join.wallet.is_none() {
        return Err(ApiError::validation(
            "a referrer is named by a joining wallet, with its signature",
        ));
    }
    if join.referrer.is_some() && join.referrer == join.wallet {
        return Err(ApiError::validation("a wallet cannot refer itself"));
    }
    // Before anything is read or written: a wallet joins (and names its referrer) by its own
    // signature only.
    if let Some(wallet) = &join.wallet {
        let statement = statement(wallet, join.referrer.as_ref());
        let (Some(signature), Some(issued_at)) = (join.signature.as_ref(), join.issued_at) else {
            return Err(ApiError::invalid_signature(format!(
                "a join naming a wallet needs the wallet's signature of `{}` and its issued_at",
                statement.template(&state.proof_domain)
            )));
        };
        wallet_proof::prove(
            state,
            &statement,
            Proof {
                wallet,
                signature,
                issued_at,
            },
        )
        .await?;
    }
    if let Some(entry) = existing(state, join.email.as_ref(), join.wallet.as_ref()).await? {
        // Its place only to the wallet that proved it is the entry's.
        let shown = owns(join.wallet.as_ref(), &entry);
        return place(state, entry, shown, false, None).await;
    }
    let (referrer, referral) = match (join.referrer, join.wallet.as_ref()) {
        (Some(referrer), Some(wallet)) => {
            if has_backed(state, wallet).await? {
                (None, Some(Referral::NotEligible))
            } else {
                (Some(referrer), Some(Referral::Recorded))
            }
        }
        _ => (None, None),
    };
    let inserted = waitlist_entries::Entity::insert(waitlist_entries::ActiveModel {
        id: NotSet,
        email: Set(join.email.as_ref().map(|e| e.as_str().to_owned())),
        wallet: Set(join.wallet.map(|w| w.to_string())),
        referrer: Set(referrer.map(|w| w.to_string())),
        created_at: Set(state.now()),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(state.store.db())
    .await?;
    // A join racing this one for the same email or wallet may have written first.
    let entry = existing(state, join.email.as_ref(), join.wallet.as_ref())
        .await?
        .ok_or_else(|| ApiError::internal("a waitlist entry vanished"))?;
    let created = inserted == 1;
    // A racing join that wrote first holds the place: answered as a found entry is.
    let shown = created || owns(join.wallet.as_ref(), &entry);
    place(state, entry, shown, created, referral.filter(|_| created)).await
}

/// The place of `wallet`; 404 when it is not on the list.
pub async fn position(state: &AppState, wallet: &Wallet) -> Result<Place, ApiError> {
    let entry = existing(state, None, Some(wallet))
        .await?
        .ok_or_else(|| ApiError::not_found("waitlist entry"))?;
    place(state, entry, true, false, None).await
}
