//! Seeds (spec 4.14), split constants, bounds and timelocks (spec 4.14, 8) of shield_vault.

pub const PROGRAM_STATE_SEED: &[u8] = b"shield_program_state";
/// `shield_state` + protocol_id: one coverage period.
pub const SHIELD_STATE_SEED: &[u8] = b"shield_state";
/// System-owned lamport vaults: `shield_safe` / `shield_exploit` + protocol_id.
pub const SAFE_VAULT_SEED: &[u8] = b"shield_safe";
pub const EXPLOIT_VAULT_SEED: &[u8] = b"shield_exploit";
/// `shield_back` + protocol_id + backer + side byte (0 SAFE, 1 EXPLOIT).
pub const BACKING_SEED: &[u8] = b"shield_back";
/// `shield_oracle` + protocol_id + oracle.
pub const ORACLE_VOTE_SEED: &[u8] = b"shield_oracle";
/// Signer PDA of the seam-pool CPI into crucible_pool.
pub const CPI_AUTHORITY_SEED: &[u8] = b"shield_cpi_auth";

/// Yield-share virtual offset (spec 4.14).
pub const VIRTUAL_SHARES: u128 = 1_000;
pub const VIRTUAL_ASSETS: u128 = 1;

/// Discovery multiplier (spec 4.14): backings in the first 20 % of the window.
pub const DISCOVERY_WINDOW_PCT: i64 = 20;
pub const DISCOVERY_MULTIPLIER_BPS: u16 = 20_000;
pub const DEFAULT_MULTIPLIER_BPS: u16 = 10_000;

/// Spec 8: backing bounds, 0.1 to 100 SOL.
pub const MIN_BACKING_LAMPORTS: u64 = 100_000_000;
pub const MAX_BACKING_LAMPORTS: u64 = 100_000_000_000;
/// Spec 8: self-hedge cap at most 5000 bps.
pub const MAX_SELF_HEDGE_BPS: u16 = 5_000;
/// Spec 8: resolution timelock 172800 s, admin action timelock 259200 s.
pub const RESOLUTION_TIMELOCK_SECS: i64 = 172_800;
pub const ADMIN_ACTION_TIMELOCK_SECS: i64 = 259_200;
/// How long after `period_end` (with no outcome proposed), or after the resolution timelock
/// (with one proposed but never finalised), anyone may send a coverage to refund mode.
pub const RESOLUTION_DELAY_SECS: i64 = 14 * DAY_SECS;
/// How long after `period_end`, with no outcome proposed, the admin may send a coverage to
/// refund mode: the oracles' 48 h to vote first.
pub const ADMIN_REFUND_DELAY_SECS: i64 = RESOLUTION_TIMELOCK_SECS;
/// Spec 8: at most 5 oracle signers.
pub const MAX_ORACLES: usize = 5;
/// Spec 4.14: coverage periods of 30, 60 or 90 days.
pub const PERIOD_DAYS: [u16; 3] = [30, 60, 90];
pub const DAY_SECS: i64 = 86_400;

/// Spec 4.14 split of the losing SAFE principal when EXPLOIT wins a partnership shield.
pub const PARTNERSHIP_PROTOCOL_BPS: u16 = 5_000;
pub const PARTNERSHIP_EXPLOIT_BACKERS_BPS: u16 = 3_500;
pub const PARTNERSHIP_TREASURY_BPS: u16 = 1_200;
/// ... and of a community shield.
pub const COMMUNITY_EXPLOIT_BACKERS_BPS: u16 = 5_800;
pub const COMMUNITY_TREASURY_BPS: u16 = 3_900;
/// Seam pool share (crucible_pool, by CPI) on either kind.
pub const SEAM_POOL_BPS: u16 = 300;
