//! Off-chain Merkle tree of an Echo Pool epoch's `(wallet, amount)` distribution, with the
//! leaf and node hashing of crucible_pool itself, so that a proof built here is exactly what the
//! program verifies.

use std::collections::BTreeMap;

use anchor_lang::prelude::Pubkey;
use crucible_pool::merkle::{leaf_hash, node_hash};

/// One epoch's distribution. Entries of the same wallet are summed (one claim per wallet).
pub struct Distribution {
    amounts: BTreeMap<Pubkey, u64>,
    /// `layers[0]` are the leaves in a stable order; the last layer is the root.
    layers: Vec<Vec<[u8; 32]>>,
    leaf_index: BTreeMap<Pubkey, usize>,
}

impl Distribution {
    /// `epoch` is the epoch account's address (leaves are bound to it).
    pub fn new(epoch: &Pubkey, entries: &[(Pubkey, u64)]) -> Self {
        let mut amounts: BTreeMap<Pubkey, u64> = BTreeMap::new();
        for (wallet, amount) in entries {
            let total = amounts.entry(*wallet).or_default();
            *total = total.saturating_add(*amount);
        }
        let leaf_index = amounts.keys().enumerate().map(|(i, w)| (*w, i)).collect();
        let leaves: Vec<[u8; 32]> = amounts
            .iter()
            .map(|(wallet, amount)| leaf_hash(epoch, wallet, *amount))
            .collect();
        let mut layers = vec![leaves];
        while layers.last().is_some_and(|l| l.len() > 1) {
            let below = layers.last().expect("at least one layer");
            // An odd last node is carried up unchanged.
            let above = below
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] => node_hash(a, b),
                    [a] => *a,
                    _ => unreachable!("chunks(2) yields one or two nodes"),
                })
                .collect();
            layers.push(above);
        }
        Distribution {
            amounts,
            layers,
            leaf_index,
        }
    }

    /// The root to post with `close_epoch`; all zeros for an empty distribution.
    pub fn root(&self) -> [u8; 32] {
        self.layers
            .last()
            .and_then(|l| l.first().copied())
            .unwrap_or([0; 32])
    }

    pub fn total(&self) -> u64 {
        self.amounts
            .values()
            .fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// The wallet's amount and proof, or `None` when it is not in the distribution.
    pub fn proof(&self, wallet: &Pubkey) -> Option<(u64, Vec<[u8; 32]>)> {
        let mut index = *self.leaf_index.get(wallet)?;
        let mut proof = Vec::new();
        for layer in &self.layers[..self.layers.len() - 1] {
            let sibling = index ^ 1;
            if let Some(node) = layer.get(sibling) {
                proof.push(*node);
            }
            index /= 2;
        }
        Some((self.amounts[wallet], proof))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_pool::merkle::verify;

    #[test]
    fn every_wallet_of_odd_and_even_trees_verifies() {
        let epoch = Pubkey::new_unique();
        for n in 1..=9u64 {
            let entries: Vec<_> = (0..n).map(|i| (Pubkey::new_unique(), 100 + i)).collect();
            let d = Distribution::new(&epoch, &entries);
            for (wallet, amount) in &entries {
                let (got, proof) = d.proof(wallet).unwrap();
                assert_eq!(got, *amount);
                assert!(verify(&proof, &d.root(), leaf_hash(&epoch, wallet, got)));
                assert!(!verify(
                    &proof,
                    &d.root(),
                    leaf_hash(&epoch, wallet, got + 1)
                ));
            }
            assert_eq!(d.total(), entries.iter().map(|e| e.1).sum::<u64>());
        }
    }

    #[test]
    fn duplicate_entries_of_a_wallet_are_summed() {
        let epoch = Pubkey::new_unique();
        let w = Pubkey::new_unique();
        let d = Distribution::new(&epoch, &[(w, 5), (w, 7)]);
        assert_eq!(d.proof(&w).unwrap().0, 12);
        assert!(d.proof(&Pubkey::new_unique()).is_none());
    }
}
