//! On-chain program suites, in one test binary so program-test is linked once.
//! All run natively on solana-program-test; the clock moves only through warp + Clock sysvar.

// solana-program-test 3.1 marks its API "agave-unstable" (deprecated); see tests/src/lib.rs.
#![allow(deprecated)]

mod binary_invariants;
mod binary_lifecycle;
mod binary_rejections;
mod binary_spl;
mod crucible;
mod crucible_invariants;
mod layouts;
mod shield_invariants;
mod shield_lifecycle;
mod shield_rejections;
