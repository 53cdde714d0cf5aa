//! Indexer throughput and latency into Postgres, in one run:
//!
//!   cargo bench -p narrative-indexer --bench pipeline
//!
//! (DATABASE_URL defaults to postgres://postgres@127.0.0.1:5432/test; each measurement uses a
//! fresh database.) `BENCH_UPDATES` (default 1,000,000) realistic decoded account updates go
//! (1) through the pipeline (channel, decoding, batching, newer-only upserts, checkpoint), and
//! the same rows (2) by raw `COPY` into constraint-free copies of the tables and (3) through a
//! row-by-row loop (one upsert per transaction, on the first `BENCH_ROW_BY_ROW`, default
//! 50,000); then (4) a source paced at `BENCH_RATE` (default 5,000) updates/s for
//! `BENCH_SECONDS` (default 20) gives the update-to-commit latency percentiles. `BENCH_BATCH`
//! (default 20,000, the indexer's default) is the batch size of the throughput run.

use std::time::{Duration, Instant};

use anchor_lang::AccountSerialize;
use narrative_indexer::metrics::{quantile_upper_bound, Metrics};
use narrative_indexer::{
    run_pipeline, Envelope, PipelineConfig, ResumePoint, Source, SourceMessage,
};
use narrative_sdk::binary_vault::state::{
    Backing, Market, MarketSource, MarketVariant, OracleVote, Side,
};
use narrative_sdk::shield_vault::state::{
    Coverage, CoverageStatus, ShieldBacking, ShieldKind, ShieldSide, SidePool,
};
use narrative_sdk::{ids, Pubkey};
use narrative_store::entities::*;
use narrative_store::testing::TestDb;
use narrative_store::{csv_rows, AccountRow, AccountUpdate, Batch};
use sea_orm::sqlx::postgres::PgPoolCopyExt;
use sea_orm::{ConnectionTrait, EntityTrait, Iden, Iterable, ModelTrait};
use tokio::sync::mpsc;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A deterministic stream like the programs produce: most updates are backings and the
/// market they move (every backing rewrites its market), then votes, shield backings and their
/// coverage. About 400 updates per slot.
fn realistic_updates(n: usize) -> Vec<AccountUpdate> {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let key = |tag: u8, i: u64| {
        let mut b = [0u8; 32];
        b[0] = tag;
        b[1..9].copy_from_slice(&i.to_le_bytes());
        Pubkey::new_from_array(b)
    };
    let serialize = |value: &dyn Fn(&mut Vec<u8>)| {
        let mut data = Vec::with_capacity(256);
        value(&mut data);
        data
    };
    let mut out = Vec::with_capacity(n);
    let (markets, shields) = (2_000u64, 200u64);
    let mut totals = vec![(0u64, 0u64); markets as usize];
    let mut principal = vec![(0u64, 0u64); shields as usize];
    let mut write_version = 0u64;
    while out.len() < n {
        let slot = 1_000 + out.len() as u64 / 400;
        let roll = next() % 100;
        let mut push = |address: Pubkey, owner: Pubkey, data: Vec<u8>| {
            write_version += 1;
            out.push(AccountUpdate {
                address,
                owner,
                lamports: 2_000_000,
                data,
                slot,
                write_version,
            });
        };
        if roll < 85 {
            let m = next() % markets;
            let id = {
                let mut id = [0u8; 32];
                id[..8].copy_from_slice(&m.to_le_bytes());
                id
            };
            if roll < 70 {
                let side = if next() % 2 == 0 { Side::Yes } else { Side::No };
                let backer = key(5, next() % 20_000);
                let amount = 10_000_000 + next() % 5_000_000_000;
                let t = &mut totals[m as usize];
                if side == Side::Yes {
                    t.0 += amount
                } else {
                    t.1 += amount
                }
                let backing = Backing {
                    version: narrative_sdk::binary_vault::state::BackingVersion::CURRENT,
                    market_id: id,
                    backer,
                    side,
                    amount,
                    claimed: false,
                    payout: 0,
                    first_backed_at: 1_767_225_600,
                    last_backed_at: 1_767_225_600 + slot as i64,
                    bump: 255,
                };
                push(
                    key(2, m * 1_000_003 + backer.to_bytes()[1] as u64),
                    ids::BINARY_VAULT,
                    serialize(&|d| backing.try_serialize(d).unwrap()),
                );
            } else {
                let vote = OracleVote {
                    version: narrative_sdk::binary_vault::state::OracleVoteVersion::CURRENT,
                    market_id: id,
                    oracle: key(6, next() % 5),
                    vote: Side::Yes,
                    confidence_bps: 9_000,
                    submitted_at: 1_767_300_000,
                    bump: 254,
                };
                push(
                    key(3, m * 8 + next() % 5),
                    ids::BINARY_VAULT,
                    serialize(&|d| vote.try_serialize(d).unwrap()),
                );
            }
            let (yes_total, no_total) = totals[m as usize];
            let market = Market {
                version: narrative_sdk::binary_vault::state::MarketVersion::CURRENT,
                market_id: id,
                creator: key(7, m),
                variant: MarketVariant::Yield,
                source: MarketSource::Seed,
                mint: Pubkey::default(),
                approved: true,
                oracle_status: 0,
                finalized: false,
                outcome: None,
                created_at: 1_767_225_600,
                deadline: 1_767_312_000,
                resolution_proposed_at: 0,
                finalized_at: 0,
                yes_total,
                no_total,
                yes_backers: 10,
                no_backers: 10,
                yes_votes: 0,
                no_votes: 0,
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
            };
            push(
                key(1, m),
                ids::BINARY_VAULT,
                serialize(&|d| market.try_serialize(d).unwrap()),
            );
        } else {
            let s = next() % shields;
            let mut protocol_id = [0u8; 32];
            protocol_id[..8].copy_from_slice(&s.to_le_bytes());
            let side = if next() % 3 == 0 {
                ShieldSide::Exploit
            } else {
                ShieldSide::Safe
            };
            let amount = 100_000_000 + next() % 9_000_000_000;
            let p = &mut principal[s as usize];
            if side == ShieldSide::Safe {
                p.0 += amount
            } else {
                p.1 += amount
            }
            let backing = ShieldBacking {
                version: narrative_sdk::shield_vault::state::ShieldBackingVersion::CURRENT,
                protocol_id,
                backer: key(5, next() % 20_000),
                side,
                amount_lamports: amount,
                shares: amount as u128 * 1_000,
                multiplier_bps: 20_000,
                discovery_lamports: amount,
                claimed: false,
                principal_paid: 0,
                bonus_paid: 0,
                yield_paid: 0,
                first_backed_at: 1_767_225_600,
                last_backed_at: 1_767_225_600,
                bump: 250,
            };
            push(
                key(8, next() % 400_000),
                ids::SHIELD_VAULT,
                serialize(&|d| backing.try_serialize(d).unwrap()),
            );
            let pool = |principal: u64| SidePool {
                principal,
                total_assets: principal,
                shares_total: principal as u128 * 1_000,
                ..Default::default()
            };
            let coverage = Coverage {
                version: narrative_sdk::shield_vault::state::CoverageVersion::CURRENT,
                protocol_id,
                kind: ShieldKind::Community,
                protocol_wallet: Pubkey::default(),
                period_days: 30,
                period_start: 1_767_225_600,
                period_end: 1_769_817_600,
                fee_lamports: 0,
                status: CoverageStatus::Active,
                outcome: None,
                safe_votes: 0,
                exploit_votes: 0,
                outcome_proposed_at: 0,
                finalized_at: 0,
                safe: pool(p.0),
                exploit: pool(p.1),
                winner_bonus_pool: 0,
                protocol_payout: 0,
                treasury_payout: 0,
                seam_payout: 0,
                principal_returned: 0,
                bonus_paid: 0,
                claims_count: 0,
                bump: 255,
                safe_vault_bump: 254,
                exploit_vault_bump: 253,
                seam_forwarded: false,
                unresolvable_votes: 0,
                oracles: Default::default(),
                treasury_forwarded: false,
                protocol_forwarded: false,
            };
            push(
                key(9, s),
                ids::SHIELD_VAULT,
                serialize(&|d| coverage.try_serialize(d).unwrap()),
            );
        }
    }
    out.truncate(n);
    out
}

/// Feeds prepared updates, as fast as the channel takes them or at a fixed rate.
struct Feed {
    updates: Vec<AccountUpdate>,
    per_second: Option<usize>,
}

impl Source for Feed {
    async fn run(self, _resume: ResumePoint, out: mpsc::Sender<Envelope>) -> anyhow::Result<()> {
        let last = self.updates.last().map_or(0, |u| u.slot);
        let tick = Duration::from_millis(10);
        let per_tick = self.per_second.map(|r| (r / 100).max(1));
        let mut interval = tokio::time::interval(tick);
        let mut updates = self.updates.into_iter();
        loop {
            if let Some(per_tick) = per_tick {
                interval.tick().await;
                let mut sent = 0;
                for u in updates.by_ref().take(per_tick) {
                    sent += 1;
                    out.send(Envelope::now(SourceMessage::Account(u))).await?;
                }
                if sent < per_tick {
                    break;
                }
            } else {
                let Some(u) = updates.next() else { break };
                out.send(Envelope::now(SourceMessage::Account(u))).await?;
            }
        }
        out.send(Envelope::now(SourceMessage::Complete(last)))
            .await?;
        out.closed().await;
        Ok(())
    }
}

/// Runs the pipeline over `feed` into a fresh database until everything is committed.
async fn through_pipeline(feed: Feed, config: PipelineConfig) -> (Duration, Metrics) {
    let db = TestDb::new().await;
    let last = feed.updates.last().map_or(0, |u| u.slot);
    let metrics = Metrics::new();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let started = Instant::now();
    let store = db.store.clone();
    let name = config.checkpoint_name.clone();
    let task = tokio::spawn(run_pipeline(store, feed, config, metrics.clone(), async {
        let _ = stopped.await;
    }));
    while db.store.checkpoint(&name).await.unwrap() < Some(last) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    stop.send(()).ok();
    task.await.unwrap().unwrap();
    (elapsed, metrics)
}

/// `COPY` of `models` into the constraint-free copy of `E`'s table.
async fn copy_table<E: EntityTrait + Default>(db: &TestDb, models: &[E::Model]) -> usize
where
    E::Model: ModelTrait<Entity = E>,
{
    if models.is_empty() {
        return 0;
    }
    let table = E::default().to_string();
    let columns: Vec<E::Column> = E::Column::iter().collect();
    let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let csv = csv_rows(models.iter(), &columns);
    let pool = db.store.db().get_postgres_connection_pool();
    let statement = format!(
        "COPY copy_{table} ({}) FROM STDIN (FORMAT csv)",
        names.join(",")
    );
    let mut copy = pool.copy_in_raw(&statement).await.expect("copy");
    copy.send(csv.as_bytes()).await.expect("copy data");
    copy.finish().await.expect("copy finish") as usize
}

async fn raw_copy(rows: &[AccountRow]) -> Duration {
    let db = TestDb::new().await;
    for table in [
        "markets",
        "backings",
        "oracle_votes",
        "shield_backings",
        "shield_coverages",
    ] {
        db.store
            .db()
            .execute_unprepared(&format!("CREATE TABLE copy_{table} (LIKE {table})"))
            .await
            .unwrap();
    }
    let (mut m, mut b, mut v, mut sb, mut sc) = (vec![], vec![], vec![], vec![], vec![]);
    for row in rows {
        match row.clone() {
            AccountRow::Market(x) => m.push(x),
            AccountRow::Backing(x) => b.push(x),
            AccountRow::OracleVote(x) => v.push(x),
            AccountRow::ShieldBacking(x) => sb.push(x),
            AccountRow::ShieldCoverage(x) => sc.push(x),
            other => panic!("unexpected row {other:?}"),
        }
    }
    let started = Instant::now();
    let copied = copy_table::<markets::Entity>(&db, &m).await
        + copy_table::<backings::Entity>(&db, &b).await
        + copy_table::<oracle_votes::Entity>(&db, &v).await
        + copy_table::<shield_backings::Entity>(&db, &sb).await
        + copy_table::<shield_coverages::Entity>(&db, &sc).await;
    let elapsed = started.elapsed();
    assert_eq!(copied, rows.len());
    elapsed
}

async fn row_by_row(updates: &[AccountUpdate]) -> Duration {
    let db = TestDb::new().await;
    let started = Instant::now();
    for update in updates {
        let batch = Batch {
            accounts: vec![update.clone()],
            checkpoint: Some(update.slot),
            ..Default::default()
        };
        db.store.write_batch("row_by_row", &batch).await.unwrap();
    }
    started.elapsed()
}

#[tokio::main]
async fn main() {
    if std::env::var("DATABASE_URL").is_err() {
        std::env::set_var("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test");
    }
    assert!(
        std::env::var("DATABASE_URL")
            .unwrap()
            .starts_with("postgres"),
        "the benchmark runs on Postgres"
    );
    let n = env_usize("BENCH_UPDATES", 1_000_000);
    let sample = env_usize("BENCH_ROW_BY_ROW", 50_000).min(n);
    let rate = env_usize("BENCH_RATE", 5_000);
    let seconds = env_usize("BENCH_SECONDS", 20);
    let batch_size = env_usize("BENCH_BATCH", 20_000);

    let generated = Instant::now();
    let updates = realistic_updates(n);
    let distinct: std::collections::HashSet<_> = updates.iter().map(|u| u.address).collect();
    println!(
        "{n} updates over {} accounts generated in {:.1?}",
        distinct.len(),
        generated.elapsed()
    );

    let config = PipelineConfig {
        checkpoint_name: "bench".into(),
        batch_size,
        batch_interval: Duration::from_millis(50),
        channel_capacity: 50_000,
    };
    let (pipeline, pipeline_metrics) = through_pipeline(
        Feed {
            updates: updates.clone(),
            per_second: None,
        },
        config,
    )
    .await;
    let pipeline_rate = n as f64 / pipeline.as_secs_f64();
    println!("pipeline: {n} updates in {pipeline:.2?} = {pipeline_rate:.0} updates/s");
    {
        use prometheus::core::Metric;
        let h = pipeline_metrics.batch_seconds.metric();
        let h = h.get_histogram();
        println!(
            "  {} batches, {:.1} ms per batch write on average ({:.0} % of the run)",
            h.get_sample_count(),
            1e3 * h.get_sample_sum() / h.get_sample_count().max(1) as f64,
            100.0 * h.get_sample_sum() / pipeline.as_secs_f64()
        );
    }

    let rows: Vec<AccountRow> = updates
        .iter()
        .map(|u| AccountRow::from_update(u).unwrap())
        .collect();
    let copy = raw_copy(&rows).await;
    let copy_rate = n as f64 / copy.as_secs_f64();
    println!("raw COPY: {n} rows in {copy:.2?} = {copy_rate:.0} rows/s");

    let single = row_by_row(&updates[..sample]).await;
    let single_rate = sample as f64 / single.as_secs_f64();
    println!("row by row: {sample} updates in {single:.2?} = {single_rate:.0} updates/s");

    let paced: Vec<AccountUpdate> = updates.iter().take(rate * seconds).cloned().collect();
    let latency_config = PipelineConfig {
        checkpoint_name: "latency".into(),
        batch_size: 5_000,
        batch_interval: Duration::from_millis(50),
        channel_capacity: 50_000,
    };
    let (_, metrics) = through_pipeline(
        Feed {
            updates: paced,
            per_second: Some(rate),
        },
        latency_config,
    )
    .await;
    let p50 = quantile_upper_bound(&metrics.commit_latency_seconds, 0.50).unwrap();
    let p99 = quantile_upper_bound(&metrics.commit_latency_seconds, 0.99).unwrap();
    println!(
        "latency at {rate}/s for {seconds} s: p50 <= {:.0} ms, p99 <= {:.0} ms",
        p50 * 1e3,
        p99 * 1e3
    );

    println!();
    println!("| path | updates | time | updates/s | vs COPY |");
    println!("|---|---:|---:|---:|---:|");
    println!("| pipeline (decode, batch, newer-only upsert, checkpoint) | {n} | {:.1} s | {pipeline_rate:.0} | {:.0} % |", pipeline.as_secs_f64(), 100.0 * pipeline_rate / copy_rate);
    println!(
        "| raw `COPY` of the same rows (no constraints) | {n} | {:.1} s | {copy_rate:.0} | 100 % |",
        copy.as_secs_f64()
    );
    println!("| row-by-row upsert, one transaction each | {sample} | {:.1} s | {single_rate:.0} | {:.1} % |", single.as_secs_f64(), 100.0 * single_rate / copy_rate);
    println!();
    println!("Update-to-commit latency at {rate} updates/s over {seconds} s: p50 ≤ {:.0} ms, p99 ≤ {:.0} ms (histogram bucket bounds).", p50 * 1e3, p99 * 1e3);
}
