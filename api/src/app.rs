//! The HTTP application: the `/v1` OpenAPI services, the document and its UI, `/health`,
//! `/metrics`, and the middleware every request passes.
//!
//! Order, as a request meets it: request id (outermost, so the tracing span carries it) →
//! tracing → metrics → CORS → panic guard → error rendering (so every failure has the spec's
//! shape, including those Cors would otherwise render as text) → rate limits and API-key check
//! → the 1 MiB body limit → trailing-slash trim → the shield gate's access log (so what it logs
//! has passed the limits, and its path is the routed one) → the binary gate → the response
//! cache of the hot reads → the routes.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use poem::http::{Method, StatusCode};
use poem::middleware::{CatchPanic, Cors, RequestId, ReuseId, Tracing};
use poem::web::Data;
use poem::{get, handler, Endpoint, EndpointExt, IntoResponse, Request, Response, Route};
use serde_json::json;

use crate::error::ApiError;
use crate::http::cache::ResponseCache;
use crate::http::contract::{Contract, Patch};
use crate::http::errors::{method_not_allowed, render_error, ReadBody};
use crate::http::health::HealthProbe;
use crate::http::metrics::HttpMetrics;
use crate::http::probe::shield_gate;
use crate::http::rate_limit::limit_requests;
use crate::http::MAX_BODY_BYTES;
use crate::routes;
use crate::routes::SharedReads;
use crate::state::AppState;
use crate::values::{ProofDomain, DEFAULT_PROOF_DOMAIN};

/// The GET-only routes served beside the `/v1` document.
const PLAIN_ROUTES: [&str; 5] = [
    "/health",
    "/metrics",
    "/v1/openapi.json",
    "/docs",
    "/admin/queues",
];

/// What the routes' types cannot say but the running settings decide.
fn patches(state: &AppState) -> Vec<Patch> {
    vec![
        Patch {
            schema: "PrepareMint",
            property: Some("amount_lamports"),
            key: "minimum",
            value: json!(state.narratives.publish_fee_lamports),
        },
        // Optional, so null is one of the values too.
        Patch {
            schema: "TermsAck",
            property: Some("terms_version"),
            key: "enum",
            value: json!([state.shield_terms_version, null]),
        },
        Patch {
            schema: "TermsAccept",
            property: Some("terms_version"),
            key: "enum",
            value: json!([state.terms_version, null]),
        },
        // A join names an email, a wallet or both (not null).
        Patch {
            schema: "WaitlistJoin",
            property: None,
            key: "anyOf",
            value: json!([
                {"required": ["email"], "properties": {"email": {"type": "string"}}},
                {"required": ["wallet"], "properties": {"wallet": {"type": "string"}}},
            ]),
        },
        // The preferences name only the notification types (`deny_unknown_fields`).
        Patch {
            schema: "PushPreferenceChanges",
            property: None,
            key: "additionalProperties",
            value: json!(false),
        },
    ]
}

/// `document` with the messages its routes quote worded as `domain`'s deployment has wallets
/// sign them: the routes' documentation writes them under the default name.
fn worded_for(domain: &ProofDomain, document: &str) -> String {
    if *domain == ProofDomain::default() {
        return document.to_owned();
    }
    document.replace(
        &format!("{DEFAULT_PROOF_DOMAIN}:"),
        &format!("{}:", domain.as_str()),
    )
}

/// The application, boxed: the middleware types nest too deep to be named in every crate that
/// serves it.
pub fn build_app(state: Arc<AppState>) -> poem::endpoint::BoxEndpoint<'static, Response> {
    let shared = Arc::new(SharedReads::default());
    let api = routes::service(state.clone(), &shared);
    let generated = api.spec();
    let contract = Arc::new(Contract::new(
        &worded_for(&state.proof_domain, &generated),
        &patches(&state),
        &PLAIN_ROUTES,
    ));
    // The UI embeds the document it shows; it shows the one served. Both are shared bytes, so a
    // request clones a reference, not the document.
    let ui = Bytes::from(
        api.swagger_ui_html()
            .replace(&generated, contract.document()),
    );
    let document = Bytes::copy_from_slice(contract.document().as_bytes());
    let cors = Cors::new()
        .allow_origins(state.cors_origins.iter().map(String::as_str))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
        ])
        // Spec 5 rule 8's, the agents' key, and the wallet proof of the preferences writes
        // (a browser page sets them).
        .allow_headers([
            "content-type",
            "authorization",
            "x-admin-wallet",
            "x-admin-secret",
            "x-api-key",
            "x-wallet-signature",
            "x-wallet-issued-at",
        ]);
    let metrics = Arc::new(HttpMetrics::new());
    let limit_state = state.clone();
    let probe_state = state.clone();
    let binary_gated = !state.binary_markets_enabled;
    let gate_contract = contract.clone();
    let probe_contract = contract.clone();
    let render_contract = contract.clone();
    let cache = ResponseCache::new(
        contract.clone(),
        state.freshness.clone(),
        state.clock.clone(),
        state.response_cache_bytes,
    );
    state.caches.register(cache.clone());
    Route::new()
        .nest("/v1", api)
        .at(
            "/v1/openapi.json",
            get(poem::endpoint::make_sync(move |_| {
                Response::builder()
                    .content_type("application/json; charset=utf-8")
                    .body(document.clone())
            })),
        )
        .nest(
            "/docs",
            get(poem::endpoint::make_sync(move |_| {
                Response::builder()
                    .content_type("text/html; charset=utf-8")
                    .body(ui.clone())
            })),
        )
        .at("/admin/queues", get(routes::queues_page::page))
        .at(
            "/admin/queues/jobs/:id/:action",
            poem::post(routes::queues_page::act),
        )
        .at("/health", get(health))
        .at("/metrics", get(serve_metrics))
        .data(state)
        .data(metrics.clone())
        .data(shared)
        .data(Arc::new(HealthProbe::default()))
        .around(move |ep, req| {
            let cache = cache.clone();
            async move { cache.serve(ep, req).await }
        })
        .before(move |req| gate_binary(binary_gated, gate_contract.clone(), req))
        .around(move |ep, req| shield_gate(probe_state.clone(), probe_contract.clone(), ep, req))
        .before(trim_trailing_slash)
        .before(limit_body)
        .around(move |ep, req| limit_requests(limit_state.clone(), ep, req))
        .around(move |ep, mut req| {
            let contract = render_contract.clone();
            async move {
                let method = req.method().clone();
                let path = req.uri().path().to_owned();
                let body = ReadBody::default();
                req.extensions_mut().insert(body.clone());
                match ep.call(req).await {
                    Ok(response) => Ok(response.into_response()),
                    Err(err) => Ok(render_error(err, &method, &path, &contract, body.get())),
                }
            }
        })
        .with(CatchPanic::new().with_handler(panic_response))
        .with(cors)
        .around(|ep, req| async move {
            let preflight = req.method() == Method::OPTIONS && req.header("origin").is_some();
            let mut response = ep.call(req).await?.into_response();
            // Cors answers an allowed preflight 200 with no body; spec 7 says 204.
            if preflight && response.status() == StatusCode::OK {
                response.set_status(StatusCode::NO_CONTENT);
            }
            Ok(response)
        })
        .before(same_origin)
        .around(move |ep, req| {
            let metrics = metrics.clone();
            let contract = contract.clone();
            async move {
                let started = Instant::now();
                let method = req.method().clone();
                let path = req.uri().path().to_owned();
                let response = ep.call(req).await?.into_response();
                metrics.observe(
                    &method,
                    contract.route_label(&path),
                    response.status().as_u16(),
                    started.elapsed().as_secs_f64(),
                );
                Ok(response)
            }
        })
        .with(Tracing)
        .with(RequestId::default().reuse_id(ReuseId::Use))
        .before(legacy_admin_paths)
        .boxed()
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal("handler panicked").into_response()
}

/// Reads the body with the 1 MiB cap (chunked bodies included), so no handler sees more.
async fn limit_body(mut req: Request) -> poem::Result<Request> {
    let body = req.take_body().into_bytes_limit(MAX_BODY_BYTES).await?;
    if let Some(kept) = req.extensions().get::<ReadBody>() {
        kept.keep(&body);
    }
    req.set_body(body);
    Ok(req)
}

/// Liveness and a store round trip (shared by the calls that arrive during one).
#[handler]
async fn health(
    Data(state): Data<&Arc<AppState>>,
    Data(probe): Data<&Arc<HealthProbe>>,
) -> Response {
    match probe.store_answers(&state.store).await {
        true => {
            poem::web::Json(json!({"ok": true, "status": "ok", "database": "ok"})).into_response()
        }
        false => (
            StatusCode::SERVICE_UNAVAILABLE,
            poem::web::Json(json!({
                "ok": false, "status": "degraded", "database": "unreachable"
            })),
        )
            .into_response(),
    }
}

#[handler]
async fn serve_metrics(
    Data(state): Data<&Arc<AppState>>,
    Data(metrics): Data<&Arc<HttpMetrics>>,
    Data(shared): Data<&Arc<SharedReads>>,
) -> Response {
    Response::builder()
        .content_type("text/plain; version=0.0.4")
        .body({
            let text = metrics.render()
                + &state.caches.render()
                + &state.chain.writer.render()
                + &state.chain.ledger.metrics()
                + &state.push_deliveries.render()
                + &state.key_memory.render()
                + &shared.render();
            match state.indexer_metrics.get() {
                Some(indexer) => text + &indexer.render(),
                None => text,
            }
        })
}

/// Spec 4.13: every `/v1/binary/*` operation answers 503 while binary markets are off, whatever
/// the request carries (checked before a body is parsed, so a malformed body is not a 400
/// instead). A method the path does not serve is still a 405.
async fn gate_binary(gated: bool, contract: Arc<Contract>, req: Request) -> poem::Result<Request> {
    let path = req.uri().path();
    if gated && path.starts_with("/v1/binary") {
        match contract.allowed_methods(path) {
            Some(methods) if !methods.contains(req.method()) => {
                return Err(poem::Error::from_response(method_not_allowed(
                    path, &contract,
                )))
            }
            Some(_) => return Err(routes::binary::gated().into()),
            None => {}
        }
    }
    Ok(req)
}

/// A browser names the page's own origin in `Origin` on a form post or a fetch from that page
/// (the queue page's buttons, the `/docs` UI). That is no cross-origin request, so it is not
/// judged against the allowed origins: the header is dropped when its host is the request's
/// `Host`.
async fn same_origin(mut req: Request) -> poem::Result<Request> {
    let own = match (req.header("origin"), req.header("host")) {
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host)),
        _ => false,
    };
    if own {
        req.headers_mut().remove("origin");
    }
    Ok(req)
}

/// Spec 9.2 places narrative moderation at `/admin/narratives/…`; it is served by the
/// documented `/v1/admin/narratives/…` operations, so the path is rewritten before anything
/// (limits, metrics, routing) looks at it.
async fn legacy_admin_paths(mut req: Request) -> poem::Result<Request> {
    if req.uri().path().starts_with("/admin/narratives/") {
        let uri = format!(
            "/v1{}",
            req.uri().path_and_query().map_or("", |p| p.as_str())
        );
        *req.uri_mut() = uri
            .parse()
            .map_err(|_| poem::Error::from_status(StatusCode::BAD_REQUEST))?;
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
