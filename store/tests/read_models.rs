//! The read models kept in a write's own transaction: each market's distinct backers (by the
//! batch writer), and the generation of every topic a write changes and of no other (by the
//! triggers, whoever writes), on SQLite and on Postgres.

use anchor_lang::AccountSerialize;
use narrative_sdk::binary_vault::state::{Backing, Side};
use narrative_sdk::Pubkey;
use narrative_store::entities::market_backer_counts;
use narrative_store::freshness::{generations, Topic};
use narrative_store::testing::TestDb;
use narrative_store::{AccountUpdate, Batch, Closure};
use sea_orm::EntityTrait;

fn backing(market: u8, backer: u8, side: Side) -> Backing {
    Backing {
        version: narrative_sdk::binary_vault::state::BackingVersion::CURRENT,
        market_id: [market; 32],
        backer: Pubkey::new_from_array([backer; 32]),
        side,
        amount: 10_000_000,
        claimed: false,
        payout: 0,
        first_backed_at: 100,
        last_backed_at: 200,
        bump: 254,
    }
}

fn update(value: &Backing, address: u8, slot: u64) -> AccountUpdate {
    let mut data = Vec::new();
    value.try_serialize(&mut data).unwrap();
    AccountUpdate {
        address: Pubkey::new_from_array([address; 32]),
        owner: narrative_sdk::ids::BINARY_VAULT,
        lamports: 1_000_000,
        data,
        slot,
        write_version: 1,
    }
}

async fn backers(db: &TestDb, market: u8) -> Option<i64> {
    market_backer_counts::Entity::find_by_id(narrative_sdk::decode::hex32(&[market; 32]))
        .one(db.store.db())
        .await
        .unwrap()
        .map(|c| c.backers)
}

#[tokio::test]
async fn writes_count_distinct_backers_and_bump_only_the_topics_they_change() {
    let db = TestDb::new().await;
    let before = generations(db.store.db()).await.unwrap();
    // Market 1: wallet 10 on both sides and wallet 11 (two backers); market 2: wallet 10.
    let batch = Batch {
        accounts: vec![
            update(&backing(1, 10, Side::Yes), 101, 5),
            update(&backing(1, 10, Side::No), 102, 5),
            update(&backing(1, 11, Side::Yes), 103, 5),
            update(&backing(2, 10, Side::Yes), 104, 5),
        ],
        ..Default::default()
    };
    db.store.write_batch("test", &batch).await.unwrap();
    assert_eq!(backers(&db, 1).await, Some(2));
    assert_eq!(backers(&db, 2).await, Some(1));
    let after = generations(db.store.db()).await.unwrap();
    assert!(after.of(Topic::Markets) > before.of(Topic::Markets));
    for untouched in [Topic::Shield, Topic::Echo, Topic::System, Topic::Terms] {
        assert_eq!(after.of(untouched), before.of(untouched), "{untouched:?}");
    }

    // A third wallet on market 1; a replayed older update changes no count.
    let more = Batch {
        accounts: vec![
            update(&backing(1, 12, Side::No), 105, 6),
            update(&backing(1, 10, Side::Yes), 101, 4),
        ],
        ..Default::default()
    };
    db.store.write_batch("test", &more).await.unwrap();
    assert_eq!(backers(&db, 1).await, Some(3));
    assert_eq!(backers(&db, 2).await, Some(1));

    // A batch of nothing but a checkpoint bumps nothing; a closure bumps the topic of the account
    // it closes, and a closure of an address no table holds bumps nothing.
    let quiet = generations(db.store.db()).await.unwrap();
    db.store
        .write_batch(
            "test",
            &Batch {
                checkpoint: Some(9),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(generations(db.store.db()).await.unwrap(), quiet);
    db.store
        .write_batch(
            "test",
            &Batch {
                closures: vec![Closure {
                    address: Pubkey::new_from_array([200; 32]),
                    slot: 10,
                    write_version: 0,
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(generations(db.store.db()).await.unwrap(), quiet);
    db.store
        .write_batch(
            "test",
            &Batch {
                closures: vec![Closure {
                    address: Pubkey::new_from_array([104; 32]),
                    slot: 10,
                    write_version: 0,
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let closed = generations(db.store.db()).await.unwrap();
    assert!(closed.of(Topic::Markets) > quiet.of(Topic::Markets));
    for untouched in [Topic::Shield, Topic::Echo, Topic::System, Topic::Terms] {
        assert_eq!(closed.of(untouched), quiet.of(untouched), "{untouched:?}");
    }
    // Market 2's only backing closed: it counts no backer now (no row, or a row of 0).
    assert_eq!(backers(&db, 2).await.unwrap_or(0), 0);
}

#[tokio::test]
async fn any_write_to_a_watched_table_bumps_its_topic_in_its_transaction() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let db = TestDb::new().await;
    let before = generations(db.store.db()).await.unwrap();
    // A write the indexer did not make (an operator's SQL), rolled back: nothing moves.
    let txn = db.store.db().begin().await.unwrap();
    txn.execute_unprepared(
        "INSERT INTO system_components (name, halted, reason, updated_at) \
         VALUES ('shield', true, NULL, 1)",
    )
    .await
    .unwrap();
    txn.rollback().await.unwrap();
    assert_eq!(generations(db.store.db()).await.unwrap(), before);
    // Committed, it bumps the system topic, and only it.
    db.store
        .db()
        .execute_unprepared(
            "INSERT INTO system_components (name, halted, reason, updated_at) \
             VALUES ('shield', true, NULL, 1)",
        )
        .await
        .unwrap();
    let after = generations(db.store.db()).await.unwrap();
    assert!(after.of(Topic::System) > before.of(Topic::System));
    assert_eq!(after.of(Topic::Markets), before.of(Topic::Markets));
    assert_eq!(after.of(Topic::Terms), before.of(Topic::Terms));
}
