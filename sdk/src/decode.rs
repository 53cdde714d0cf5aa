//! Decoding of every account and event of the programs by its 8-byte Anchor discriminator.
//!
//! Accounts decode from their data; events decode from the data of the self-CPI inner
//! instruction that `emit_cpi!` produces (`EVENT_IX_TAG_LE` + discriminator + borsh body).
//! Bytes that match no known discriminator give `None`, so callers can keep them raw.

use anchor_lang::event::EVENT_IX_TAG_LE;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountDeserialize, AnchorDeserialize, Discriminator};

/// Declares an enum with one variant per type and a `decode` that dispatches on the type's
/// discriminator.
macro_rules! by_discriminator {
    ($(#[$doc:meta])* $name:ident, $decode:ident { $($variant:ident => $ty:path),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $($variant($ty)),*
        }

        impl $name {
            /// The type's name, as in the IDL.
            pub fn name(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => stringify!($variant)),*
                }
            }

            pub fn decode(data: &[u8]) -> Option<Self> {
                $(
                    if data.starts_with(<$ty as Discriminator>::DISCRIMINATOR) {
                        return $decode::<$ty>(data).map($name::$variant);
                    }
                )*
                None
            }
        }
    };
}

fn account<T: AccountDeserialize>(data: &[u8]) -> Option<T> {
    T::try_deserialize(&mut &data[..]).ok()
}

fn event<T: AnchorDeserialize + Discriminator>(data: &[u8]) -> Option<T> {
    T::deserialize(&mut &data[T::DISCRIMINATOR.len()..]).ok()
}

mod binary_types {
    pub use binary_vault::events::*;
    pub use binary_vault::state::*;
}
mod shield_types {
    pub use shield_vault::events::*;
    pub use shield_vault::state::*;
}
mod crucible_types {
    pub use crucible_pool::events::*;
    pub use crucible_pool::state::*;
}

by_discriminator!(
    /// An account owned by binary_vault.
    BinaryAccount, account {
        ProgramState => binary_types::ProgramState,
        Config => binary_types::Config,
        Market => binary_types::Market,
        Backing => binary_types::Backing,
        OracleVote => binary_types::OracleVote,
        Dispute => binary_types::Dispute,
    }
);

by_discriminator!(
    /// An account owned by crucible_pool.
    CrucibleAccount, account {
        State => crucible_types::CrucibleState,
        AssetPool => crucible_types::AssetPool,
        Epoch => crucible_types::Epoch,
        ClaimReceipt => crucible_types::ClaimReceipt,
    }
);

by_discriminator!(
    /// An event of binary_vault.
    BinaryEvent, event {
        ProgramInitialized => binary_types::ProgramInitialized,
        ConfigUpdated => binary_types::ConfigUpdated,
        OraclesUpdated => binary_types::OraclesUpdated,
        ConfigChangeProposed => binary_types::ConfigChangeProposed,
        ConfigChangeCancelled => binary_types::ConfigChangeCancelled,
        AdminProposed => binary_types::AdminProposed,
        AdminRotated => binary_types::AdminRotated,
        PauseChanged => binary_types::PauseChanged,
        MarketCreated => binary_types::MarketCreated,
        MarketApproved => binary_types::MarketApproved,
        MarketBacked => binary_types::MarketBacked,
        OracleVoteSubmitted => binary_types::OracleVoteSubmitted,
        ResolutionProposed => binary_types::ResolutionProposed,
        DisputeOpened => binary_types::DisputeOpened,
        DisputeSettled => binary_types::DisputeSettled,
        MarketFinalized => binary_types::MarketFinalized,
        CrucibleShareForwarded => binary_types::CrucibleShareForwarded,
        DisputeBondForwarded => binary_types::DisputeBondForwarded,
        RefundTriggered => binary_types::RefundTriggered,
        OracleVoteClosed => binary_types::OracleVoteClosed,
        Claimed => binary_types::Claimed,
    }
);

by_discriminator!(
    /// An event of crucible_pool.
    CrucibleEvent, event {
        Initialized => crucible_types::CrucibleInitialized,
        SettingsUpdated => crucible_types::CrucibleSettingsUpdated,
        SourceAuthorizationChanged => crucible_types::SourceAuthorizationChanged,
        AssetPoolInitialized => crucible_types::AssetPoolInitialized,
        Deposited => crucible_types::CrucibleDeposited,
        EpochClosed => crucible_types::EpochClosed,
        EpochClaimed => crucible_types::EpochClaimed,
        EpochRolledOver => crucible_types::EpochRolledOver,
        EpochRootVetoed => crucible_types::EpochRootVetoed,
        ClaimReceiptClosed => crucible_types::ClaimReceiptClosed,
        AdminProposed => crucible_types::CrucibleAdminProposed,
        AdminRotated => crucible_types::CrucibleAdminRotated,
        ChangeProposed => crucible_types::CrucibleChangeProposed,
        ChangeCancelled => crucible_types::CrucibleChangeCancelled,
        GuardianChanged => crucible_types::GuardianChanged,
    }
);

by_discriminator!(
    /// An account owned by shield_vault.
    ShieldAccount, account {
        ProgramState => shield_types::ShieldProgramState,
        Coverage => shield_types::Coverage,
        Backing => shield_types::ShieldBacking,
        Vote => shield_types::ShieldVote,
    }
);

by_discriminator!(
    /// An event of shield_vault.
    ShieldEvent, event {
        ProgramInitialized => shield_types::ShieldProgramInitialized,
        AdminChangeProposed => shield_types::AdminChangeProposed,
        AdminChangeApplied => shield_types::AdminChangeApplied,
        AdminChangeCancelled => shield_types::AdminChangeCancelled,
        AdminProposed => shield_types::ShieldAdminProposed,
        AdminRotated => shield_types::ShieldAdminRotated,
        PauseChanged => shield_types::ShieldPauseChanged,
        CoverageOpened => shield_types::CoverageOpened,
        Backed => shield_types::ShieldBacked,
        YieldHarvested => shield_types::YieldHarvested,
        VoteSubmitted => shield_types::ShieldVoteSubmitted,
        OutcomeProposed => shield_types::ShieldOutcomeProposed,
        Finalized => shield_types::ShieldFinalized,
        SeamShareForwarded => shield_types::SeamShareForwarded,
        PayoutForwarded => shield_types::PayoutForwarded,
        RefundAll => shield_types::ShieldRefundAll,
        Claimed => shield_types::ShieldClaimed,
        VoteClosed => shield_types::ShieldVoteClosed,
    }
);

/// An account of any of the programs, recognised by its owner and discriminator.
/// Decoded values are short-lived (decoded, matched, stored), so the size spread between
/// variants costs less than boxing every one.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum ProgramAccount {
    Binary(BinaryAccount),
    Crucible(CrucibleAccount),
    Shield(ShieldAccount),
}

/// An event of any of the programs.
#[derive(Debug, Clone)]
pub enum ProgramEvent {
    Binary(BinaryEvent),
    Crucible(CrucibleEvent),
    Shield(ShieldEvent),
}

impl ProgramAccount {
    /// The account type's name, e.g. `Market`.
    pub fn name(&self) -> &'static str {
        match self {
            ProgramAccount::Binary(a) => a.name(),
            ProgramAccount::Crucible(a) => a.name(),
            ProgramAccount::Shield(a) => a.name(),
        }
    }
}

/// What an event is about, for indexing: the market or protocol id (hex) or epoch account it
/// concerns, the wallet that acted, and the account it closed, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventKeys {
    pub subject: Option<String>,
    pub actor: Option<Pubkey>,
    pub closes: Option<Pubkey>,
}

/// Lower-case hex of a 32-byte id (market_id, protocol_id, Merkle root).
pub fn hex32(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl ProgramEvent {
    /// The program that emitted it: `binary_vault`, `crucible_pool` or `shield_vault`.
    pub fn program(&self) -> &'static str {
        match self {
            ProgramEvent::Binary(_) => "binary_vault",
            ProgramEvent::Crucible(_) => "crucible_pool",
            ProgramEvent::Shield(_) => "shield_vault",
        }
    }

    /// The event type's name as in the IDL, e.g. `MarketBacked`.
    pub fn name(&self) -> &'static str {
        match self {
            ProgramEvent::Binary(e) => e.name(),
            ProgramEvent::Crucible(e) => e.name(),
            ProgramEvent::Shield(e) => e.name(),
        }
    }

    pub fn keys(&self) -> EventKeys {
        use BinaryEvent as B;
        use CrucibleEvent as C;
        use ShieldEvent as S;
        let about = |id: &[u8; 32], actor: Option<Pubkey>| EventKeys {
            subject: Some(hex32(id)),
            actor,
            closes: None,
        };
        let epoch = |mint: &Pubkey, n: u64, actor: Option<Pubkey>| EventKeys {
            subject: Some(crate::pda::crucible::epoch(mint, n).to_string()),
            actor,
            closes: None,
        };
        match self {
            ProgramEvent::Binary(e) => match e {
                B::MarketCreated(e) => about(&e.market_id, Some(e.creator)),
                B::MarketApproved(e) => about(&e.market_id, None),
                B::MarketBacked(e) => about(&e.market_id, Some(e.backer)),
                B::OracleVoteSubmitted(e) => about(&e.market_id, Some(e.oracle)),
                B::ResolutionProposed(e) => about(&e.market_id, None),
                B::DisputeOpened(e) => about(&e.market_id, Some(e.disputer)),
                B::DisputeSettled(e) => about(&e.market_id, None),
                B::MarketFinalized(e) => about(&e.market_id, None),
                B::CrucibleShareForwarded(e) => about(&e.market_id, None),
                B::DisputeBondForwarded(e) => about(&e.market_id, None),
                B::RefundTriggered(e) => about(&e.market_id, None),
                B::Claimed(e) => about(&e.market_id, Some(e.backer)),
                B::OracleVoteClosed(e) => EventKeys {
                    closes: Some(crate::pda::binary::oracle_vote(&e.market_id, &e.oracle)),
                    ..about(&e.market_id, Some(e.oracle))
                },
                B::ProgramInitialized(e) => EventKeys {
                    actor: Some(e.admin),
                    ..EventKeys::default()
                },
                B::AdminRotated(e) => EventKeys {
                    actor: Some(e.admin),
                    ..EventKeys::default()
                },
                B::ConfigUpdated(_)
                | B::OraclesUpdated(_)
                | B::ConfigChangeProposed(_)
                | B::ConfigChangeCancelled(_)
                | B::AdminProposed(_)
                | B::PauseChanged(_) => EventKeys::default(),
            },
            ProgramEvent::Crucible(e) => match e {
                C::Deposited(e) => epoch(&e.mint, e.epoch, Some(e.source)),
                C::EpochClosed(e) => epoch(&e.mint, e.epoch, None),
                C::EpochClaimed(e) => epoch(&e.mint, e.epoch, Some(e.wallet)),
                C::EpochRolledOver(e) => epoch(&e.mint, e.epoch, None),
                C::EpochRootVetoed(e) => epoch(&e.mint, e.epoch, None),
                C::ClaimReceiptClosed(e) => {
                    let epoch_key = crate::pda::crucible::epoch(&e.mint, e.epoch);
                    EventKeys {
                        subject: Some(epoch_key.to_string()),
                        actor: Some(e.wallet),
                        closes: Some(crate::pda::crucible::claim_receipt(&epoch_key, &e.wallet)),
                    }
                }
                C::AdminRotated(e) => EventKeys {
                    actor: Some(e.admin),
                    ..EventKeys::default()
                },
                C::AssetPoolInitialized(_)
                | C::AdminProposed(_)
                | C::Initialized(_)
                | C::SettingsUpdated(_)
                | C::SourceAuthorizationChanged(_)
                | C::ChangeProposed(_)
                | C::ChangeCancelled(_)
                | C::GuardianChanged(_) => EventKeys::default(),
            },
            ProgramEvent::Shield(e) => match e {
                S::CoverageOpened(e) => about(&e.protocol_id, None),
                S::Backed(e) => about(&e.protocol_id, Some(e.backer)),
                S::YieldHarvested(e) => about(&e.protocol_id, None),
                S::VoteSubmitted(e) => about(&e.protocol_id, Some(e.oracle)),
                S::OutcomeProposed(e) => about(&e.protocol_id, None),
                S::Finalized(e) => about(&e.protocol_id, None),
                S::SeamShareForwarded(e) => about(&e.protocol_id, None),
                S::PayoutForwarded(e) => about(&e.protocol_id, None),
                // The zero key: the timeout refund, nobody's call.
                S::RefundAll(e) => about(
                    &e.protocol_id,
                    Some(e.by).filter(|by| *by != Pubkey::default()),
                ),
                S::Claimed(e) => about(&e.protocol_id, Some(e.backer)),
                S::VoteClosed(e) => EventKeys {
                    closes: Some(crate::pda::shield::oracle_vote(&e.protocol_id, &e.oracle)),
                    ..about(&e.protocol_id, Some(e.oracle))
                },
                S::PauseChanged(e) => EventKeys {
                    actor: Some(e.by),
                    ..EventKeys::default()
                },
                S::AdminRotated(e) => EventKeys {
                    actor: Some(e.admin),
                    ..EventKeys::default()
                },
                S::ProgramInitialized(_)
                | S::AdminProposed(_)
                | S::AdminChangeProposed(_)
                | S::AdminChangeApplied(_)
                | S::AdminChangeCancelled(_) => EventKeys::default(),
            },
        }
    }
}

/// Decodes an account's data given its owner; `None` for an unknown owner or layout.
pub fn decode_account(owner: &Pubkey, data: &[u8]) -> Option<ProgramAccount> {
    if *owner == binary_vault::ID {
        BinaryAccount::decode(data).map(ProgramAccount::Binary)
    } else if *owner == crucible_pool::ID {
        CrucibleAccount::decode(data).map(ProgramAccount::Crucible)
    } else if *owner == shield_vault::ID {
        ShieldAccount::decode(data).map(ProgramAccount::Shield)
    } else {
        None
    }
}

/// Decodes the data of an inner instruction invoking `program_id`, if it is an `emit_cpi!`
/// event of one of the programs.
pub fn decode_event(program_id: &Pubkey, ix_data: &[u8]) -> Option<ProgramEvent> {
    let body = ix_data.strip_prefix(EVENT_IX_TAG_LE)?;
    if *program_id == binary_vault::ID {
        BinaryEvent::decode(body).map(ProgramEvent::Binary)
    } else if *program_id == crucible_pool::ID {
        CrucibleEvent::decode(body).map(ProgramEvent::Crucible)
    } else if *program_id == shield_vault::ID {
        ShieldEvent::decode(body).map(ProgramEvent::Shield)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::{AccountSerialize, Event};
    use binary_vault::events::PauseChanged;
    use binary_vault::state::{Backing, Side};

    #[test]
    fn decodes_a_backing_by_discriminator() {
        let backing = Backing {
            version: binary_vault::state::BackingVersion::CURRENT,
            market_id: [1; 32],
            backer: Pubkey::new_unique(),
            side: Side::Yes,
            amount: 42,
            claimed: false,
            payout: 0,
            first_backed_at: 1,
            last_backed_at: 2,
            bump: 255,
        };
        let mut data = Vec::new();
        backing.try_serialize(&mut data).unwrap();
        match decode_account(&binary_vault::ID, &data) {
            Some(ProgramAccount::Binary(BinaryAccount::Backing(b))) => {
                assert_eq!(
                    (b.amount, b.side, b.backer),
                    (42, Side::Yes, backing.backer)
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        // The same bytes under another owner are not ours.
        assert!(decode_account(&Pubkey::new_unique(), &data).is_none());
    }

    #[test]
    fn unknown_discriminator_is_none() {
        assert!(decode_account(&binary_vault::ID, &[0u8; 64]).is_none());
        assert!(decode_account(&binary_vault::ID, &[]).is_none());
    }

    #[test]
    fn decodes_an_emit_cpi_payload() {
        let mut data = EVENT_IX_TAG_LE.to_vec();
        data.extend(PauseChanged { paused: true }.data());
        match decode_event(&binary_vault::ID, &data) {
            Some(ProgramEvent::Binary(BinaryEvent::PauseChanged(e))) => assert!(e.paused),
            other => panic!("unexpected {other:?}"),
        }
        // Without the event tag it is an ordinary instruction, not an event.
        assert!(decode_event(&binary_vault::ID, &data[8..]).is_none());
    }
}
