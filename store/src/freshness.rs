//! Read models kept in the transaction of every write, for the api's reads:
//!
//! - **Generations.** A counter per topic of data (markets and narratives, shields, the Echo
//!   Pool, halt flags, terms), bumped by triggers on the topic's tables in the transaction of
//!   every write, whoever makes it (migration `m20261124_000018`). A reader that saw generation
//!   `g` before it read knows its answer is still current while the topic is at `g`: the api's
//!   response cache serves what it holds only then.
//! - **Backer counts** (`market_backer_counts`): each market's distinct live backing wallets,
//!   kept by triggers on `backings` the same way, so a feed reads them with its narratives in one
//!   query.
//! - **Notifications** (Postgres). The same triggers `NOTIFY` [`CHANNEL`] with the topic's name,
//!   delivered when the writing transaction commits, to every process listening
//!   ([`Store::listen_for_changes`]): an api process drops what a commit elsewhere changed
//!   without waiting for its next read of it.

use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{ConnectionTrait, DbBackend, DbErr, EntityTrait, QuerySelect};

use crate::entities::cache_generations;
use crate::Store;

/// The channel the generation triggers notify on Postgres; the payload is the topic's name.
pub const CHANNEL: &str = "nms_generations";

/// A topic of data whose changes the api's cache follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// Markets, backings, votes, disputes, narratives and their groups (the feed, profiles).
    Markets,
    /// Shield coverages, backings, votes and positions.
    Shield,
    /// crucible_pool's state, pools, epochs and claims; the keeper's distributions and draws.
    Echo,
    /// Halt flags.
    System,
    /// Who may write: terms acceptances (platform and shield) and wallet blocks.
    Terms,
    /// What the leaderboards rank besides markets: point awards, mission completions, agents
    /// and Echo Pool allocations.
    Engagement,
    /// DeFi earn positions.
    Defi,
}

impl Topic {
    pub const ALL: [Topic; 7] = [
        Topic::Markets,
        Topic::Shield,
        Topic::Echo,
        Topic::System,
        Topic::Terms,
        Topic::Engagement,
        Topic::Defi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Topic::Markets => "markets",
            Topic::Shield => "shield",
            Topic::Echo => "echo",
            Topic::System => "system",
            Topic::Terms => "terms",
            Topic::Engagement => "engagement",
            Topic::Defi => "defi",
        }
    }

    pub fn from_name(name: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Every topic's generation, as read at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Generations([i64; Topic::ALL.len()]);

impl Generations {
    pub fn of(&self, topic: Topic) -> i64 {
        self.0[topic.index()]
    }

    /// Generations from `(topic name, generation)` rows; unknown names are left out.
    pub fn from_rows(rows: impl IntoIterator<Item = (String, i64)>) -> Generations {
        let mut generations = Generations::default();
        for (name, generation) in rows {
            if let Some(topic) = Topic::from_name(&name) {
                generations.0[topic.index()] = generation;
            }
        }
        generations
    }

    /// Each topic at the newer of the two (generations only grow).
    pub fn newest(&self, other: &Generations) -> Generations {
        Generations(std::array::from_fn(|i| self.0[i].max(other.0[i])))
    }

    /// Whether `self` and `other` agree on every one of `topics`.
    pub fn agree_on(&self, other: &Generations, topics: &[Topic]) -> bool {
        topics.iter().all(|t| self.of(*t) == other.of(*t))
    }

    /// Generations with the given topics at the given values, the others at 0 (tests).
    pub fn with(values: &[(Topic, i64)]) -> Generations {
        let mut generations = Generations::default();
        for (topic, value) in values {
            generations.0[topic.index()] = *value;
        }
        generations
    }
}

/// Every topic's generation now.
pub async fn generations(db: &impl ConnectionTrait) -> Result<Generations, DbErr> {
    let rows: Vec<(String, i64)> = cache_generations::Entity::find()
        .select_only()
        .column(cache_generations::Column::Topic)
        .column(cache_generations::Column::Generation)
        .into_tuple()
        .all(db)
        .await?;
    Ok(Generations::from_rows(rows))
}

/// What a listener heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A committed write changed this topic.
    Topic(Topic),
    /// Anything may have changed: the connection was lost (and re-established), so
    /// notifications sent meanwhile are gone, or a payload named no known topic.
    Unknown,
}

/// A Postgres session listening on [`CHANNEL`].
pub struct ChangeListener {
    listener: PgListener,
}

impl Store {
    /// A listener for the changes every writer commits; `None` on SQLite, whose writers cannot
    /// notify other processes (readers there rely on the generations alone).
    pub async fn listen_for_changes(&self) -> Result<Option<ChangeListener>, DbErr> {
        if self.backend() != DbBackend::Postgres {
            return Ok(None);
        }
        let pool = self.db().get_postgres_connection_pool();
        let mut listener = PgListener::connect_with(pool).await.map_err(listen_error)?;
        listener.listen(CHANNEL).await.map_err(listen_error)?;
        Ok(Some(ChangeListener { listener }))
    }
}

impl ChangeListener {
    /// The next change committed anywhere. Reconnects by itself after a lost connection, and
    /// then answers [`Change::Unknown`] once.
    pub async fn next(&mut self) -> Result<Change, DbErr> {
        Ok(
            match self.listener.try_recv().await.map_err(listen_error)? {
                Some(notification) => {
                    Topic::from_name(notification.payload()).map_or(Change::Unknown, Change::Topic)
                }
                None => Change::Unknown,
            },
        )
    }
}

fn listen_error(error: sea_orm::sqlx::Error) -> DbErr {
    DbErr::Custom(format!("listening for changes: {error}"))
}
