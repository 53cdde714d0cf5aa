//! Agent webhooks (spec 6.1) in the Standard Webhooks format
//! (<https://www.standardwebhooks.com>), so a receiver can verify them with an existing library:
//!
//! - a `POST` of `{"type": <event>, "timestamp": <ISO 8601>, "data": {...}}`;
//! - `webhook-id`: the message's id, the same on every retry of one event (receivers drop
//!   duplicates by it); `webhook-timestamp`: unix seconds of this attempt;
//! - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the
//!   32 bytes of SHA-256(the agent's API key). As a Standard Webhooks secret that is
//!   `whsec_<base64 of those bytes>`, which registration returns; the service never stores the
//!   key itself.
//!
//! Deliveries are durable jobs retried with backoff, every attempt recorded, and go through the
//! outbound guard: the service calls only public https addresses.

use std::sync::Arc;

use anyhow::Context;
use base64::Engine;
use hmac::{Hmac, Mac};
use narrative_store::entities::{agent_webhooks, agents, api_keys, webhook_deliveries};
use narrative_store::Store;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, ConnectionTrait, EntityTrait};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::clock::{iso, SharedClock};
use crate::domain::agents::agent_of;
use crate::domain::keys::Caller;
use crate::error::ApiError;
use crate::jobs::deliver_webhook::DeliverWebhook;
use crate::jobs::{Handler, JobOutcome, Leased};
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

/// The Standard Webhooks secret of a key whose SHA-256 is `key_digest`.
pub fn signing_secret(key_digest: &[u8]) -> String {
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(key_digest)
    )
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

/// Registers (or replaces) the calling agent's webhook. 403 `url_not_allowed` for a URL the
/// service would not call.
pub async fn register(
    state: &AppState,
    caller: &Caller,
    url: HttpsUrl,
    events: Vec<WebhookEvent>,
) -> Result<Registration, ApiError> {
    let agent = agent_of(state, caller, "only agents register webhooks").await?;
    if let Err(refused) = state.outbound.check(url.url()).await {
        return Err(ApiError::url_not_allowed("URL", refused));
    }
    let mut unique: Vec<WebhookEvent> = Vec::new();
    for event in events {
        if !unique.contains(&event) {
            unique.push(event);
        }
    }
    let db = state.store.db();
    agent_webhooks::Entity::insert(agent_webhooks::ActiveModel {
        agent_id: Set(agent.id),
        url: Set(url.to_string()),
        events: Set(json!(unique.iter().map(|e| e.as_str()).collect::<Vec<_>>())),
        created_at: Set(state.now()),
    })
    .on_conflict(
        OnConflict::column(agent_webhooks::Column::AgentId)
            .update_columns([
                agent_webhooks::Column::Url,
                agent_webhooks::Column::Events,
                agent_webhooks::Column::CreatedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    let key = api_keys::Entity::find_by_id(caller.key_id.clone())
        .one(db)
        .await?
        .ok_or_else(|| ApiError::internal("the calling key vanished"))?;
    let digest = hex::decode(&key.key_hash).map_err(ApiError::internal)?;
    Ok(Registration {
        url,
        events: unique,
        signing_secret: signing_secret(&digest),
    })
}

/// Queues `event` for every agent subscribed to it, inside the caller's transaction, so an
/// event is queued exactly when what it reports is committed. Returns how many were queued.
pub async fn emit(
    db: &impl ConnectionTrait,
    event: WebhookEvent,
    data: Value,
    now: i64,
) -> Result<usize, sea_orm::DbErr> {
    let body = json!({"type": event.as_str(), "timestamp": iso(now), "data": data}).to_string();
    let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
    let mut queued = 0;
    for hook in agent_webhooks::Entity::find().all(db).await? {
        let wanted = hook
            .events
            .as_array()
            .is_some_and(|events| events.iter().any(|e| e.as_str() == Some(event.as_str())));
        if wanted {
            crate::jobs::enqueue(
                db,
                &DeliverWebhook {
                    // One event to several agents: each delivery has an id of its own.
                    message_id: Some(format!("{message_id}_{}", hook.agent_id)),
                    agent_id: hook.agent_id,
                    url: hook.url,
                    event: event.as_str().to_owned(),
                    body: body.clone(),
                },
                now,
                now,
            )
            .await?;
            queued += 1;
        }
    }
    Ok(queued)
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
        let agent = agents::Entity::find_by_id(delivery.agent_id.clone())
            .one(db)
            .await?
            .context("the agent is gone")?;
        let key = api_keys::Entity::find_by_id(agent.api_key_id.clone())
            .one(db)
            .await?
            .context("the agent's key is gone")?;
        let secret = hex::decode(&key.key_hash).context("stored key digest")?;
        let message_id = delivery
            .message_id
            .clone()
            .unwrap_or_else(|| format!("msg_job{}", job.id));
        let timestamp = self.clock.now();
        let url: reqwest::Url = delivery.url.parse().context("stored webhook URL")?;
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
            Err(e) => (None, Some(e.to_string()), true),
        };
        webhook_deliveries::Entity::insert(webhook_deliveries::ActiveModel {
            id: NotSet,
            agent_id: Set(delivery.agent_id.clone()),
            event: Set(delivery.event.clone()),
            url: Set(delivery.url.clone()),
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
    }
}
