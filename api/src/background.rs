//! Work the api process runs beside the HTTP server: the job workers with a handler for every
//! job kind, in three lanes (one worker for the core jobs, `OUTBOUND_WORKERS` for push
//! deliveries and agent webhooks, `DRAFT_WORKERS` for AI drafts, so neither a receiver nor an AI
//! provider that never answers can hold up settlement),
//! the perpetual jobs queued (the event follower, retention, the Echo Pool and shield keepers
//! when a key is configured), and the indexer when a source is configured (`INDEXER_SOURCE`),
//! both stopped with the server.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use narrative_indexer::config::SourceKind;
use narrative_indexer::metrics::Metrics;
use narrative_indexer::source::grpc::GrpcSource;
use narrative_indexer::source::rpc::RpcSource;
use narrative_indexer::{run_as_leader, LeaseConfig, PipelineConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::chain::refresh::AccountRefresher;
use crate::chain::settlement::Settler;
use crate::config::{Config, ExposeSecret};
use crate::domain::agents::webhooks::{WebhookFanOut, WebhookSender};
use crate::domain::borrow::alerts::HealthWatch;
use crate::domain::borrow::positions::Loans;
use crate::domain::echo::keeper::Keeper;
use crate::domain::narratives::drafts::Drafter;
use crate::domain::narratives::scoring::Scorer;
use crate::domain::notifications::announcements::Announcer;
use crate::domain::notifications::follower::EventFollower;
use crate::domain::notifications::push::{self, PushSender};
use crate::domain::retention::Retainer;
use crate::domain::shield::keeper::ShieldTender;
use crate::jobs::borrow_health::BorrowHealth;
use crate::jobs::echo_keeper::EchoKeeper;
use crate::jobs::follow_events::FollowEvents;
use crate::jobs::retention::Retention;
use crate::jobs::shield_keeper::ShieldKeeper;
use crate::jobs::worker::Lane;
use crate::jobs::{ensure_perpetual, Registry, Worker};
use crate::state::AppState;
use tokio::sync::Notify;

pub struct Background {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

async fn stopped(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

/// Every job kind with the handler that does its work.
fn registry(state: &AppState) -> Registry {
    Registry::new()
        .with(AccountRefresher {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
        })
        .with(Settler {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
            oracle: state.oracle.clone(),
            clock: state.clock.clone(),
        })
        .with(WebhookSender {
            store: state.store.clone(),
            outbound: state.outbound.clone(),
            clock: state.clock.clone(),
        })
        .with(WebhookFanOut {
            store: state.store.clone(),
            clock: state.clock.clone(),
        })
        .with(Scorer {
            store: state.store.clone(),
            clock: state.clock.clone(),
        })
        .with(Drafter {
            store: state.store.clone(),
            generator: state.generator.clone(),
            clock: state.clock.clone(),
        })
        .with(Keeper {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
            keeper: state.keeper.clone(),
            clock: state.clock.clone(),
        })
        .with(ShieldTender {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
            keeper: state.keeper.clone(),
            clock: state.clock.clone(),
        })
        .with(EventFollower {
            store: state.store.clone(),
            clock: state.clock.clone(),
        })
        .with(Announcer {
            store: state.store.clone(),
            clock: state.clock.clone(),
        })
        .with(Retainer {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
            clock: state.clock.clone(),
        })
        .with(HealthWatch::new(Loans::of(state)))
        .with(PushSender {
            store: state.store.clone(),
            outbound: state.outbound.clone(),
            clock: state.clock.clone(),
            vapid: state.vapid.clone(),
            subject: state.vapid_subject.clone(),
            counts: state.push_deliveries.clone(),
            services: state.push_services.clone(),
        })
}

/// How often queuing the perpetual jobs is tried again while the database refuses it.
const PERPETUAL_RETRY: Duration = Duration::from_secs(5);

/// What a process makes sure of when it starts: the perpetual jobs exist and are alive (the
/// event follower always, the Echo Pool and shield keepers when a keeper key is configured), and the Web
/// Push VAPID pair exists (the deployment's first start makes it, so the key browsers
/// subscribe with is there before any of them asks).
async fn start_up(state: &AppState) -> anyhow::Result<()> {
    let db = state.store.db();
    let now = state.now();
    ensure_perpetual::<FollowEvents>(db, now, now).await?;
    ensure_perpetual::<Retention>(db, now, now).await?;
    ensure_perpetual::<BorrowHealth>(db, now, now).await?;
    if state.keeper.is_some() {
        ensure_perpetual::<EchoKeeper>(db, now, now).await?;
        ensure_perpetual::<ShieldKeeper>(db, now, now).await?;
    }
    push::vapid_keys(&state.vapid, db, now).await?;
    Ok(())
}

/// How long a failed listen waits before it is tried again.
const LISTEN_RETRY: Duration = Duration::from_secs(1);

/// Tells the response caches of the changes every writer commits (Postgres `LISTEN`), until
/// `stop`. SQLite has no such channel: its readers rely on the generations alone. A listener
/// that failed or reconnected may have missed notifications, so the caches drop everything.
async fn follow_changes(state: Arc<AppState>, stop: impl std::future::Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        let listening = async {
            match state.store.listen_for_changes().await? {
                // Nothing to hear: wait for the stop.
                None => std::future::pending::<Result<Infallible, sea_orm::DbErr>>().await,
                Some(mut listener) => loop {
                    state.caches.changed(listener.next().await?);
                },
            }
        };
        let error = tokio::select! {
            _ = &mut stop => return,
            Err(error) = listening => error,
        };
        tracing::warn!(%error, "not listening for changes; the caches start over");
        state
            .caches
            .changed(narrative_store::freshness::Change::Unknown);
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(LISTEN_RETRY) => {}
        }
    }
}

/// The workers that run `state`'s queue: one for the core lane, `outbound_workers` for the
/// outbound lane and `draft_workers` for the drafts (their concurrency bounds), each woken by a
/// wake-up of its own.
fn workers(state: &AppState) -> Vec<(Worker, Arc<Notify>)> {
    let registry = Arc::new(registry(state));
    std::iter::once(Lane::Core)
        .chain(std::iter::repeat_n(Lane::Outbound, state.outbound_workers))
        .chain(std::iter::repeat_n(Lane::Drafts, state.draft_workers))
        .map(|lane| {
            let wake = Arc::new(Notify::new());
            let worker = Worker::new(
                state.store.clone(),
                registry.clone(),
                state.clock.clone(),
                wake.clone(),
            )
            .in_lane(lane);
            (worker, wake)
        })
        .collect()
}

/// Passes each wake-up of the queue (work was enqueued) to every worker, until `stop`: each
/// keeps it until it next waits, so none misses work enqueued while it was busy.
async fn relay_wakes(
    wake: Arc<Notify>,
    workers: Vec<Arc<Notify>>,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = wake.notified() => workers.iter().for_each(|w| w.notify_one()),
        }
    }
}

impl Background {
    pub fn start(state: &Arc<AppState>, config: &Config) -> Background {
        let (stop, rx) = watch::channel(false);
        let mut tasks = Vec::new();
        let mut wakes = Vec::new();
        for (worker, wake) in workers(state) {
            wakes.push(wake);
            tasks.push(tokio::spawn(worker.run(stopped(rx.clone()))));
        }
        tasks.push(tokio::spawn(relay_wakes(
            state.chain.jobs_wake.clone(),
            wakes,
            stopped(rx.clone()),
        )));
        let perpetual_state = state.clone();
        let mut perpetual_stop = rx.clone();
        tasks.push(tokio::spawn(async move {
            // Until the database takes them: a process that started while it was down must not
            // run without its keeper or follower.
            while let Err(error) = start_up(&perpetual_state).await {
                tracing::warn!(error = %format!("{error:#}"), "the perpetual jobs or the VAPID key could not be set up yet");
                tokio::select! {
                    _ = perpetual_stop.wait_for(|stop| *stop) => return,
                    _ = tokio::time::sleep(PERPETUAL_RETRY) => {}
                }
            }
            perpetual_state.chain.jobs_wake.notify_one();
        }));
        tasks.push(tokio::spawn(follow_changes(
            state.clone(),
            stopped(rx.clone()),
        )));
        if let Some(kind) = config.indexer_source {
            let metrics = Metrics::new();
            let _ = state.indexer_metrics.set(metrics.clone());
            let store = state.store.clone();
            let programs = vec![
                narrative_sdk::ids::BINARY_VAULT,
                narrative_sdk::ids::CRUCIBLE_POOL,
                narrative_sdk::ids::SHIELD_VAULT,
            ];
            let endpoint = config
                .indexer_endpoint
                .as_ref()
                .unwrap_or(&config.solana_rpc_url)
                .expose_secret()
                .to_owned();
            let x_token = config
                .indexer_x_token
                .as_ref()
                .map(|t| t.expose_secret().to_owned());
            let shutdown = stopped(rx.clone());
            tracing::info!(source = ?kind, "indexer running in process");
            let rpc_url = config.solana_rpc_url.expose_secret().to_owned();
            tasks.push(tokio::spawn(async move {
                // Several api processes may share the database: the lease makes one of them the
                // writer and the others standbys.
                let pipeline = PipelineConfig::default();
                let lease = LeaseConfig::default();
                let result = match kind {
                    SourceKind::Grpc => {
                        let new_source = || {
                            GrpcSource::new(
                                endpoint.clone(),
                                x_token.clone(),
                                rpc_url.clone(),
                                programs.clone(),
                                metrics.clone(),
                            )
                        };
                        let m = metrics.clone();
                        run_as_leader(store, new_source, pipeline, lease, m, shutdown).await
                    }
                    SourceKind::Rpc => {
                        let new_source = || {
                            RpcSource::new(
                                endpoint.clone(),
                                programs.clone(),
                                Duration::from_secs(1),
                                metrics.clone(),
                            )
                        };
                        let m = metrics.clone();
                        run_as_leader(store, new_source, pipeline, lease, m, shutdown).await
                    }
                };
                if let Err(error) = result {
                    tracing::error!(error = %format!("{error:#}"), "in-process indexer stopped");
                }
            }));
        }
        Background { stop, tasks }
    }

    /// Stops every task and waits for them.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
