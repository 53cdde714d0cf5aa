//! Binary markets (spec 4.13): the listing and positions from the index, and backing and
//! claiming through prepared `back_market` / `claim` transactions (also used by narratives,
//! whose markets are binary markets).

pub mod backing;
pub mod listing;
