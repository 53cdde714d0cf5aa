//! The waitlist (spec 4.15): join with an email, a wallet or both, optionally naming the wallet
//! that referred you. An address or wallet already on the list answers its existing place and
//! writes nothing (both are unique, so two racing joins write one row). A place is the number of
//! entries that joined up to and including it.

use narrative_store::entities::waitlist_entries;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, Condition, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Email, Wallet};

pub struct Join {
    pub email: Option<Email>,
    pub wallet: Option<Wallet>,
    pub referrer: Option<Wallet>,
}

pub struct Place {
    pub entry: waitlist_entries::Model,
    /// From 1.
    pub position: u64,
    pub total: u64,
    /// False when the email or wallet was on the list already.
    pub created: bool,
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

async fn place(
    state: &AppState,
    entry: waitlist_entries::Model,
    created: bool,
) -> Result<Place, ApiError> {
    let db = state.store.db();
    let position = waitlist_entries::Entity::find()
        .filter(waitlist_entries::Column::Id.lte(entry.id))
        .count(db)
        .await?;
    let total = waitlist_entries::Entity::find().count(db).await?;
    Ok(Place {
        entry,
        position,
        total,
        created,
    })
}

pub async fn join(state: &AppState, join: Join) -> Result<Place, ApiError> {
    if join.email.is_none() && join.wallet.is_none() {
        return Err(ApiError::validation("give an email, a wallet or both"));
    }
    if join.referrer.is_some() && join.referrer == join.wallet {
        return Err(ApiError::validation("a wallet cannot refer itself"));
    }
    if let Some(entry) = existing(state, join.email.as_ref(), join.wallet.as_ref()).await? {
        return place(state, entry, false).await;
    }
    let inserted = waitlist_entries::Entity::insert(waitlist_entries::ActiveModel {
        id: NotSet,
        email: Set(join.email.as_ref().map(|e| e.as_str().to_owned())),
        wallet: Set(join.wallet.map(|w| w.to_string())),
        referrer: Set(join.referrer.map(|w| w.to_string())),
        created_at: Set(state.now()),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(state.store.db())
    .await?;
    // A join racing this one for the same email or wallet may have written first.
    let entry = existing(state, join.email.as_ref(), join.wallet.as_ref())
        .await?
        .ok_or_else(|| ApiError::internal("a waitlist entry vanished"))?;
    place(state, entry, inserted == 1).await
}

/// The place of `wallet`; 404 when it is not on the list.
pub async fn position(state: &AppState, wallet: &Wallet) -> Result<Place, ApiError> {
    let entry = existing(state, None, Some(wallet))
        .await?
        .ok_or_else(|| ApiError::not_found("waitlist entry"))?;
    place(state, entry, false).await
}
