//! Seeds, limits and defaults of the crucible pool (the Echo Pool of spec 2.6).

/// Program-wide settings: admin, keeper, authorised sources, epoch timing.
pub const STATE_SEED: &[u8] = b"crucible_state";
/// The one system-owned lamport vault for SOL.
pub const SOL_VAULT_SEED: &[u8] = b"crucible_vault";
/// Token vault per mint: `crucible_tvault` + mint.
pub const TOKEN_VAULT_SEED: &[u8] = b"crucible_tvault";
/// Accounting per asset: `crucible_asset` + mint (the zero key stands for SOL).
pub const ASSET_POOL_SEED: &[u8] = b"crucible_asset";
/// One epoch of one asset: `crucible_epoch` + mint + epoch number (u64 LE).
pub const EPOCH_SEED: &[u8] = b"crucible_epoch";
/// One claim receipt per wallet per epoch: `crucible_claim` + epoch account + wallet.
pub const CLAIM_SEED: &[u8] = b"crucible_claim";

/// At most this many programs (by their CPI signer PDA) may deposit.
pub const MAX_AUTHORIZED_SOURCES: usize = 4;
/// Deepest Merkle proof accepted (2^24 leaves), bounding compute and transaction size.
pub const MAX_PROOF_LEN: usize = 24;

/// Default epoch length: one week.
pub const DEFAULT_EPOCH_DURATION_SECS: i64 = 7 * 24 * 60 * 60;
/// Default time a closed epoch stays claimable before its remainder rolls over: 30 days.
pub const DEFAULT_CLAIM_WINDOW_SECS: i64 = 30 * 24 * 60 * 60;
/// Bounds on both durations: at least one hour, at most a year.
pub const MIN_DURATION_SECS: i64 = 60 * 60;
pub const MAX_DURATION_SECS: i64 = 366 * 24 * 60 * 60;
/// Keeper, epoch timing, new deposit sources and the guardian change this long after they are
/// proposed (spec 8's admin timelock), longer than the root challenge delay: a keeper named by
/// a compromised admin cannot post a root before the old guardian has seen it coming.
pub const ADMIN_ACTION_TIMELOCK_SECS: i64 = 259_200;
/// A posted Merkle root becomes claimable only this long after it is posted; until then the
/// admin or the guardian may veto it (its distribution then rolls into the open epoch). 48 h, like the payout
/// hold of binary_vault and shield_vault.
pub const ROOT_CHALLENGE_DELAY_SECS: i64 = 172_800;
