//! The tier of a tier NFT (spec 4.12): one collection per conviction tier from `ember` up.

use super::enum_value;

enum_value!(
    /// A conviction tier that has an NFT collection, lowest first.
    NftTier,
    "nft_tier",
    "A conviction tier with an NFT collection: `ember`, `flare`, `molten`, `core` or `volcanic`.",
    [
        Ember => "ember",
        Flare => "flare",
        Molten => "molten",
        Core => "core",
        Volcanic => "volcanic",
    ]
);
