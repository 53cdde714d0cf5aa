//! Merkle leaves and proofs of an epoch's distribution.
//!
//! Leaves and inner nodes are hashed with distinct one-byte prefixes so that an inner node can
//! never be presented as a leaf (second-preimage). Pairs are hashed in sorted order, so a proof
//! is a plain list of siblings with no left/right flags. The leaf binds the epoch account, so a
//! proof for one epoch is worthless in another even if two roots happened to coincide.

use anchor_lang::prelude::Pubkey;
use solana_sha256_hasher::hashv;

const LEAF_PREFIX: &[u8] = &[0];
const NODE_PREFIX: &[u8] = &[1];

/// Hash of one `(wallet, amount)` entry of `epoch`'s distribution.
pub fn leaf_hash(epoch: &Pubkey, wallet: &Pubkey, amount: u64) -> [u8; 32] {
    hashv(&[
        LEAF_PREFIX,
        epoch.as_ref(),
        wallet.as_ref(),
        &amount.to_le_bytes(),
    ])
    .to_bytes()
}

/// Hash of two sibling nodes, order-independent.
pub fn node_hash(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    hashv(&[NODE_PREFIX, low, high]).to_bytes()
}

/// Whether `proof` leads from `leaf` to `root`.
pub fn verify(proof: &[[u8; 32]], root: &[u8; 32], leaf: [u8; 32]) -> bool {
    let computed = proof
        .iter()
        .fold(leaf, |node, sibling| node_hash(&node, sibling));
    computed == *root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_leaf_tree_has_the_leaf_as_root() {
        let epoch = Pubkey::new_unique();
        let wallet = Pubkey::new_unique();
        let leaf = leaf_hash(&epoch, &wallet, 42);
        assert!(verify(&[], &leaf, leaf));
    }

    #[test]
    fn two_leaf_proof_verifies_both_ways_and_rejects_a_changed_amount() {
        let epoch = Pubkey::new_unique();
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let (la, lb) = (leaf_hash(&epoch, &a, 10), leaf_hash(&epoch, &b, 20));
        let root = node_hash(&la, &lb);
        assert!(verify(&[lb], &root, la));
        assert!(verify(&[la], &root, lb));
        assert!(!verify(&[lb], &root, leaf_hash(&epoch, &a, 11)));
    }

    #[test]
    fn leaf_is_bound_to_its_epoch() {
        let wallet = Pubkey::new_unique();
        let (e1, e2) = (Pubkey::new_unique(), Pubkey::new_unique());
        assert_ne!(leaf_hash(&e1, &wallet, 5), leaf_hash(&e2, &wallet, 5));
    }

    #[test]
    fn inner_node_cannot_pose_as_a_leaf() {
        let epoch = Pubkey::new_unique();
        let (la, lb) = (
            leaf_hash(&epoch, &Pubkey::new_unique(), 1),
            leaf_hash(&epoch, &Pubkey::new_unique(), 2),
        );
        // The same bytes hashed as a node and as leaf data give different digests.
        let node = node_hash(&la, &lb);
        let mut concatenated = Vec::new();
        concatenated.extend_from_slice(&la);
        concatenated.extend_from_slice(&lb);
        assert_ne!(node, hashv(&[&concatenated]).to_bytes());
    }
}
