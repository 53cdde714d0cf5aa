//! Command line and environment of `narrative-indexer`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use narrative_sdk::Pubkey;

use crate::leader::LeaseConfig;
use crate::pipeline::PipelineConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SourceKind {
    /// Yellowstone gRPC (Geyser) stream.
    Grpc,
    /// JSON-RPC polling, for any validator.
    Rpc,
}

fn pubkey(s: &str) -> Result<Pubkey, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a base58 public key"))
}

fn default_programs() -> Vec<Pubkey> {
    vec![
        narrative_sdk::ids::BINARY_VAULT,
        narrative_sdk::ids::CRUCIBLE_POOL,
        narrative_sdk::ids::SHIELD_VAULT,
    ]
}

/// Streams binary_vault, crucible_pool and shield_vault accounts and events into the store.
#[derive(Parser, Clone)]
#[command(version, about)]
pub struct Args {
    /// `postgres://…`, or `sqlite://path?mode=rwc` (the embedded default).
    #[arg(long, env = "DATABASE_URL", default_value = narrative_store::DEFAULT_SQLITE_URL)]
    pub database_url: String,
    #[arg(long, env = "INDEXER_SOURCE", value_enum, default_value = "grpc")]
    pub source: SourceKind,
    /// gRPC endpoint (`http(s)://host:port`) or JSON-RPC URL.
    #[arg(long, env = "INDEXER_ENDPOINT")]
    pub endpoint: String,
    /// JSON-RPC URL for the gRPC source's bootstrap snapshot and gap fills (required with
    /// `--source grpc`; the `rpc` source polls `--endpoint` itself).
    #[arg(long, env = "INDEXER_RPC_URL", hide_env_values = true)]
    pub rpc_url: Option<String>,
    /// Yellowstone `x-token`; never logged.
    #[arg(long, env = "INDEXER_X_TOKEN", hide_env_values = true)]
    pub x_token: Option<String>,
    /// Program ids to index, comma-separated.
    #[arg(long, env = "INDEXER_PROGRAMS", value_delimiter = ',', value_parser = pubkey, default_values_t = default_programs())]
    pub programs: Vec<Pubkey>,
    #[arg(long, env = "INDEXER_BATCH_SIZE", default_value_t = 20_000)]
    pub batch_size: usize,
    #[arg(long, env = "INDEXER_BATCH_INTERVAL_MS", default_value_t = 100)]
    pub batch_interval_ms: u64,
    #[arg(long, env = "INDEXER_CHANNEL_CAPACITY", default_value_t = 50_000)]
    pub channel_capacity: usize,
    /// Checkpoint name: one per independent indexer sharing a database.
    #[arg(long, env = "INDEXER_CHECKPOINT", default_value = "default")]
    pub checkpoint_name: String,
    /// Where Prometheus scrapes `/metrics`.
    #[arg(long, env = "INDEXER_METRICS_ADDR", default_value = "127.0.0.1:9464")]
    pub metrics_addr: SocketAddr,
    /// Interval between JSON-RPC polls.
    #[arg(long, env = "INDEXER_POLL_INTERVAL_MS", default_value_t = 1_000)]
    pub poll_interval_ms: u64,
    /// How often a standby tries to take the checkpoint's lease.
    #[arg(long, env = "INDEXER_LEASE_RETRY_MS", default_value_t = 1_000)]
    pub lease_retry_ms: u64,
    /// SQLite: how long the lease outlives a leader that stopped renewing it.
    #[arg(long, env = "INDEXER_LEASE_TTL_MS", default_value_t = 5_000)]
    pub lease_ttl_ms: u64,
}

impl Args {
    /// Parses the command line and checks what clap cannot (`required_if_eq` ignores the
    /// default source); exits with the usage error like any other.
    pub fn parse_checked() -> Args {
        let args = Args::parse();
        if let Err(error) = args.check() {
            error.exit();
        }
        args
    }

    /// The grpc source needs a JSON-RPC URL for its bootstrap snapshot and gap fills.
    pub fn check(&self) -> Result<(), clap::Error> {
        if self.source == SourceKind::Grpc && self.rpc_url.is_none() {
            use clap::CommandFactory;
            return Err(Args::command().error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--rpc-url (INDEXER_RPC_URL) is required with --source grpc: the bootstrap \
                 snapshot and gap fills go through JSON-RPC",
            ));
        }
        Ok(())
    }

    pub fn pipeline(&self) -> PipelineConfig {
        PipelineConfig {
            checkpoint_name: self.checkpoint_name.clone(),
            batch_size: self.batch_size.max(1),
            batch_interval: Duration::from_millis(self.batch_interval_ms),
            channel_capacity: self.channel_capacity.max(1),
        }
    }

    pub fn lease(&self) -> LeaseConfig {
        LeaseConfig {
            retry: Duration::from_millis(self.lease_retry_ms.max(1)),
            // Renewed every third: under 30 ms it would mostly renew.
            ttl: Duration::from_millis(self.lease_ttl_ms.max(30)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_index_the_three_programs_into_sqlite() {
        let args = Args::try_parse_from([
            "narrative-indexer",
            "--endpoint",
            "http://127.0.0.1:10000",
            "--rpc-url",
            "http://127.0.0.1:8899",
        ])
        .unwrap();
        assert_eq!(args.source, SourceKind::Grpc);
        assert_eq!(args.programs.len(), 3);
        // DATABASE_URL, when the environment sets it (CI's Postgres run), wins over the default.
        let expected = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| narrative_store::DEFAULT_SQLITE_URL.to_owned());
        assert_eq!(args.database_url, expected);
        assert_eq!(args.pipeline().batch_size, 20_000);
        assert_eq!(args.lease().retry, Duration::from_secs(1));
    }

    #[test]
    fn the_grpc_source_needs_a_json_rpc_url_to_bootstrap() {
        let args = Args::try_parse_from(["narrative-indexer", "--endpoint", "http://x:1"]).unwrap();
        let error = args.check().expect_err("refused").to_string();
        assert!(error.contains("--rpc-url"), "{error}");
        // The rpc source polls its endpoint and needs nothing else.
        let args = Args::try_parse_from([
            "narrative-indexer",
            "--source",
            "rpc",
            "--endpoint",
            "http://x:1",
        ])
        .unwrap();
        args.check().unwrap();
    }

    #[test]
    fn a_bad_program_id_is_refused() {
        let parsed =
            Args::try_parse_from(["narrative-indexer", "--endpoint", "x", "--programs", "nope"]);
        assert!(parsed.is_err());
    }
}
