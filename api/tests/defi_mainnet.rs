//! The cluster setting selects the venues: on mainnet the devnet-only lend_a answers 503
//! `coming_soon` and lend_c (Jupiter Lend) builds for wallets, a versioned (v0) transaction
//! over the accounts its programs derive, read from its `Lending` account first. (No stand-in of
//! Jupiter Lend runs here: the transaction is checked against the interface, not landed.)

mod common;

use base64::Engine;
use common::chain;
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_api::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use narrative_api::chain::venues::lend_c::{
    self, LendingAccounts, EXCHANGE_PRICES_PRECISION, MAINNET_LIQUIDITY_PROGRAM, MAINNET_PROGRAM,
    MAINNET_REWARDS_PROGRAM,
};
use narrative_api::chain::venues::{anchor_data, anchor_discriminator, NATIVE_MINT};
use reqwest::StatusCode;
use serde_json::json;
use solana_account::Account;
use solana_message::VersionedMessage;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

/// The SOL market's `Lending` account, as the lending program lays it out: an fToken worth
/// 1.05 SOL.
fn lending_account(m: &LendingAccounts) -> Account {
    let mut data = vec![0u8; 200];
    data[..8].copy_from_slice(&anchor_discriminator("account:Lending"));
    let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
    put(8, m.mint.as_ref());
    put(40, m.f_token_mint.as_ref());
    put(74, &[9]);
    put(75, m.rewards_rate_model.as_ref());
    put(
        115,
        &(105 * EXCHANGE_PRICES_PRECISION as u64 / 100).to_le_bytes(),
    );
    put(131, m.supply_token_reserves_liquidity.as_ref());
    put(163, m.lending_supply_position_on_liquidity.as_ref());
    Account {
        lamports: SOL,
        data,
        owner: MAINNET_PROGRAM,
        executable: false,
        rent_epoch: 0,
    }
}

#[tokio::test]
async fn on_mainnet_lend_c_prepares_a_versioned_deposit_over_its_derived_accounts() {
    let market = LendingAccounts::derive(
        MAINNET_PROGRAM,
        MAINNET_LIQUIDITY_PROGRAM,
        MAINNET_REWARDS_PROGRAM,
        NATIVE_MINT,
    );
    let options = HarnessOptions {
        accounts: vec![(market.lending, lending_account(&market))],
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let wallet = ledger.harness.lock().await.wallets[0].pubkey();

    // lend_a's program runs on devnet only.
    let (status, body) = server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": 1,
                    "protocol": "lend_a"}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "coming_soon");

    let (status, prepared) = server
        .post(
            "/v1/defi/lend_c/deposit",
            &json!({"wallet_address": wallet.to_string(), "symbol": "SOL", "amount_raw": 2 * SOL}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_c");
    assert_eq!(prepared["status"], "ready_to_confirm");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(prepared["transaction"].as_str().unwrap())
        .unwrap();
    let tx: VersionedTransaction = bincode::deserialize(&bytes).unwrap();
    let VersionedMessage::V0(message) = &tx.message else {
        panic!("lend_c's transaction is versioned: {prepared}");
    };
    assert!(message.address_table_lookups.is_empty());
    assert_eq!(message.account_keys[0], wallet);
    assert_eq!(tx.signatures.len(), 1);

    // The instructions, as the wallet will sign them: wrap 2 SOL into its new wrapped-SOL
    // account, create its fToken account, deposit, unwrap what is left.
    let keys = &message.account_keys;
    let program_of = |i: usize| keys[usize::from(message.instructions[i].program_id_index)];
    let programs: Vec<_> = (0..message.instructions.len()).map(program_of).collect();
    let ata = narrative_api::chain::holdings::ASSOCIATED_TOKEN_PROGRAM;
    let system = anchor_lang::solana_program::system_program::ID;
    assert_eq!(
        programs,
        [
            ata,
            system,
            TOKEN_PROGRAM,
            ata,
            MAINNET_PROGRAM,
            TOKEN_PROGRAM
        ]
    );
    let deposit = &message.instructions[4];
    assert_eq!(
        deposit.data,
        anchor_data("deposit", &(2 * SOL).to_le_bytes())
    );
    let accounts: Vec<_> = deposit
        .accounts
        .iter()
        .map(|i| keys[usize::from(*i)])
        .collect();
    let source = associated_token_account(&wallet, &NATIVE_MINT, &TOKEN_PROGRAM);
    let receipt = associated_token_account(&wallet, &market.f_token_mint, &TOKEN_PROGRAM);
    let expected = lend_c::deposit(&market, &wallet, &source, &receipt, 2 * SOL).accounts;
    assert_eq!(
        accounts,
        expected.iter().map(|a| a.pubkey).collect::<Vec<_>>()
    );
    // The account flags survive the compilation into the message.
    for (index, meta) in deposit.accounts.iter().zip(&expected) {
        let i = usize::from(*index);
        assert_eq!(
            tx.message.is_maybe_writable(i, None),
            meta.is_writable,
            "{}",
            meta.pubkey
        );
        assert_eq!(tx.message.is_signer(i), meta.is_signer, "{}", meta.pubkey);
    }

    // A `Lending` account that does not point where the derivations do is not built on.
    let mut moved = lending_account(&market);
    moved.data[131] ^= 1;
    let options = HarnessOptions {
        accounts: vec![(market.lending, moved)],
        ..Default::default()
    };
    let (server, _ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let (status, body) = server
        .post(
            "/v1/defi/lend_c/deposit",
            &json!({"wallet_address": wallet.to_string(), "symbol": "SOL", "amount_raw": SOL}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "venue_state_unreadable");
}
