//! Randomised sequences run in shards (several tests, so the runner spreads them over the
//! cores): how many and from which seed, read from the environment, and which seeds a shard
//! runs.

/// Sequences per program when the environment does not say.
pub const DEFAULT_SEQUENCES: u64 = 200;

/// `name` from the environment as a decimal or `0x` hexadecimal number (a failing sequence
/// prints its seed in hex), or `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            }
            .unwrap_or_else(|_| panic!("{name} must be a number"))
        })
        .unwrap_or(default)
}

/// The seeds shard `shard` of `shards` runs: every `shards`-th of the `count_var` sequences
/// (default [`DEFAULT_SEQUENCES`]) numbered from the seed in `seed_var` (default
/// `default_seed`).
pub fn shard_seeds(
    count_var: &str,
    seed_var: &str,
    default_seed: u64,
    shard: u64,
    shards: u64,
) -> Vec<u64> {
    let sequences = env_u64(count_var, DEFAULT_SEQUENCES);
    let base = env_u64(seed_var, default_seed);
    (shard..sequences)
        .step_by(shards as usize)
        .map(|i| base.wrapping_add(i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_deal_the_seeds_round_robin_and_cover_them_once() {
        let all: Vec<u64> = (0..3)
            .flat_map(|shard| shard_seeds("NO_SUCH_COUNT_VAR", "NO_SUCH_SEED_VAR", 10, shard, 3))
            .collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (10..10 + DEFAULT_SEQUENCES).collect::<Vec<_>>());
        assert_eq!(
            &shard_seeds("NO_SUCH_COUNT_VAR", "NO_SUCH_SEED_VAR", 10, 1, 3)[..3],
            [11, 14, 17]
        );
    }
}
