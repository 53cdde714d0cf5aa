//! Narratives (spec 4.1, 4.2): the feed and single reads, originality checks and polishing,
//! AI drafts, prepare-mint and publish, scoring, histories and settlement status, groups, and
//! backing a narrative's market.

pub mod backing;
pub mod drafts;
pub mod feed;
pub mod groups;
pub mod history;
pub mod originality;
pub mod polish;
pub mod publish;
pub mod scoring;
