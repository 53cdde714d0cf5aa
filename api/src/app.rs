//! The HTTP application: the `/v1` OpenAPI services, the document and its UI, `/health`,
//! `/metrics`, and the middleware every request passes.
//!
//! Order, inside out: body limit → rate limits and API-key check → error rendering (so every failure has the spec's shape,
//! including those Cors would otherwise render as text) → panic guard → CORS → metrics →
//! tracing → request id (outermost, so the tracing span carries it).

use std::sync::Arc;
use std::time::Instant;

use poem::http::{Method, StatusCode};
use poem::middleware::{CatchPanic, Cors, RequestId, ReuseId, Tracing};
use poem::web::Data;
use poem::{get, handler, Endpoint, EndpointExt, IntoResponse, Request, Response, Route};

use crate::error::{render_error, ApiError};
use crate::rate_limit::limit_requests;
use crate::routes;
use crate::state::AppState;

/// Spec 8: request bodies are at most 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

pub fn build_app(state: Arc<AppState>) -> impl Endpoint<Output = Response> {
    let api = routes::service(state.clone());
    let spec = api.spec_endpoint();
    let ui = api.swagger_ui();
    let cors = Cors::new()
        .allow_origins(state.cors_origins.iter().map(String::as_str))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::DELETE,
            Method::OPTIONS,
        ])
        .allow_headers([
            "content-type",
            "authorization",
            "x-admin-wallet",
            "x-admin-secret",
            "x-api-key",
        ]);
    let metrics_state = state.clone();
    let limit_state = state.clone();
    let binary_gated = !state.binary_markets_enabled;
    Route::new()
        .nest("/v1", api)
        .at("/v1/openapi.json", spec)
        .nest("/docs", ui)
        .at("/health", get(health))
        .at("/metrics", get(metrics))
        .data(state)
        .before(move |req| gate_binary(binary_gated, req))
        .before(trim_trailing_slash)
        .before(limit_body)
        .around(move |ep, req| limit_requests(limit_state.clone(), ep, req))
        .around(|ep, req| async move {
            let path = req.uri().path().to_owned();
            match ep.call(req).await {
                Ok(response) => Ok(response.into_response()),
                Err(err) => Ok(render_error(err, &path)),
            }
        })
        .with(CatchPanic::new().with_handler(panic_response))
        .with(cors)
        .around(move |ep, req| {
            let state = metrics_state.clone();
            async move {
                let started = Instant::now();
                let method = req.method().to_string();
                let path = req.uri().path().to_owned();
                let response = ep.call(req).await?.into_response();
                state.metrics.observe(
                    &method,
                    &path,
                    response.status().as_u16(),
                    started.elapsed().as_secs_f64(),
                );
                Ok(response)
            }
        })
        .with(Tracing)
        .with(RequestId::default().reuse_id(ReuseId::Use))
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal("handler panicked").into_poem_response()
}

/// Reads the body with the 1 MiB cap (chunked bodies included), so no handler sees more.
async fn limit_body(mut req: Request) -> poem::Result<Request> {
    let body = req.take_body().into_bytes_limit(MAX_BODY_BYTES).await?;
    req.set_body(body);
    Ok(req)
}

/// Liveness and a store round trip.
#[handler]
async fn health(Data(state): Data<&Arc<AppState>>) -> Response {
    use sea_orm::ConnectionTrait;
    let db = state.store.db();
    let probe = sea_orm::Statement::from_string(db.get_database_backend(), "SELECT 1");
    match db.query_one_raw(probe).await {
        Ok(_) => poem::web::Json(serde_json::json!({"ok": true, "status": "ok", "database": "ok"}))
            .into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "health: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                poem::web::Json(serde_json::json!({
                    "ok": false, "status": "degraded", "database": "unreachable"
                })),
            )
                .into_response()
        }
    }
}

#[handler]
async fn metrics(Data(state): Data<&Arc<AppState>>) -> Response {
    Response::builder()
        .content_type("text/plain; version=0.0.4")
        .body(match state.indexer_metrics.get() {
            Some(indexer) => state.metrics.render() + &indexer.render(),
            None => state.metrics.render(),
        })
}

/// Spec 4.13: every `/v1/binary/*` route answers 503 while binary markets are off, whatever the
/// request carries (checked before a body is parsed, so a malformed body is not a 400 instead).
async fn gate_binary(gated: bool, req: Request) -> poem::Result<Request> {
    if gated && req.uri().path().starts_with("/v1/binary") {
        return Err(routes::binary::gated().into());
    }
    Ok(req)
}

/// `/v1/narratives/` and `/v1/narratives` are one route (the spec writes the feed with the
/// slash): a trailing slash under `/v1/` is dropped before routing.
async fn trim_trailing_slash(mut req: Request) -> poem::Result<Request> {
    let path = req.uri().path();
    if path.len() > "/v1/".len() && path.starts_with("/v1/") && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/').to_owned();
        let uri = match req.uri().query() {
            Some(query) => format!("{trimmed}?{query}"),
            None => trimmed,
        };
        *req.uri_mut() = uri
            .parse()
            .map_err(|_| poem::Error::from_status(StatusCode::BAD_REQUEST))?;
    }
    Ok(req)
}
