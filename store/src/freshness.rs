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

use sea_orm::{ConnectionTrait, DbErr, EntityTrait, QuerySelect};

use crate::entities::cache_generations;

/// A topic of data whose changes the api's cache follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// Markets, backings, votes, disputes, narratives and their groups (the feed, profiles).
    Markets,
    /// Shield coverages, backings, votes and positions.
    Shield,
    /// crucible_pool's state, pools, epochs and claims.
    Echo,
    /// Halt flags.
    System,
    /// Terms acceptances.
    Terms,
}

impl Topic {
    pub const ALL: [Topic; 5] = [
        Topic::Markets,
        Topic::Shield,
        Topic::Echo,
        Topic::System,
        Topic::Terms,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Topic::Markets => "markets",
            Topic::Shield => "shield",
            Topic::Echo => "echo",
            Topic::System => "system",
            Topic::Terms => "terms",
        }
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
    let mut generations = Generations::default();
    for (name, generation) in rows {
        if let Some(topic) = Topic::ALL.into_iter().find(|t| t.name() == name) {
            generations.0[topic.index()] = generation;
        }
    }
    Ok(generations)
}
