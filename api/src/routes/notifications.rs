//! The in-app notification feed (spec 6.2): a wallet's notifications with the unread count,
//! marking them read with the wallet's signature, and the operator's announcements; and their
//! Web Push delivery (spec 4.11): the VAPID key, browser subscriptions and per-type
//! preferences.
//!
//! The reads (`GET`) are public, so they answer what a public page may show: the feed's
//! notifications without private data (no KYC inquiry id), the preferences as booleans (never a
//! subscription's endpoint or keys). Every write carries the wallet's signature of a
//! [`wallet_proof`](crate::domain::wallet_proof) statement with its issued-at time (accepted
//! within 300 s before the server's time, 60 s after, and once).

use std::sync::Arc;

use poem_openapi::param::{Header, Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::notifications::push::PreferencesWrite;
use crate::domain::notifications::{announcements, feed, notices, push};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{
    page, Base58Signature, HttpsUrl, JsonDocument, NotificationKind, PushAuth, PushPublicKey, Text,
    UnixSeconds, Wallet,
};

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
    /// What it is about (ids, amounts in lamports); never private ids (a KYC inquiry's).
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
    /// `narrative-market-service:notifications-read:<wallet>:<up_to_id>:issued-at:<issued_at>`
    /// (`all` in place of `<up_to_id>` without `up_to_id`).
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
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

#[derive(Object)]
pub struct VapidPublicKey {
    /// The service's P-256 application server key: base64url of the 65-byte uncompressed
    /// point, for `pushManager.subscribe({applicationServerKey})`.
    pub vapid_public_key: String,
}

/// The keys of `PushSubscription.toJSON()`.
#[derive(Object)]
pub struct BrowserPushKeys {
    pub p256dh: PushPublicKey,
    pub auth: PushAuth,
}

/// A browser's push subscription, as `PushSubscription.toJSON()` gives it.
#[derive(Object)]
pub struct BrowserSubscription {
    /// The push service's URL for this browser (https; the service calls public addresses
    /// only).
    pub endpoint: HttpsUrl,
    pub keys: BrowserPushKeys,
}

#[derive(Object)]
pub struct PushSubscribe {
    pub wallet: Wallet,
    pub subscription: BrowserSubscription,
    /// The wallet's ed25519 signature (base58) of
    /// `narrative-market-service:push-subscribe:<wallet>:<endpoint>:issued-at:<issued_at>`.
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
}

#[derive(Object)]
pub struct PushSubscribed {
    pub ok: bool,
    pub wallet: Wallet,
    pub subscription_id: i64,
    /// Whether the endpoint was subscribed before (its keys and wallet are replaced).
    pub replaced: bool,
    /// Browsers a wallet keeps; subscribing another drops its least recently subscribed one.
    pub max_subscriptions: u64,
}

/// The notification types (spec 6.2's 19 and the four borrow alerts) as object properties, so the document names each one:
/// the preferences as read (every type, `true` when pushed) and as written (the types named;
/// unknown names are refused).
macro_rules! preference_objects {
    ($($field:ident => $kind:ident),+ $(,)?) => {
        /// Whether each notification type is pushed to the wallet's browsers.
        #[derive(Object)]
        pub struct PushPreferenceMap {
            $(pub $field: bool,)+
        }

        /// Types to turn on (`true`) or off (`false`). With `PATCH` the types not named keep
        /// their setting; with `PUT` (the whole set) they are pushed, as by default.
        #[derive(Object)]
        #[oai(deny_unknown_fields)]
        pub struct PushPreferenceChanges {
            $(pub $field: Option<bool>,)+
        }

        impl PushPreferenceMap {
            fn without(disabled: &std::collections::BTreeSet<NotificationKind>) -> Self {
                PushPreferenceMap {
                    $($field: !disabled.contains(&NotificationKind::$kind),)+
                }
            }
        }

        impl PushPreferenceChanges {
            fn changes(&self) -> Vec<(NotificationKind, bool)> {
                let mut changes = Vec::new();
                $(if let Some(on) = self.$field {
                    changes.push((NotificationKind::$kind, on));
                })+
                changes
            }
        }
    };
}

preference_objects!(
    narrative_resolved_true => NarrativeResolvedTrue,
    narrative_resolved_false => NarrativeResolvedFalse,
    payout_received => PayoutReceived,
    new_backer_on_my_narrative => NewBackerOnMyNarrative,
    creator_royalty_paid => CreatorRoyaltyPaid,
    mission_completed => MissionCompleted,
    streak_milestone => StreakMilestone,
    streak_broken => StreakBroken,
    echo_pool_epoch_ended => EchoPoolEpochEnded,
    challenge_opened => ChallengeOpened,
    challenge_resolved => ChallengeResolved,
    conviction_tier_up => ConvictionTierUp,
    nft_tier_unlocked => NftTierUnlocked,
    system_announcement => SystemAnnouncement,
    airdrop_claimed => AirdropClaimed,
    referral_rewarded => ReferralRewarded,
    kyc_tier_upgraded => KycTierUpgraded,
    ruffler_ticket_won => RufflerTicketWon,
    ruffler_round_drawn => RufflerRoundDrawn,
    borrow_health_warning => BorrowHealthWarning,
    borrow_health_urgent => BorrowHealthUrgent,
    borrow_health_critical => BorrowHealthCritical,
    borrow_position_closed => BorrowPositionClosed,
);

#[derive(Object)]
pub struct PushPreferences {
    pub ok: bool,
    pub wallet: Wallet,
    pub preferences: PushPreferenceMap,
}

refusals! {
    VapidRefusals: [];
    /// A signature that is not the wallet's, stale or used before (401); an endpoint the
    /// service does not call (403 `url_not_allowed`).
    SubscribeRefusals: [400, 403, 413];
    PreferencesRefusals: [400];
    /// A signature that is not the wallet's, stale or used before (401).
    PreferencesChangeRefusals: [400, 413];
    FeedRefusals: [400];
    /// A signature that is not the wallet's, stale or used before (401).
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
                    data: JsonDocument(notices::public_data(n.data)),
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

    /// The service's VAPID public key (base64url): browsers subscribe with it as the
    /// application server key. It is made once per deployment and kept; if it ever changes,
    /// subscriptions must be made again.
    #[oai(path = "/notifications/push/vapid-public-key", method = "get")]
    async fn vapid_public_key(&self) -> Answer<Json<VapidPublicKey>, VapidRefusals> {
        Ok(Json(VapidPublicKey {
            vapid_public_key: push::public_key(&self.state).await?,
        }))
    }

    /// Register a browser's push subscription for the wallet, with the wallet's signature.
    /// Subscribing an endpoint again replaces its keys.
    #[oai(path = "/notifications/push/subscribe", method = "post")]
    async fn subscribe(
        &self,
        body: Json<PushSubscribe>,
    ) -> Answer<Json<PushSubscribed>, SubscribeRefusals> {
        let body = body.0;
        let subscribed = push::subscribe(
            &self.state,
            Proof {
                wallet: &body.wallet,
                signature: &body.signature,
                issued_at: body.issued_at,
            },
            &body.subscription.endpoint,
            &body.subscription.keys.p256dh,
            &body.subscription.keys.auth,
        )
        .await?;
        Ok(Json(PushSubscribed {
            ok: true,
            wallet: body.wallet,
            subscription_id: subscribed.id,
            replaced: subscribed.replaced,
            max_subscriptions: push::MAX_SUBSCRIPTIONS_PER_WALLET as u64,
        }))
    }

    /// Which notification types are pushed to the wallet's browsers (all until turned off).
    #[oai(path = "/notifications/push/preferences/:wallet", method = "get")]
    async fn preferences(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<PushPreferences>, PreferencesRefusals> {
        let disabled = push::preferences(&self.state, &wallet.0).await?;
        Ok(Json(PushPreferences {
            ok: true,
            wallet: wallet.0,
            preferences: PushPreferenceMap::without(&disabled),
        }))
    }

    /// Replace the wallet's whole preference set (spec 4.0: `PUT` is a full update): the types
    /// named are pushed (`true`) or not (`false`), every type not named is pushed again, as by
    /// default. `x-wallet-signature` is the wallet's ed25519 signature (base58) of
    /// `narrative-market-service:push-preferences-replace:<wallet>:<types>:issued-at:<issued_at>`,
    /// `<types>` being the types named in the body sorted by name, each `<type>=on` or
    /// `<type>=off`, joined by commas, and `<issued_at>` the unix seconds sent in
    /// `x-wallet-issued-at` (accepted within 300 s before the server's time, 60 s after, once).
    #[oai(path = "/notifications/push/preferences/:wallet", method = "put")]
    async fn replace_preferences(
        &self,
        wallet: Path<Wallet>,
        #[oai(name = "x-wallet-signature")] signature: Header<Base58Signature>,
        #[oai(name = "x-wallet-issued-at")] issued_at: Header<UnixSeconds>,
        body: Json<PushPreferenceChanges>,
    ) -> Answer<Json<PushPreferences>, PreferencesChangeRefusals> {
        self.write_preferences(
            wallet.0,
            &signature.0,
            issued_at.0,
            &body.0,
            PreferencesWrite::Replace,
        )
        .await
    }

    /// Turn some notification types on or off for the wallet's browsers; types not named keep
    /// their setting. `x-wallet-signature` is the wallet's ed25519 signature (base58) of
    /// `narrative-market-service:push-preferences:<wallet>:<changes>:issued-at:<issued_at>`, the
    /// changes being the types named in the body sorted by name, each `<type>=on` or
    /// `<type>=off`, joined by commas, and `<issued_at>` the unix seconds sent in
    /// `x-wallet-issued-at` (accepted within 300 s before the server's time, 60 s after, once).
    #[oai(path = "/notifications/push/preferences/:wallet", method = "patch")]
    async fn change_preferences(
        &self,
        wallet: Path<Wallet>,
        #[oai(name = "x-wallet-signature")] signature: Header<Base58Signature>,
        #[oai(name = "x-wallet-issued-at")] issued_at: Header<UnixSeconds>,
        body: Json<PushPreferenceChanges>,
    ) -> Answer<Json<PushPreferences>, PreferencesChangeRefusals> {
        self.write_preferences(
            wallet.0,
            &signature.0,
            issued_at.0,
            &body.0,
            PreferencesWrite::Change,
        )
        .await
    }

    /// Mark the wallet's notifications read, with its signature.
    #[oai(path = "/notifications/:wallet/read", method = "post")]
    async fn mark_read(
        &self,
        wallet: Path<Wallet>,
        body: Json<MarkRead>,
    ) -> Answer<Json<MarkedRead>, ReadRefusals> {
        let body = body.0;
        let marked = feed::mark_read(
            &self.state,
            Proof {
                wallet: &wallet.0,
                signature: &body.signature,
                issued_at: body.issued_at,
            },
            body.up_to_id,
        )
        .await?;
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

impl NotificationsApi {
    async fn write_preferences(
        &self,
        wallet: Wallet,
        signature: &Base58Signature,
        issued_at: UnixSeconds,
        body: &PushPreferenceChanges,
        how: PreferencesWrite,
    ) -> Answer<Json<PushPreferences>, PreferencesChangeRefusals> {
        let proof = Proof {
            wallet: &wallet,
            signature,
            issued_at,
        };
        let disabled = push::set_preferences(&self.state, proof, &body.changes(), how).await?;
        Ok(Json(PushPreferences {
            ok: true,
            wallet,
            preferences: PushPreferenceMap::without(&disabled),
        }))
    }
}

#[cfg(test)]
mod tests {
    use poem_openapi::types::ToJSON;

    use super::*;

    #[test]
    fn the_preferences_name_every_notification_type_once() {
        let all_on = PushPreferenceMap::without(&Default::default())
            .to_json()
            .unwrap();
        let names: Vec<&str> = all_on
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected: Vec<&str> = NotificationKind::ALL.iter().map(|k| k.as_str()).collect();
        expected.sort();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, expected);
        assert!(all_on.as_object().unwrap().values().all(|v| v == true));

        let off = [NotificationKind::StreakBroken].into_iter().collect();
        let map = PushPreferenceMap::without(&off).to_json().unwrap();
        assert_eq!(map["streak_broken"], false);
        assert_eq!(map["streak_milestone"], true);
    }
}
