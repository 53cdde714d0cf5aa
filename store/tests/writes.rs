//! The store's write rules, on SQLite by default and on Postgres when DATABASE_URL points at it.

use anchor_lang::{AccountSerialize, Event};
use narrative_sdk::binary_vault::events::MarketBacked;
use narrative_sdk::binary_vault::state::{Backing, Market, MarketSource, MarketVariant, Side};
use narrative_sdk::decode::{decode_event, ProgramEvent};
use narrative_sdk::Pubkey;
use narrative_store::entities::{
    backings, indexer_checkpoints, markets, program_events, raw_accounts,
};
use narrative_store::testing::TestDb;
use narrative_store::{AccountUpdate, Batch, Closure, EventRecord};
use sea_orm::{EntityTrait, PaginatorTrait};

fn account_update<T: AccountSerialize>(
    address: Pubkey,
    value: &T,
    slot: u64,
    write_version: u64,
) -> AccountUpdate {
    let mut data = Vec::new();
    value.try_serialize(&mut data).unwrap();
    AccountUpdate {
        address,
        owner: narrative_sdk::ids::BINARY_VAULT,
        lamports: 1_000_000,
        data,
        slot,
        write_version,
    }
}

fn backing(amount: u64) -> Backing {
    Backing {
        version: narrative_sdk::binary_vault::state::BackingVersion::CURRENT,
        market_id: [7; 32],
        backer: Pubkey::new_from_array([9; 32]),
        side: Side::Yes,
        amount,
        claimed: false,
        payout: 0,
        first_backed_at: 100,
        last_backed_at: 200,
        bump: 254,
    }
}

fn market(yes_total: u64) -> Market {
    Market {
        version: narrative_sdk::binary_vault::state::MarketVersion::CURRENT,
        market_id: narrative_sdk::market_id::market_id_from_str(
            "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d",
        )
        .unwrap(),
        creator: Pubkey::new_from_array([3; 32]),
        variant: MarketVariant::Yield,
        source: MarketSource::Seed,
        mint: Pubkey::default(),
        approved: true,
        oracle_status: 0,
        finalized: false,
        outcome: Some(Side::No),
        created_at: 1_767_225_600,
        deadline: 1_767_312_000,
        resolution_proposed_at: 0,
        finalized_at: 0,
        yes_total,
        no_total: 5,
        yes_backers: 2,
        no_backers: 1,
        yes_votes: 0,
        no_votes: 1,
        total_yield: 0,
        min_backing: 10_000_000,
        capital_loss_bps: 3_500,
        crucible_share_bps: 5_000,
        resolution_timelock_secs: 172_800,
        max_resolution_delay_secs: 604_800,
        winner_bonus_pool: 0,
        loser_refund_pool: 0,
        crucible_amount: 0,
        total_paid_out: 0,
        claims_count: 0,
        bump: 255,
        yes_vault_bump: 254,
        no_vault_bump: 253,
        oracle_set: narrative_sdk::binary_vault::state::OracleSet::new(
            &[Pubkey::new_from_array([6; 32])],
            1,
        )
        .unwrap(),
        crucible_forwarded: false,
        dispute_bond_lamports: 1_000_000_000,
    }
}

async fn write(db: &TestDb, batch: Batch) {
    db.store
        .write_batch("test", &batch)
        .await
        .expect("batch written");
}

async fn amount_of(db: &TestDb, address: &Pubkey) -> (i64, i64, i64, bool) {
    let row = backings::Entity::find_by_id(address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .expect("row");
    (row.amount, row.slot, row.write_version, row.closed)
}

#[tokio::test]
async fn migrations_are_idempotent() {
    let db = TestDb::new().await;
    // Connecting again runs the migrations again: nothing to do, nothing fails.
    narrative_store::Store::connect(&db.url)
        .await
        .expect("second open");
}

#[tokio::test]
async fn market_row_holds_every_decoded_field() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    write(
        &db,
        Batch {
            accounts: vec![account_update(address, &market(42), 10, 1)],
            ..Default::default()
        },
    )
    .await;
    let m = markets::Entity::find_by_id(address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        m.market_uuid.as_deref(),
        Some("8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d")
    );
    assert_eq!(
        m.market_id,
        format!("8f14e45fceea467fa0e65b1f9b7a0c3d{}", "0".repeat(32))
    );
    assert_eq!(
        (m.variant.as_str(), m.source.as_str(), m.mint.as_deref()),
        ("yield", "seed", None)
    );
    assert_eq!(
        (m.yes_total, m.no_total, m.yes_backers, m.no_votes),
        (42, 5, 2, 1)
    );
    assert_eq!(
        (m.outcome.as_deref(), m.oracle_status, m.approved),
        (Some("no"), 0, true)
    );
    assert_eq!(
        (m.deadline, m.capital_loss_bps, m.max_resolution_delay_secs),
        (1_767_312_000, 3_500, 604_800)
    );
    assert_eq!(
        (m.creator, m.slot, m.write_version, m.closed),
        (Pubkey::new_from_array([3; 32]).to_string(), 10, 1, false)
    );
}

#[tokio::test]
async fn an_older_or_repeated_update_never_replaces_a_newer_row() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    write(
        &db,
        Batch {
            accounts: vec![account_update(address, &backing(300), 20, 5)],
            ..Default::default()
        },
    )
    .await;
    // Older slot, then same slot with an older write_version, then the same update again.
    for (amount, slot, wv) in [(100, 19, 9), (200, 20, 4), (300, 20, 5)] {
        write(
            &db,
            Batch {
                accounts: vec![account_update(address, &backing(amount), slot, wv)],
                ..Default::default()
            },
        )
        .await;
        assert_eq!(amount_of(&db, &address).await, (300, 20, 5, false));
    }
    // Same slot, newer write_version: replaces.
    write(
        &db,
        Batch {
            accounts: vec![account_update(address, &backing(400), 20, 6)],
            ..Default::default()
        },
    )
    .await;
    assert_eq!(amount_of(&db, &address).await, (400, 20, 6, false));
    assert_eq!(
        backings::Entity::find().count(db.store.db()).await.unwrap(),
        1
    );
}

#[tokio::test]
async fn within_one_batch_the_newest_update_of_an_address_wins() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    let batch = Batch {
        accounts: vec![
            account_update(address, &backing(2), 31, 2),
            account_update(address, &backing(3), 31, 3),
            account_update(address, &backing(1), 30, 9),
        ],
        ..Default::default()
    };
    write(&db, batch).await;
    assert_eq!(amount_of(&db, &address).await, (3, 31, 3, false));
}

#[tokio::test]
async fn closures_mark_rows_closed_only_when_newer() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    write(
        &db,
        Batch {
            accounts: vec![account_update(address, &backing(5), 40, 1)],
            ..Default::default()
        },
    )
    .await;
    let stale = Closure {
        address,
        slot: 39,
        write_version: 0,
    };
    write(
        &db,
        Batch {
            closures: vec![stale],
            ..Default::default()
        },
    )
    .await;
    assert_eq!(amount_of(&db, &address).await, (5, 40, 1, false));
    let close = Closure {
        address,
        slot: 41,
        write_version: 0,
    };
    write(
        &db,
        Batch {
            closures: vec![close],
            ..Default::default()
        },
    )
    .await;
    assert_eq!(amount_of(&db, &address).await, (5, 41, 0, true));
    // The update it closed, replayed, does not reopen it.
    write(
        &db,
        Batch {
            accounts: vec![account_update(address, &backing(5), 40, 1)],
            ..Default::default()
        },
    )
    .await;
    assert!(amount_of(&db, &address).await.3);
}

#[tokio::test]
async fn unknown_account_data_is_kept_raw() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    let update = AccountUpdate {
        address,
        owner: narrative_sdk::ids::SHIELD_VAULT,
        lamports: 77,
        data: vec![1, 2, 3, 4, 5, 6, 7, 8, 9],
        slot: 5,
        write_version: 1,
    };
    write(
        &db,
        Batch {
            accounts: vec![update],
            ..Default::default()
        },
    )
    .await;
    let raw = raw_accounts::Entity::find_by_id(address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (raw.owner, raw.lamports, raw.data),
        (
            narrative_sdk::ids::SHIELD_VAULT.to_string(),
            77,
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9]
        )
    );
}

#[tokio::test]
async fn events_are_stored_once_with_their_keys() {
    let db = TestDb::new().await;
    let backer = Pubkey::new_unique();
    let event = MarketBacked {
        market_id: [7; 32],
        backer,
        side: Side::Yes,
        amount: 10,
        backing_amount: 10,
        yes_total: 10,
        no_total: 0,
        timestamp: 1,
    };
    let mut raw = anchor_lang::event::EVENT_IX_TAG_LE.to_vec();
    raw.extend(event.data());
    let decoded: ProgramEvent = decode_event(&narrative_sdk::ids::BINARY_VAULT, &raw).unwrap();
    let record = EventRecord {
        event: decoded,
        raw: raw.clone(),
        slot: 9,
        signature: "sig1".into(),
        tx_index: 3,
        instruction_index: 0,
        inner_index: 1,
    };
    for _ in 0..2 {
        write(
            &db,
            Batch {
                events: vec![record.clone()],
                checkpoint: Some(9),
                ..Default::default()
            },
        )
        .await;
    }
    let rows = program_events::Entity::find()
        .all(db.store.db())
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "a replayed event is not stored twice");
    let e = &rows[0];
    assert_eq!(
        (e.program.as_str(), e.name.as_str(), e.slot, e.tx_index),
        ("binary_vault", "MarketBacked", 9, 3)
    );
    assert_eq!(e.subject.as_deref(), Some("07".repeat(32).as_str()));
    assert_eq!(e.actor.as_deref(), Some(backer.to_string().as_str()));
    assert_eq!(e.data, raw);
}

#[tokio::test]
async fn the_checkpoint_only_moves_forward() {
    let db = TestDb::new().await;
    assert_eq!(db.store.checkpoint("test").await.unwrap(), None);
    for (slot, expected) in [(50, 50), (40, 50), (60, 60)] {
        write(
            &db,
            Batch {
                checkpoint: Some(slot),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(db.store.checkpoint("test").await.unwrap(), Some(expected));
    }
    assert_eq!(
        indexer_checkpoints::Entity::find()
            .count(db.store.db())
            .await
            .unwrap(),
        1
    );
    assert_eq!(db.store.checkpoint("other").await.unwrap(), None);
}

#[tokio::test]
async fn an_account_with_a_value_beyond_bigint_is_kept_raw_not_lost() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    let update = account_update(address, &backing(u64::MAX), 1, 1);
    let batch = Batch {
        accounts: vec![update.clone()],
        checkpoint: Some(1),
        ..Default::default()
    };
    db.store
        .write_batch("test", &batch)
        .await
        .expect("written raw");
    assert_eq!(
        backings::Entity::find().count(db.store.db()).await.unwrap(),
        0
    );
    let raw = raw_accounts::Entity::find_by_id(address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(raw.data, update.data);
    assert_eq!(db.store.checkpoint("test").await.unwrap(), Some(1));
}

#[tokio::test]
async fn a_pending_config_change_and_a_pending_admin_are_indexed() {
    use narrative_sdk::binary_vault::state::{
        Config, ConfigUpdate, OracleSet, PendingConfigChange, ProgramState,
    };
    use narrative_store::entities::{binary_configs, binary_program_states};
    let db = TestDb::new().await;
    let [oracle_a, oracle_b, treasury, admin, next_admin] =
        [11u8, 12, 13, 14, 15].map(|b| Pubkey::new_from_array([b; 32]));
    let mut oracles = [Pubkey::default(); 5];
    oracles[0] = oracle_a;
    let config = Config {
        version: narrative_sdk::binary_vault::state::ConfigVersion::CURRENT,
        capital_loss_bps: 3_500,
        crucible_share_bps: 5_000,
        oracle_threshold: 1,
        oracle_count: 1,
        oracles,
        resolution_timelock_secs: 172_800,
        max_resolution_delay_secs: 604_800,
        dispute_bond_lamports: 100_000_000,
        treasury,
        bump: 250,
        pending_change: Some(PendingConfigChange {
            update: ConfigUpdate {
                capital_loss_bps: Some(4_000),
                oracle_set: Some(OracleSet::new(&[oracle_a, oracle_b], 2).unwrap()),
                ..Default::default()
            },
            proposed_at: 1_767_225_600,
        }),
    };
    let state = ProgramState {
        version: narrative_sdk::binary_vault::state::ProgramStateVersion::CURRENT,
        admin,
        paused: false,
        market_count: 3,
        cpi_authority_bump: 253,
        bump: 252,
        pending_admin: Some(next_admin),
    };
    let (config_address, state_address) = (Pubkey::new_unique(), Pubkey::new_unique());
    write(
        &db,
        Batch {
            accounts: vec![
                account_update(config_address, &config, 10, 1),
                account_update(state_address, &state, 10, 2),
            ],
            ..Default::default()
        },
    )
    .await;
    let row = binary_configs::Entity::find_by_id(config_address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        row.pending_change,
        Some(serde_json::json!({
            "proposed_at": 1_767_225_600,
            "capital_loss_bps": 4_000,
            "crucible_share_bps": null,
            "resolution_timelock_secs": null,
            "max_resolution_delay_secs": null,
            "dispute_bond_lamports": null,
            "treasury": null,
            "oracles": [oracle_a.to_string(), oracle_b.to_string()],
            "oracle_threshold": 2,
        }))
    );
    let row = binary_program_states::Entity::find_by_id(state_address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.pending_admin, Some(next_admin.to_string()));
}
