//! The Anchor venues' instructions as the api builds them, written to
//! `tests/ts/venues.fixture.json` for `tests/ts/venues.test.mjs`, which builds each one with
//! `@coral-xyz/anchor` from the venue's published IDL and compares bytes and account metas.
//! `UPDATE_FIXTURES=1` rewrites the fixture; otherwise the committed one must equal what the
//! builders make now, so a builder change cannot pass without the TypeScript check seeing it.

use narrative_api::chain::venues::{lend_b, lend_c, p0, stake_b};
use narrative_sdk::{Instruction, Pubkey};
use serde_json::{json, Map, Value};

fn key(n: u8) -> Pubkey {
    Pubkey::new_from_array([n; 32])
}

/// One fixture entry: the IDL's account names in the instruction's order (`group.name` for an
/// account inside a group; `?name` for an optional one), zipped with the built metas.
fn entry(
    venue: &str,
    idl: &str,
    name: &str,
    args: Value,
    names: &[&str],
    ix: &Instruction,
) -> Value {
    assert!(
        names.len() <= ix.accounts.len(),
        "{name}: one name per IDL account"
    );
    let mut accounts = Map::new();
    // Accounts past the IDL's are remaining accounts (a risk engine's), passed as built.
    let remaining: Vec<Value> = ix.accounts[names.len()..]
        .iter()
        .map(|m| json!({"pubkey": m.pubkey.to_string(), "is_signer": m.is_signer, "is_writable": m.is_writable}))
        .collect();
    for (name, meta) in names.iter().zip(&ix.accounts) {
        let (optional, path) = match name.strip_prefix('?') {
            Some(rest) => (true, rest),
            None => (false, *name),
        };
        let value = if optional && meta.pubkey == ix.program_id {
            Value::Null
        } else {
            json!(meta.pubkey.to_string())
        };
        match path.split_once('.') {
            Some((group, inner)) => {
                accounts
                    .entry(group)
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .expect("a group")
                    .insert(inner.to_owned(), value);
            }
            None => {
                accounts.insert(path.to_owned(), value);
            }
        }
    }
    let mut entry = json!({
        "venue": venue, "idl": idl, "instruction": name, "program_id": ix.program_id.to_string(),
        "args": args, "accounts": accounts,
        "expected": {
            "data_hex": hex::encode(&ix.data),
            "keys": ix.accounts.iter().map(|m| json!({
                "pubkey": m.pubkey.to_string(), "is_signer": m.is_signer, "is_writable": m.is_writable
            })).collect::<Vec<_>>(),
        }
    });
    if !remaining.is_empty() {
        entry["remaining_accounts"] = Value::Array(remaining);
    }
    entry
}

fn kamino_reserve() -> lend_b::Reserve {
    lend_b::Reserve {
        lending_market: key(1),
        farm_collateral: Pubkey::default(),
        liquidity_mint: key(2),
        liquidity_supply: key(3),
        fee_vault: key(13),
        liquidity_token_program: narrative_api::chain::holdings::TOKEN_PROGRAM,
        available: 0,
        borrowed_sf: 0,
        cumulative_borrow_rate: 1 << 60,
        fees_sf: 0,
        collateral_mint: key(4),
        collateral_supply_total: 0,
        collateral_supply: key(5),
        protocol_take_rate_pct: 0,
        curve: vec![],
        // Pyth and Scope set, the Switchboard pair absent.
        oracles: [key(6), Pubkey::default(), Pubkey::default(), key(7)],
        obsolete: false,
        deposit_limit: u64::MAX,
        withdrawal_cap: lend_b::WithdrawalCap::default(),
        debt_cap: lend_b::WithdrawalCap::default(),
        borrow_limit: u64::MAX,
        origination_fee_sf: 0,
        utilization_ceiling_pct: 0,
    }
}

/// p0 on the devnet deployment with one SOL bank, and a bank as read.
fn marginfi() -> (p0::P0, p0::Bank) {
    let p0 = p0::P0 {
        program: p0::DEVNET_PROGRAM,
        group: key(50),
        banks: vec![],
    };
    let bank = p0::Bank {
        address: key(51),
        mint: key(52),
        decimals: 9,
        group: key(50),
        asset_share_value: 1 << 48,
        liability_share_value: 1 << 48,
        liquidity_vault: key(53),
        asset_weight_maint: 0.9,
        liability_weight_maint: 1.1,
        oracle: key(54),
        lending_apr_pct: 0.0,
        borrowing_apr_pct: 0.0,
    };
    (p0, bank)
}

fn fixture() -> Value {
    let owner = key(9);
    let (margin, bank) = marginfi();
    let margin_withdraw = [
        "group",
        "marginfi_account",
        "authority",
        "bank",
        "destination_token_account",
        "bank_liquidity_vault_authority",
        "liquidity_vault",
        "token_program",
    ];
    let reserve = kamino_reserve();
    let deposit_accounts = [
        "depositAccounts.owner",
        "depositAccounts.obligation",
        "depositAccounts.lendingMarket",
        "depositAccounts.lendingMarketAuthority",
        "depositAccounts.reserve",
        "depositAccounts.reserveLiquidityMint",
        "depositAccounts.reserveLiquiditySupply",
        "depositAccounts.reserveCollateralMint",
        "depositAccounts.reserveDestinationDepositCollateral",
        "depositAccounts.userSourceLiquidity",
        "?depositAccounts.placeholderUserDestinationCollateral",
        "depositAccounts.collateralTokenProgram",
        "depositAccounts.liquidityTokenProgram",
        "depositAccounts.instructionSysvarAccount",
        "?farmsAccounts.obligationFarmUserState",
        "?farmsAccounts.reserveFarmState",
        "farmsProgram",
    ];
    let withdraw_accounts = [
        "withdrawAccounts.owner",
        "withdrawAccounts.obligation",
        "withdrawAccounts.lendingMarket",
        "withdrawAccounts.lendingMarketAuthority",
        "withdrawAccounts.withdrawReserve",
        "withdrawAccounts.reserveLiquidityMint",
        "withdrawAccounts.reserveSourceCollateral",
        "withdrawAccounts.reserveCollateralMint",
        "withdrawAccounts.reserveLiquiditySupply",
        "withdrawAccounts.userDestinationLiquidity",
        "?withdrawAccounts.placeholderUserDestinationCollateral",
        "withdrawAccounts.collateralTokenProgram",
        "withdrawAccounts.liquidityTokenProgram",
        "withdrawAccounts.instructionSysvarAccount",
        "?farmsAccounts.obligationFarmUserState",
        "?farmsAccounts.reserveFarmState",
        "farmsProgram",
    ];
    let marinade = stake_b::State {
        msol_mint: key(20),
        treasury_msol_account: key(21),
        liq_pool_msol_leg: key(22),
        ..Default::default()
    };
    let jupiter = lend_c::LendingAccounts {
        program: lend_c::MAINNET_PROGRAM,
        liquidity_program: lend_c::MAINNET_LIQUIDITY_PROGRAM,
        mint: key(30),
        lending_admin: key(31),
        lending: key(32),
        f_token_mint: key(33),
        supply_token_reserves_liquidity: key(34),
        lending_supply_position_on_liquidity: key(35),
        rate_model: key(36),
        vault: key(37),
        liquidity: key(38),
        rewards_rate_model: key(39),
    };
    let jupiter_deposit = [
        "signer",
        "depositor_token_account",
        "recipient_token_account",
        "mint",
        "lending_admin",
        "lending",
        "f_token_mint",
        "supply_token_reserves_liquidity",
        "lending_supply_position_on_liquidity",
        "rate_model",
        "vault",
        "liquidity",
        "liquidity_program",
        "rewards_rate_model",
        "token_program",
        "associated_token_program",
        "system_program",
    ];
    let jupiter_withdraw = [
        "signer",
        "owner_token_account",
        "recipient_token_account",
        "lending_admin",
        "lending",
        "mint",
        "f_token_mint",
        "supply_token_reserves_liquidity",
        "lending_supply_position_on_liquidity",
        "rate_model",
        "vault",
        "?claim_account",
        "liquidity",
        "liquidity_program",
        "rewards_rate_model",
        "token_program",
        "associated_token_program",
        "system_program",
    ];
    json!({"instructions": [
        entry("lend_b", "klend", "initUserMetadata",
              json!({"userLookupTable": Pubkey::default().to_string()}),
              &["owner", "feePayer", "userMetadata", "?referrerUserMetadata", "rent", "systemProgram"],
              &lend_b::init_user_metadata(&owner)),
        entry("lend_b", "klend", "initObligation", json!({"args": {"tag": 0, "id": 0}}),
              &["obligationOwner", "feePayer", "obligation", "lendingMarket", "seed1Account",
                "seed2Account", "ownerUserMetadata", "rent", "systemProgram"],
              &lend_b::init_obligation(&owner, &key(1))),
        entry("lend_b", "klend", "refreshReserve", json!({}),
              &["reserve", "lendingMarket", "?pythOracle", "?switchboardPriceOracle",
                "?switchboardTwapOracle", "?scopePrices"],
              &lend_b::refresh_reserve(&key(8), &reserve)),
        entry("lend_b", "klend", "refreshObligation", json!({}),
              &["lendingMarket", "obligation"],
              &lend_b::refresh_obligation(&key(1), &key(10), &[])),
        entry("lend_b", "klend", "depositReserveLiquidityAndObligationCollateralV2",
              json!({"liquidityAmount": "1500000000"}), &deposit_accounts,
              &lend_b::deposit_v2(&owner, &key(8), &reserve, &key(11), 1_500_000_000)),
        entry("lend_b", "klend", "withdrawObligationCollateralAndRedeemReserveCollateralV2",
              json!({"collateralAmount": "18446744073709551615"}), &withdraw_accounts,
              &lend_b::withdraw_v2(&owner, &key(8), &reserve, &key(12), u64::MAX)),
        entry("lend_b", "klend", "borrowObligationLiquidityV2",
              json!({"liquidityAmount": "2000000000"}),
              &["borrowAccounts.owner", "borrowAccounts.obligation", "borrowAccounts.lendingMarket",
                "borrowAccounts.lendingMarketAuthority", "borrowAccounts.borrowReserve",
                "borrowAccounts.borrowReserveLiquidityMint", "borrowAccounts.reserveSourceLiquidity",
                "borrowAccounts.borrowReserveLiquidityFeeReceiver",
                "borrowAccounts.userDestinationLiquidity", "?borrowAccounts.referrerTokenState",
                "borrowAccounts.tokenProgram", "borrowAccounts.instructionSysvarAccount",
                "?farmsAccounts.obligationFarmUserState", "?farmsAccounts.reserveFarmState",
                "farmsProgram"],
              &lend_b::borrow_v2(&owner, &key(8), &reserve, &key(12), 2_000_000_000)),
        entry("lend_b", "klend", "repayObligationLiquidityV2",
              json!({"liquidityAmount": "18446744073709551615"}),
              &["repayAccounts.owner", "repayAccounts.obligation", "repayAccounts.lendingMarket",
                "repayAccounts.repayReserve", "repayAccounts.reserveLiquidityMint",
                "repayAccounts.reserveDestinationLiquidity", "repayAccounts.userSourceLiquidity",
                "repayAccounts.tokenProgram", "repayAccounts.instructionSysvarAccount",
                "?farmsAccounts.obligationFarmUserState", "?farmsAccounts.reserveFarmState",
                "lendingMarketAuthority", "farmsProgram"],
              &lend_b::repay_v2(&owner, &key(8), &reserve, &key(11), u64::MAX)),
        entry("stake_b", "marinade", "deposit", json!({"lamports": "2000000000"}),
              &["state", "msolMint", "liqPoolSolLegPda", "liqPoolMsolLeg", "liqPoolMsolLegAuthority",
                "reservePda", "transferFrom", "mintTo", "msolMintAuthority", "systemProgram",
                "tokenProgram"],
              &stake_b::deposit(&marinade, &owner, &key(23), 2_000_000_000)),
        entry("stake_b", "marinade", "liquidUnstake", json!({"msolAmount": "77"}),
              &["state", "msolMint", "liqPoolSolLegPda", "liqPoolMsolLeg", "treasuryMsolAccount",
                "getMsolFrom", "getMsolFromAuthority", "transferSolTo", "systemProgram",
                "tokenProgram"],
              &stake_b::liquid_unstake(&marinade, &owner, &key(23), 77)),
        entry("lend_c", "jupiter_lending", "deposit", json!({"assets": "5000000"}),
              &jupiter_deposit,
              &lend_c::deposit(&jupiter, &owner, &key(40), &key(41), 5_000_000)),
        entry("lend_c", "jupiter_lending", "withdraw", json!({"amount": "4000000"}),
              &jupiter_withdraw,
              &lend_c::withdraw(&jupiter, &owner, &key(41), &key(40), None, 4_000_000)),
        entry("p0", "marginfi", "marginfi_account_initialize_pda",
              json!({"account_index": 0, "third_party_id": null}),
              &["marginfi_group", "marginfi_account", "authority", "fee_payer",
                "instructions_sysvar", "system_program"],
              &margin.initialize_account(&owner)),
        entry("p0", "marginfi", "lending_account_deposit",
              json!({"amount": "2500000000", "deposit_up_to_limit": null}),
              &["group", "marginfi_account", "authority", "bank", "signer_token_account",
                "liquidity_vault", "token_program"],
              &margin.deposit_instruction(&owner, &bank, &key(55), 2_500_000_000)),
        entry("p0", "marginfi", "lending_account_withdraw",
              json!({"amount": "1000000000", "withdraw_all": null}), &margin_withdraw,
              &margin.withdraw_instruction(&owner, &bank, &key(56),
                  p0::WithdrawAmount::Exact(1_000_000_000),
                  &[(key(57), key(58)), (bank.address, bank.oracle)])),
        entry("p0", "marginfi", "lending_account_withdraw",
              json!({"amount": "0", "withdraw_all": true}), &margin_withdraw,
              &margin.withdraw_instruction(&owner, &bank, &key(56), p0::WithdrawAmount::All, &[])),
    ]})
}

#[test]
fn the_venue_fixture_is_what_the_builders_make() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ts/venues.fixture.json");
    let built = serde_json::to_string_pretty(&fixture()).unwrap() + "\n";
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, &built).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path)
        .expect("tests/ts/venues.fixture.json (UPDATE_FIXTURES=1 writes it)");
    assert!(
        committed == built,
        "the venue builders changed: rerun with UPDATE_FIXTURES=1 and run tests/ts"
    );
}
