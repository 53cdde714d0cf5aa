//! The cluster setting selects the venues: on mainnet the devnet-only lend_a answers 503
//! `coming_soon` and lend_c (Jupiter Lend) builds for wallets, a versioned (v0) transaction
//! over the accounts its programs derive, read from its `Lending` account first; the
//! liquid-staking deposits (Jito's pool, Marinade) answer the token account they mint to. (No
//! stand-ins of these venues run here: the transactions are checked against the interfaces,
//! not landed.)

mod common;

use base64::Engine;
use common::chain;
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_api::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use narrative_api::chain::venues::lend_c::{
    self, LendingAccounts, EXCHANGE_PRICES_PRECISION, MAINNET_LIQUIDITY_PROGRAM, MAINNET_PROGRAM,
    MAINNET_REWARDS_PROGRAM,
};
use narrative_api::chain::venues::{
    anchor_data, anchor_discriminator, stake_a, stake_b, NATIVE_MINT,
};
use narrative_sdk::memo::MEMO_PROGRAM;
use narrative_sdk::Pubkey;
use reqwest::StatusCode;
use serde_json::json;
use solana_account::Account;
use solana_message::VersionedMessage;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;

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
            TOKEN_PROGRAM,
            MEMO_PROGRAM
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

/// Jito's stake pool as the stake-pool program lays it out: 1,100 SOL staked for 1,000 jitoSOL,
/// updated in epoch 1,000 (the bank is in an earlier one), no deposit fee.
fn jito_pool_account(pool_mint: Pubkey) -> Account {
    use stake_a::pool;
    // 611 bytes, as the program sizes it; every optional field after `epoch_fee` is absent.
    let mut data = vec![0u8; 611];
    data[pool::ACCOUNT_TYPE] = 1;
    let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
    put(pool::RESERVE_STAKE, Pubkey::new_unique().as_ref());
    put(pool::POOL_MINT, pool_mint.as_ref());
    put(pool::MANAGER_FEE_ACCOUNT, Pubkey::new_unique().as_ref());
    put(pool::TOKEN_PROGRAM, TOKEN_PROGRAM.as_ref());
    put(pool::TOTAL_LAMPORTS, &(1_100 * SOL).to_le_bytes());
    put(pool::POOL_TOKEN_SUPPLY, &(1_000 * SOL).to_le_bytes());
    put(pool::LAST_UPDATE_EPOCH, &1_000u64.to_le_bytes());
    Account {
        lamports: SOL,
        data,
        owner: stake_a::MAINNET_PROGRAM,
        executable: false,
        rent_epoch: 0,
    }
}

/// Marinade's `State` at the offsets the venue reads: 1,000 mSOL backed by 1,200 SOL (1.2 SOL an
/// mSOL), its liquidity pool targeting 100 SOL with a fee from 3 % (empty) to 0.3 % (at target),
/// and no staking cap in reach.
fn marinade_state_account(msol_mint: Pubkey) -> Account {
    marinade_state_capped(msol_mint, Pubkey::new_unique(), u64::MAX)
}

/// The same with the pool's mSOL leg at `msol_leg` and a staking cap of `cap` lamports.
fn marinade_state_capped(msol_mint: Pubkey, msol_leg: Pubkey, cap: u64) -> Account {
    use stake_b::state;
    let mut data = vec![0u8; 620];
    let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &anchor_discriminator("account:State"));
    put(state::MSOL_MINT, msol_mint.as_ref());
    put(state::TREASURY_MSOL_ACCOUNT, Pubkey::new_unique().as_ref());
    put(state::LIQ_POOL_MSOL_LEG, msol_leg.as_ref());
    put(state::STAKING_SOL_CAP, &cap.to_le_bytes());
    put(
        state::RENT_EXEMPT_FOR_TOKEN_ACC,
        &MARINADE_RENT.to_le_bytes(),
    );
    put(state::TOTAL_ACTIVE_BALANCE, &(1_200 * SOL).to_le_bytes());
    put(state::MSOL_SUPPLY, &(1_000 * SOL).to_le_bytes());
    let price = (stake_b::PRICE_DENOMINATOR * 6 / 5) as u64;
    put(state::MSOL_PRICE, &price.to_le_bytes());
    put(state::LP_LIQUIDITY_TARGET, &(100 * SOL).to_le_bytes());
    put(state::LP_MAX_FEE, &300u32.to_le_bytes());
    put(state::LP_MIN_FEE, &30u32.to_le_bytes());
    Account {
        lamports: SOL,
        data,
        owner: stake_b::PROGRAM,
        executable: false,
        rent_epoch: 0,
    }
}

/// The lamports Marinade's SOL leg keeps back (`rent_exempt_for_token_acc`).
const MARINADE_RENT: u64 = 2_039_280;

/// Marinade's liquidity-pool SOL leg holding `lamports` beyond its rent reserve.
fn marinade_sol_leg(lamports: u64) -> Account {
    Account {
        lamports: lamports + MARINADE_RENT,
        data: vec![],
        owner: anchor_lang::solana_program::system_program::ID,
        executable: false,
        rent_epoch: 0,
    }
}

/// The legacy transaction a prepare answered, and its instructions' program ids.
fn legacy_transaction(prepared: &serde_json::Value) -> (Transaction, Vec<Pubkey>) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(prepared["transaction"].as_str().unwrap())
        .unwrap();
    let tx: Transaction = bincode::deserialize(&bytes).unwrap();
    let keys = &tx.message.account_keys;
    let programs = tx
        .message
        .instructions
        .iter()
        .map(|ix| keys[usize::from(ix.program_id_index)])
        .collect();
    (tx, programs)
}

/// The accounts of the transaction's `index`th instruction, in order.
fn instruction_accounts(tx: &Transaction, index: usize) -> Vec<Pubkey> {
    tx.message.instructions[index]
        .accounts
        .iter()
        .map(|i| tx.message.account_keys[usize::from(*i)])
        .collect()
}

/// Spec 4.5: the liquid-staking deposits answer the wallet's token account of the liquid token
/// (`stake_a_token_account`, `stake_b_token_account`), and the prepared transaction creates that
/// account and has the venue mint into it.
#[tokio::test]
async fn on_mainnet_the_staking_deposits_name_the_token_account_they_mint_to() {
    let (jitosol, msol) = (Pubkey::new_unique(), Pubkey::new_unique());
    let jito = jito_pool_account(jitosol);
    let marinade = marinade_state_account(msol);
    let options = HarnessOptions {
        accounts: vec![
            (stake_a::JITO_POOL, jito.clone()),
            (stake_b::STATE, marinade.clone()),
        ],
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let wallet = ledger.harness.lock().await.wallets[0].pubkey();
    // Jito's pool: 2.5 SOL by DepositSol into the wallet's new jitoSOL account.
    let jitosol_account = associated_token_account(&wallet, &jitosol, &TOKEN_PROGRAM);
    let pool = stake_a::StakePool::decode(&jito.data).unwrap();
    let deposit_sol = stake_a::deposit_sol(
        &stake_a::MAINNET_PROGRAM,
        &stake_a::JITO_POOL,
        &pool,
        &wallet,
        &jitosol_account,
        2_500_000_000,
    );
    let staking = StakingDeposit {
        path: "/v1/defi/stake_a/deposit",
        protocol: "stake_a",
        amount_sol: json!(2.5),
        answer_field: "stake_a_token_account",
        token_account: jitosol_account,
        deposit: deposit_sol,
    };
    staking.check(&server, &wallet).await;

    // Marinade: 1 SOL by `deposit` into the wallet's new mSOL account.
    let msol_account = associated_token_account(&wallet, &msol, &TOKEN_PROGRAM);
    let state = stake_b::State::decode(&marinade.data).unwrap();
    let staking = StakingDeposit {
        path: "/v1/defi/stake_b/deposit",
        protocol: "stake_b",
        amount_sol: json!(1),
        answer_field: "stake_b_token_account",
        token_account: msol_account,
        deposit: stake_b::deposit(&state, &wallet, &msol_account, SOL),
    };
    staking.check(&server, &wallet).await;
}

/// A liquid-staking deposit as the wallet must get it.
struct StakingDeposit {
    path: &'static str,
    protocol: &'static str,
    amount_sol: serde_json::Value,
    /// The answer's field naming the wallet's token account of the liquid token.
    answer_field: &'static str,
    token_account: Pubkey,
    /// The venue's deposit instruction, as its builder makes it.
    deposit: anchor_lang::solana_program::instruction::Instruction,
}

impl StakingDeposit {
    /// Prepares it for `wallet`: the answer names the token account, and the transaction
    /// creates that account, then makes exactly the venue's deposit instruction.
    async fn check(&self, server: &common::TestServer, wallet: &Pubkey) {
        let (status, prepared) = server
            .post(
                self.path,
                &json!({"wallet_address": wallet.to_string(), "amount_sol": self.amount_sol}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        assert_eq!(prepared["protocol"], self.protocol);
        assert_eq!(
            prepared[self.answer_field],
            self.token_account.to_string(),
            "{prepared}"
        );
        let (tx, programs) = legacy_transaction(&prepared);
        let ata = narrative_api::chain::holdings::ASSOCIATED_TOKEN_PROGRAM;
        assert_eq!(
            programs,
            [ata, self.deposit.program_id, MEMO_PROGRAM],
            "{}",
            self.path
        );
        // The associated-token program creates the account (its second account).
        assert_eq!(instruction_accounts(&tx, 0)[1], self.token_account);
        assert_eq!(tx.message.instructions[1].data, self.deposit.data);
        let expected: Vec<Pubkey> = self.deposit.accounts.iter().map(|a| a.pubkey).collect();
        assert_eq!(instruction_accounts(&tx, 1), expected, "{}", self.path);
    }
}

/// A stake_b withdrawal is Marinade's liquid unstake, which keeps a fee that grows as the
/// liquidity pool's SOL leg empties: the prepared withdrawal expects what Marinade will pay after
/// that fee (and the confirm records that), not the receipt's value at the rate; an unstake
/// the pool could not pay is refused before the wallet signs it.
#[tokio::test]
async fn on_mainnet_a_stake_b_withdrawal_expects_the_payout_after_marinades_fee() {
    use narrative_store::entities::defi_positions;
    use sea_orm::{ActiveModelTrait, ActiveValue::Set};

    let msol = Pubkey::new_unique();
    let marinade = marinade_state_account(msol);
    let options = HarnessOptions {
        accounts: vec![
            (stake_b::STATE, marinade.clone()),
            // 50 SOL stay after a 12 SOL unstake: half the target, a fee of 1.65 %.
            (stake_b::liq_pool_sol_leg(), marinade_sol_leg(62 * SOL)),
        ],
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let wallet = ledger.harness.lock().await.wallets[0].pubkey();
    let msol_account = associated_token_account(&wallet, &msol, &TOKEN_PROGRAM);
    ledger.harness.lock().await.plant_account(
        msol_account,
        integration_tests::venues::token_account(msol, wallet, 10 * SOL),
    );
    // The backing as the stake_b deposit's confirm records it: 12 SOL bought 10 mSOL.
    defi_positions::ActiveModel {
        id: Set(uuid::Uuid::new_v4().to_string()),
        wallet: Set(wallet.to_string()),
        protocol: Set("stake_b".into()),
        token_symbol: Set("SOL".into()),
        mint: Set(NATIVE_MINT.to_string()),
        amount_base: Set(12 * SOL as i64),
        amount_lamports: Set(12 * SOL as i64),
        receipt_amount: Set(10 * SOL as i64),
        rate_liquidity: Set("6".into()),
        rate_receipt: Set("5".into()),
        narrative_id: Set(None),
        status: Set("confirmed".into()),
        deposit_signature: Set("1".repeat(64)),
        withdraw_signature: Set(None),
        withdrawn_base: Set(None),
        created_at: Set(server.clock.now()),
        withdrawn_at: Set(None),
    }
    .insert(server.db.store.db())
    .await
    .unwrap();

    let body = json!({"wallet_address": wallet.to_string(), "amount_sol": 12});
    let (status, prepared) = server.post("/v1/defi/stake_b/withdraw", &body).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    // 10 mSOL less 1.65 % (0.165 mSOL) at 1.2 SOL: 11.802 SOL, not the 12 the rate says.
    assert_eq!(
        prepared["expected_amount_base"].as_u64(),
        Some(11_802_000_000),
        "{prepared}"
    );
    let (tx, programs) = legacy_transaction(&prepared);
    assert_eq!(programs, [stake_b::PROGRAM, MEMO_PROGRAM]);
    let state = stake_b::State::decode(&marinade.data).unwrap();
    let unstake = stake_b::liquid_unstake(&state, &wallet, &msol_account, 10 * SOL);
    assert_eq!(tx.message.instructions[0].data, unstake.data);
    let accounts: Vec<Pubkey> = unstake.accounts.iter().map(|a| a.pubkey).collect();
    assert_eq!(instruction_accounts(&tx, 0), accounts);

    // With 11 SOL in the leg Marinade could not pay even at its 3 % fee (11.64 SOL): the
    // wallet is told now, rather than after signing a transaction that fails.
    ledger
        .harness
        .lock()
        .await
        .plant_account(stake_b::liq_pool_sol_leg(), marinade_sol_leg(11 * SOL));
    let (status, refused) = server.post("/v1/defi/stake_b/withdraw", &body).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_liquidity_insufficient");

    // Paused, Marinade takes neither deposits nor unstakes.
    let mut paused = marinade;
    paused.data[stake_b::state::PAUSED] = 1;
    ledger
        .harness
        .lock()
        .await
        .plant_account(stake_b::STATE, paused);
    for path in ["/v1/defi/stake_b/withdraw", "/v1/defi/stake_b/deposit"] {
        let (status, refused) = server.post(path, &body).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {refused}");
        assert_eq!(refused["error"], "venue_paused", "{path}");
    }
}

/// The stake-pool program refuses every SOL deposit in an epoch the pool has not been updated
/// in (until a permissionless crank runs, minutes after each boundary): the prepare says so
/// instead of giving the wallet a transaction that fails.
#[tokio::test]
async fn on_mainnet_a_stake_a_deposit_waits_for_the_pools_epoch_update() {
    let jitosol = Pubkey::new_unique();
    let options = HarnessOptions {
        accounts: vec![(stake_a::JITO_POOL, jito_pool_account(jitosol))],
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let wallet = ledger.harness.lock().await.wallets[0].pubkey();
    let body = json!({"wallet_address": wallet.to_string(), "amount_sol": 2.5});
    let (status, prepared) = server.post("/v1/defi/stake_a/deposit", &body).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");

    // The ledger moves to epoch 1,001; the pool still says 1,000.
    ledger.harness.lock().await.set_epoch(1_001).await;
    let (status, refused) = server.post("/v1/defi/stake_a/deposit", &body).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_not_updated");
    assert!(
        refused["message"].as_str().unwrap().contains("epoch 1000"),
        "{refused}"
    );
}

/// Marinade stakes only what its liquidity pool's mSOL leg does not sell the depositor, and
/// refuses a deposit whose staked part passes `staking_sol_cap`: the prepare refuses it before
/// the wallet signs, naming the most that still goes through, and stores nothing.
#[tokio::test]
async fn on_mainnet_a_stake_b_deposit_past_marinades_staking_cap_is_refused_before_signing() {
    let (msol, leg) = (Pubkey::new_unique(), Pubkey::new_unique());
    // 1,200 SOL under control and a cap 3 SOL above it; the leg holds 2 mSOL (2.4 SOL).
    let marinade = marinade_state_capped(msol, leg, 1_203 * SOL);
    let options = HarnessOptions {
        accounts: vec![
            (stake_b::STATE, marinade),
            (
                leg,
                integration_tests::venues::token_account(msol, Pubkey::new_unique(), 2 * SOL),
            ),
        ],
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, c| {
        c.solana_cluster = "mainnet-beta".into();
    })
    .await;
    let wallet = ledger.harness.lock().await.wallets[0].pubkey();
    let deposit =
        |amount_sol: f64| json!({"wallet_address": wallet.to_string(), "amount_sol": amount_sol});
    let rows = || async {
        use sea_orm::{EntityTrait, PaginatorTrait};
        narrative_store::entities::prepared_transactions::Entity::find()
            .count(server.db.store.db())
            .await
            .unwrap()
    };
    // 6 SOL: the leg sells 2.4 SOL's worth, the 3.6 SOL left would pass the cap.
    let (status, refused) = server.post("/v1/defi/stake_b/deposit", &deposit(6.0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "amount_above_deposit_limit", "{refused}");
    assert_eq!(refused["room_base"], 5_400_000_000u64, "{refused}");
    assert_eq!(rows().await, 0);
    // 5.4 SOL fits exactly (2.4 sold, 3 staked), through the generic prepare too.
    let (status, prepared) = server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": "5.4",
                    "protocol": "stake_b"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(rows().await, 1);
}
