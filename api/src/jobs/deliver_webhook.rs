//! `deliver_webhook`: one event to one agent's webhook, retried with backoff. The body and the
//! message id are fixed when the event happens, so every retry sends the same bytes under the
//! same `webhook-id`. Run by `domain::agents::webhooks`.

use serde::{Deserialize, Serialize};

use super::JobKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliverWebhook {
    pub agent_id: String,
    pub url: String,
    pub event: String,
    /// The exact body to send.
    pub body: String,
    /// The Standard Webhooks `webhook-id`; deliveries queued before it existed use the job's id.
    #[serde(default)]
    pub message_id: Option<String>,
}

impl JobKind for DeliverWebhook {
    const NAME: &'static str = "deliver_webhook";

    /// The message id, so a fan-out run again after a crash finds what it queued already.
    fn subject(&self) -> Option<String> {
        self.message_id.clone()
    }
}
