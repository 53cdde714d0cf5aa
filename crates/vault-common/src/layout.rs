//! Layout versions of the programs' state accounts.
//!
//! Every state account starts, right after Anchor's 8-byte discriminator, with a version byte of
//! a type of its own, declared with [`layout_version!`]. Deserialising that type compares the
//! byte with the version this build of the program reads, before any other field is read, so
//! an account written in another layout is refused (Anchor's `AccountDidNotDeserialize`, with a
//! log line naming the account and both versions) instead of being misread field by field.
//! How a layout change is carried out (a new version, a migrating instruction that reallocs, or
//! a redeploy) is recorded in docs/decisions.md.

use anchor_lang::prelude::borsh::io;
use anchor_lang::prelude::msg;

/// What is wrong with an account whose layout version is `found` when this build reads `reads`,
/// or `None` when they agree.
pub fn layout_mismatch(account: &str, found: u8, reads: u8) -> Option<String> {
    (found != reads).then(|| {
        format!(
            "{account} account is in layout version {found}; this program reads version {reads}: \
             migrate it first"
        )
    })
}

/// Logs [`layout_mismatch`] (the program log, where a wallet or explorer shows why the
/// transaction failed) and fails the deserialisation with it.
pub fn check_layout_version(account: &str, found: u8, reads: u8) -> io::Result<()> {
    match layout_mismatch(account, found, reads) {
        None => Ok(()),
        Some(message) => {
            msg!("{}", message);
            Err(io::Error::new(io::ErrorKind::InvalidData, message))
        }
    }
}

/// Declares `$name`, the version byte of the account `$account`, whose current layout is
/// `$version`. The byte is written as `$name::CURRENT` when the account is created; reading any
/// other value fails (see the module's doc).
#[macro_export]
macro_rules! layout_version {
    ($(#[$meta:meta])* $name:ident = $version:literal for $account:literal) => {
        $(#[$meta])*
        #[derive(
            ::anchor_lang::AnchorSerialize, ::anchor_lang::InitSpace, Clone, Copy, PartialEq, Eq,
            Debug,
        )]
        pub struct $name(u8);

        impl $name {
            /// The layout this build writes and reads.
            pub const CURRENT: $name = $name($version);

            pub fn get(self) -> u8 {
                self.0
            }
        }

        impl ::anchor_lang::AnchorDeserialize for $name {
            fn deserialize_reader<R: ::anchor_lang::prelude::borsh::io::Read>(
                reader: &mut R,
            ) -> ::anchor_lang::prelude::borsh::io::Result<Self> {
                let found = <u8 as ::anchor_lang::AnchorDeserialize>::deserialize_reader(reader)?;
                $crate::layout::check_layout_version($account, found, $version)?;
                Ok($name(found))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use anchor_lang::AnchorDeserialize;

    crate::layout_version!(
        /// A test account's version byte.
        TestVersion = 3 for "Test"
    );

    #[test]
    fn reads_its_own_version_and_refuses_any_other() {
        assert_eq!(
            TestVersion::try_from_slice(&[3]).unwrap(),
            TestVersion::CURRENT
        );
        assert_eq!(TestVersion::CURRENT.get(), 3);
        for other in [0u8, 2, 4, 255] {
            let error = TestVersion::try_from_slice(&[other]).unwrap_err();
            assert_eq!(
                error.kind(),
                std::io::ErrorKind::InvalidData,
                "version {other}"
            );
        }
    }
}
