//! Conservation under random sequences of instructions.
//!
//! A seeded generator drives random interleavings of create / back / vote / dispute / ruling /
//! lapse / finalize / forward of the crucible share / timeout refund / claim across several
//! wallets and markets (SOL and SPL, Yield and Classic), on program-test, while crucible_pool's
//! admin revokes and restores binary_vault as a source and binary_vault's admin proposes,
//! applies and cancels config and oracle-set changes. Whatever the programs accept or refuse,
//! after every step and for every market:
//! - what was paid out + what was forwarded to crucible_pool + what is left in the vaults = what
//!   was backed (lamports and tokens), and the market's own totals agree;
//! - crucible_pool's vaults hold exactly the forwarded crucible shares;
//! - a market's terms and oracle set are those of its creation, whatever the config became;
//! - no backing is paid twice;
//!
//! and once every market is settled and every backing claimed, the dust left per market is
//! below its number of claims.
//!
//! `INVARIANT_SEQUENCES` (default 200) and `INVARIANT_SEED` (default 0x5EED) choose the run;
//! a failure prints the seed that reproduces it with `INVARIANT_SEQUENCES=1`.

use std::collections::BTreeSet;

use anchor_lang::prelude::Pubkey;
use anchor_lang::Space;
use binary_vault::constants::*;
use binary_vault::error::BinaryError;
use binary_vault::instructions::ConfigUpdate;
use binary_vault::state::{DisputeAction, DisputeStatus, MarketVariant, OracleSet, Side};
use crucible_pool::SOL_MINT;
use integration_tests::rng::Rng;
use integration_tests::sequences::shard_seeds;
use integration_tests::*;
use narrative_sdk::{binary, crucible, pda};
use solana_keypair::Keypair;
use solana_signer::Signer;

const WALLETS: usize = 5;
const MAX_MARKETS: usize = 3;
const STEPS: usize = 80;
const HOLD: i64 = DEFAULT_RESOLUTION_TIMELOCK_SECS;

struct Tracked {
    id: [u8; 32],
    spl: bool,
    variant: MarketVariant,
    /// The side oracles mostly vote for, so that markets resolve within a sequence.
    truth: Side,
    backed: u64,
    paid: u64,
    claims: u32,
    backings: BTreeSet<(usize, u8)>,
    claimed: BTreeSet<(usize, u8)>,
    /// (capital loss bps, crucible share bps, hold, oracle set) at creation.
    terms: (u16, u16, i64, OracleSet),
}

struct World {
    h: Harness,
    rng: Rng,
    mint: Pubkey,
    tokens: Vec<Pubkey>,
    wallets: Vec<Keypair>,
    markets: Vec<Tracked>,
    crucible_sol_start: u64,
    treasury_start: u64,
    log: Vec<String>,
}

fn side_of(rng: &mut Rng) -> Side {
    if rng.chance(50) {
        Side::Yes
    } else {
        Side::No
    }
}

impl World {
    async fn new(seed: u64) -> Self {
        let mut h = Harness::start_with(HarnessOptions {
            oracles: 3,
            threshold: 2,
            wallets: WALLETS,
            wallet_lamports: 10_000 * SOL,
            ..HarnessOptions::default()
        })
        .await;
        let (mint, tokens) = h.spl_setup(u64::MAX / 16).await;
        let crucible_sol_start = h.lamports(pda::crucible::sol_vault()).await;
        let treasury_start = h.lamports(h.treasury).await;
        let wallets = h.wallets.iter().map(|w| w.insecure_clone()).collect();
        World {
            h,
            rng: Rng::new(seed),
            mint,
            tokens,
            wallets,
            markets: Vec::new(),
            crucible_sol_start,
            treasury_start,
            log: Vec::new(),
        }
    }

    async fn step(&mut self) {
        let roll = self.rng.below(100);
        // Tuned so that most markets resolve, and are claimed from, while others are still
        // being backed or disputed (checked by printing outcomes while writing this).
        match roll {
            0..=5 => self.create().await,
            6..=33 => self.back().await,
            34..=45 => self.warp().await,
            46..=61 => self.vote().await,
            62..=64 => self.dispute().await,
            65..=67 => self.rule().await,
            68..=76 => self.finalize().await,
            77 => self.forward().await,
            78 => self.toggle_crucible_source().await,
            79 => self.admin_change().await,
            80..=81 => self.timeout_refund().await,
            82 => self.forward_bond().await,
            _ => self.claim().await,
        }
    }

    fn market_index(&mut self) -> Option<usize> {
        (!self.markets.is_empty()).then(|| self.rng.below(self.markets.len() as u64) as usize)
    }

    /// Mostly a market where `ready` holds on its current state (so sequences progress),
    /// otherwise any market (so refusals are exercised too).
    async fn pick_market(
        &mut self,
        ready: impl Fn(&binary_vault::state::Market, i64) -> bool,
    ) -> Option<usize> {
        let now = self.h.now().await;
        let mut eligible = Vec::new();
        for (i, t) in self.markets.iter().enumerate() {
            if ready(&self.h.market(&t.id).await, now) {
                eligible.push(i);
            }
        }
        if !eligible.is_empty() && self.rng.chance(70) {
            Some(*self.rng.pick(&eligible))
        } else {
            self.market_index()
        }
    }

    async fn create(&mut self) {
        if self.markets.len() >= MAX_MARKETS {
            return;
        }
        let creator = self.wallets[self.rng.below(WALLETS as u64) as usize].insecure_clone();
        // While crucible_pool refuses binary_vault's forfeits, only Classic markets can open
        // (a refused Yield creation is tested in binary_lifecycle).
        let crucible: crucible_pool::state::CrucibleState =
            self.h.account(pda::crucible::state()).await;
        let yield_allowed = crucible.is_authorized(&pda::binary::cpi_authority());
        let variant = if yield_allowed && self.rng.chance(50) {
            MarketVariant::Yield
        } else {
            MarketVariant::Classic
        };
        let spl = self.rng.chance(40);
        let deadline_in = self.rng.range(3_600, 3 * DAY as u64) as i64;
        let id = if spl {
            self.h
                .create_spl_market(&creator, self.mint, variant, deadline_in)
                .await
                .expect("spl market")
        } else {
            self.h
                .create_sol_market(&creator, variant, deadline_in)
                .await
        };
        self.log.push(format!(
            "create #{} {variant:?} spl={spl} deadline+{deadline_in}",
            self.markets.len()
        ));
        let truth = side_of(&mut self.rng);
        let config = self.h.config().await;
        let terms = (
            config.capital_loss_bps,
            config.crucible_share_bps,
            config.resolution_timelock_secs,
            config.oracle_set(),
        );
        self.markets.push(Tracked {
            id,
            spl,
            variant,
            truth,
            backed: 0,
            paid: 0,
            claims: 0,
            backings: BTreeSet::new(),
            claimed: BTreeSet::new(),
            terms,
        });
    }

    async fn back(&mut self) {
        let Some(m) = self.market_index() else { return };
        let w = self.rng.below(WALLETS as u64) as usize;
        let side = side_of(&mut self.rng);
        let (spl, id) = (self.markets[m].spl, self.markets[m].id);
        // Awkward amounts so that every pro-rata division has a remainder; some below minimum.
        let amount = if spl {
            self.rng.range(MIN_BACKING_SPL - 1, 5_000_000)
        } else {
            self.rng.range(MIN_BACKING_LAMPORTS - 1, 5 * SOL)
        };
        let wallet = self.wallets[w].insecure_clone();
        let ix = if spl {
            binary::back_market_spl(
                wallet.pubkey(),
                &id,
                self.mint,
                self.tokens[w],
                side,
                amount,
            )
        } else {
            binary::back_market(wallet.pubkey(), &id, side, amount)
        };
        let ok = self.h.process(&[ix], &[&wallet]).await.is_ok();
        self.log
            .push(format!("back m{m} w{w} {side:?} {amount} -> {ok}"));
        if ok {
            let t = &mut self.markets[m];
            t.backed += amount;
            t.backings.insert((w, side.seed_byte()));
        }
    }

    async fn warp(&mut self) {
        let secs = self.rng.range(3_600, 3 * DAY as u64) as i64;
        self.h.warp_by(secs).await;
        self.log.push(format!("warp +{secs}"));
    }

    async fn vote(&mut self) {
        let votable = |m: &binary_vault::state::Market, now: i64| {
            m.oracle_status == ORACLE_STATUS_OPEN && m.outcome.is_none() && now >= m.deadline
        };
        let Some(m) = self.pick_market(votable).await else {
            return;
        };
        let oracle = self.rng.below(3) as usize;
        let side = if self.rng.chance(85) {
            self.markets[m].truth
        } else {
            side_of(&mut self.rng)
        };
        let confidence = self.rng.range(6_900, 10_050) as u16;
        let id = self.markets[m].id;
        let ok = self.h.vote(oracle, &id, side, confidence).await.is_ok();
        self.log
            .push(format!("vote m{m} o{oracle} {side:?} {confidence} -> {ok}"));
    }

    async fn dispute(&mut self) {
        let on_hold = |m: &binary_vault::state::Market, now: i64| {
            m.oracle_status == ORACLE_STATUS_OPEN
                && m.outcome.is_some()
                && Some(now) < m.hold_ends_at()
        };
        let Some(m) = self.pick_market(on_hold).await else {
            return;
        };
        let w = self.rng.below(WALLETS as u64) as usize;
        let wallet = self.wallets[w].insecure_clone();
        let id = self.markets[m].id;
        let ok = self.h.open_dispute(&wallet, &id).await.is_ok();
        self.log.push(format!("dispute m{m} w{w} -> {ok}"));
    }

    async fn rule(&mut self) {
        let Some(m) = self.market_index() else { return };
        let id = self.markets[m].id;
        let Some(dispute) = self
            .h
            .try_account::<binary_vault::state::Dispute>(pda::binary::dispute(&id))
            .await
        else {
            return;
        };
        let ruling = *self.rng.pick(&[
            DisputeAction::Uphold,
            DisputeAction::Overturn,
            DisputeAction::Refund,
        ]);
        let ok = self
            .h
            .settle_dispute(&id, &dispute.disputer, ruling)
            .await
            .is_ok();
        self.log.push(format!("rule m{m} {ruling:?} -> {ok}"));
    }

    /// Forwards a market's forfeit dispute bond to the treasury (refused while none is forfeit
    /// or once it left).
    async fn forward_bond(&mut self) {
        let Some(m) = self.market_index() else { return };
        let id = self.markets[m].id;
        let ok = self.h.forward_dispute_bond(&id).await.is_ok();
        self.log.push(format!("forward bond m{m} -> {ok}"));
    }

    /// Finalises; the crucible share is forwarded right after, or left for `forward`. Whether
    /// the market finalised is what counts: crucible_pool may refuse the share.
    async fn finalize_market(&mut self, m: usize) -> bool {
        let id = self.markets[m].id;
        if self.h.finalize_only(&id).await.is_err() {
            return false;
        }
        if self.rng.chance(50) {
            let ok = self.h.forward_crucible_share(&id).await.is_ok();
            self.log.push(format!("forward m{m} -> {ok}"));
        }
        true
    }

    async fn forward(&mut self) {
        let pending = |m: &binary_vault::state::Market, _: i64| {
            m.finalized && m.crucible_amount > 0 && !m.crucible_forwarded
        };
        let Some(m) = self.pick_market(pending).await else {
            return;
        };
        let id = self.markets[m].id;
        let ok = self.h.forward_crucible_share(&id).await.is_ok();
        self.log.push(format!("forward m{m} -> {ok}"));
    }

    /// binary_vault's admin proposes a change (economics, hold, oracle set), applies the pending
    /// one (sometimes before its timelock, which is refused) or cancels it.
    async fn admin_change(&mut self) {
        let admin = self.h.admin.insecure_clone();
        let ix = match self.rng.below(3) {
            0 => {
                let oracles: Vec<Pubkey> = self.h.oracles.iter().map(|o| o.pubkey()).collect();
                let (set, threshold) = match self.rng.below(3) {
                    0 => (&oracles[..], 2),
                    1 => (&oracles[1..], 1),
                    _ => (&oracles[..], 3),
                };
                let update = ConfigUpdate {
                    capital_loss_bps: Some(self.rng.range(0, MAX_CAPITAL_LOSS_BPS as u64) as u16),
                    crucible_share_bps: Some(self.rng.range(0, 10_000) as u16),
                    resolution_timelock_secs: Some(
                        self.rng.range(HOLD as u64, 2 * HOLD as u64) as i64
                    ),
                    oracle_set: self
                        .rng
                        .chance(50)
                        .then(|| OracleSet::new(set, threshold).unwrap()),
                    ..ConfigUpdate::default()
                };
                binary::propose_config_change(admin.pubkey(), update)
            }
            1 => binary::apply_config_change(admin.pubkey()),
            _ => binary::cancel_config_change(admin.pubkey()),
        };
        let ok = self.h.process(&[ix], &[&admin]).await.is_ok();
        self.log.push(format!("admin change -> {ok}"));
    }

    /// crucible_pool's admin revokes or restores binary_vault as a source: markets must settle
    /// and pay out either way.
    async fn toggle_crucible_source(&mut self) {
        // Revoking is immediate; restoring is proposed and applies once the admin timelock
        // has passed (a later toggle applies it, whatever warps came between).
        let allowed = self.rng.chance(50);
        let admin = self.h.admin.insecure_clone();
        let ix =
            crucible::set_authorized_source(admin.pubkey(), pda::binary::cpi_authority(), allowed);
        let _ = self.h.process(&[ix], &[&admin]).await;
        let apply = crucible::apply_settings_change(admin.pubkey());
        let _ = self.h.process(&[apply], &[&admin]).await;
        self.log.push(format!("crucible source allowed={allowed}"));
    }

    async fn finalize(&mut self) {
        let due = |m: &binary_vault::state::Market, now: i64| {
            m.oracle_status == ORACLE_STATUS_OPEN
                && m.outcome.is_some()
                && Some(now) >= m.hold_ends_at()
        };
        let Some(m) = self.pick_market(due).await else {
            return;
        };
        let ok = self.finalize_market(m).await;
        self.log.push(format!("finalize m{m} -> {ok}"));
    }

    /// The permissionless exits: a timeout refund, or the lapse of an unruled dispute (by a
    /// random wallet; early attempts are refused).
    async fn timeout_refund(&mut self) {
        let Some(m) = self.market_index() else { return };
        let id = self.markets[m].id;
        let dispute = self
            .h
            .try_account::<binary_vault::state::Dispute>(pda::binary::dispute(&id))
            .await;
        if dispute.is_some() && self.rng.chance(50) {
            let ix = binary::lapse_dispute(&id);
            let ok = self.h.process(&[ix], &[]).await.is_ok();
            self.log.push(format!("lapse m{m} -> {ok}"));
            return;
        }
        let ok = self
            .h
            .process(&[binary::trigger_timeout_refund(&id)], &[])
            .await
            .is_ok();
        self.log.push(format!("timeout_refund m{m} -> {ok}"));
    }

    async fn claim(&mut self) {
        let Some(m) = self.pick_market(|m, _| m.finalized).await else {
            return;
        };
        // Mostly a backing that exists; sometimes any (wallet, side), to exercise refusals.
        let backings: Vec<_> = self.markets[m].backings.iter().copied().collect();
        let (w, side) = if !backings.is_empty() && self.rng.chance(70) {
            let (w, byte) = *self.rng.pick(&backings);
            (w, if byte == 1 { Side::Yes } else { Side::No })
        } else {
            (
                self.rng.below(WALLETS as u64) as usize,
                side_of(&mut self.rng),
            )
        };
        // Refusals (nothing backed, not claimable yet, already claimed) are part of the test:
        // claim_backing asserts they moved nothing.
        let _ = self.claim_backing(m, w, side).await;
    }

    /// Claims (w, side) on market m and books what the wallet received. Returns the result.
    async fn claim_backing(
        &mut self,
        m: usize,
        w: usize,
        side: Side,
    ) -> Result<(), solana_program_test::BanksClientError> {
        let (spl, id) = (self.markets[m].spl, self.markets[m].id);
        let wallet = self.wallets[w].insecure_clone();
        let before = self.balance(w, spl).await;
        let ix = if spl {
            binary::claim_spl(wallet.pubkey(), &id, side, self.mint, self.tokens[w])
        } else {
            binary::claim(wallet.pubkey(), &id, side)
        };
        let result = self.h.process(&[ix], &[&wallet]).await;
        let received = self.balance(w, spl).await - before;
        self.log.push(format!(
            "claim m{m} w{w} {side:?} -> {} ({received})",
            result.is_ok()
        ));
        if result.is_ok() {
            let t = &mut self.markets[m];
            assert!(
                t.claimed.insert((w, side.seed_byte())),
                "backing m{m} w{w} {side:?} paid twice"
            );
            t.paid += received;
            t.claims += 1;
            let backing = self.h.backing(&id, &wallet.pubkey(), side).await;
            assert!(backing.claimed);
            assert_eq!(
                backing.payout, received,
                "payout recorded differs from payout received"
            );
        } else {
            assert_eq!(received, 0, "a refused claim moved value");
        }
        result
    }

    async fn balance(&mut self, w: usize, spl: bool) -> u64 {
        if spl {
            self.h.token_balance(&self.tokens[w]).await
        } else {
            self.h.lamports(self.wallets[w].pubkey()).await
        }
    }

    /// What the market's two vaults hold beyond their rent reserves.
    async fn left_in_vaults(&mut self, m: usize) -> u64 {
        let (spl, id) = (self.markets[m].spl, self.markets[m].id);
        let mut left = 0;
        for side in [Side::Yes, Side::No] {
            left += if spl {
                self.h
                    .token_balance(&pda::binary::token_vault(&id, side))
                    .await
            } else {
                self.h.vault_balance(&id, side).await
            };
        }
        left
    }

    async fn check(&mut self) {
        let (mut crucible_sol, mut crucible_spl) = (0, 0);
        let mut bonds_forwarded = 0;
        for m in 0..self.markets.len() {
            let id = self.markets[m].id;
            // A bond is in its dispute account from opening until it is returned or forwarded.
            let address = pda::binary::dispute(&id);
            if let Some(d) = self
                .h
                .try_account::<binary_vault::state::Dispute>(address)
                .await
            {
                let rent = self
                    .h
                    .rent_for(8 + binary_vault::state::Dispute::INIT_SPACE)
                    .await;
                let held = d.status == DisputeStatus::Open
                    || (d.status.outcome_stood() && !d.bond_forwarded);
                assert_eq!(
                    self.h.lamports(address).await,
                    rent + if held { d.bond_lamports } else { 0 },
                    "m{m}: dispute account of a {:?} dispute (forwarded: {})",
                    d.status,
                    d.bond_forwarded
                );
                if d.bond_forwarded {
                    bonds_forwarded += d.bond_lamports;
                }
            }
            let market = self.h.market(&id).await;
            let left = self.left_in_vaults(m).await;
            let t = &self.markets[m];
            assert_eq!(
                (
                    market.capital_loss_bps,
                    market.crucible_share_bps,
                    market.resolution_timelock_secs,
                    market.oracle_set
                ),
                t.terms,
                "m{m}: terms changed after creation"
            );
            assert_eq!(
                market.yes_total + market.no_total,
                t.backed,
                "market m{m} totals"
            );
            assert_eq!(market.total_paid_out, t.paid, "market m{m} paid-out books");
            assert_eq!(market.claims_count, t.claims, "market m{m} claim count");
            // A share not yet forwarded is still in the losing vault, counted in `left`.
            let forwarded = if market.crucible_forwarded {
                market.crucible_amount
            } else {
                0
            };
            assert_eq!(
                t.paid + forwarded + left,
                t.backed,
                "m{m}: paid {} + forwarded {forwarded} + left {left} != backed {}",
                t.paid,
                t.backed
            );
            if t.spl {
                crucible_spl += forwarded;
            } else {
                crucible_sol += forwarded;
            }
        }
        let crucible_sol_vault =
            self.h.lamports(pda::crucible::sol_vault()).await - self.crucible_sol_start;
        assert_eq!(crucible_sol_vault, crucible_sol, "crucible SOL vault");
        assert_eq!(
            self.h.lamports(self.h.treasury).await - self.treasury_start,
            bonds_forwarded,
            "the treasury holds exactly the bonds forwarded to it"
        );
        assert_eq!(self.h.epoch(&SOL_MINT, 0).await.deposited, crucible_sol);
        assert_eq!(
            self.h
                .token_balance(&pda::crucible::token_vault(&self.mint))
                .await,
            crucible_spl,
            "crucible token vault"
        );
    }

    /// Drives every market to resolution or refund and claims every backing.
    async fn settle_everything(&mut self) {
        // crucible_pool accepts again, so every waiting share can leave.
        self.h
            .allow_source(pda::binary::cpi_authority())
            .await
            .unwrap();
        for m in 0..self.markets.len() {
            let id = self.markets[m].id;
            for _ in 0..6 {
                let market = self.h.market(&id).await;
                if market.finalized {
                    break;
                }
                let now = self.h.now().await;
                if market.oracle_status == ORACLE_STATUS_DISPUTED {
                    let disputer = self.h.dispute(&id).await.disputer;
                    self.h
                        .settle_dispute(&id, &disputer, DisputeAction::Uphold)
                        .await
                        .expect("ruling");
                } else if market.outcome.is_some() {
                    self.h
                        .warp_to(now.max(market.hold_ends_at().unwrap()))
                        .await;
                    assert!(self.finalize_market(m).await, "finalize after the hold");
                } else {
                    self.h
                        .warp_to(now.max(market.deadline + market.max_resolution_delay_secs))
                        .await;
                    self.h
                        .process(&[binary::trigger_timeout_refund(&id)], &[])
                        .await
                        .expect("timeout refund");
                }
            }
            assert!(self.h.market(&id).await.finalized, "m{m} settles");
            self.h
                .forward_crucible_share(&id)
                .await
                .expect("a waiting crucible share forwards once crucible_pool accepts");
            if let Some(dispute) = self
                .h
                .try_account::<binary_vault::state::Dispute>(pda::binary::dispute(&id))
                .await
            {
                assert!(
                    dispute.dispute_count <= MAX_DISPUTES_PER_MARKET,
                    "m{m}: {} disputes",
                    dispute.dispute_count
                );
            }
            let pending: Vec<_> = self.markets[m]
                .backings
                .difference(&self.markets[m].claimed)
                .copied()
                .collect();
            for (w, side_byte) in pending {
                let side = if side_byte == 1 { Side::Yes } else { Side::No };
                let result = self.claim_backing(m, w, side).await;
                let market = self.h.market(&id).await;
                let classic_loser = self.markets[m].variant == MarketVariant::Classic
                    && market.oracle_status == ORACLE_STATUS_RESOLVED
                    && market.outcome != Some(side);
                if classic_loser {
                    assert_custom_error(result, BinaryError::ClassicLoserCannotClaim);
                } else {
                    result.expect("every other backing is claimable once settled");
                }
            }
            let left = self.left_in_vaults(m).await;
            let t = &self.markets[m];
            if t.claims == 0 {
                assert_eq!(left, 0, "m{m}: dust without claims");
            } else {
                assert!(
                    left < t.claims as u64,
                    "m{m}: dust {left} >= claims {}",
                    t.claims
                );
            }
        }
        self.check().await;
    }
}

async fn run_sequence(seed: u64) {
    let mut world = World::new(seed).await;
    let result = tokio::spawn(async move {
        // Two markets from the start, so each has the whole sequence to progress.
        world.create().await;
        world.create().await;
        for _ in 0..STEPS {
            world.step().await;
            world.check().await;
        }
        world.settle_everything().await;
        world
    })
    .await;
    if let Err(e) = result {
        panic!("sequence with INVARIANT_SEED={seed:#x} failed: {e}");
    }
}

/// Runs this shard's share of the sequences: the run is split over several tests so that the
/// test runner spreads it over the cores.
async fn run_shard(shard: u64, shards: u64) {
    for seed in shard_seeds(
        "INVARIANT_SEQUENCES",
        "INVARIANT_SEED",
        0x5EED,
        shard,
        shards,
    ) {
        run_sequence(seed).await;
    }
}

#[tokio::test]
async fn random_sequences_conserve_value_shard_0() {
    run_shard(0, 4).await;
}

#[tokio::test]
async fn random_sequences_conserve_value_shard_1() {
    run_shard(1, 4).await;
}

#[tokio::test]
async fn random_sequences_conserve_value_shard_2() {
    run_shard(2, 4).await;
}

#[tokio::test]
async fn random_sequences_conserve_value_shard_3() {
    run_shard(3, 4).await;
}
