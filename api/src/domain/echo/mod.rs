//! The Echo Pool (spec 2.6, 4.3): crucible_pool's SOL epochs. Forfeits of Yield markets and the
//! shield seam share flow in on chain; at each epoch's end the keeper (`keeper`) posts the root
//! of a distribution computed from the index by the rules of `rules` (`distribution` gathers
//! their inputs), every wallet claims its share with its proof (`claim`), and what is left
//! unclaimed rolls over. `reads` answers the conviction group's epoch and Echo Pool routes;
//! `ruffler` is the points draw held at each close.

pub mod claim;
pub mod distribution;
pub mod keeper;
pub mod reads;
pub mod ruffler;
pub mod rules;
