//! Seeds (spec 4.13), limits (spec 8) and defaults (ARCHITECTURE §2) of binary_vault.

pub const PROGRAM_STATE_SEED: &[u8] = b"binary_program_state";
pub const CONFIG_SEED: &[u8] = b"binary_config";
/// `binary_state` + market_id.
pub const MARKET_SEED: &[u8] = b"binary_state";
/// System-owned lamport vaults: `yes_vault` / `no_vault` + market_id.
pub const YES_VAULT_SEED: &[u8] = b"yes_vault";
pub const NO_VAULT_SEED: &[u8] = b"no_vault";
/// Token vaults of SPL markets: `yes_tvault` / `no_tvault` + market_id.
pub const YES_TOKEN_VAULT_SEED: &[u8] = b"yes_tvault";
pub const NO_TOKEN_VAULT_SEED: &[u8] = b"no_tvault";
/// `binary_back` + market_id + backer + side byte (1 YES, 0 NO).
pub const BACKING_SEED: &[u8] = b"binary_back";
/// `binary_oracle` + market_id + oracle.
pub const ORACLE_VOTE_SEED: &[u8] = b"binary_oracle";
/// `binary_dispute` + market_id.
pub const DISPUTE_SEED: &[u8] = b"binary_dispute";
/// Disputes one market may see: the proposed outcome once, and an overturned one once more.
pub const MAX_DISPUTES_PER_MARKET: u32 = 2;
/// Signer PDA that authorises this program's deposits into crucible_pool (not in the spec; see
/// docs/decisions.md).
pub const CPI_AUTHORITY_SEED: &[u8] = b"binary_cpi_auth";

/// `oracle_status` values, spec 3.5. Value 2 is deliberately unused.
pub const ORACLE_STATUS_OPEN: u8 = 0;
pub const ORACLE_STATUS_RESOLVED: u8 = 1;
pub const ORACLE_STATUS_DISPUTED: u8 = 3;
pub const ORACLE_STATUS_REFUND: u8 = 4;

/// Spec 8: binary config defaults.
pub const DEFAULT_CAPITAL_LOSS_BPS: u16 = 3_500;
pub const DEFAULT_CRUCIBLE_SHARE_BPS: u16 = 5_000;
/// Spec 8: payout hold after resolution, 48 h; also the dispute window.
pub const DEFAULT_RESOLUTION_TIMELOCK_SECS: i64 = 172_800;
/// Spec 8: narrative backing minimum, 0.01 SOL.
pub const MIN_BACKING_LAMPORTS: u64 = 10_000_000;
/// Spec 8: oracle confidence 0.7 to 1.0, in basis points.
pub const MIN_CONFIDENCE_BPS: u16 = 7_000;
pub const MAX_CONFIDENCE_BPS: u16 = 10_000;
/// ARCHITECTURE §2: oracle sets hold at most five signers.
pub const MAX_ORACLES: usize = 5;

/// Bounds the admin cannot leave (docs/decisions.md).
pub const MIN_RESOLUTION_TIMELOCK_SECS: i64 = DEFAULT_RESOLUTION_TIMELOCK_SECS;
pub const MAX_RESOLUTION_TIMELOCK_SECS: i64 = 30 * 24 * 60 * 60;
pub const MIN_RESOLUTION_DELAY_SECS: i64 = 24 * 60 * 60;
pub const MAX_RESOLUTION_DELAY_SECS: i64 = 365 * 24 * 60 * 60;
/// Furthest deadline a market may have: two years ahead.
pub const MAX_MARKET_DURATION_SECS: i64 = 731 * 24 * 60 * 60;

/// Most a dispute bond may be (100 SOL): a bond above what any disputer would post is a way to
/// forbid disputes. The least is the rent-exempt minimum of an empty account, read at runtime.
pub const MAX_DISPUTE_BOND_LAMPORTS: u64 = 100_000_000_000;
/// How long after a dispute opens the admin may rule against the standing outcome (overturn or
/// refund): a day for the market's backers to see the dispute before it changes what they hold.
/// Upholding the standing outcome needs no wait.
pub const MIN_DISPUTE_RULING_DELAY_SECS: i64 = 24 * 60 * 60;

/// Spec 8: a proposed config or oracle-set change applies 259200 s after it is proposed.
pub const ADMIN_ACTION_TIMELOCK_SECS: i64 = 259_200;
/// Most of a Yield market's losing side that may be forfeited: losers keep at least half.
pub const MAX_CAPITAL_LOSS_BPS: u16 = 5_000;
