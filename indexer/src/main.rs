//! `narrative-indexer`: see `narrative-indexer --help`.

use std::process::ExitCode;
use std::time::Duration;

use narrative_indexer::config::{Args, SourceKind};
use narrative_indexer::metrics::Metrics;
use narrative_indexer::source::grpc::GrpcSource;
use narrative_indexer::source::rpc::RpcSource;
use narrative_indexer::{run_as_leader, Source};
use narrative_store::Store;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    match run(Args::parse_checked()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let store = Store::connect(&args.database_url).await?;
    let metrics = Metrics::new();
    let server = metrics.clone();
    let metrics_addr = args.metrics_addr;
    tokio::spawn(async move {
        if let Err(e) = server.serve(metrics_addr).await {
            error!(%e, "metrics server stopped");
        }
    });
    info!(source = ?args.source, endpoint = %args.endpoint, programs = args.programs.len(), %metrics_addr, "indexer starting");
    match args.source {
        SourceKind::Grpc => {
            let rpc_url = args.rpc_url.clone().unwrap_or_default();
            lead(store, &args, metrics.clone(), || {
                GrpcSource::new(
                    args.endpoint.clone(),
                    args.x_token.clone(),
                    rpc_url.clone(),
                    args.programs.clone(),
                    metrics.clone(),
                )
            })
            .await
        }
        SourceKind::Rpc => {
            let interval = Duration::from_millis(args.poll_interval_ms);
            lead(store, &args, metrics.clone(), || {
                RpcSource::new(
                    args.endpoint.clone(),
                    args.programs.clone(),
                    interval,
                    metrics.clone(),
                )
            })
            .await
        }
    }?;
    info!("indexer stopped");
    Ok(())
}

/// Indexes whenever this process holds the checkpoint's lease, until SIGINT or SIGTERM.
async fn lead<S: Source>(
    store: Store,
    args: &Args,
    metrics: Metrics,
    new_source: impl FnMut() -> S,
) -> anyhow::Result<()> {
    let (pipeline, lease) = (args.pipeline(), args.lease());
    run_as_leader(
        store,
        new_source,
        pipeline,
        lease,
        metrics,
        shutdown_signal(),
    )
    .await
}

/// SIGINT or SIGTERM: stop between batches (the current one is either committed or replayed).
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("SIGTERM handler");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
