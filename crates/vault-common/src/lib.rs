//! Helpers shared by the three on-chain programs: checked money math with explicit rounding,
//! value transfers out of PDA vaults, and PDA creation that a lamport donation cannot block.
//! Kept free of floats and of `std` I/O so it builds for SBF.

pub mod account;
pub mod math;
pub mod roles;
pub mod timelock;
pub mod transfer;

pub use account::*;
pub use math::*;
pub use roles::*;
pub use timelock::*;
pub use transfer::*;
