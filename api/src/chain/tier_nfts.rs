//! Tier NFTs on Token-2022 (spec 4.12), read and built without a program of our own:
//!
//! - a tier's **collection** is a Token-2022 mint with the group-pointer and token-group
//!   extensions, the service's NFT authority its mint and update authority;
//! - an **NFT** is a mint of decimals 0 whose one token goes to the wallet, with the
//!   metadata-pointer and token-metadata extensions (name, symbol, uri and a `tier` field) and
//!   the group-member-pointer and token-group-member extensions tying it to its collection. The
//!   mint authority is dropped in the same transaction, so the supply stays 1 for ever.
//!
//! Both addresses are derived with the system program's `create_account_with_seed` from the
//! authority: a collection per (authority, tier), an NFT per (authority, wallet, tier). So a
//! wallet has one possible NFT per collection, the chain itself refuses a second, and only the
//! authority's signature can create either; the wallet pays for the NFT's accounts.
//!
//! A derivable address can be sent lamports by anyone, and `create_account_with_seed` refuses
//! one that holds any. So an address funded beforehand (for ~0.0009 SOL, a wallet's mint or a
//! collection would otherwise be blocked for ever) is topped up, allocated and assigned
//! instead ([`SeededAddress`]), which still takes the authority's signature.

use anchor_lang::solana_program::rent::Rent;
use narrative_sdk::{Instruction, Pubkey};
use sha2::{Digest, Sha256};
use solana_keypair::Keypair;
use solana_signer::Signer;
use spl_token_2022_interface::extension::{
    group_member_pointer, group_pointer, metadata_pointer, BaseStateWithExtensions, ExtensionType,
    StateWithExtensions,
};
use spl_token_2022_interface::instruction::{self as token_ix, AuthorityType};
use spl_token_2022_interface::state::Mint;
use spl_token_group_interface::state::{TokenGroup, TokenGroupMember};
use spl_token_metadata_interface::state::TokenMetadata;

use crate::chain::holdings::{associated_token_account, token_amount, TOKEN_2022_PROGRAM};
use crate::chain::ledger::{Ledger, LedgerAccount, LedgerError};
pub use crate::chain::seeded::SeededAddress;
use crate::chain::seeded::{create_seeded_account, Seed};
use crate::chain::send::send_and_confirm;
use crate::chain::venues::create_associated_account;
use crate::values::NftTier;

/// The metadata field that names an NFT's tier, beside its collection.
pub const TIER_FIELD: &str = "tier";

/// A collection takes members without a practical bound.
const COLLECTION_MAX_SIZE: u64 = u32::MAX as u64;

/// What a tier's NFTs are called and where their off-chain metadata lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftMetadata {
    pub name: String,
    pub symbol: String,
    pub uri: String,
}

impl NftMetadata {
    /// The metadata of `tier`'s NFTs, their JSON served under `metadata_base`.
    pub fn of(tier: NftTier, metadata_base: &str) -> NftMetadata {
        let tier_name = tier.as_str();
        let mut title = tier_name.to_owned();
        title[..1].make_ascii_uppercase();
        NftMetadata {
            name: format!("{title} conviction tier"),
            symbol: tier_name.to_ascii_uppercase(),
            uri: format!("{}/{tier_name}", metadata_base.trim_end_matches('/')),
        }
    }
}

/// The collection of `tier` under `authority`: its address and the seed it is created with.
pub fn collection_address(authority: &Pubkey, tier: NftTier) -> (Pubkey, String) {
    let seed = format!("tier-collection-{}", tier.as_str());
    (with_seed(authority, &seed), seed)
}

/// The one NFT `wallet` can mint in `tier`'s collection: its address and seed. The seed is the
/// first half of a SHA-256 over the tier and the wallet, in hex (a seed is at most 32 bytes).
pub fn nft_address(authority: &Pubkey, wallet: &Pubkey, tier: NftTier) -> (Pubkey, String) {
    let digest = Sha256::new()
        .chain_update(b"tier-nft:")
        .chain_update(tier.as_str())
        .chain_update(wallet.as_ref())
        .finalize();
    let seed = hex::encode(&digest[..16]);
    (with_seed(authority, &seed), seed)
}

fn with_seed(base: &Pubkey, seed: &str) -> Pubkey {
    Pubkey::create_with_seed(base, seed, &TOKEN_2022_PROGRAM)
        .expect("seeds here are at most 32 bytes")
}

/// Token-2022 builders refuse only a program id that is not a token program.
fn built(ix: Result<Instruction, anchor_lang::prelude::ProgramError>) -> Instruction {
    ix.expect("built for the Token-2022 program")
}

/// Lamports that keep an account of `len` bytes rent-exempt.
fn rent(len: usize) -> u64 {
    Rent::default().minimum_balance(len)
}

fn account_len(extensions: &[ExtensionType]) -> usize {
    ExtensionType::try_calculate_account_len::<Mint>(extensions)
        .expect("the sizes of fixed extensions")
}

/// The instructions that create `tier`'s collection, paid by `payer` and signed by
/// `authority` (which is also its mint and update authority); `prefunded`: the lamports its
/// address holds already.
pub fn create_collection(
    payer: &Pubkey,
    authority: &Pubkey,
    tier: NftTier,
    prefunded: u64,
) -> Vec<Instruction> {
    let (collection, seed) = collection_address(authority, tier);
    // The group extension is written by its own instruction, which grows the account: it is
    // created with room for the pointer and the lamports of the final size.
    let space = account_len(&[ExtensionType::GroupPointer]);
    let lamports = rent(account_len(&[
        ExtensionType::GroupPointer,
        ExtensionType::TokenGroup,
    ]));
    let mut instructions = create_seeded_account(
        payer,
        &collection,
        Seed {
            base: authority,
            seed: &seed,
            owner: &TOKEN_2022_PROGRAM,
        },
        lamports,
        space as u64,
        prefunded,
    );
    instructions.extend([
        built(group_pointer::instruction::initialize(
            &TOKEN_2022_PROGRAM,
            &collection,
            Some(*authority),
            Some(collection),
        )),
        built(token_ix::initialize_mint2(
            &TOKEN_2022_PROGRAM,
            &collection,
            authority,
            None,
            0,
        )),
        spl_token_group_interface::instruction::initialize_group(
            &TOKEN_2022_PROGRAM,
            &collection,
            &collection,
            authority,
            Some(*authority),
            COLLECTION_MAX_SIZE,
        ),
    ]);
    instructions
}

/// The instructions that mint `wallet`'s NFT of `tier` into its associated token account:
/// `wallet` pays and signs, `authority` co-signs as the NFT's mint authority and the
/// collection's update authority; `prefunded`: the lamports the NFT's address holds already.
pub fn mint_nft(
    wallet: &Pubkey,
    authority: &Pubkey,
    collection: &Pubkey,
    tier: NftTier,
    metadata: &NftMetadata,
    prefunded: u64,
) -> Vec<Instruction> {
    let (mint, seed) = nft_address(authority, wallet, tier);
    let on_chain = TokenMetadata {
        update_authority: Some(*authority).try_into().expect("a non-zero authority"),
        mint,
        name: metadata.name.clone(),
        symbol: metadata.symbol.clone(),
        uri: metadata.uri.clone(),
        additional_metadata: vec![(TIER_FIELD.to_owned(), tier.as_str().to_owned())],
    };
    let pointers = [
        ExtensionType::MetadataPointer,
        ExtensionType::GroupMemberPointer,
    ];
    let space = account_len(&pointers);
    let metadata_len = on_chain.tlv_size_of().expect("metadata of bounded size");
    let lamports = rent(
        account_len(&[
            ExtensionType::MetadataPointer,
            ExtensionType::GroupMemberPointer,
            ExtensionType::TokenGroupMember,
        ]) + metadata_len,
    );
    let holder = associated_token_account(wallet, &mint, &TOKEN_2022_PROGRAM);
    let mut instructions = create_seeded_account(
        wallet,
        &mint,
        Seed {
            base: authority,
            seed: &seed,
            owner: &TOKEN_2022_PROGRAM,
        },
        lamports,
        space as u64,
        prefunded,
    );
    instructions.extend([
        built(metadata_pointer::instruction::initialize(
            &TOKEN_2022_PROGRAM,
            &mint,
            Some(*authority),
            Some(mint),
        )),
        built(group_member_pointer::instruction::initialize(
            &TOKEN_2022_PROGRAM,
            &mint,
            Some(*authority),
            Some(mint),
        )),
        built(token_ix::initialize_mint2(
            &TOKEN_2022_PROGRAM,
            &mint,
            authority,
            None,
            0,
        )),
        spl_token_metadata_interface::instruction::initialize(
            &TOKEN_2022_PROGRAM,
            &mint,
            authority,
            &mint,
            authority,
            on_chain.name,
            on_chain.symbol,
            on_chain.uri,
        ),
        spl_token_metadata_interface::instruction::update_field(
            &TOKEN_2022_PROGRAM,
            &mint,
            authority,
            spl_token_metadata_interface::state::Field::Key(TIER_FIELD.to_owned()),
            tier.as_str().to_owned(),
        ),
        spl_token_group_interface::instruction::initialize_member(
            &TOKEN_2022_PROGRAM,
            &mint,
            &mint,
            authority,
            collection,
            authority,
        ),
        create_associated_account(wallet, wallet, &mint, &TOKEN_2022_PROGRAM),
        built(token_ix::mint_to(
            &TOKEN_2022_PROGRAM,
            &mint,
            &holder,
            authority,
            &[],
            1,
        )),
        built(token_ix::set_authority(
            &TOKEN_2022_PROGRAM,
            &mint,
            None,
            AuthorityType::MintTokens,
            authority,
            &[],
        )),
    ]);
    instructions
}

/// A tier NFT as the ledger holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierNft {
    pub mint: Pubkey,
    /// The collection (token group) it is a member of.
    pub collection: Pubkey,
    pub name: String,
    pub uri: String,
    /// Its metadata's `tier` field, when it has one.
    pub tier_field: Option<String>,
}

/// Reads `account` at `mint` as a tier NFT: a Token-2022 mint of decimals 0 and supply 1 with
/// no mint authority, whose metadata and group membership live in the mint itself. `None` for
/// anything else (a fungible token, an NFT whose metadata lives elsewhere, a mint that can still
/// mint, a collection).
pub fn read_nft(mint: &Pubkey, account: &LedgerAccount) -> Option<TierNft> {
    if account.owner != TOKEN_2022_PROGRAM {
        return None;
    }
    let state = StateWithExtensions::<Mint>::unpack(&account.data).ok()?;
    let base = &state.base;
    if !base.is_initialized
        || base.decimals != 0
        || base.supply != 1
        || base.mint_authority.is_some()
    {
        return None;
    }
    let member = state.get_extension::<TokenGroupMember>().ok()?;
    let metadata = state.get_variable_len_extension::<TokenMetadata>().ok()?;
    if member.mint != *mint || metadata.mint != *mint {
        return None;
    }
    let tier_field = metadata
        .additional_metadata
        .iter()
        .find(|(key, _)| key == TIER_FIELD)
        .map(|(_, value)| value.clone());
    Some(TierNft {
        mint: *mint,
        collection: member.group,
        name: metadata.name,
        uri: metadata.uri,
        tier_field,
    })
}

/// Whether `account` is a collection whose update authority is `authority`: a Token-2022 mint
/// with the token-group extension, its group itself.
pub fn is_collection_of(collection: &Pubkey, account: &LedgerAccount, authority: &Pubkey) -> bool {
    if account.owner != TOKEN_2022_PROGRAM {
        return false;
    }
    let Ok(state) = StateWithExtensions::<Mint>::unpack(&account.data) else {
        return false;
    };
    match state.get_extension::<TokenGroup>() {
        Ok(group) => {
            group.mint == *collection
                && Option::<Pubkey>::from(group.update_authority) == Some(*authority)
        }
        Err(_) => false,
    }
}

/// A tier's collection after [`deploy_collections`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployedCollection {
    pub tier: NftTier,
    pub collection: Pubkey,
    /// Created by this call (else it existed already).
    pub created: bool,
}

/// Creates every tier's collection that does not exist yet under `authority`, which pays and
/// signs; a collection already there is checked and kept, so running it again changes
/// nothing. What an operator runs once (`nft-collections`) before configuring
/// `NFT_COLLECTIONS`.
pub async fn deploy_collections(
    ledger: &dyn Ledger,
    authority: &Keypair,
) -> anyhow::Result<Vec<DeployedCollection>> {
    let key = authority.pubkey();
    let addresses: Vec<Pubkey> = NftTier::ALL
        .iter()
        .map(|tier| collection_address(&key, *tier).0)
        .collect();
    let (_, accounts) = ledger.accounts(&addresses).await?;
    let mut deployed = Vec::with_capacity(addresses.len());
    for ((tier, collection), account) in NftTier::ALL.iter().zip(addresses).zip(accounts) {
        let created = match account {
            Some(ref account) if is_collection_of(&collection, account, &key) => false,
            account => match SeededAddress::of(account.as_ref()) {
                SeededAddress::Free { lamports } => {
                    let instructions = create_collection(&key, &key, *tier, lamports);
                    send_and_confirm(ledger, authority, &instructions).await?;
                    true
                }
                SeededAddress::Taken => anyhow::bail!(
                    "{collection} ({tier}) exists but is not this authority's collection"
                ),
            },
        };
        deployed.push(DeployedCollection {
            tier: *tier,
            collection,
            created,
        });
    }
    Ok(deployed)
}

/// The `NFT_COLLECTIONS` setting naming `deployed`.
pub fn collections_setting(deployed: &[DeployedCollection]) -> String {
    deployed
        .iter()
        .map(|d| format!("{}={}", d.tier, d.collection))
        .collect::<Vec<_>>()
        .join(",")
}

/// Which of `candidates` holds `mint`'s one token in its associated Token-2022 account, read in
/// one call; `None` when none of them does.
pub async fn holder_among(
    ledger: &dyn Ledger,
    mint: &Pubkey,
    candidates: &[Pubkey],
) -> Result<Option<Pubkey>, LedgerError> {
    if candidates.is_empty() {
        return Ok(None);
    }
    let addresses: Vec<Pubkey> = candidates
        .iter()
        .map(|wallet| associated_token_account(wallet, mint, &TOKEN_2022_PROGRAM))
        .collect();
    let (_, accounts) = ledger.accounts(&addresses).await?;
    Ok(candidates
        .iter()
        .zip(accounts)
        .find(|(wallet, account)| {
            account
                .as_ref()
                .filter(|a| a.owner == TOKEN_2022_PROGRAM)
                .and_then(|a| token_amount(&a.data, mint, wallet))
                .is_some_and(|amount| amount >= 1)
        })
        .map(|(wallet, _)| *wallet))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::solana_program::{system_instruction, system_program};

    #[test]
    fn addresses_are_one_per_tier_and_wallet_under_an_authority() {
        let (authority, a, b) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let (ember_a, seed) = nft_address(&authority, &a, NftTier::Ember);
        assert_eq!(seed.len(), 32);
        assert_eq!(nft_address(&authority, &a, NftTier::Ember).0, ember_a);
        assert_ne!(nft_address(&authority, &a, NftTier::Flare).0, ember_a);
        assert_ne!(nft_address(&authority, &b, NftTier::Ember).0, ember_a);
        assert_ne!(
            nft_address(&Pubkey::new_unique(), &a, NftTier::Ember).0,
            ember_a
        );
        let collections: std::collections::BTreeSet<Pubkey> = NftTier::ALL
            .iter()
            .map(|tier| collection_address(&authority, *tier).0)
            .collect();
        assert_eq!(collections.len(), NftTier::ALL.len());
        for tier in NftTier::ALL {
            assert!(collection_address(&authority, *tier).1.len() <= 32);
        }
    }

    #[test]
    fn the_mint_is_signed_by_the_wallet_and_the_authority_only() {
        let (wallet, authority, collection) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let metadata = NftMetadata::of(NftTier::Molten, "https://api.example/v1/nft/metadata/");
        assert_eq!(metadata.name, "Molten conviction tier");
        assert_eq!(metadata.symbol, "MOLTEN");
        assert_eq!(metadata.uri, "https://api.example/v1/nft/metadata/molten");
        // Also for an address funded beforehand (with a little, or with more than the rent).
        for prefunded in [0, 1, u64::MAX] {
            the_mint_is_signed_and_fits(&wallet, &authority, &collection, &metadata, prefunded);
        }
    }

    fn the_mint_is_signed_and_fits(
        wallet: &Pubkey,
        authority: &Pubkey,
        collection: &Pubkey,
        metadata: &NftMetadata,
        prefunded: u64,
    ) {
        let (wallet, authority) = (*wallet, *authority);
        let ixs = mint_nft(
            &wallet,
            &authority,
            collection,
            NftTier::Molten,
            metadata,
            prefunded,
        );
        let mut signers: Vec<Pubkey> = ixs
            .iter()
            .flat_map(|ix| ix.accounts.iter())
            .filter(|meta| meta.is_signer)
            .map(|meta| meta.pubkey)
            .collect();
        signers.sort();
        signers.dedup();
        let mut expected = vec![wallet, authority];
        expected.sort();
        assert_eq!(signers, expected);
        // Fits one legacy transaction with both signatures and the prepared id's memo.
        let mut prepared = ixs.clone();
        prepared.push(narrative_sdk::memo::memo(
            &crate::values::PreparedId::new_ordered(1_800_000_000).to_string(),
        ));
        let tx = narrative_sdk::tx::unsigned_transaction(
            &prepared,
            &wallet,
            solana_hash::Hash::new_from_array([1; 32]),
        );
        let size = bincode::serialized_size(&tx).unwrap();
        assert!(
            size <= crate::chain::confirm::PACKET_BYTES,
            "{size} bytes with {prefunded} lamports there"
        );
        // The account is created by the one instruction, or topped up (when short of the
        // rent), allocated and assigned.
        let (mint, seed) = nft_address(&authority, &wallet, NftTier::Molten);
        let system: Vec<_> = ixs
            .iter()
            .take_while(|ix| ix.program_id == system_program::ID)
            .cloned()
            .collect();
        let (rent, space) = {
            let fresh = mint_nft(
                &wallet,
                &authority,
                collection,
                NftTier::Molten,
                metadata,
                0,
            );
            assert_eq!(fresh[0].accounts[1].pubkey, mint);
            lamports_and_space_of_create(&fresh[0])
        };
        assert!(rent > 0 && space > 0);
        let allocate = || {
            system_instruction::allocate_with_seed(
                &mint,
                &authority,
                &seed,
                space,
                &TOKEN_2022_PROGRAM,
            )
        };
        let assign =
            system_instruction::assign_with_seed(&mint, &authority, &seed, &TOKEN_2022_PROGRAM);
        match (prefunded, &system[..]) {
            (0, [create]) => assert_eq!(lamports_and_space_of_create(create), (rent, space)),
            (1, [transfer, allocated, assigned]) => {
                assert_eq!(
                    transfer,
                    &system_instruction::transfer(&wallet, &mint, rent - 1)
                );
                assert_eq!((allocated, assigned), (&allocate(), &assign));
            }
            (u64::MAX, [allocated, assigned]) => {
                assert_eq!((allocated, assigned), (&allocate(), &assign))
            }
            (_, other) => panic!("{} system instructions for {prefunded}", other.len()),
        }
        // The one token is minted, then the mint authority dropped, last.
        let holder = associated_token_account(&wallet, &mint, &TOKEN_2022_PROGRAM);
        let tail = &ixs[ixs.len() - 2..];
        assert_eq!(
            tail[0],
            built(token_ix::mint_to(
                &TOKEN_2022_PROGRAM,
                &mint,
                &holder,
                &authority,
                &[],
                1
            ))
        );
        assert_eq!(
            tail[1],
            built(token_ix::set_authority(
                &TOKEN_2022_PROGRAM,
                &mint,
                None,
                AuthorityType::MintTokens,
                &authority,
                &[],
            ))
        );
    }

    /// `create_account_with_seed`'s lamports and space (after its tag, the base and the seed).
    fn lamports_and_space_of_create(create: &Instruction) -> (u64, u64) {
        let seed_len = u64::from_le_bytes(create.data[36..44].try_into().unwrap()) as usize;
        let at = 44 + seed_len;
        let word = |at: usize| u64::from_le_bytes(create.data[at..at + 8].try_into().unwrap());
        (word(at), word(at + 8))
    }

    #[test]
    fn an_address_is_free_while_it_is_a_system_account_without_data() {
        let account = |owner, lamports, data: Vec<u8>| LedgerAccount {
            owner,
            lamports,
            data,
        };
        assert_eq!(SeededAddress::of(None), SeededAddress::Free { lamports: 0 });
        assert_eq!(
            SeededAddress::of(Some(&account(system_program::ID, 890_880, vec![]))),
            SeededAddress::Free { lamports: 890_880 }
        );
        assert_eq!(
            SeededAddress::of(Some(&account(TOKEN_2022_PROGRAM, 890_880, vec![]))),
            SeededAddress::Taken
        );
        assert_eq!(
            SeededAddress::of(Some(&account(system_program::ID, 1, vec![0]))),
            SeededAddress::Taken
        );
    }
}
