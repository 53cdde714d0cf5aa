//! Checked money math.
//!
//! Every operation is checked and fails with `ProgramError::ArithmeticOverflow` rather than
//! wrapping. Division helpers say which way they round, so that each call site has to choose the
//! direction that favours the vault: floor what is paid out or minted, ceil what is owed to it.

use anchor_lang::prelude::*;

/// Basis-point denominator: 10_000 bps = 100 %.
pub const BPS_DENOMINATOR: u64 = 10_000;

/// The error every math helper returns. Kept as the runtime's own arithmetic error so that all
/// three programs report overflow identically.
fn overflow() -> Error {
    Error::from(ProgramError::ArithmeticOverflow)
}

/// Checked arithmetic with `?`-friendly errors; `#[track_caller]` keeps the failing line in
/// native test backtraces.
pub trait SafeMath: Sized {
    fn safe_add(self, rhs: Self) -> Result<Self>;
    fn safe_sub(self, rhs: Self) -> Result<Self>;
    fn safe_mul(self, rhs: Self) -> Result<Self>;
    fn safe_div(self, rhs: Self) -> Result<Self>;
}

macro_rules! impl_safe_math {
    ($($t:ty),*) => {$(
        impl SafeMath for $t {
            #[track_caller]
            fn safe_add(self, rhs: Self) -> Result<Self> {
                self.checked_add(rhs).ok_or_else(overflow)
            }
            #[track_caller]
            fn safe_sub(self, rhs: Self) -> Result<Self> {
                self.checked_sub(rhs).ok_or_else(overflow)
            }
            #[track_caller]
            fn safe_mul(self, rhs: Self) -> Result<Self> {
                self.checked_mul(rhs).ok_or_else(overflow)
            }
            #[track_caller]
            fn safe_div(self, rhs: Self) -> Result<Self> {
                self.checked_div(rhs).ok_or_else(overflow)
            }
        }
    )*};
}
impl_safe_math!(u8, u16, u32, u64, u128, i64);

/// `value * numerator / denominator`, rounded down, with a u128 intermediate so the product
/// cannot overflow. Fails when the denominator is zero or the result does not fit in u64.
pub fn mul_div_floor(value: u64, numerator: u64, denominator: u64) -> Result<u64> {
    let product = (value as u128).safe_mul(numerator as u128)?;
    let quotient = product.safe_div(denominator as u128)?;
    u64::try_from(quotient).map_err(|_| overflow())
}

/// `value * numerator / denominator`, rounded up.
pub fn mul_div_ceil(value: u64, numerator: u64, denominator: u64) -> Result<u64> {
    let product = (value as u128).safe_mul(numerator as u128)?;
    let denominator = denominator as u128;
    let quotient = product.safe_div(denominator)?;
    let rounded = if product % denominator == 0 {
        quotient
    } else {
        quotient.safe_add(1)?
    };
    u64::try_from(rounded).map_err(|_| overflow())
}

/// `bps` basis points of `value`, rounded down (for amounts paid out of a vault).
pub fn bps_floor(value: u64, bps: u16) -> Result<u64> {
    mul_div_floor(value, bps as u64, BPS_DENOMINATOR)
}

/// `bps` basis points of `value`, rounded up (for amounts owed to a vault).
pub fn bps_ceil(value: u64, bps: u16) -> Result<u64> {
    mul_div_ceil(value, bps as u64, BPS_DENOMINATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_add_overflow_is_an_error() {
        assert!(u64::MAX.safe_add(1).is_err());
        assert_eq!(2u64.safe_add(3).unwrap(), 5);
    }

    #[test]
    fn safe_sub_underflow_is_an_error() {
        assert!(0u64.safe_sub(1).is_err());
        assert_eq!(9u64.safe_sub(4).unwrap(), 5);
    }

    #[test]
    fn division_by_zero_is_an_error() {
        assert!(mul_div_floor(10, 1, 0).is_err());
        assert!(mul_div_ceil(10, 1, 0).is_err());
        assert!(5u64.safe_div(0).is_err());
    }

    #[test]
    fn mul_div_uses_a_wide_intermediate() {
        // u64::MAX * u64::MAX would overflow a u64 product; the u128 path handles it.
        assert_eq!(
            mul_div_floor(u64::MAX, u64::MAX, u64::MAX).unwrap(),
            u64::MAX
        );
        assert!(mul_div_floor(u64::MAX, 2, 1).is_err());
    }

    #[test]
    fn floor_and_ceil_differ_only_on_a_remainder() {
        assert_eq!(mul_div_floor(10, 1, 3).unwrap(), 3);
        assert_eq!(mul_div_ceil(10, 1, 3).unwrap(), 4);
        assert_eq!(mul_div_floor(9, 1, 3).unwrap(), 3);
        assert_eq!(mul_div_ceil(9, 1, 3).unwrap(), 3);
        assert_eq!(mul_div_ceil(0, 7, 3).unwrap(), 0);
    }

    #[test]
    fn bps_rounding_directions() {
        // 35 % of 1 lamport: the vault keeps the whole lamport when it is owed (ceil) and pays
        // nothing when it is paying (floor).
        assert_eq!(bps_ceil(1, 3_500).unwrap(), 1);
        assert_eq!(bps_floor(1, 3_500).unwrap(), 0);
        assert_eq!(bps_floor(1_000_000_000, 3_500).unwrap(), 350_000_000);
        assert_eq!(bps_ceil(1_000_000_000, 3_500).unwrap(), 350_000_000);
        assert_eq!(bps_floor(u64::MAX, 10_000).unwrap(), u64::MAX);
    }
}
