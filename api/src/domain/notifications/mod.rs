//! The in-app notification feed (spec 6.2). Every notification is written through [`notify`],
//! once per event and wallet (its key is unique), inside the transaction of whatever caused it,
//! so a cause that is seen twice (a replayed confirm, an event followed again after a crash)
//! writes it once. That one entry point is also where delivery fans out: Web Push (`push`)
//! queues its deliveries there, in the same transaction.
//!
//! Causes: a verdict on a narrative (`domain::agents::resolve`), what the indexed program events
//! say happened (`follower`: backings, payouts, challenges, settlements and the streaks and tiers
//! they move, Echo Pool claims, referrals), missions (`domain::missions`), the Echo Pool keeper's
//! epoch close and the ruffler draw (`domain::echo`), and the operator's announcements
//! (`announcements`).

pub mod announcements;
pub mod feed;
pub mod follower;
pub mod notices;
pub mod push;

use std::collections::BTreeSet;

use narrative_store::entities::{backings, narratives, notifications};
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    QueryFilter, QuerySelect, TryInsertResult,
};
use serde_json::Value;

use notices::Role;

use crate::values::NotificationKind;

/// A notification for one wallet.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub wallet: String,
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    pub data: Value,
    /// The event it reports (a signature and position, a market, an epoch…): with the type and
    /// the wallet it makes the notification unique.
    pub event: String,
}

impl Notice {
    /// The stored unique key.
    pub fn dedupe_key(&self) -> String {
        format!("{}:{}:{}", self.kind, self.event, self.wallet)
    }
}

/// Writes `notice` into its wallet's feed unless the same event was already written for it,
/// and queues its Web Push deliveries when it was; whether it was written now.
pub async fn notify(db: &impl ConnectionTrait, notice: Notice, now: i64) -> Result<bool, DbErr> {
    write(db, notice, now, true).await
}

/// [`notify`], the push deliveries looked for only when `may_have_browser` (the caller knows
/// the wallet has no push subscription otherwise).
async fn write(
    db: &impl ConnectionTrait,
    notice: Notice,
    now: i64,
    may_have_browser: bool,
) -> Result<bool, DbErr> {
    let dedupe_key = notice.dedupe_key();
    let (wallet, kind) = (notice.wallet.clone(), notice.kind);
    let inserted = notifications::Entity::insert(notifications::ActiveModel {
        id: NotSet,
        wallet: Set(notice.wallet),
        kind: Set(notice.kind.as_str().to_owned()),
        title: Set(notice.title),
        body: Set(notice.body),
        data: Set(notice.data),
        dedupe_key: Set(dedupe_key),
        created_at: Set(now),
        read_at: Set(None),
    })
    .on_conflict_do_nothing_on([notifications::Column::DedupeKey])
    .exec(db)
    .await?;
    // The insert answers the new row's id, which the push deliveries name; a conflict means
    // the event was written before, and its deliveries queued then.
    let TryInsertResult::Inserted(inserted) = inserted else {
        return Ok(false);
    };
    if may_have_browser {
        push::queue_deliveries(db, inserted.last_insert_id, &wallet, kind, now).await?;
    }
    Ok(true)
}

/// Writes each of `notices` once (see [`notify`]); how many were new. Which of their wallets
/// have a push subscription is read once for all of them (a broadcast reaches many wallets,
/// few with a browser), so a wallet without one costs its insert only.
pub async fn notify_all(
    db: &impl ConnectionTrait,
    notices: impl IntoIterator<Item = Notice>,
    now: i64,
) -> Result<usize, DbErr> {
    let notices: Vec<Notice> = notices.into_iter().collect();
    let subscribed =
        push::subscribed_wallets(db, notices.iter().map(|n| n.wallet.as_str())).await?;
    let mut written = 0;
    for notice in notices {
        let may_have_browser = subscribed.contains(&notice.wallet);
        written += usize::from(write(db, notice, now, may_have_browser).await?);
    }
    Ok(written)
}

/// Notices for a verdict on a narrative: its creator and every wallet backing its market.
pub async fn resolution_notices(
    db: &impl ConnectionTrait,
    narrative: &narratives::Model,
    resolved_true: bool,
) -> Result<Vec<Notice>, DbErr> {
    let backers: BTreeSet<String> = backings::Entity::find()
        .select_only()
        .column(backings::Column::Backer)
        .filter(backings::Column::MarketId.eq(narrative.market_id.as_str()))
        .filter(backings::Column::Closed.eq(false))
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let creator = std::iter::once((narrative.wallet_address.clone(), Role::Creator));
    let others = backers
        .into_iter()
        .filter(|b| *b != narrative.wallet_address)
        .map(|b| (b, Role::Backer));
    Ok(creator
        .chain(others)
        .map(|(wallet, role)| {
            notices::narrative_resolved(
                &wallet,
                &narrative.id,
                &narrative.title,
                resolved_true,
                role,
            )
        })
        .collect())
}
