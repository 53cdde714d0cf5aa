//! The freshness barrier: the generations of every topic (`narrative_store::freshness`) as read
//! by a probe that began after the caller asked. Whatever committed before the call (in this
//! process, in another api process, in a standalone indexer) is reflected in what it returns,
//! because every write bumps its topics' generations in its own transaction.
//!
//! Probes are shared: one runs at a time, and every caller that arrived while it ran waits for
//! the next one, which then answers all of them. Under load a probe serves many requests, so the
//! barrier costs a request at most two round trips of a one-row-per-topic query, and the database
//! sees far fewer queries than requests.

use std::sync::{Arc, Mutex};

use narrative_store::freshness::{generations, Generations};
use narrative_store::Store;
use tokio::sync::watch;

/// The latest finished probe: its number and what it read (an error as text).
type Probe = (u64, Result<Generations, String>);

pub struct Freshness {
    store: Store,
    counters: Mutex<Counters>,
    done: watch::Sender<Probe>,
}

#[derive(Default)]
struct Counters {
    /// Probes begun.
    started: u64,
    /// The highest probe number a caller waits for.
    wanted: u64,
    /// Whether a probe loop runs.
    running: bool,
}

impl Freshness {
    pub fn new(store: Store) -> Arc<Freshness> {
        Arc::new(Freshness {
            store,
            counters: Mutex::new(Counters::default()),
            done: watch::channel((0, Err("no probe yet".to_owned()))).0,
        })
    }

    /// Every topic's generation, read after this call began.
    pub async fn current(self: &Arc<Self>) -> Result<Generations, String> {
        let (target, start) = {
            let mut counters = self.counters.lock().expect("counters");
            // The next probe to begin begins after now.
            let target = counters.started + 1;
            counters.wanted = counters.wanted.max(target);
            let start = !counters.running;
            counters.running = true;
            (target, start)
        };
        let mut finished = self.done.subscribe();
        if start {
            let this = self.clone();
            // A task of its own: a caller that goes away must not stop the others' probe.
            tokio::spawn(async move { this.probe_while_wanted().await });
        }
        loop {
            {
                let (number, result) = &*finished.borrow_and_update();
                if *number >= target {
                    return result.clone();
                }
            }
            if finished.changed().await.is_err() {
                return Err("the freshness probe stopped".to_owned());
            }
        }
    }

    async fn probe_while_wanted(&self) {
        loop {
            let number = {
                let mut counters = self.counters.lock().expect("counters");
                if counters.wanted <= counters.started {
                    counters.running = false;
                    return;
                }
                counters.started += 1;
                counters.started
            };
            let result = generations(self.store.db())
                .await
                .map_err(|e| e.to_string());
            drop(self.done.send_replace((number, result)));
        }
    }
}
