//! `echo_keeper`: tends crucible_pool's SOL epochs (the Echo Pool) for ever: closes each epoch
//! when it is due with the distribution computed from the index, and rolls over what wallets
//! left unclaimed once a claim window has passed. One row (a singleton); run by
//! `domain::echo::keeper`.

use serde::{Deserialize, Serialize};

use super::{JobKind, PerpetualJob};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EchoKeeper {}

impl JobKind for EchoKeeper {
    const NAME: &'static str = "echo_keeper";
}

impl PerpetualJob for EchoKeeper {
    const SINGLETON: &'static str = "echo_keeper:sol";
}
