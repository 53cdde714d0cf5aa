//! What every account-mirroring table shares: an `address` key and the `(slot, write_version)`
//! of the update it was written from, which decides whether a later update may replace it.

use sea_orm::EntityTrait;

pub trait AccountEntity: EntityTrait {
    fn address() -> Self::Column;
    fn slot() -> Self::Column;
    fn write_version() -> Self::Column;
    fn closed() -> Self::Column;
}

/// Implements [`AccountEntity`] for an entity whose model has the standard account columns.
#[macro_export]
macro_rules! account_table {
    ($entity:ident) => {
        impl $crate::accounts::AccountEntity for $entity {
            fn address() -> Column {
                Column::Address
            }
            fn slot() -> Column {
                Column::Slot
            }
            fn write_version() -> Column {
                Column::WriteVersion
            }
            fn closed() -> Column {
                Column::Closed
            }
        }
    };
}
