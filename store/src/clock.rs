//! The wall clock of the store's own bookkeeping (checkpoint times).

/// Seconds since the Unix epoch; 0 if the clock is before it.
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
