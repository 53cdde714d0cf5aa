//! `deliver_push`: one notification to one browser's push subscription, retried with backoff.
//! The message is built at each attempt from the rows it names, so a subscription removed or a
//! type turned off in the meantime is honoured. Run by `domain::notifications::push`.

use serde::{Deserialize, Serialize};

use super::JobKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliverPush {
    pub subscription_id: i64,
    pub notification_id: i64,
}

impl JobKind for DeliverPush {
    const NAME: &'static str = "deliver_push";
}
