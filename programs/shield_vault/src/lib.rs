//! shield_vault: SAFE/EXPLOIT coverage markets (spec 3.6, 4.14). Placeholder until its own
//! issue: it declares its id so that Anchor.toml, the sdk and the tests can name it.

use anchor_lang::prelude::*;

declare_id!("4sN79w8KeYcWa68vCGC5dLLbkMJ3Ng3SycwG9rdRZ5w7");

#[program]
pub mod shield_vault {}
