//! Agent webhooks (spec 6.1): `narrative.created` and `narrative.resolved` delivered to the URL
//! an agent registered, as durable jobs retried with backoff, every attempt recorded.
//!
//! Each delivery is a `POST` of `{event, created_at, data}` with
//! `x-nms-event: <event>` and `x-nms-signature: t=<unix seconds>,v1=<hex>`, where `<hex>` is
//! HMAC-SHA256 over `"<t>.<body>"` keyed with the 32 bytes of SHA-256(the agent's API key): the
//! agent can check it with the key it holds, and the service never stores the key itself. The
//! body is fixed when the event happens, so a retry sends the same bytes with a fresh timestamp.

use std::time::Duration;

use anyhow::Context;
use hmac::{Hmac, Mac};
use narrative_store::entities::{agent_webhooks, agents, api_keys, webhook_deliveries};
use narrative_store::Store;
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, ConnectionTrait, EntityTrait};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::jobs::JobOutcome;
use crate::time::{iso, now};

pub const DELIVER_WEBHOOK: &str = "deliver_webhook";
pub const NARRATIVE_CREATED: &str = "narrative.created";
pub const NARRATIVE_RESOLVED: &str = "narrative.resolved";
pub const EVENTS: [&str; 2] = [NARRATIVE_CREATED, NARRATIVE_RESOLVED];

/// `v1` of `x-nms-signature`: HMAC-SHA256 of `"<timestamp>.<body>"` under `key`.
pub fn signature(key: &[u8], timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Queues `event` for every agent subscribed to it (inside the caller's transaction, so an
/// event is queued exactly when what it reports is committed). Returns how many were queued.
pub async fn emit(
    db: &impl ConnectionTrait,
    event: &str,
    data: Value,
) -> Result<usize, sea_orm::DbErr> {
    let body = json!({"event": event, "created_at": iso(now()), "data": data}).to_string();
    let mut queued = 0;
    for hook in agent_webhooks::Entity::find().all(db).await? {
        let wanted = hook
            .events
            .as_array()
            .is_some_and(|events| events.iter().any(|e| e.as_str() == Some(event)));
        if wanted {
            crate::jobs::enqueue(
                db,
                DELIVER_WEBHOOK,
                json!({"agent_id": hook.agent_id, "url": hook.url, "event": event, "body": body}),
                now(),
            )
            .await?;
            queued += 1;
        }
    }
    Ok(queued)
}

/// One delivery attempt of job `job`; an answer other than 2xx (or none) is an error, so the
/// queue retries it with backoff.
pub async fn deliver(
    store: &Store,
    http: &reqwest::Client,
    job: &narrative_store::entities::jobs::Model,
) -> anyhow::Result<JobOutcome> {
    let payload = &job.payload;
    let text = |key: &str| {
        payload[key]
            .as_str()
            .with_context(|| format!("payload {key}"))
    };
    let (agent_id, url, event, body) = (
        text("agent_id")?,
        text("url")?,
        text("event")?,
        text("body")?,
    );
    let db = store.db();
    let agent = agents::Entity::find_by_id(agent_id.to_owned())
        .one(db)
        .await?
        .context("the agent is gone")?;
    let key = api_keys::Entity::find_by_id(agent.api_key_id.clone())
        .one(db)
        .await?
        .context("the agent's key is gone")?;
    let secret = hex::decode(&key.key_hash).context("stored key digest")?;
    let timestamp = now();
    let sent = http
        .post(url)
        .timeout(Duration::from_secs(10))
        .header("content-type", "application/json")
        .header("x-nms-event", event)
        .header(
            "x-nms-signature",
            format!("t={timestamp},v1={}", signature(&secret, timestamp, body)),
        )
        .body(body.to_owned())
        .send()
        .await;
    let (status_code, error) = match &sent {
        Ok(response) if response.status().is_success() => (Some(response.status().as_u16()), None),
        Ok(response) => (
            Some(response.status().as_u16()),
            Some(format!("receiver answered {}", response.status())),
        ),
        Err(e) => (None, Some(e.to_string())),
    };
    webhook_deliveries::Entity::insert(webhook_deliveries::ActiveModel {
        id: NotSet,
        agent_id: Set(agent_id.to_owned()),
        event: Set(event.to_owned()),
        url: Set(url.to_owned()),
        job_id: Set(job.id),
        attempt: Set(job.attempts),
        status_code: Set(status_code.map(i32::from)),
        error: Set(error.clone()),
        created_at: Set(timestamp),
    })
    .exec_without_returning(db)
    .await?;
    match error {
        None => Ok(JobOutcome::Done),
        Some(error) => anyhow::bail!(error),
    }
}

#[cfg(test)]
mod tests {
    use super::signature;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // Known answer, from Python: hmac.new(b"key", b"1700000000.{}", sha256).hexdigest()
        assert_eq!(
            signature(b"key", 1_700_000_000, "{}"),
            "9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
        );
        assert_ne!(
            signature(b"key", 1_700_000_001, "{}"),
            signature(b"key", 1_700_000_000, "{}")
        );
    }
}
