//! The in-app notification feed (spec 6.2): a wallet's notifications with the unread count,
//! marking them read with the wallet's signature, and the operator's announcements.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::notifications::{announcements, feed};
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{page, Base58Signature, JsonDocument, NotificationKind, Text, Wallet};

pub struct NotificationsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct NotificationView {
    pub id: i64,
    #[oai(rename = "type")]
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    /// What it is about (ids, amounts in lamports).
    pub data: JsonDocument,
    pub created_at: String,
    pub read: bool,
    pub read_at: Option<String>,
}

#[derive(Object)]
pub struct NotificationFeed {
    pub ok: bool,
    pub wallet: Wallet,
    /// Newest first.
    pub notifications: Vec<NotificationView>,
    pub unread_count: u64,
    /// Notifications in all pages (of the unread ones with `unread_only`).
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

#[derive(Object)]
pub struct MarkRead {
    /// The wallet's ed25519 signature (base58) of
    /// `narrative-market-service:notifications-read:<wallet>:<up_to_id>` (or `…:all` without
    /// `up_to_id`).
    pub signature: Base58Signature,
    /// Marks every notification up to and including this id; every one when absent.
    pub up_to_id: Option<i64>,
}

#[derive(Object)]
pub struct MarkedRead {
    pub ok: bool,
    pub wallet: Wallet,
    /// How many were unread and are read now.
    pub marked: u64,
    pub unread_count: u64,
}

#[derive(Object)]
pub struct Announcement {
    pub title: Text<120>,
    pub body: Text<2000>,
    /// The wallets to tell (at most 10,000); every wallet the service knows when absent.
    #[oai(validator(max_items = 10000))]
    pub wallets: Option<Vec<Wallet>>,
}

#[derive(Object)]
pub struct AnnouncementQueued {
    pub ok: bool,
    pub announcement_id: i64,
    /// `all`, or the number of wallets named.
    pub audience: String,
    /// The feeds are written by a job, shortly.
    pub status: String,
}

refusals! {
    FeedRefusals: [400];
    /// A signature that is not the wallet's (401).
    ReadRefusals: [400, 413];
    AnnounceRefusals: [400, 413];
}

#[OpenApi(tag = "Tag::Notifications")]
impl NotificationsApi {
    /// The wallet's notifications, newest first (`limit` default 50, 1–200; `offset`;
    /// `unread_only`), with its unread count.
    #[oai(path = "/notifications/:wallet", method = "get")]
    async fn feed(
        &self,
        wallet: Path<Wallet>,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
        unread_only: Query<Option<bool>>,
    ) -> Answer<Json<NotificationFeed>, FeedRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let found = feed::page(
            &self.state,
            &wallet.0,
            unread_only.0.unwrap_or(false),
            limit,
            offset,
        )
        .await?;
        Ok(Json(NotificationFeed {
            ok: true,
            wallet: wallet.0,
            notifications: found
                .notifications
                .into_iter()
                .map(|n| NotificationView {
                    id: n.id,
                    kind: n
                        .kind
                        .parse()
                        .unwrap_or(NotificationKind::SystemAnnouncement),
                    title: n.title,
                    body: n.body,
                    data: JsonDocument(n.data),
                    created_at: iso(n.created_at),
                    read: n.read_at.is_some(),
                    read_at: n.read_at.map(iso),
                })
                .collect(),
            unread_count: found.unread,
            total: found.total,
            limit,
            offset,
        }))
    }

    /// Mark the wallet's notifications read, with its signature.
    #[oai(path = "/notifications/:wallet/read", method = "post")]
    async fn mark_read(
        &self,
        wallet: Path<Wallet>,
        body: Json<MarkRead>,
    ) -> Answer<Json<MarkedRead>, ReadRefusals> {
        let marked =
            feed::mark_read(&self.state, &wallet.0, body.0.up_to_id, &body.0.signature).await?;
        let unread = feed::page(&self.state, &wallet.0, true, 1, 0).await?.unread;
        Ok(Json(MarkedRead {
            ok: true,
            wallet: wallet.0,
            marked,
            unread_count: unread,
        }))
    }

    /// Announce to every wallet the service knows, or to the wallets named (admin): a
    /// `system_announcement` in each feed.
    #[oai(path = "/admin/notifications/announce", method = "post")]
    async fn announce(
        &self,
        admin: AdminAuth,
        body: Json<Announcement>,
    ) -> Answer<Json<AnnouncementQueued>, AnnounceRefusals> {
        let body = body.0;
        let recorded = announcements::announce(
            &self.state,
            &admin.0,
            body.title.into_string(),
            body.body.into_string(),
            body.wallets,
        )
        .await?;
        // As recorded: the wallets named, each once.
        let audience = recorded
            .audience
            .as_ref()
            .and_then(|wallets| wallets.as_array())
            .map_or_else(|| "all".to_owned(), |wallets| wallets.len().to_string());
        Ok(Json(AnnouncementQueued {
            ok: true,
            announcement_id: recorded.id,
            audience,
            status: "queued".into(),
        }))
    }
}
