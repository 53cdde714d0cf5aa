//! The window in which a proposed admin change may be applied: not before its timelock has
//! passed, and not after its apply window has closed, so that a change nobody applied cannot be
//! sprung on users long after they stopped watching for it.

/// How long a change stays appliable once its timelock has passed (7 days).
pub const APPLY_WINDOW_SECS: i64 = 7 * 86_400;

/// Where a change proposed at `proposed_at` stands at `now`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ChangeStage {
    /// The timelock is still running.
    Waiting,
    /// It may be applied.
    Appliable,
    /// The apply window closed: it must be proposed again.
    Expired,
}

/// The stage of a change with `timelock_secs`, or `None` if the times overflow.
pub fn change_stage(proposed_at: i64, timelock_secs: i64, now: i64) -> Option<ChangeStage> {
    let applies_at = proposed_at.checked_add(timelock_secs)?;
    let expires_at = applies_at.checked_add(APPLY_WINDOW_SECS)?;
    Some(if now < applies_at {
        ChangeStage::Waiting
    } else if now < expires_at {
        ChangeStage::Appliable
    } else {
        ChangeStage::Expired
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_appliable_from_its_timelock_until_its_window_closes() {
        let stage = |now| change_stage(1_000, 100, now).unwrap();
        assert_eq!(stage(1_099), ChangeStage::Waiting);
        assert_eq!(stage(1_100), ChangeStage::Appliable);
        assert_eq!(stage(1_100 + APPLY_WINDOW_SECS - 1), ChangeStage::Appliable);
        assert_eq!(stage(1_100 + APPLY_WINDOW_SECS), ChangeStage::Expired);
        assert_eq!(change_stage(i64::MAX, 1, 0), None);
    }
}
