//! Test harness for the on-chain programs: the three Anchor programs run natively as builtins
//! under solana-program-test (with its bundled SPL Token program), driven only through
//! `narrative-sdk` builders.

// solana-program-test 3.1 marks its whole API deprecated ("agave-unstable-api"); it is the
// pinned, working native runner (../shared/VERSIONS.md), so the notice is silenced here.
#![allow(deprecated)]

pub mod errors;
pub mod harness;
pub mod native;
pub mod rng;
pub mod sequences;
pub mod shield;
pub mod spl;
pub mod venues;

pub use errors::*;
pub use harness::*;
