//! The expected side of the TypeScript clients' test (`tests/ts/clients.test.mjs`): every
//! instruction of the three programs as the Rust sdk builds it, against accounts a program-test
//! run created, written to `tests/ts/fixture.json`. The Node test rebuilds each instruction from
//! the committed IDL through `@coral-xyz/anchor` and `@anchor-lang/core`, passing only the
//! accounts that IDL cannot derive (so a wrong PDA in it shows as a wrong account), and compares
//! data and account metas.
//!
//! `UPDATE_FIXTURES=1 cargo test -p integration-tests --test idl_clients` rewrites the fixture;
//! without it the test fails when the committed fixture is stale.

use anchor_lang::prelude::Pubkey;
use base64::Engine;
use binary_vault::instructions::CreateMarketArgs;
use binary_vault::state::{ConfigUpdate, DisputeAction, MarketSource, MarketVariant, Side};
use crucible_pool::instructions::{CloseEpochArgs, UpdateSettingsArgs};
use crucible_pool::SOL_MINT;
use integration_tests::*;
use narrative_sdk::binary::CrucibleTarget;
use narrative_sdk::shield::Claim;
use narrative_sdk::{binary, crucible, pda, shield, Instruction};
use serde_json::{json, Map, Value};
use shield_vault::instructions::OpenCoverageArgs;
use shield_vault::state::{AdminChange, PayoutRecipient, ShieldKind, ShieldSide, ShieldVerdict};
use solana_signer::Signer;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The committed IDL of each program, by program id.
fn idls() -> Vec<(Pubkey, Value)> {
    idl_export::PROGRAMS
        .iter()
        .map(|program| {
            let idl: Value = serde_json::from_str(
                &std::fs::read_to_string(idl_export::idl_path(program)).unwrap(),
            )
            .unwrap();
            (idl["address"].as_str().unwrap().parse().unwrap(), idl)
        })
        .collect()
}

/// One fixture entry: the instruction's name from its discriminator, its data and metas.
fn entry(idls: &[(Pubkey, Value)], ix: &Instruction) -> Value {
    let (_, idl) = idls
        .iter()
        .find(|(id, _)| *id == ix.program_id)
        .expect("a program with an IDL");
    let spec = idl["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|spec| {
            let disc: Vec<u8> = spec["discriminator"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap() as u8)
                .collect();
            ix.data.starts_with(&disc)
        })
        .expect("an IDL instruction with this discriminator");
    let accounts = spec["accounts"].as_array().unwrap();
    assert_eq!(
        accounts.len(),
        ix.accounts.len(),
        "{}: IDL and sdk account counts",
        spec["name"]
    );
    json!({
        "program": idl["metadata"]["name"],
        "name": spec["name"],
        "data": b64(&ix.data),
        "keys": ix.accounts.iter().map(|m| json!([m.pubkey.to_string(), m.is_signer, m.is_writable])).collect::<Vec<_>>(),
    })
}

#[tokio::test]
async fn fixture_of_every_instruction_for_the_typescript_clients() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(1_000_000_000).await;
    let [w0, w1, creator] = [0, 1, 3].map(|i| h.wallets[i].insecure_clone());
    let admin = h.admin.insecure_clone();
    let keeper = h.keeper.insecure_clone();
    let oracle = h.oracles[0].insecure_clone();
    let market = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    let spl_market = h
        .create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let protocol = h
        .open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
        .await
        .unwrap();
    // One closed epoch per asset, so the pools' current epoch is 1.
    h.warp_by(EPOCH_DURATION).await;
    let nothing = CloseEpochArgs {
        conviction_pool: 0,
        creator_pool: 0,
        merkle_root: [0; 32],
    };
    for asset in [SOL_MINT, mint] {
        h.process(
            &[crucible::close_epoch(
                keeper.pubkey(),
                asset,
                0,
                nothing.clone(),
            )],
            &[&keeper],
        )
        .await
        .unwrap();
    }

    let sol_target = CrucibleTarget::sol(1);
    let spl_target = CrucibleTarget {
        mint,
        current_epoch: 1,
    };
    let create_args = |market_id| CreateMarketArgs {
        market_id,
        variant: MarketVariant::Yield,
        source: MarketSource::Seed,
        deadline: START_TIME + 30 * DAY,
    };
    let fresh = [9u8; 32];
    let oracles: Vec<Pubkey> = h.oracles.iter().map(|o| o.pubkey()).collect();
    let instructions = vec![
        binary::initialize(
            admin.pubkey(),
            binary_vault::instructions::InitializeArgs {
                treasury: h.treasury,
                oracles: oracles.clone(),
                oracle_threshold: 2,
                dispute_bond_lamports: SOL,
                max_resolution_delay_secs: 7 * DAY,
            },
        ),
        shield::initialize_program(
            admin.pubkey(),
            shield_vault::instructions::InitializeProgramArgs {
                oracles,
                oracle_threshold: 1,
                treasury: h.treasury,
                harvest_authority: h.harvester.pubkey(),
                seam_pool_program: crucible_pool::ID,
                max_self_hedge_bps: 5_000,
            },
        ),
        crucible::initialize(
            admin.pubkey(),
            crucible_pool::instructions::InitializeArgs {
                keeper: keeper.pubkey(),
                epoch_duration_secs: EPOCH_DURATION,
                claim_window_secs: CLAIM_WINDOW,
                authorized_sources: vec![pda::binary::cpi_authority(), w1.pubkey()],
                guardian: w0.pubkey(),
            },
        ),
        crucible::init_sol_pool(admin.pubkey()),
        crucible::init_token_pool(admin.pubkey(), mint),
        binary::propose_config_change(admin.pubkey(), ConfigUpdate::default()),
        binary::apply_config_change(admin.pubkey()),
        binary::cancel_config_change(admin.pubkey()),
        binary::propose_admin(admin.pubkey(), Some(w1.pubkey())),
        binary::accept_admin(w1.pubkey()),
        binary::set_paused(admin.pubkey(), true),
        binary::create_market(creator.pubkey(), None, create_args(fresh)),
        binary::create_market_spl(
            creator.pubkey(),
            Some(admin.pubkey()),
            mint,
            create_args(fresh),
        ),
        binary::approve_market(admin.pubkey(), &market),
        binary::back_market(w0.pubkey(), &market, Side::Yes, SOL),
        binary::back_market_spl(w0.pubkey(), &spl_market, mint, tokens[0], Side::No, 50_000),
        binary::submit_oracle_resolution(oracle.pubkey(), &market, Side::No, 9_000),
        binary::open_dispute(w1.pubkey(), &market),
        binary::resolve_dispute(
            admin.pubkey(),
            &market,
            w1.pubkey(),
            DisputeAction::Overturn,
        ),
        binary::lapse_dispute(&market),
        binary::forward_dispute_bond(&market, h.treasury),
        binary::finalize_resolution(&market),
        binary::forward_crucible_share(&market, &sol_target),
        binary::forward_crucible_share_spl(&spl_market, &spl_target),
        binary::trigger_timeout_refund(&market),
        binary::claim(w0.pubkey(), &market, Side::Yes),
        binary::claim_spl(w0.pubkey(), &spl_market, Side::No, mint, tokens[0]),
        binary::close_oracle_vote(oracle.pubkey(), &market),
        binary::deposit_to_yield(admin.pubkey(), &market, Side::Yes, SOL),
        binary::withdraw_from_yield(admin.pubkey(), &market, Side::No, SOL),
        shield::set_max_self_hedge_bps(admin.pubkey(), 4_000),
        shield::propose_admin_change(admin.pubkey(), AdminChange::Treasury(w1.pubkey())),
        shield::apply_admin_change(admin.pubkey()),
        shield::cancel_admin_change(admin.pubkey()),
        shield::propose_admin(admin.pubkey(), None),
        shield::accept_admin(w1.pubkey()),
        shield::pause_program(oracle.pubkey(), true),
        shield::open_coverage(
            admin.pubkey(),
            w0.pubkey(),
            h.treasury,
            OpenCoverageArgs {
                protocol_id: fresh,
                kind: ShieldKind::Partnership,
                protocol_wallet: w1.pubkey(),
                period_days: 60,
                fee_lamports: SOL,
            },
        ),
        shield::back_shield(w0.pubkey(), &protocol, ShieldSide::Exploit, SOL),
        shield::harvest_yield(h.harvester.pubkey(), &protocol, ShieldSide::Safe),
        shield::submit_oracle_resolution(oracle.pubkey(), &protocol, ShieldVerdict::Safe),
        shield::submit_oracle_resolution(oracle.pubkey(), &protocol, ShieldVerdict::Unresolvable),
        shield::finalize_resolution(&protocol),
        shield::forward_payout(
            &protocol,
            ShieldSide::Safe,
            PayoutRecipient::Treasury,
            h.treasury,
        ),
        shield::forward_payout(
            &protocol,
            ShieldSide::Exploit,
            PayoutRecipient::Protocol,
            w1.pubkey(),
        ),
        shield::forward_seam_share(&protocol, ShieldSide::Safe, 1),
        shield::claim(Claim::SafeWinner, w0.pubkey(), &protocol, ShieldSide::Safe),
        shield::claim(
            Claim::ExploitWinner,
            w0.pubkey(),
            &protocol,
            ShieldSide::Exploit,
        ),
        shield::claim(
            Claim::LoserYield,
            w0.pubkey(),
            &protocol,
            ShieldSide::Exploit,
        ),
        shield::claim(Claim::Refund, w0.pubkey(), &protocol, ShieldSide::Safe),
        shield::refund_all(admin.pubkey(), &protocol),
        shield::trigger_timeout_refund(&protocol),
        shield::close_shield_vote(oracle.pubkey(), &protocol),
        crucible::update_settings(
            admin.pubkey(),
            UpdateSettingsArgs {
                keeper: Some(w1.pubkey()),
                epoch_duration_secs: None,
                claim_window_secs: Some(40 * DAY),
            },
        ),
        crucible::propose_admin(admin.pubkey(), Some(w1.pubkey())),
        crucible::accept_admin(w1.pubkey()),
        crucible::set_authorized_source(admin.pubkey(), w1.pubkey(), true),
        crucible::set_guardian(admin.pubkey(), w0.pubkey()),
        crucible::apply_settings_change(admin.pubkey()),
        crucible::cancel_settings_change(admin.pubkey()),
        crucible::deposit_sol(pda::binary::cpi_authority(), w0.pubkey(), 1, SOL),
        crucible::deposit_spl(
            crucible::SplSource {
                authority: pda::binary::cpi_authority(),
                source_authority: w0.pubkey(),
                source: tokens[0],
            },
            mint,
            1,
            500,
        ),
        crucible::close_epoch(keeper.pubkey(), SOL_MINT, 1, nothing.clone()),
        crucible::claim_sol(w0.pubkey(), 0, SOL, vec![[1; 32], [2; 32]]),
        crucible::claim_spl(w0.pubkey(), tokens[0], mint, 0, 700, vec![[3; 32]]),
        crucible::rollover(SOL_MINT, 0, 1),
        crucible::veto_epoch_root(admin.pubkey(), mint, 0, 1),
        crucible::close_claim_receipt(w0.pubkey(), SOL_MINT, 0),
    ];
    let idls = idls();
    let entries: Vec<Value> = instructions.iter().map(|ix| entry(&idls, ix)).collect();

    // The accounts a client reads to derive the others (market ids, protocol ids, pools'
    // current epochs, epochs' numbers), as the run left them.
    let mut accounts = Map::new();
    for address in [
        pda::binary::market(&market),
        pda::binary::market(&spl_market),
        pda::shield::coverage(&protocol),
        pda::crucible::asset_pool(&SOL_MINT),
        pda::crucible::asset_pool(&mint),
        pda::crucible::epoch(&SOL_MINT, 0),
        pda::crucible::epoch(&mint, 0),
        pda::crucible::epoch(&SOL_MINT, 1),
        pda::crucible::epoch(&mint, 1),
    ] {
        let account = h.raw_account(address).await.expect("account exists");
        accounts.insert(
            address.to_string(),
            json!({"owner": account.owner.to_string(), "lamports": account.lamports, "data": b64(&account.data)}),
        );
    }
    let fixture = serde_json::to_string_pretty(&json!({
        "instructions": entries,
        "accounts": accounts,
    }))
    .unwrap()
        + "\n";

    let path = idl_export::workspace_root().join("tests/ts/fixture.json");
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, &fixture).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fixture,
        "{} is stale; run UPDATE_FIXTURES=1 cargo test -p integration-tests --test idl_clients",
        path.display()
    );
    // Every instruction of every program is in it.
    let named: std::collections::BTreeSet<(String, String)> = entries
        .iter()
        .map(|e| {
            (
                e["program"].as_str().unwrap().into(),
                e["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    let listed: usize = idls
        .iter()
        .map(|(_, idl)| idl["instructions"].as_array().unwrap().len())
        .sum();
    assert_eq!(named.len(), listed, "{named:?}");
}
