//! Helpers shared by the three on-chain programs: checked money math with explicit rounding,
//! value transfers out of PDA vaults, PDA creation that a lamport donation cannot block, and the
//! layout version byte every state account starts with.
//! Kept free of floats and of `std` I/O so it builds for SBF.

pub mod account;
pub mod layout;
pub mod math;
pub mod roles;
pub mod timelock;
pub mod transfer;

pub use account::*;
pub use layout::*;
pub use math::*;
pub use roles::*;
pub use timelock::*;
pub use transfer::*;
