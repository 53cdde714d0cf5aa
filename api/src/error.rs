//! The api's one error, [`ApiError`], rendered in the shapes of spec 7: `{error, message}` with
//! context fields for coded errors, `{ok: false, error}` for validation and agent errors, and the
//! two 429 bodies of the limiters (spec 7 and 8). Every failure a client can see is an
//! `ApiError`: what handlers return, what the middleware answers, what the renderer makes of the
//! framework's own errors.
//!
//! An operation documents the statuses it can refuse with as a [`Refusal`] over a status list
//! declared with [`refusals!`], so the OpenAPI document says exactly what each operation answers.

use std::marker::PhantomData;

use poem::http::StatusCode;
use poem::IntoResponse;
use poem_openapi::registry::{MetaHeader, MetaMediaType, MetaResponse, MetaResponses, Registry};
use poem_openapi::types::Type;
use poem_openapi::{ApiResponse, Object};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Map<String, Value>,
    /// Seconds, for the `retry-after` header of a 429 or a transient 503.
    pub retry_after: Option<u64>,
}

impl ApiError {
    fn with_body(status: StatusCode, body: Value) -> Self {
        let Value::Object(body) = body else {
            unreachable!("error bodies are objects")
        };
        ApiError {
            status,
            body,
            retry_after: None,
        }
    }

    /// `{error: code, message}`.
    pub fn coded(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self::with_body(status, json!({"error": code, "message": message.into()}))
    }

    /// `{ok: false, error: text}` (validation and agent routes).
    pub fn ok_false(status: StatusCode, text: impl Into<String>) -> Self {
        Self::with_body(status, json!({"ok": false, "error": text.into()}))
    }

    /// A missing or invalid parameter: 400 `{ok: false, error}`.
    pub fn validation(text: impl Into<String>) -> Self {
        Self::ok_false(StatusCode::BAD_REQUEST, text)
    }

    /// Adds a context field (`opens_at`, `current_score`, `component`…).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.body.insert(key.into(), value.into());
        self
    }

    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn not_found(what: &str) -> Self {
        Self::coded(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }

    /// 401 `invalid_signature`: `message` says what should have been signed, and by whom.
    pub fn invalid_signature(message: impl Into<String>) -> Self {
        Self::coded(StatusCode::UNAUTHORIZED, "invalid_signature", message)
    }

    /// 403 `url_not_allowed`: the outbound guard would not call `what` (`refused` says why).
    pub fn url_not_allowed(what: &str, refused: impl std::fmt::Display) -> Self {
        Self::coded(
            StatusCode::FORBIDDEN,
            "url_not_allowed",
            format!("the service does not call this {what}: {refused}"),
        )
    }

    pub fn invalid_api_key() -> Self {
        Self::ok_false(StatusCode::UNAUTHORIZED, "Invalid or missing API key")
    }

    pub fn admin_unauthorized() -> Self {
        Self::coded(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "admin credentials missing or wrong",
        )
    }

    pub fn webhook_unauthorized() -> Self {
        Self::coded(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "webhook secret missing or wrong",
        )
    }

    pub fn system_halted(component: &str) -> Self {
        Self::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "system_halted",
            format!("{component} is halted; see GET /v1/system/status"),
        )
        .with("component", component)
    }

    /// 429 with spec 7's `code` for a window quota (`rate_limit_exceeded`,
    /// `daily_limit_reached`): `resets_at` in the body and `retry-after` as a header.
    pub fn window_exhausted(
        code: &str,
        message: impl Into<String>,
        now: i64,
        retry_after_secs: u64,
    ) -> Self {
        Self::coded(StatusCode::TOO_MANY_REQUESTS, code, message)
            .with(
                "resets_at",
                crate::clock::iso(now.saturating_add(retry_after_secs as i64)),
            )
            .retry_after(retry_after_secs)
    }

    /// Spec 8's refusal of a key over its tier's rate: `{error:'Rate limit exceeded', tier,
    /// limit, retry_after}` (`retry_after` the seconds as a string, as spec 8 types it).
    pub fn tier_limited(tier: &str, limit: u32, retry_after_secs: u64) -> Self {
        Self::with_body(
            StatusCode::TOO_MANY_REQUESTS,
            json!({
                "error": "Rate limit exceeded",
                "tier": tier,
                "limit": limit,
                "retry_after": retry_after_secs.to_string(),
            }),
        )
        .retry_after(retry_after_secs)
    }

    /// Spec 7's global limiter: `{statusCode:429, error:'Too Many Requests', message,
    /// retryAfter}`.
    pub fn too_many_requests(retry_after_secs: u64) -> Self {
        Self::with_body(
            StatusCode::TOO_MANY_REQUESTS,
            json!({
                "statusCode": 429,
                "error": "Too Many Requests",
                "message": format!("Rate limit exceeded, retry in {retry_after_secs} seconds"),
                "retryAfter": retry_after_secs,
            }),
        )
        .retry_after(retry_after_secs)
    }

    /// 503 `coming_soon` (spec 7) with the context field `feature: 'coming_soon'`, as the
    /// binary status read shows it (spec 4.13), on every route that answers it.
    pub fn coming_soon(what: &str) -> Self {
        Self::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "coming_soon",
            format!("{what} is not available yet"),
        )
        .with("feature", "coming_soon")
    }

    /// A dependency that did not answer: 503 with `code`, retry shortly.
    pub fn unavailable(code: &str, message: impl Into<String>) -> Self {
        Self::coded(StatusCode::SERVICE_UNAVAILABLE, code, message).retry_after(2)
    }

    /// 503 `code` for an outside provider (`who`, e.g. "the KYC provider") that did not
    /// answer: the cause is logged (it may name the provider's address), the client is told
    /// to retry.
    pub fn provider_unavailable(code: &str, who: &str, cause: &anyhow::Error) -> Self {
        tracing::warn!(error = %format!("{cause:#}"), "{who} did not answer");
        Self::unavailable(code, format!("{who} did not answer; try again shortly"))
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(%detail, "internal error");
        Self::coded(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "unexpected fault",
        )
    }

    /// The `error` string of the body.
    pub fn code(&self) -> &str {
        self.body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> poem::Response {
        let mut response = (self.status, poem::web::Json(Value::Object(self.body))).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert("retry-after", poem::http::HeaderValue::from(seconds));
        }
        response
    }
}

impl From<ApiError> for poem::Error {
    fn from(e: ApiError) -> Self {
        poem::Error::from_response(e.into_response())
    }
}

impl From<sea_orm::DbErr> for ApiError {
    fn from(e: sea_orm::DbErr) -> Self {
        ApiError::internal(e)
    }
}

impl From<narrative_store::StoreError> for ApiError {
    fn from(e: narrative_store::StoreError) -> Self {
        ApiError::internal(e)
    }
}

/// The statuses an operation may refuse with.
pub trait Statuses: Send + Sync {
    const STATUSES: &'static [u16];
}

/// Declares a status list for [`Refusal`]: the given statuses plus those every operation can
/// answer (401 for an invalid `x-api-key`, 429 from the limiters, 500).
macro_rules! refusals {
    ($($(#[$doc:meta])* $vis:vis $name:ident: [$($code:literal),* $(,)?];)+) => {
        $(
            $(#[$doc])*
            $vis struct $name;

            impl $crate::error::Statuses for $name {
                const STATUSES: &'static [u16] = &[$($code,)* 401, 429, 500];
            }
        )+
    };
}
pub(crate) use refusals;

/// An [`ApiError`] as an operation's answer, documented with the statuses `S` lists.
pub struct Refusal<S>(pub ApiError, PhantomData<S>);

impl<S> From<ApiError> for Refusal<S> {
    fn from(e: ApiError) -> Self {
        Refusal(e, PhantomData)
    }
}

/// What a handler returns: its answer, or an [`ApiError`] among the statuses `S` declares.
pub type Answer<T, S> = Result<T, Refusal<S>>;

/// The shape every error body has (spec 7); the other fields depend on the error.
#[derive(Object)]
#[oai(rename = "Error")]
struct ErrorEnvelope {
    /// The error code (or, for validation errors, the reason). Branch on the status first,
    /// then on this.
    error: String,
    /// Human-readable text (coded errors).
    message: Option<String>,
    /// `false` on validation and agent errors.
    ok: Option<bool>,
}

fn describe(status: u16) -> &'static str {
    match status {
        400 => "Invalid request: a missing, malformed or out-of-bounds field or parameter, or a refusal spec 7 lists as 400",
        401 => "Missing or invalid credentials (an invalid `x-api-key` is refused on every route)",
        403 => "Refused by policy: see `error`",
        404 => "Not found",
        409 => "Conflicts with what is already recorded",
        413 => "Request body over 1 MiB",
        422 => "Understood but refused: see `error`",
        429 => "Rate limit or quota exceeded; `retry-after` says when to retry",
        500 => "Unexpected fault",
        503 => "Gated, halted or a dependency unavailable; retry after `retry-after` when present",
        _ => "Refused: see `error`",
    }
}

impl<S: Statuses> ApiResponse for Refusal<S> {
    fn meta() -> MetaResponses {
        MetaResponses {
            responses: S::STATUSES
                .iter()
                .map(|&status| MetaResponse {
                    description: describe(status),
                    status: Some(status),
                    status_range: None,
                    content: vec![MetaMediaType {
                        content_type: "application/json; charset=utf-8",
                        schema: ErrorEnvelope::schema_ref(),
                    }],
                    headers: if matches!(status, 429 | 503) {
                        vec![MetaHeader {
                            name: "retry-after".into(),
                            description: Some("Seconds to wait before retrying.".into()),
                            required: false,
                            deprecated: false,
                            schema: u64::schema_ref(),
                        }]
                    } else {
                        vec![]
                    },
                })
                .collect(),
        }
    }

    fn register(registry: &mut Registry) {
        ErrorEnvelope::register(registry);
    }
}

impl<S> From<Refusal<S>> for poem::Error {
    fn from(refusal: Refusal<S>) -> Self {
        refusal.0.into()
    }
}

impl<S: Send> IntoResponse for Refusal<S> {
    fn into_response(self) -> poem::Response {
        self.0.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    refusals! {
        Probe: [400, 503];
    }

    #[test]
    fn a_refusal_documents_its_statuses_and_the_common_ones() {
        let statuses: Vec<u16> = <Refusal<Probe> as ApiResponse>::meta()
            .responses
            .iter()
            .filter_map(|r| r.status)
            .collect();
        assert_eq!(statuses, vec![400, 503, 401, 429, 500]);
    }

    #[test]
    fn the_limiters_bodies_are_the_specs() {
        let tier = ApiError::tier_limited("free", 60, 12);
        assert_eq!(tier.body["error"], "Rate limit exceeded");
        assert_eq!(tier.body["retry_after"], "12");
        assert_eq!(tier.retry_after, Some(12));
        let global = ApiError::too_many_requests(30);
        assert_eq!(global.body["statusCode"], 429);
        assert_eq!(global.body["retryAfter"], 30);
        assert_eq!(global.code(), "Too Many Requests");
    }
}
