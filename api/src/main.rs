//! `narrative-api`: serves `/v1` until SIGINT or SIGTERM.

use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use narrative_api::background::Background;
use narrative_api::config::ExposeSecret;
use narrative_api::{build_app, AppState, Config};
use narrative_store::Store;
use poem::listener::TcpListener;
use poem::Server;
use tracing_subscriber::EnvFilter;

#[global_allocator]
static ALLOCATOR: narrative_api::ServiceAllocator = narrative_api::SERVICE_ALLOCATOR;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .init();
    let config = Config::parse();
    let store = Store::connect(config.database_url.expose_secret())
        .await
        .context("opening the store")?;
    let state = AppState::from_config(store, &config).await?;
    let background = Background::start(&state, &config);
    tracing::info!(listen = %config.listen, admin = state.admin.is_some(), "narrative-api serving");
    let served = Server::new(TcpListener::bind(config.listen))
        .run_with_graceful_shutdown(
            build_app(state),
            shutdown_signal(),
            Some(Duration::from_secs(config.shutdown_grace_secs)),
        )
        .await
        .context("serving");
    // Jobs in flight finish or are released by their lease; the indexer stops between batches.
    background.shutdown().await;
    served?;
    tracing::info!("narrative-api stopped");
    Ok(())
}

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
    interrupt.await.ok();
    tracing::info!("shutting down: finishing open requests");
}
