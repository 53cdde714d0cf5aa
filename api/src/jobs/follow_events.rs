//! `follow_events`: reads the indexed program events in order, for ever, and turns what they say
//! happened into notifications, point awards and referral rewards. One row (a singleton); run
//! by `domain::notifications::follower`.

use serde::{Deserialize, Serialize};

use super::{JobKind, PerpetualJob};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowEvents {}

impl JobKind for FollowEvents {
    const NAME: &'static str = "follow_events";
}

impl PerpetualJob for FollowEvents {
    const SINGLETON: &'static str = "follow_events";
}
