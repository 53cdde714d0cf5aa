//! `derive` against Solana's own `is_on_curve` and `find_program_address`.

use narrative_sdk::derive::{find_program_address, is_on_curve};
use narrative_sdk::Pubkey;
use sha2::{Digest, Sha256};

fn hash(i: u64, salt: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(salt);
    h.update(i.to_le_bytes());
    h.finalize().into()
}

/// `y` as a little-endian encoding, with the sign bit set or not.
fn encoding(mut y: [u8; 32], sign: bool) -> [u8; 32] {
    y[31] = (y[31] & 0x7f) | if sign { 0x80 } else { 0 };
    y
}

#[test]
fn the_curve_test_agrees_with_decompression_on_hashes() {
    let n = 100_000;
    let mut on = 0;
    for i in 0..n {
        let bytes = hash(i, b"curve");
        let solana = Pubkey::new_from_array(bytes).is_on_curve();
        assert_eq!(is_on_curve(&bytes), solana, "hash {i}");
        on += usize::from(solana);
    }
    // About half of all encodings are points: both answers occurred many times.
    assert!((45_000..55_000).contains(&on), "{on} of {n} on the curve");
}

#[test]
fn the_curve_test_agrees_with_decompression_at_the_edges() {
    // p = 2^255 − 19: 0xed, thirty 0xff, 0x7f (little-endian).
    let near_p = |low: u8| {
        let mut y = [0xff; 32];
        y[0] = low;
        y[31] = 0x7f;
        y
    };
    let small = |k: u8| {
        let mut y = [0; 32];
        y[0] = k;
        y
    };
    let mut basepoint = [0x66; 32];
    basepoint[0] = 0x58;
    let mut cases = vec![basepoint, [0xff; 32], [0; 32]];
    for k in 0..=18 {
        // y = k, p − 1 − k and p + k (the last reduced to k by decompression).
        cases.extend([small(k), near_p(0xec - k), near_p(0xed + k)]);
    }
    let mut on = 0;
    for y in cases {
        for sign in [false, true] {
            let bytes = encoding(y, sign);
            let solana = Pubkey::new_from_array(bytes).is_on_curve();
            assert_eq!(is_on_curve(&bytes), solana, "{bytes:?}");
            on += usize::from(solana);
        }
    }
    // y = 1 and y = p − 1 (x = 0), their unreduced p + 1, and the base point are points.
    assert!(is_on_curve(&small(1)) && is_on_curve(&near_p(0xec)) && is_on_curve(&near_p(0xee)));
    assert!(is_on_curve(&basepoint));
    assert!(on >= 8, "{on}");
}

#[test]
fn the_search_finds_solanas_address_and_bump() {
    let mut bumps = std::collections::BTreeSet::new();
    for i in 0..5_000u64 {
        let program = Pubkey::new_from_array(hash(i, b"program"));
        let seed_a = hash(i, b"a");
        let seed_b = hash(i, b"b");
        let len = (i % 33) as usize;
        let seeds: Vec<&[u8]> = match i % 4 {
            0 => vec![],
            1 => vec![&seed_a[..len]],
            2 => vec![&seed_a, b"vault"],
            _ => vec![&seed_a, &seed_b[..len], b"position", &[7]],
        };
        let solana = Pubkey::find_program_address(&seeds, &program);
        assert_eq!(find_program_address(&seeds, &program), solana, "case {i}");
        bumps.insert(solana.1);
    }
    // Searches that stopped after one, two and several candidates.
    assert!(
        bumps.contains(&255) && bumps.contains(&254) && bumps.len() > 5,
        "{bumps:?}"
    );
}

#[test]
#[should_panic(expected = "over Solana's limits")]
fn a_seed_over_32_bytes_is_refused_as_solana_refuses_it() {
    find_program_address(&[&[0; 33]], &Pubkey::new_unique());
}
