//! `fan_out_webhook`: queues one event's deliveries (`deliver_webhook`) to every agent whose
//! webhook is subscribed to it, a page of webhooks at a time, apart from the transaction that
//! reported the event: that transaction writes only this job, however many agents listen. Run
//! by `domain::agents::webhooks`.

use serde::{Deserialize, Serialize};

use super::JobKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanOutWebhook {
    pub event: String,
    /// The exact body every delivery sends, fixed when the event happened.
    pub body: String,
    /// The event's message id; each delivery's `webhook-id` is `<message_id>_<agent id>`.
    pub message_id: String,
}

impl JobKind for FanOutWebhook {
    const NAME: &'static str = "fan_out_webhook";

    fn subject(&self) -> Option<String> {
        Some(self.message_id.clone())
    }
}
