//! Helpers shared by the three on-chain programs: checked money math with explicit rounding, and
//! value transfers out of PDA vaults. Kept free of floats and of `std` I/O so it builds for SBF.

pub mod math;
pub mod transfer;

pub use math::*;
pub use transfer::*;
