//! Outside services behind traits, each with its real client and a deterministic local
//! implementation chosen by configuration: the OpenAI-compatible chat model behind polishing,
//! review and drafts, human verification (Turnstile), KYC (Persona), wallet screening
//! (Chainalysis), the identity pass (RFC 7662 introspection), the scored passport (Human
//! Passport), the SOL/USD price, the guarded client for requests to URLs that clients supply,
//! and the Web Push protocol spoken through it.

pub mod chat;
pub mod drafter;
pub mod fetched;
pub mod human;
pub mod identity_pass;
pub mod kyc;
pub mod outbound;
pub mod passport;
pub mod polisher;
pub mod prices;
pub mod reviewer;
pub mod screening;
pub mod venue_rates;
pub mod web_push;
