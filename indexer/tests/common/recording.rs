//! A real program-test scenario recorded as a Geyser server would stream it: after every
//! transaction, the program-owned accounts that changed (with increasing slots and write
//! versions) and the transaction with its inner instructions.

use std::collections::{BTreeMap, HashMap};

use integration_tests::{Executed, Harness, DAY, SOL};
use narrative_sdk::binary_vault::state::{MarketVariant, Side};
use narrative_sdk::shield_vault::state::{ShieldKind, ShieldSide};
use narrative_sdk::{binary, pda, Pubkey};
use narrative_store::AccountUpdate;
use solana_signer::Signer;

/// One recorded step: the slot, the accounts it changed or closed, the transaction behind it.
pub struct Step {
    pub slot: u64,
    pub accounts: Vec<AccountUpdate>,
    /// Watched accounts that existed before this step and no longer do.
    pub closed: Vec<Pubkey>,
    pub tx: Option<Executed>,
    pub tx_index: u64,
}

pub struct Recording {
    pub steps: Vec<Step>,
    pub market_id: [u8; 32],
    pub protocol_id: [u8; 32],
    pub wallets: Vec<Pubkey>,
    pub oracle: Pubkey,
    /// Program-owned accounts at the end: address → (owner, data).
    pub final_accounts: BTreeMap<Pubkey, (Pubkey, Vec<u8>)>,
    /// Accounts that existed and were closed.
    pub closed: Vec<Pubkey>,
    /// Events emitted by all recorded transactions.
    pub event_count: usize,
    /// Names of the market's events, in order.
    pub market_event_names: Vec<&'static str>,
}

impl Recording {
    pub fn last_slot(&self) -> u64 {
        self.steps.last().map_or(0, |s| s.slot)
    }

    /// Each account's last streamed update.
    pub fn last_updates(&self) -> HashMap<Pubkey, &AccountUpdate> {
        self.steps
            .iter()
            .flat_map(|s| &s.accounts)
            .map(|a| (a.address, a))
            .collect()
    }
}

struct Recorder {
    h: Harness,
    watched: Vec<Pubkey>,
    last: HashMap<Pubkey, Vec<u8>>,
    steps: Vec<Step>,
    slot: u64,
    write_version: u64,
}

impl Recorder {
    fn watch(&mut self, addresses: impl IntoIterator<Item = Pubkey>) {
        self.watched.extend(addresses);
    }

    /// Records the watched accounts that changed, as one step at the next slot.
    async fn step(&mut self, tx: Option<Executed>) {
        self.slot += 3;
        let mut accounts = Vec::new();
        let mut closed = Vec::new();
        for address in self.watched.clone() {
            let Some(account) = self.h.raw_account(address).await else {
                if self.last.remove(&address).is_some() {
                    closed.push(address);
                }
                continue;
            };
            if self.last.get(&address) == Some(&account.data) {
                continue;
            }
            self.write_version += 1;
            self.last.insert(address, account.data.clone());
            accounts.push(AccountUpdate {
                address,
                owner: account.owner,
                lamports: account.lamports,
                data: account.data,
                slot: self.slot,
                write_version: self.write_version,
            });
        }
        self.steps.push(Step {
            slot: self.slot,
            accounts,
            closed,
            tx,
            tx_index: 0,
        });
    }

    async fn run(
        &mut self,
        ixs: &[narrative_sdk::Instruction],
        signers: &[&solana_keypair::Keypair],
    ) {
        let executed = self
            .h
            .process_recorded(ixs, signers)
            .await
            .expect("scenario transaction");
        self.step(Some(executed)).await;
    }
}

pub async fn record_scenario() -> Recording {
    let h = Harness::start().await;
    let mut r = Recorder {
        h,
        watched: Vec::new(),
        last: HashMap::new(),
        steps: Vec::new(),
        slot: 1_000,
        write_version: 0,
    };
    let [w0, w1, w2, w3] = [0, 1, 2, 3].map(|i| r.h.wallets[i].insecure_clone());
    let oracles = [0, 1].map(|i| r.h.oracles[i].insecure_clone());
    let admin = r.h.admin.insecure_clone();
    let id = r.h.next_market_id();
    let protocol_id = r.h.next_protocol_id();
    r.watch([
        pda::binary::program_state(),
        pda::binary::config(),
        pda::crucible::state(),
        pda::crucible::sol_asset_pool(),
        pda::crucible::epoch(&narrative_sdk::crucible_pool::SOL_MINT, 0),
        pda::shield::program_state(),
        pda::binary::market(&id),
        pda::binary::dispute(&id),
        pda::shield::coverage(&protocol_id),
    ]);
    for (w, side) in [(&w0, Side::Yes), (&w1, Side::No), (&w2, Side::Yes)] {
        r.watch([pda::binary::backing(&id, &w.pubkey(), side)]);
    }
    for o in &oracles {
        r.watch([pda::binary::oracle_vote(&id, &o.pubkey())]);
    }
    for (w, side) in [(&w0, ShieldSide::Safe), (&w1, ShieldSide::Exploit)] {
        r.watch([pda::shield::backing(&protocol_id, &w.pubkey(), side)]);
    }
    // The programs as initialised, as a first snapshot.
    r.step(None).await;

    let deadline = r.h.now().await + DAY;
    let create = binary::create_market(
        w3.pubkey(),
        None,
        narrative_sdk::binary_vault::instructions::CreateMarketArgs {
            market_id: id,
            variant: MarketVariant::Yield,
            source: narrative_sdk::binary_vault::state::MarketSource::Seed,
            deadline,
        },
    );
    r.run(&[create], &[&w3]).await;
    for (w, side, amount) in [
        (&w0, Side::Yes, SOL),
        (&w1, Side::No, 2 * SOL),
        (&w2, Side::Yes, SOL / 2),
    ] {
        r.run(&[binary::back_market(w.pubkey(), &id, side, amount)], &[w])
            .await;
    }
    r.h.warp_to(deadline).await;
    for o in &oracles {
        r.run(
            &[binary::submit_oracle_resolution(
                o.pubkey(),
                &id,
                Side::Yes,
                9_000,
            )],
            &[o],
        )
        .await;
    }
    r.h.warp_by(narrative_sdk::binary_vault::constants::DEFAULT_RESOLUTION_TIMELOCK_SECS)
        .await;
    let target =
        r.h.crucible_target(narrative_sdk::crucible_pool::SOL_MINT)
            .await;
    r.run(
        &[
            binary::finalize_resolution(&id),
            binary::forward_crucible_share(&id, &target),
        ],
        &[],
    )
    .await;
    r.run(&[binary::claim(w0.pubkey(), &id, Side::Yes)], &[&w0])
        .await;
    r.run(
        &[binary::close_oracle_vote(oracles[0].pubkey(), &id)],
        &[&oracles[0]],
    )
    .await;

    let open = narrative_sdk::shield::open_coverage(
        admin.pubkey(),
        admin.pubkey(),
        r.h.treasury,
        narrative_sdk::shield_vault::instructions::OpenCoverageArgs {
            protocol_id,
            kind: ShieldKind::Community,
            protocol_wallet: Pubkey::default(),
            period_days: 30,
            fee_lamports: 0,
        },
    );
    r.run(&[open], &[&admin]).await;
    for (w, side, amount) in [
        (&w0, ShieldSide::Safe, SOL),
        (&w1, ShieldSide::Exploit, 2 * SOL),
    ] {
        r.run(
            &[narrative_sdk::shield::back_shield(
                w.pubkey(),
                &protocol_id,
                side,
                amount,
            )],
            &[w],
        )
        .await;
    }

    let mut final_accounts = BTreeMap::new();
    let closed: Vec<Pubkey> = r.steps.iter().flat_map(|s| s.closed.clone()).collect();
    for address in r.watched.clone() {
        if let Some(a) = r.h.raw_account(address).await {
            final_accounts.insert(address, (a.owner, a.data));
        }
    }
    let market_hex = narrative_sdk::decode::hex32(&id);
    let mut event_count = 0;
    let mut market_event_names = Vec::new();
    for step in &r.steps {
        if let Some(tx) = &step.tx {
            for e in tx.events() {
                event_count += 1;
                if e.keys().subject.as_deref() == Some(market_hex.as_str()) {
                    market_event_names.push(e.name());
                }
            }
        }
    }
    let wallets = r.h.wallets.iter().map(|w| w.pubkey()).collect();
    Recording {
        steps: r.steps,
        market_id: id,
        protocol_id,
        wallets,
        oracle: oracles[0].pubkey(),
        final_accounts,
        closed,
        event_count,
        market_event_names,
    }
}
