//! The Anchor venues' instructions as the api builds them, written to
//! `tests/ts/venues.fixture.json` for `tests/ts/venues.test.mjs`, which builds each one with
//! `@coral-xyz/anchor` from the venue's published IDL and compares bytes and account metas.
//! The fixture also lists every offset at which the api reads those venues' accounts, for
//! `tests/ts/venue-layouts.test.mjs` to find in the layouts Anchor makes of the same IDLs.
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
        borrow_limit_outside_groups: u64::MAX,
        borrowed_outside_groups: 0,
        collateral_emode_only: false,
        elevation_groups: [0; 20],
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
    ], "accounts": account_layouts()})
}

/// A field the api reads: its path as the IDL spells it, the offset it reads at (from the
/// account's first byte) and how many bytes.
fn field(path: &str, offset: usize, size: usize) -> Value {
    json!({"path": path, "offset": offset, "size": size})
}

/// An array the api walks: where it starts, how many elements and the bytes between them.
fn array(path: &str, offset: usize, count: usize, stride: usize) -> Value {
    json!({"path": path, "offset": offset, "count": count, "stride": stride})
}

fn account(venue: &str, idl: &str, name: &str, len: Option<usize>, fields: Vec<Value>) -> Value {
    json!({"venue": venue, "idl": idl, "account": name, "len": len, "fields": fields})
}

/// The accounts the api decodes from Anchor venues, with every offset its decoders read, for
/// `tests/ts/venue-layouts.test.mjs` to find in the layouts Anchor makes of the published IDLs.
/// The elements' fields are checked in the first and last element, which also checks the stride.
#[rustfmt::skip]
fn account_layouts() -> Vec<Value> {
    let reserve = {
        use lend_b::reserve::*;
        let caps = [("depositWithdrawalCap", DEPOSIT_WITHDRAWAL_CAP), ("debtWithdrawalCap", DEBT_WITHDRAWAL_CAP)];
        let mut fields = vec![
            field("lendingMarket", LENDING_MARKET, 32),
            field("farmCollateral", FARM_COLLATERAL, 32),
            field("liquidity.mintPubkey", LIQUIDITY_MINT, 32),
            field("liquidity.supplyVault", LIQUIDITY_SUPPLY, 32),
            field("liquidity.feeVault", FEE_VAULT, 32),
            field("liquidity.availableAmount", AVAILABLE_AMOUNT, 8),
            field("liquidity.borrowedAmountSf", BORROWED_AMOUNT_SF, 16),
            // A 256-bit fraction of which the low 128 bits are read.
            field("liquidity.cumulativeBorrowRateBsf.value", CUMULATIVE_BORROW_RATE, 32),
            field("liquidity.accumulatedProtocolFeesSf", ACCUMULATED_PROTOCOL_FEES_SF, 16),
            field("liquidity.accumulatedReferrerFeesSf", ACCUMULATED_REFERRER_FEES_SF, 16),
            field("liquidity.pendingReferrerFeesSf", PENDING_REFERRER_FEES_SF, 16),
            field("liquidity.tokenProgram", LIQUIDITY_TOKEN_PROGRAM, 32),
            field("collateral.mintPubkey", COLLATERAL_MINT, 32),
            field("collateral.mintTotalSupply", COLLATERAL_MINT_TOTAL_SUPPLY, 8),
            field("collateral.supplyVault", COLLATERAL_SUPPLY, 32),
            field("config.status", STATUS, 1),
            field("config.protocolTakeRatePct", PROTOCOL_TAKE_RATE_PCT, 1),
            field("config.fees.originationFeeSf", ORIGINATION_FEE_SF, 8),
            array("config.borrowRateCurve.points", BORROW_RATE_CURVE, 11, 8),
            field("config.borrowRateCurve.points[0].utilizationRateBps", BORROW_RATE_CURVE, 4),
            field("config.borrowRateCurve.points[0].borrowRateBps", BORROW_RATE_CURVE + 4, 4),
            field("config.borrowRateCurve.points[10].borrowRateBps", BORROW_RATE_CURVE + 10 * 8 + 4, 4),
            field("config.depositLimit", DEPOSIT_LIMIT, 8),
            field("config.borrowLimit", BORROW_LIMIT, 8),
            field("config.utilizationLimitBlockBorrowingAbovePct", UTILIZATION_CEILING_PCT, 1),
            field("config.disableUsageAsCollOutsideEmode", COLLATERAL_EMODE_ONLY, 1),
            array("config.elevationGroups", ELEVATION_GROUPS, ELEVATION_GROUP_COUNT, 1),
            field("config.borrowLimitOutsideElevationGroup", BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP, 8),
            field("borrowedAmountOutsideElevationGroup", BORROWED_OUTSIDE_ELEVATION_GROUP, 8),
            field("config.tokenInfo.scopeConfiguration.priceFeed", SCOPE_PRICE_FEED, 32),
            field("config.tokenInfo.switchboardConfiguration.priceAggregator", SWITCHBOARD_PRICE, 32),
            field("config.tokenInfo.switchboardConfiguration.twapAggregator", SWITCHBOARD_TWAP, 32),
            field("config.tokenInfo.pythConfiguration.price", PYTH_PRICE, 32),
        ];
        for (name, at) in caps {
            fields.push(field(&format!("config.{name}.configCapacity"), at + cap::CAPACITY, 8));
            fields.push(field(&format!("config.{name}.currentTotal"), at + cap::CURRENT_TOTAL, 8));
            fields.push(field(&format!("config.{name}.lastIntervalStartTimestamp"), at + cap::INTERVAL_START, 8));
            fields.push(field(&format!("config.{name}.configIntervalLengthSeconds"), at + cap::INTERVAL_SECS, 8));
        }
        account("lend_b", "klend", "Reserve", Some(LEN), fields)
    };
    let obligation = {
        use lend_b::obligation::*;
        let mut fields = vec![
            array("deposits", DEPOSITS, DEPOSIT_COUNT, DEPOSIT_STRIDE),
            array("borrows", BORROWS, BORROW_COUNT, BORROW_STRIDE),
            field("elevationGroup", ELEVATION_GROUP, 1),
        ];
        for i in [0, DEPOSIT_COUNT - 1] {
            let at = DEPOSITS + i * DEPOSIT_STRIDE;
            fields.push(field(&format!("deposits[{i}].depositReserve"), at + DEPOSIT_RESERVE, 32));
            fields.push(field(&format!("deposits[{i}].depositedAmount"), at + DEPOSITED_AMOUNT, 8));
        }
        for i in [0, BORROW_COUNT - 1] {
            let at = BORROWS + i * BORROW_STRIDE;
            fields.push(field(&format!("borrows[{i}].borrowReserve"), at + BORROW_RESERVE, 32));
            fields.push(field(&format!("borrows[{i}].cumulativeBorrowRateBsf.value"), at + BORROW_RATE, 32));
            fields.push(field(&format!("borrows[{i}].borrowedAmountSf"), at + BORROWED_AMOUNT_SF, 16));
        }
        account("lend_b", "klend", "Obligation", Some(LEN), fields)
    };
    let lending_market = {
        use lend_b::market::*;
        account("lend_b", "klend", "LendingMarket", Some(LEN), vec![
            field("emergencyMode", EMERGENCY_MODE, 1),
            field("borrowDisabled", BORROW_DISABLED, 1),
        ])
    };
    let state = {
        use stake_b::state::*;
        account("stake_b", "marinade", "State", None, vec![
            field("msolMint", MSOL_MINT, 32),
            field("treasuryMsolAccount", TREASURY_MSOL_ACCOUNT, 32),
            field("rentExemptForTokenAcc", RENT_EXEMPT_FOR_TOKEN_ACC, 8),
            field("stakeSystem.delayedUnstakeCoolingDown", DELAYED_UNSTAKE_COOLING_DOWN, 8),
            field("validatorSystem.totalActiveBalance", TOTAL_ACTIVE_BALANCE, 8),
            field("liqPool.msolLeg", LIQ_POOL_MSOL_LEG, 32),
            field("liqPool.lpLiquidityTarget", LP_LIQUIDITY_TARGET, 8),
            field("liqPool.lpMaxFee.basisPoints", LP_MAX_FEE, 4),
            field("liqPool.lpMinFee.basisPoints", LP_MIN_FEE, 4),
            field("availableReserveBalance", AVAILABLE_RESERVE_BALANCE, 8),
            field("msolSupply", MSOL_SUPPLY, 8),
            field("msolPrice", MSOL_PRICE, 8),
            field("circulatingTicketBalance", CIRCULATING_TICKET_BALANCE, 8),
            field("minDeposit", MIN_DEPOSIT, 8),
            field("minWithdraw", MIN_WITHDRAW, 8),
            field("stakingSolCap", STAKING_SOL_CAP, 8),
            field("emergencyCoolingDown", EMERGENCY_COOLING_DOWN, 8),
            field("paused", PAUSED, 1),
        ])
    };
    let lending = {
        use lend_c::lending::*;
        account("lend_c", "jupiter_lending", "Lending", Some(MIN_LEN), vec![
            field("mint", MINT, 32),
            field("f_token_mint", F_TOKEN_MINT, 32),
            field("rewards_rate_model", REWARDS_RATE_MODEL, 32),
            field("token_exchange_price", TOKEN_EXCHANGE_PRICE, 8),
            field("token_reserves_liquidity", TOKEN_RESERVES_LIQUIDITY, 32),
            field("supply_position_on_liquidity", SUPPLY_POSITION_ON_LIQUIDITY, 32),
        ])
    };
    let bank = {
        use p0::bank::*;
        account("p0", "marginfi", "Bank", Some(LEN), vec![
            field("mint", MINT, 32),
            field("mint_decimals", MINT_DECIMALS, 1),
            field("group", GROUP, 32),
            field("asset_share_value", ASSET_SHARE_VALUE, 16),
            field("liability_share_value", LIABILITY_SHARE_VALUE, 16),
            field("liquidity_vault", LIQUIDITY_VAULT, 32),
            field("config.asset_weight_maint", ASSET_WEIGHT_MAINT, 16),
            field("config.liability_weight_maint", LIABILITY_WEIGHT_MAINT, 16),
            // The first oracle key.
            field("config.oracle_keys[0]", ORACLE_KEYS, 32),
            field("cache.lending_rate", LENDING_RATE, 4),
            field("cache.borrowing_rate", BORROWING_RATE, 4),
        ])
    };
    let margin_account = {
        use p0::account::*;
        let mut fields = vec![
            field("group", GROUP, 32),
            field("authority", AUTHORITY, 32),
            array("lending_account.balances", BALANCES, BALANCE_COUNT, BALANCE_STRIDE),
        ];
        for i in [0, BALANCE_COUNT - 1] {
            let at = BALANCES + i * BALANCE_STRIDE;
            let path = |name: &str| format!("lending_account.balances[{i}].{name}");
            fields.push(field(&path("active"), at + ACTIVE, 1));
            fields.push(field(&path("bank_pk"), at + BANK, 32));
            fields.push(field(&path("bank_asset_tag"), at + ASSET_TAG, 1));
            fields.push(field(&path("asset_shares"), at + ASSET_SHARES, 16));
            fields.push(field(&path("liability_shares"), at + LIABILITY_SHARES, 16));
        }
        account("p0", "marginfi", "MarginfiAccount", Some(LEN), fields)
    };
    vec![reserve, obligation, lending_market, state, lending, bank, margin_account]
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
