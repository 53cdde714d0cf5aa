//! Outside services behind traits, each with its real client and a deterministic local
//! implementation chosen by configuration: the OpenAI-compatible chat model behind polishing,
//! review and drafts, human verification (Turnstile), the SOL/USD price, and the guarded client
//! for requests to URLs that clients supply.

pub mod chat;
pub mod drafter;
pub mod human;
pub mod outbound;
pub mod polisher;
pub mod prices;
pub mod reviewer;
