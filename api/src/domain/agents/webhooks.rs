//! Agent webhooks (spec 6.1) in the Standard Webhooks format
//! (<https://www.standardwebhooks.com>), so a receiver can verify them with an existing library:
//!
//! - a `POST` of `{"type": <event>, "timestamp": <ISO 8601>, "data": {...}}`;
//! - `webhook-id`: the message's id, the same on every retry of one event (receivers drop
//!   duplicates by it); `webhook-timestamp`: unix seconds of this attempt;
//! - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the
//!   webhook's secret: 32 random bytes made at each registration and stored with the webhook,
//!   returned (as the Standard Webhooks `whsec_<base64>`) by that registration only. It owes
//!   nothing to the agent's API key, whose digest the store keeps to check the key.
//!
//! Deliveries are durable jobs retried with backoff, every attempt recorded, and go through the
//! outbound guard: the service calls only public https addresses, each host behind a circuit
//! breaker (a skipped host's delivery waits for the cool-down, attempts untouched). An agent
//! whose key is revoked is sent nothing: its webhook gets no new events and queued deliveries
//! are dropped when their turn comes.
//!
//! An event writes one job in the transaction that reports it (`fan_out_webhook`), whatever the
//! number of agents listening; that job, in the outbound lane, queues the deliveries a page of
//! webhooks at a time. Before, the reporting transaction (a publish, a verdict) queued every
//! delivery itself: 10,000 webhooks held it 1.4 s on SQLite and 2.3 s on Postgres.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context;
use base64::Engine;
use hmac::{Hmac, Mac};
use narrative_store::entities::{agent_webhooks, agents, api_keys, jobs, webhook_deliveries};
use narrative_store::Store;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::clock::{iso, SharedClock};
use crate::domain::agents::agent_of;
use crate::domain::keys::Caller;
use crate::error::ApiError;
use crate::jobs::deliver_webhook::DeliverWebhook;
use crate::jobs::fan_out_webhook::FanOutWebhook;
use crate::jobs::{Handler, JobKind, JobOutcome, Leased};
use crate::providers::outbound::{Outbound, OutboundError, Refused};
use crate::state::AppState;
use crate::values::{enum_value, HttpsUrl};

enum_value!(
    /// An event an agent can subscribe to (spec 6.1).
    WebhookEvent,
    "webhook_event",
    "An agent webhook event.",
    [NarrativeCreated => "narrative.created", NarrativeResolved => "narrative.resolved"]
);

/// The Standard Webhooks form of the secret `bytes`: `whsec_<base64>`.
pub fn signing_secret(bytes: &[u8]) -> String {
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A new random secret, as [`signing_secret`] writes it.
pub fn new_signing_secret() -> String {
    signing_secret(&rand::random::<[u8; 32]>())
}

/// The key bytes of a stored `whsec_…` secret.
fn secret_bytes(secret: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_")?)
        .ok()
}

/// `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `"<id>.<timestamp>.<body>"`.
pub fn signature(key: &[u8], message_id: &str, timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(format!("{message_id}.{timestamp}.{body}").as_bytes());
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

pub struct Registration {
    pub url: HttpsUrl,
    pub events: Vec<WebhookEvent>,
    /// `whsec_…`, to verify deliveries with.
    pub signing_secret: String,
}

/// Registers (or replaces) the calling agent's webhook, with a new random signing secret that
/// only this answer shows (registering again replaces it: how a lost or leaked secret is
/// rotated). 403 `url_not_allowed` for a URL the service would not call.
pub async fn register(
    state: &AppState,
    caller: &Caller,
    url: HttpsUrl,
    events: Vec<WebhookEvent>,
) -> Result<Registration, ApiError> {
    let agent = agent_of(state, caller, "only agents register webhooks").await?;
    if let Err(refused) = state.outbound.check(url.url()).await {
        return Err(ApiError::url_not_allowed(
            "URL",
            refused.for_client(url.url()),
        ));
    }
    let mut unique: Vec<WebhookEvent> = Vec::new();
    for event in events {
        if !unique.contains(&event) {
            unique.push(event);
        }
    }
    let db = state.store.db();
    let secret = new_signing_secret();
    agent_webhooks::Entity::insert(agent_webhooks::ActiveModel {
        agent_id: Set(agent.id),
        url: Set(url.to_string()),
        events: Set(json!(unique.iter().map(|e| e.as_str()).collect::<Vec<_>>())),
        created_at: Set(state.now()),
        signing_secret: Set(Some(secret.clone())),
    })
    .on_conflict(
        OnConflict::column(agent_webhooks::Column::AgentId)
            .update_columns([
                agent_webhooks::Column::Url,
                agent_webhooks::Column::Events,
                agent_webhooks::Column::CreatedAt,
                agent_webhooks::Column::SigningSecret,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(Registration {
        url,
        events: unique,
        signing_secret: secret,
    })
}

/// Webhooks one fan-out page reads.
const FAN_OUT_PAGE: u64 = 500;

/// Queues `event` for the agents subscribed to it, inside the caller's transaction, so an event
/// is queued exactly when what it reports is committed: one [`FanOutWebhook`] job, whose run
/// queues the deliveries ([`WebhookFanOut`]) to the webhooks subscribed then.
pub async fn emit(
    db: &impl ConnectionTrait,
    event: WebhookEvent,
    data: Value,
    now: i64,
) -> Result<(), sea_orm::DbErr> {
    let body = json!({"type": event.as_str(), "timestamp": iso(now), "data": data}).to_string();
    let fan_out = FanOutWebhook {
        event: event.as_str().to_owned(),
        body,
        message_id: format!("msg_{}", uuid::Uuid::new_v4().simple()),
    };
    crate::jobs::enqueue(db, &fan_out, now, now).await?;
    Ok(())
}

fn subscribed(hook: &agent_webhooks::Model, event: &str) -> bool {
    hook.events
        .as_array()
        .is_some_and(|events| events.iter().any(|e| e.as_str() == Some(event)))
}

/// Runs `fan_out_webhook`: the webhooks in pages of [`FAN_OUT_PAGE`] by agent id, and for each
/// page one statement queuing the deliveries to those subscribed to the event whose agent's key
/// is live. Each delivery's subject is its message id, so a run again after a crash queues only
/// what the earlier run had not.
pub struct WebhookFanOut {
    pub store: Store,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<FanOutWebhook> for WebhookFanOut {
    async fn run(&self, job: Leased<FanOutWebhook>) -> anyhow::Result<JobOutcome> {
        let fan_out = &job.job;
        let db = self.store.db();
        let mut after = String::new();
        loop {
            let page = agent_webhooks::Entity::find()
                .filter(agent_webhooks::Column::AgentId.gt(after.as_str()))
                .order_by_asc(agent_webhooks::Column::AgentId)
                .limit(FAN_OUT_PAGE)
                .all(db)
                .await?;
            let Some(last) = page.last() else {
                return Ok(JobOutcome::Done);
            };
            after = last.agent_id.clone();
            let wanted: Vec<_> = page
                .into_iter()
                .filter(|hook| subscribed(hook, &fan_out.event))
                .collect();
            let live = live_agents(db, wanted.iter().map(|h| h.agent_id.clone()).collect()).await?;
            let deliveries: Vec<DeliverWebhook> = wanted
                .into_iter()
                .filter(|hook| live.contains(&hook.agent_id))
                .map(|hook| DeliverWebhook {
                    // One event to several agents: each delivery has an id of its own.
                    message_id: Some(format!("{}_{}", fan_out.message_id, hook.agent_id)),
                    agent_id: hook.agent_id,
                    url: hook.url,
                    event: fan_out.event.clone(),
                    body: fan_out.body.clone(),
                })
                .collect();
            if deliveries.is_empty() {
                continue;
            }
            let queued: BTreeSet<String> = jobs::Entity::find()
                .select_only()
                .column(jobs::Column::Subject)
                .filter(jobs::Column::Kind.eq(DeliverWebhook::NAME))
                .filter(jobs::Column::Subject.is_in(deliveries.iter().filter_map(|d| d.subject())))
                .into_tuple::<Option<String>>()
                .all(db)
                .await?
                .into_iter()
                .flatten()
                .collect();
            let missing: Vec<DeliverWebhook> = deliveries
                .into_iter()
                .filter(|d| d.message_id.as_ref().is_none_or(|id| !queued.contains(id)))
                .collect();
            let now = self.clock.now();
            crate::jobs::enqueue_many(db, &missing, now, now).await?;
        }
    }
}

/// Which of `agents` exist with a key that is not revoked, a statement pair per 500.
async fn live_agents(
    db: &impl ConnectionTrait,
    agents: Vec<String>,
) -> Result<std::collections::BTreeSet<String>, sea_orm::DbErr> {
    let mut live = std::collections::BTreeSet::new();
    for chunk in agents.chunks(500) {
        let keyed: Vec<(String, String)> = agents::Entity::find()
            .select_only()
            .column(agents::Column::Id)
            .column(agents::Column::ApiKeyId)
            .filter(agents::Column::Id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        let unrevoked: std::collections::BTreeSet<String> = api_keys::Entity::find()
            .select_only()
            .column(api_keys::Column::Id)
            .filter(api_keys::Column::Id.is_in(keyed.iter().map(|(_, key)| key.clone())))
            .filter(api_keys::Column::RevokedAt.is_null())
            .into_tuple()
            .all(db)
            .await?
            .into_iter()
            .collect();
        live.extend(
            keyed
                .into_iter()
                .filter(|(_, key)| unrevoked.contains(key))
                .map(|(agent, _)| agent),
        );
    }
    Ok(live)
}

/// Runs `deliver_webhook`: one attempt, recorded; an answer other than 2xx (or none) is an
/// error, so the queue retries it. A destination the guard refuses is recorded and not retried,
/// unless its host merely failed to resolve.
pub struct WebhookSender {
    pub store: Store,
    pub outbound: Arc<Outbound>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<DeliverWebhook> for WebhookSender {
    async fn run(&self, job: Leased<DeliverWebhook>) -> anyhow::Result<JobOutcome> {
        let delivery = &job.job;
        let db = self.store.db();
        let Some(agent) = agents::Entity::find_by_id(delivery.agent_id.clone())
            .one(db)
            .await?
        else {
            return Ok(JobOutcome::Done); // the agent is gone: nobody to tell
        };
        let key = api_keys::Entity::find_by_id(agent.api_key_id.clone())
            .one(db)
            .await?;
        if key.is_none_or(|key| key.revoked_at.is_some()) {
            tracing::info!(agent = %delivery.agent_id, "agent's key revoked; webhook delivery dropped");
            return Ok(JobOutcome::Done);
        }
        let hook = agent_webhooks::Entity::find_by_id(delivery.agent_id.clone())
            .one(db)
            .await?;
        let Some(hook) = hook else {
            return Ok(JobOutcome::Done); // the webhook was removed: nobody to tell
        };
        // The receiver as registered now, with its secret: after a registration replaced the
        // URL, queued events go to the new receiver, never signed with the new secret to the
        // old one.
        let Some(secret) = hook.signing_secret.as_deref().and_then(secret_bytes) else {
            tracing::warn!(agent = %delivery.agent_id, "webhook without a signing secret (registered before secrets were random); not sent until registered again");
            return Ok(JobOutcome::Done);
        };
        let message_id = delivery
            .message_id
            .clone()
            .unwrap_or_else(|| format!("msg_job{}", job.id));
        let timestamp = self.clock.now();
        let url: reqwest::Url = hook.url.parse().context("stored webhook URL")?;
        let sent = self
            .outbound
            .post(
                &url,
                &[
                    ("webhook-id", message_id.clone()),
                    ("webhook-timestamp", timestamp.to_string()),
                    (
                        "webhook-signature",
                        signature(&secret, &message_id, timestamp, &delivery.body),
                    ),
                ],
                delivery.body.clone(),
            )
            .await;
        let (status_code, error, retry) = match &sent {
            Ok(answer) if (200..300).contains(&answer.status) => (Some(answer.status), None, false),
            Ok(answer) => (
                Some(answer.status),
                Some(format!("receiver answered {}", answer.status)),
                true,
            ),
            Err(OutboundError::Refused(refused)) => (
                None,
                Some(format!("refused: {refused}")),
                matches!(refused, Refused::Unresolvable(_)),
            ),
            // The receiver's host failed repeatedly: tried once its cool-down ends, as if
            // this turn had not come (no attempt spent or recorded).
            Err(OutboundError::CircuitOpen { until }) => return Ok(JobOutcome::Deferred(*until)),
            Err(e) => (None, Some(e.to_string()), true),
        };
        webhook_deliveries::Entity::insert(webhook_deliveries::ActiveModel {
            id: NotSet,
            agent_id: Set(delivery.agent_id.clone()),
            event: Set(delivery.event.clone()),
            url: Set(hook.url.clone()),
            job_id: Set(job.id),
            attempt: Set(job.attempt),
            status_code: Set(status_code.map(i32::from)),
            error: Set(error.clone()),
            created_at: Set(timestamp),
        })
        .exec_without_returning(db)
        .await?;
        match error {
            Some(error) if retry => anyhow::bail!(error),
            Some(error) => {
                tracing::warn!(agent = %delivery.agent_id, %error, "webhook delivery refused; not retried");
                Ok(JobOutcome::Done)
            }
            None => Ok(JobOutcome::Done),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_follows_standard_webhooks() {
        // The Standard Webhooks libraries' own example.
        let secret = base64::engine::general_purpose::STANDARD
            .decode("C2FVsBQIhrscChlQIMV+b5sSYspob7oD")
            .unwrap();
        assert_eq!(
            signature(
                &secret,
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1_649_367_553,
                r#"{"email":"test@example.com","username":"test_user"}"#
            ),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
        assert_eq!(
            signing_secret(&secret),
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
        );
        assert_eq!(
            secret_bytes("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"),
            Some(secret)
        );
    }

    #[test]
    fn each_secret_is_new() {
        let (a, b) = (new_signing_secret(), new_signing_secret());
        assert_ne!(a, b);
        assert_eq!(secret_bytes(&a).map(|b| b.len()), Some(32));
    }
}
