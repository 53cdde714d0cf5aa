//! The operator's announcements (`system_announcement`): recorded with their audience (given
//! wallets, or every wallet the service knows), then written into each wallet's feed by the
//! `announce` job, a page of wallets per transaction.

use std::collections::BTreeSet;

use anyhow::Context;
use narrative_store::entities::{
    agents, announcements, backings, narratives, notifications, point_awards, shield_backings,
    terms_acceptances, waitlist_entries,
};
use narrative_store::Store;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    QueryFilter, QuerySelect,
};
use serde_json::json;

use super::{notices, notify_all};
use crate::clock::SharedClock;
use crate::error::ApiError;
use crate::jobs::announce::Announce;
use crate::jobs::{Handler, JobOutcome, Leased};
use crate::state::AppState;
use crate::values::Wallet;

/// Wallets written per transaction.
const PAGE: usize = 500;

/// Records an announcement by `admin` to `audience` (every known wallet when `None`) and queues
/// its delivery into their feeds.
pub async fn announce(
    state: &AppState,
    admin: &str,
    title: String,
    body: String,
    audience: Option<Vec<Wallet>>,
) -> Result<announcements::Model, ApiError> {
    let now = state.now();
    let audience = audience.map(|wallets| {
        let unique: BTreeSet<String> = wallets.iter().map(Wallet::to_string).collect();
        json!(unique)
    });
    let txn = state.store.begin_write().await?;
    let inserted = announcements::Entity::insert(announcements::ActiveModel {
        id: NotSet,
        title: Set(title),
        body: Set(body),
        audience: Set(audience),
        created_by: Set(admin.to_owned()),
        created_at: Set(now),
    })
    .exec(&txn)
    .await?;
    let id = inserted.last_insert_id;
    crate::jobs::enqueue(
        &txn,
        &Announce {
            announcement_id: id,
        },
        now,
        now,
    )
    .await?;
    txn.commit().await?;
    state.chain.jobs_wake.notify_one();
    announcements::Entity::find_by_id(id)
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::internal("a recorded announcement vanished"))
}

/// Every wallet the service knows: backers, creators, agents, shield backers, wallets that
/// accepted the terms, joined the waitlist, earned points or were notified before.
pub async fn known_wallets(db: &impl ConnectionTrait) -> Result<BTreeSet<String>, DbErr> {
    let mut wallets = BTreeSet::new();
    let lists = [
        backings::Entity::find()
            .select_only()
            .column(backings::Column::Backer)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        narratives::Entity::find()
            .select_only()
            .column(narratives::Column::WalletAddress)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        agents::Entity::find()
            .select_only()
            .column(agents::Column::WalletAddress)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        shield_backings::Entity::find()
            .select_only()
            .column(shield_backings::Column::Backer)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        terms_acceptances::Entity::find()
            .select_only()
            .column(terms_acceptances::Column::Wallet)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        waitlist_entries::Entity::find()
            .select_only()
            .column(waitlist_entries::Column::Wallet)
            .filter(waitlist_entries::Column::Wallet.is_not_null())
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        point_awards::Entity::find()
            .select_only()
            .column(point_awards::Column::Wallet)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
        notifications::Entity::find()
            .select_only()
            .column(notifications::Column::Wallet)
            .distinct()
            .into_tuple::<String>()
            .all(db)
            .await?,
    ];
    for list in lists {
        wallets.extend(list);
    }
    Ok(wallets)
}

/// Runs `announce`.
pub struct Announcer {
    pub store: Store,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<Announce> for Announcer {
    async fn run(&self, job: Leased<Announce>) -> anyhow::Result<JobOutcome> {
        let db = self.store.db();
        let announcement = announcements::Entity::find_by_id(job.job.announcement_id)
            .one(db)
            .await?
            .context("the announcement is gone")?;
        let audience: Vec<String> = match &announcement.audience {
            Some(list) => serde_json::from_value(list.clone())?,
            None => known_wallets(db).await?.into_iter().collect(),
        };
        let now = self.clock.now();
        for page in audience.chunks(PAGE) {
            let txn = self.store.begin_write().await?;
            let page_notices = page.iter().map(|wallet| {
                notices::announcement(
                    wallet,
                    announcement.id,
                    &announcement.title,
                    &announcement.body,
                )
            });
            notify_all(&txn, page_notices, now).await?;
            txn.commit().await?;
        }
        Ok(JobOutcome::Done)
    }
}
