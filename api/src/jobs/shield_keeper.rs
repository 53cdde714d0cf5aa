//! `shield_keeper`: tends shield coverages for ever: finalises an outcome once its timelock has
//! passed, forwards a resolved coverage's seam share into crucible_pool, and sends a coverage
//! nobody resolved to refund once its resolution delay has passed. One row (a singleton); run
//! by `domain::shield::keeper`.

use serde::{Deserialize, Serialize};

use super::{JobKind, PerpetualJob};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShieldKeeper {}

impl JobKind for ShieldKeeper {
    const NAME: &'static str = "shield_keeper";
}

impl PerpetualJob for ShieldKeeper {
    const SINGLETON: &'static str = "shield_keeper";
}
