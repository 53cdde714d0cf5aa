//! A running program-test bank with the programs initialised, funded actors, a controllable
//! clock and typed account reads.

use std::collections::HashSet;

use anchor_lang::prelude::{Clock, Pubkey};
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::{system_program, AccountDeserialize};
use binary_vault::state::{
    Backing, Config, Dispute, DisputeAction, Market, MarketSource, MarketVariant, ProgramState,
    Side,
};
use crucible_pool::state::{AssetPool, Epoch};
use narrative_sdk::binary::CrucibleTarget;
use narrative_sdk::decode::{decode_event, ProgramEvent};
use narrative_sdk::{binary, crucible, pda, shield};
use solana_account::Account;
use solana_keypair::Keypair;
use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_signer::Signer;
use solana_transaction::Transaction;

use crate::errors::assert_custom_error;
use crate::native::program_test;

pub const SOL: u64 = 1_000_000_000;
/// 2026-01-01T00:00:00Z: every harness starts here, so times in tests are reproducible.
pub const START_TIME: i64 = 1_767_225_600;
pub const DAY: i64 = 86_400;
pub const DISPUTE_BOND: u64 = SOL;
pub const MAX_RESOLUTION_DELAY: i64 = 7 * DAY;
/// The backing minimum of an SPL market on the harness's 6-decimal mint: 0.01 token.
pub const MIN_BACKING_SPL: u64 = 10_000;
pub const EPOCH_DURATION: i64 = 7 * DAY;
pub const CLAIM_WINDOW: i64 = 30 * DAY;

pub struct HarnessOptions {
    pub oracles: usize,
    /// binary_vault's oracle threshold.
    pub threshold: u8,
    /// shield_vault's oracle threshold (1 is the devnet configuration of spec 8).
    pub shield_threshold: u8,
    pub wallets: usize,
    pub wallet_lamports: u64,
    /// Installs the SPL token-lending double with a SOL reserve (`crate::venues`).
    pub token_lending: bool,
    /// Installs the Kamino Lending double with a SOL reserve (`crate::venues::klend`).
    pub klend: bool,
    /// Installs the marginfi v2 double with a SOL and a USDC bank (`crate::venues::marginfi`).
    pub marginfi: bool,
    /// Accounts installed at genesis as given (an outside program's state a test reads).
    pub accounts: Vec<(Pubkey, Account)>,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            oracles: 3,
            threshold: 2,
            shield_threshold: 1,
            wallets: 4,
            wallet_lamports: 1_000 * SOL,
            token_lending: false,
            klend: false,
            marginfi: false,
            accounts: Vec::new(),
        }
    }
}

/// shield_vault's self-hedge cap in the harness.
pub const SELF_HEDGE_BPS: u16 = 5_000;
/// The Clock sysvar: venues read it, and as a reserved account the runtime never lets a
/// transaction write it (a recipient no program can credit).
pub const CLOCK_SYSVAR: Pubkey =
    Pubkey::from_str_const("SysvarC1ock11111111111111111111111111111111");

/// A deterministic keypair per (role, index), so failures reproduce with the same addresses.
pub fn keypair(role: u8, index: u32) -> Keypair {
    let mut secret = [0u8; 32];
    secret[0] = role;
    secret[1..5].copy_from_slice(&index.to_le_bytes());
    secret[31] = 0x5e;
    Keypair::new_from_array(secret)
}

/// A transaction that ran, with what ran inside it.
pub struct Executed {
    pub transaction: Transaction,
    /// Inner instructions of each top-level instruction, in order.
    pub inner_instructions: Vec<solana_message::inner_instruction::InnerInstructions>,
}

impl Executed {
    /// The programs' events, decoded from the inner instructions.
    pub fn events(&self) -> Vec<ProgramEvent> {
        let keys = &self.transaction.message.account_keys;
        self.inner_instructions
            .iter()
            .flatten()
            .filter_map(|inner| {
                let program = keys[inner.instruction.program_id_index as usize];
                decode_event(&program, &inner.instruction.data)
            })
            .collect()
    }
}

pub struct Harness {
    pub ctx: ProgramTestContext,
    pub admin: Keypair,
    pub oracles: Vec<Keypair>,
    pub keeper: Keypair,
    pub harvester: Keypair,
    pub treasury: Pubkey,
    pub wallets: Vec<Keypair>,
    seen: HashSet<solana_signature::Signature>,
    market_counter: u128,
    /// Numbers the keypairs of mints and token accounts, so a run's addresses repeat.
    address_counter: u32,
    /// The token-lending double's market, when installed.
    pub lending: Option<crate::venues::LendingMarket>,
    /// The Kamino double's market, when installed.
    pub kamino: Option<crate::venues::klend::KaminoMarket>,
    /// The marginfi double's group, when installed.
    pub marginfi: Option<crate::venues::marginfi::MarginfiGroup>,
}

fn funded(lamports: u64) -> Account {
    Account {
        lamports,
        data: vec![],
        owner: system_program::ID,
        executable: false,
        rent_epoch: 0,
    }
}

impl Harness {
    pub async fn start() -> Self {
        Self::start_with(HarnessOptions::default()).await
    }

    /// Boots the bank and initialises binary_vault (oracle set, treasury, bond) and
    /// crucible_pool (keeper, binary_vault as authorised source, SOL pool).
    pub async fn start_with(options: HarnessOptions) -> Self {
        let admin = keypair(1, 0);
        let keeper = keypair(2, 0);
        let harvester = keypair(6, 0);
        let treasury = keypair(3, 0).pubkey();
        let oracles: Vec<Keypair> = (0..options.oracles as u32).map(|i| keypair(4, i)).collect();
        let wallets: Vec<Keypair> = (0..options.wallets as u32).map(|i| keypair(5, i)).collect();

        let mut pt = program_test(&admin.pubkey());
        for key in [admin.pubkey(), keeper.pubkey(), harvester.pubkey()]
            .into_iter()
            .chain(oracles.iter().map(|k| k.pubkey()))
        {
            pt.add_account(key, funded(100 * SOL));
        }
        pt.add_account(treasury, funded(SOL));
        for w in &wallets {
            pt.add_account(w.pubkey(), funded(options.wallet_lamports));
        }
        for (key, account) in &options.accounts {
            pt.add_account(*key, account.clone());
        }
        if options.token_lending || options.klend || options.marginfi {
            crate::venues::install_native_mint(&mut pt);
        }
        let lending = options
            .token_lending
            .then(|| crate::venues::install_token_lending(&mut pt));
        let kamino = options
            .klend
            .then(|| crate::venues::klend::install_klend(&mut pt));
        let marginfi = options
            .marginfi
            .then(|| crate::venues::marginfi::install_marginfi(&mut pt));
        let ctx = pt.start_with_context().await;
        let mut h = Harness {
            ctx,
            admin,
            oracles,
            keeper,
            harvester,
            treasury,
            wallets,
            seen: HashSet::new(),
            market_counter: 0,
            address_counter: 0,
            lending,
            kamino,
            marginfi,
        };
        h.warp_to(START_TIME).await;

        let admin = h.admin.insecure_clone();
        let oracle_keys: Vec<Pubkey> = h.oracles.iter().map(|o| o.pubkey()).collect();
        let init_binary = binary::initialize(
            admin.pubkey(),
            binary_vault::instructions::InitializeArgs {
                treasury,
                oracles: oracle_keys.clone(),
                oracle_threshold: options.threshold,
                dispute_bond_lamports: DISPUTE_BOND,
                max_resolution_delay_secs: MAX_RESOLUTION_DELAY,
            },
        );
        let init_crucible = crucible::initialize(
            admin.pubkey(),
            crucible_pool::instructions::InitializeArgs {
                keeper: h.keeper.pubkey(),
                epoch_duration_secs: EPOCH_DURATION,
                claim_window_secs: CLAIM_WINDOW,
                authorized_sources: vec![
                    pda::binary::cpi_authority(),
                    pda::shield::cpi_authority(),
                ],
                guardian: Pubkey::default(),
            },
        );
        let sol_pool = crucible::init_sol_pool(admin.pubkey());
        h.process(&[init_binary, init_crucible, sol_pool], &[&admin])
            .await
            .expect("programs initialise");
        let init_shield = shield::initialize_program(
            admin.pubkey(),
            shield_vault::instructions::InitializeProgramArgs {
                oracles: oracle_keys,
                oracle_threshold: options.shield_threshold,
                treasury,
                harvest_authority: h.harvester.pubkey(),
                seam_pool_program: crucible_pool::ID,
                max_self_hedge_bps: SELF_HEDGE_BPS,
            },
        );
        h.process(&[init_shield], &[&admin])
            .await
            .expect("shield_vault initialises");
        h
    }

    pub fn payer(&self) -> Pubkey {
        self.ctx.payer.pubkey()
    }

    /// Sends `ixs` signed by `signers`, with the context's payer paying the fee so that the
    /// signers' balances move only by what the programs do. A transaction identical to one
    /// already sent gets a fresh blockhash first, so it is executed rather than deduplicated.
    pub async fn process(
        &mut self,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<(), BanksClientError> {
        let tx = self.sign(ixs, signers).await;
        self.ctx.banks_client.process_transaction(tx).await
    }

    /// Like [`Harness::process`], and returns the events the programs emitted (read from the
    /// simulation's inner instructions, then executed for real).
    pub async fn process_with_events(
        &mut self,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<Vec<ProgramEvent>, BanksClientError> {
        let executed = self.process_recorded(ixs, signers).await?;
        Ok(executed.events())
    }

    /// Executes `ixs` and returns the transaction with its inner instructions (per top-level
    /// instruction), as an indexer would receive them.
    pub async fn process_recorded(
        &mut self,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<Executed, BanksClientError> {
        let tx = self.sign(ixs, signers).await;
        let simulated = self
            .ctx
            .banks_client
            .simulate_transaction(tx.clone())
            .await?;
        if let Some(Err(err)) = simulated.result {
            return Err(BanksClientError::TransactionError(err));
        }
        let inner_instructions = simulated
            .simulation_details
            .and_then(|d| d.inner_instructions)
            .unwrap_or_default();
        self.ctx
            .banks_client
            .process_transaction(tx.clone())
            .await?;
        Ok(Executed {
            transaction: tx,
            inner_instructions,
        })
    }

    /// The signed transaction `process` would send.
    pub async fn sign(&mut self, ixs: &[Instruction], signers: &[&Keypair]) -> Transaction {
        let payer = self.ctx.payer.insecure_clone();
        let mut all: Vec<&Keypair> = vec![&payer];
        all.extend(
            signers
                .iter()
                .copied()
                .filter(|s| s.pubkey() != payer.pubkey()),
        );
        loop {
            let blockhash = latest_blockhash(&mut self.ctx).await;
            let tx =
                Transaction::new_signed_with_payer(ixs, Some(&payer.pubkey()), &all, blockhash);
            if self.seen.insert(tx.signatures[0]) {
                return tx;
            }
            self.next_slot().await;
        }
    }

    pub async fn clock(&mut self) -> Clock {
        self.ctx
            .banks_client
            .get_sysvar::<Clock>()
            .await
            .expect("clock")
    }

    pub async fn now(&mut self) -> i64 {
        self.clock().await.unix_timestamp
    }

    /// Moves to the next slot (a fresh blockhash) keeping the current time.
    pub async fn next_slot(&mut self) {
        let now = self.now().await;
        self.warp_to(now).await;
    }

    /// Moves the bank to a new slot whose clock reads `unix_timestamp`.
    pub async fn warp_to(&mut self, unix_timestamp: i64) {
        let slot = self.clock().await.slot;
        self.ctx.warp_to_slot(slot + 1).expect("warp");
        let mut clock = self.clock().await;
        clock.unix_timestamp = unix_timestamp;
        self.ctx.set_sysvar(&clock);
    }

    /// Sets the clock's epoch, keeping its slot and time (a program that acts per epoch).
    pub async fn set_epoch(&mut self, epoch: u64) {
        let mut clock = self.clock().await;
        clock.epoch = epoch;
        self.ctx.set_sysvar(&clock);
    }

    pub async fn warp_by(&mut self, seconds: i64) {
        let now = self.now().await;
        self.warp_to(now + seconds).await;
    }

    pub async fn lamports(&mut self, address: Pubkey) -> u64 {
        self.ctx
            .banks_client
            .get_balance(address)
            .await
            .expect("balance")
    }

    pub async fn raw_account(&mut self, address: Pubkey) -> Option<Account> {
        self.ctx
            .banks_client
            .get_account(address)
            .await
            .expect("account read")
    }

    pub async fn try_account<T: AccountDeserialize>(&mut self, address: Pubkey) -> Option<T> {
        let account = self.raw_account(address).await?;
        Some(T::try_deserialize(&mut account.data.as_slice()).expect("account decodes"))
    }

    pub async fn account<T: AccountDeserialize>(&mut self, address: Pubkey) -> T {
        self.try_account(address)
            .await
            .unwrap_or_else(|| panic!("account {address} missing"))
    }

    pub async fn rent_for(&mut self, space: usize) -> u64 {
        self.ctx
            .banks_client
            .get_rent()
            .await
            .expect("rent")
            .minimum_balance(space)
    }

    pub async fn program_state(&mut self) -> ProgramState {
        self.account(pda::binary::program_state()).await
    }

    pub async fn config(&mut self) -> Config {
        self.account(pda::binary::config()).await
    }

    pub async fn market(&mut self, market_id: &[u8; 32]) -> Market {
        self.account(pda::binary::market(market_id)).await
    }

    pub async fn backing(&mut self, market_id: &[u8; 32], backer: &Pubkey, side: Side) -> Backing {
        self.account(pda::binary::backing(market_id, backer, side))
            .await
    }

    pub async fn dispute(&mut self, market_id: &[u8; 32]) -> Dispute {
        self.account(pda::binary::dispute(market_id)).await
    }

    pub async fn asset_pool(&mut self, mint: &Pubkey) -> AssetPool {
        self.account(pda::crucible::asset_pool(mint)).await
    }

    pub async fn epoch(&mut self, mint: &Pubkey, number: u64) -> Epoch {
        self.account(pda::crucible::epoch(mint, number)).await
    }

    /// Lamports a SOL market's vault holds above its rent reserve: what is still owed.
    pub async fn vault_balance(&mut self, market_id: &[u8; 32], side: Side) -> u64 {
        let reserve = self.rent_for(0).await;
        self.lamports(pda::binary::sol_vault(market_id, side)).await - reserve
    }

    /// The crucible accounts a finalisation of a `mint` market must pass now.
    pub async fn crucible_target(&mut self, mint: Pubkey) -> CrucibleTarget {
        let current_epoch = self.asset_pool(&mint).await.current_epoch;
        CrucibleTarget {
            mint,
            current_epoch,
        }
    }

    /// A keypair for a new mint or token account, the same in every run of a test.
    pub fn next_keypair(&mut self) -> Keypair {
        self.address_counter += 1;
        keypair(8, self.address_counter)
    }

    /// A fresh market id (UUID-derived, deterministic per harness).
    pub fn next_market_id(&mut self) -> [u8; 32] {
        self.market_counter += 1;
        let uuid =
            uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | self.market_counter);
        narrative_sdk::market_id::market_id_from_uuid(&uuid)
    }

    /// Creates a SOL market by `creator` (the admin co-signs a Classic one) with its deadline
    /// `deadline_in` seconds from now.
    pub async fn create_sol_market(
        &mut self,
        creator: &Keypair,
        variant: MarketVariant,
        deadline_in: i64,
    ) -> [u8; 32] {
        let market_id = self.next_market_id();
        let deadline = self.now().await + deadline_in;
        let admin = self.admin.insecure_clone();
        let co_sign = variant == MarketVariant::Classic;
        let ix = binary::create_market(
            creator.pubkey(),
            co_sign.then(|| admin.pubkey()),
            binary_vault::instructions::CreateMarketArgs {
                market_id,
                variant,
                source: MarketSource::Seed,
                deadline,
            },
        );
        let signers: Vec<&Keypair> = if co_sign {
            vec![creator, &admin]
        } else {
            vec![creator]
        };
        self.process(&[ix], &signers).await.expect("market created");
        market_id
    }

    pub async fn back(
        &mut self,
        backer: &Keypair,
        market_id: &[u8; 32],
        side: Side,
        amount: u64,
    ) -> Result<(), BanksClientError> {
        let ix = binary::back_market(backer.pubkey(), market_id, side, amount);
        self.process(&[ix], &[backer]).await
    }

    /// Oracle `index` votes.
    pub async fn vote(
        &mut self,
        index: usize,
        market_id: &[u8; 32],
        side: Side,
        confidence_bps: u16,
    ) -> Result<(), BanksClientError> {
        let oracle = self.oracles[index].insecure_clone();
        let ix = binary::submit_oracle_resolution(oracle.pubkey(), market_id, side, confidence_bps);
        self.process(&[ix], &[&oracle]).await
    }

    /// Finalises a market, then forwards a Yield market's crucible share as a keeper would.
    pub async fn finalize(&mut self, market_id: &[u8; 32]) -> Result<(), BanksClientError> {
        self.finalize_only(market_id).await?;
        self.forward_crucible_share(market_id).await
    }

    /// `finalize_resolution` alone.
    pub async fn finalize_only(&mut self, market_id: &[u8; 32]) -> Result<(), BanksClientError> {
        self.process(&[binary::finalize_resolution(market_id)], &[])
            .await
    }

    /// Forwards a finalised market's crucible share if one waits (SOL or SPL).
    pub async fn forward_crucible_share(
        &mut self,
        market_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let market = self.market(market_id).await;
        if market.crucible_amount == 0 || market.crucible_forwarded {
            return Ok(());
        }
        let ix = if market.is_sol() {
            let target = self.crucible_target(crucible_pool::SOL_MINT).await;
            binary::forward_crucible_share(market_id, &target)
        } else {
            let target = self.crucible_target(market.mint).await;
            binary::forward_crucible_share_spl(market_id, &target)
        };
        self.process(&[ix], &[]).await
    }

    pub async fn open_dispute(
        &mut self,
        disputer: &Keypair,
        market_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let ix = binary::open_dispute(disputer.pubkey(), market_id);
        self.process(&[ix], &[disputer]).await
    }

    /// The admin's ruling on the open dispute of `market_id`, opened by `disputer`.
    pub async fn settle_dispute(
        &mut self,
        market_id: &[u8; 32],
        disputer: &Pubkey,
        ruling: DisputeAction,
    ) -> Result<(), BanksClientError> {
        let admin = self.admin.insecure_clone();
        let ix = binary::resolve_dispute(admin.pubkey(), market_id, *disputer, ruling);
        self.process(&[ix], &[&admin]).await
    }

    /// Sends an upheld or lapsed dispute's forfeit bond to the treasury, as anyone may.
    pub async fn forward_dispute_bond(
        &mut self,
        market_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let ix = binary::forward_dispute_bond(market_id, self.treasury);
        self.process(&[ix], &[]).await
    }

    /// Votes by the first `threshold` oracles on `side`, after moving past the deadline.
    pub async fn resolve(&mut self, market_id: &[u8; 32], side: Side) {
        let market = self.market(market_id).await;
        if self.now().await < market.deadline {
            self.warp_to(market.deadline).await;
        }
        let threshold = self.config().await.oracle_threshold as usize;
        for i in 0..threshold {
            self.vote(i, market_id, side, 9_000).await.expect("vote");
        }
    }

    /// Resolves on `side`, waits out the hold and finalises.
    pub async fn resolve_and_finalize(&mut self, market_id: &[u8; 32], side: Side) {
        self.resolve(market_id, side).await;
        self.warp_by(binary_vault::constants::DEFAULT_RESOLUTION_TIMELOCK_SECS)
            .await;
        self.finalize(market_id).await.expect("finalize");
    }

    pub async fn claim(
        &mut self,
        backer: &Keypair,
        market_id: &[u8; 32],
        side: Side,
    ) -> Result<(), BanksClientError> {
        let ix = binary::claim(backer.pubkey(), market_id, side);
        self.process(&[ix], &[backer]).await
    }
}

/// The bank's newest blockhash. Not the context's `last_blockhash`: program-test's ticker
/// registers a blockhash every 6.4 ms, and once the context's is ~150 hashes old (about a
/// second, easily reached on a loaded machine) processing it underflows solana-runtime's expiry
/// arithmetic (`get_blockhash_last_valid_block_height`) and panics the bank.
async fn latest_blockhash(ctx: &mut ProgramTestContext) -> solana_hash::Hash {
    ctx.banks_client
        .get_latest_blockhash()
        .await
        .expect("latest blockhash")
}

/// The three programs deployed with `upgrade_authority` as their upgrade authority and none of
/// them initialised: what anyone could send between a deployment and its initialisations.
/// `signers` hold 10 SOL each and pay for what they sign.
pub struct Uninitialised {
    ctx: ProgramTestContext,
}

impl Uninitialised {
    pub async fn start(upgrade_authority: &Pubkey, signers: &[&Keypair]) -> Self {
        let mut pt = program_test(upgrade_authority);
        for signer in signers {
            pt.add_account(signer.pubkey(), funded(10 * SOL));
        }
        Uninitialised {
            ctx: pt.start_with_context().await,
        }
    }

    /// `ix` signed and paid for by `signer` alone.
    pub async fn process(
        &mut self,
        ix: Instruction,
        signer: &Keypair,
    ) -> Result<(), BanksClientError> {
        let blockhash = latest_blockhash(&mut self.ctx).await;
        let tx =
            Transaction::new_signed_with_payer(&[ix], Some(&signer.pubkey()), &[signer], blockhash);
        self.ctx.banks_client.process_transaction(tx).await
    }

    pub async fn exists(&mut self, address: Pubkey) -> bool {
        self.raw_account(address).await.is_some()
    }

    /// The account at `address`, decoded as `T`.
    pub async fn account<T: AccountDeserialize>(&mut self, address: Pubkey) -> T {
        let account = self
            .raw_account(address)
            .await
            .unwrap_or_else(|| panic!("account {address} missing"));
        T::try_deserialize(&mut account.data.as_slice()).expect("account decodes")
    }

    async fn raw_account(&mut self, address: Pubkey) -> Option<Account> {
        self.ctx
            .banks_client
            .get_account(address)
            .await
            .expect("bank answers")
    }
}

impl Harness {
    /// crucible_pool lets `source` deposit: any pending settings change is cancelled, then the
    /// addition goes through the timelock ([`Harness::change_crucible`]).
    pub async fn allow_source(&mut self, source: Pubkey) -> Result<(), BanksClientError> {
        let admin = self.admin.insecure_clone();
        let _ = self
            .process(
                &[crucible::cancel_settings_change(admin.pubkey())],
                &[&admin],
            )
            .await;
        let proposal = crucible::set_authorized_source(admin.pubkey(), source, true);
        self.change_crucible(proposal).await
    }

    /// An admin change through its timelock: `proposal` signed by the admin, the clock moved
    /// past `timelock_secs`, then `apply`.
    async fn through_timelock(
        &mut self,
        proposal: Instruction,
        timelock_secs: i64,
        apply: Instruction,
    ) -> Result<(), BanksClientError> {
        let admin = self.admin.insecure_clone();
        self.process(&[proposal], &[&admin]).await?;
        self.warp_by(timelock_secs).await;
        self.process(&[apply], &[&admin]).await
    }

    /// Sends the admin's `apply` a second before `timelock_secs` have passed, which must be
    /// refused with `too_early`, then at that moment, which must go through. The timelock is
    /// counted from this call, so call it right after the proposal lands.
    pub async fn apply_when_due(
        &mut self,
        apply: Instruction,
        timelock_secs: i64,
        too_early: impl Into<u32>,
    ) {
        let admin = self.admin.insecure_clone();
        self.warp_by(timelock_secs - 1).await;
        assert_custom_error(
            self.process(std::slice::from_ref(&apply), &[&admin]).await,
            too_early,
        );
        self.warp_by(1).await;
        self.process(&[apply], &[&admin])
            .await
            .expect("applies once due");
    }

    /// binary_vault's config changed by `update`, through the admin timelock.
    pub async fn change_config(
        &mut self,
        update: binary_vault::state::ConfigUpdate,
    ) -> Result<(), BanksClientError> {
        let admin = self.admin.pubkey();
        self.through_timelock(
            binary::propose_config_change(admin, update),
            binary_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
            binary::apply_config_change(admin),
        )
        .await
    }

    /// shield_vault's `change`, through the admin timelock.
    pub async fn change_shield(
        &mut self,
        change: shield_vault::state::AdminChange,
    ) -> Result<(), BanksClientError> {
        let admin = self.admin.pubkey();
        self.through_timelock(
            shield::propose_admin_change(admin, change),
            shield_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
            shield::apply_admin_change(admin),
        )
        .await
    }

    /// crucible_pool's settings change `proposal` (`update_settings`, `set_guardian`, or
    /// allowing a source), through the admin timelock.
    pub async fn change_crucible(&mut self, proposal: Instruction) -> Result<(), BanksClientError> {
        let admin = self.admin.pubkey();
        self.through_timelock(
            proposal,
            crucible_pool::constants::ADMIN_ACTION_TIMELOCK_SECS,
            crucible::apply_settings_change(admin),
        )
        .await
    }
}

impl Harness {
    /// Writes `account` at `address`, as an attacker-controlled account would exist on chain.
    pub fn plant_account(&mut self, address: Pubkey, account: Account) {
        self.ctx
            .set_account(&address, &solana_account::AccountSharedData::from(account));
    }

    /// A copy of the account at `from`, placed at a fresh address with `owner`.
    pub async fn plant_copy(&mut self, from: Pubkey, owner: Pubkey) -> Pubkey {
        let mut account = self.raw_account(from).await.expect("source account");
        account.owner = owner;
        let address = Keypair::new().pubkey();
        self.plant_account(address, account);
        address
    }
}
