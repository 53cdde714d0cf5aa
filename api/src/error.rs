//! Errors shaped as spec 7 says: `{error, message}` with context fields for coded errors,
//! `{ok: false, error}` for validation and agent errors, and the limiters' exact 429 bodies.
//! Handlers return `Result<_, Failure>`; anything else that fails (malformed JSON, unknown
//! routes, a missing security header) is turned into the same shapes by [`render_error`].

use poem::http::StatusCode;
use poem::IntoResponse;
use poem_openapi::payload::Json;
use poem_openapi::ApiResponse;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Map<String, Value>,
    /// Seconds, for the `retry-after` header of a 429.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// `{error: code, message}`.
    pub fn coded(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        let mut body = Map::new();
        body.insert("error".into(), json!(code));
        body.insert("message".into(), json!(message.into()));
        ApiError {
            status,
            body,
            retry_after: None,
        }
    }

    /// `{ok: false, error: text}` (validation and agent routes).
    pub fn ok_false(status: StatusCode, text: impl Into<String>) -> Self {
        let mut body = Map::new();
        body.insert("ok".into(), json!(false));
        body.insert("error".into(), json!(text.into()));
        ApiError {
            status,
            body,
            retry_after: None,
        }
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

    pub fn not_found(what: &str) -> Self {
        Self::coded(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
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
    pub fn window_exhausted(code: &str, message: impl Into<String>, retry_after_secs: u64) -> Self {
        let mut refused = Self::coded(StatusCode::TOO_MANY_REQUESTS, code, message).with(
            "resets_at",
            crate::time::iso(crate::time::now() + retry_after_secs as i64),
        );
        refused.retry_after = Some(retry_after_secs);
        refused
    }

    pub fn coming_soon(what: &str) -> Self {
        Self::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "coming_soon",
            format!("{what} is not available yet"),
        )
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
    pub fn code(&self) -> String {
        self.body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    pub fn into_poem_response(self) -> poem::Response {
        let mut response = (self.status, poem::web::Json(Value::Object(self.body))).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert("retry-after", seconds.to_string().parse().expect("digits"));
        }
        response
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

/// The error response of every operation: any status, a JSON body, maybe `retry-after`.
#[derive(ApiResponse, Debug)]
pub enum Failure {
    /// An error in the shapes of spec 7.
    Error(
        StatusCode,
        Json<Value>,
        #[oai(header = "retry-after")] Option<u64>,
    ),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Error(e.status, Json(Value::Object(e.body)), e.retry_after)
    }
}

pub type ApiResult<T> = Result<T, Failure>;

impl From<ApiError> for poem::Error {
    fn from(e: ApiError) -> Self {
        poem::Error::from_response(e.into_poem_response())
    }
}

/// Which credential a path needs, for the 401 of a missing security header (spec 5).
fn auth_failure(path: &str) -> ApiError {
    if path.starts_with("/v1/admin") || path.starts_with("/admin") || path == "/v1/shield/probe-log"
    {
        ApiError::admin_unauthorized()
    } else if path.starts_with("/v1/nft/webhook") {
        ApiError::webhook_unauthorized()
    } else {
        ApiError::invalid_api_key()
    }
}

/// Renders errors raised outside the handlers in the spec's shapes: a request body that is not
/// JSON or misses a field → 400, a missing security header → the class's 401, an unknown route
/// → 404, a body over 1 MiB → 413. Responses built on purpose pass through unchanged.
pub fn render_error(err: poem::Error, path: &str) -> poem::Response {
    use poem_openapi::error::{
        AuthorizationError, ContentTypeError, ParseParamError, ParsePathError,
        ParseRequestPayloadError,
    };
    if err.is_from_response() {
        return err.into_response();
    }
    let api_error = if err.is::<AuthorizationError>() {
        auth_failure(path)
    } else if let Some(e) = err.downcast_ref::<ParseRequestPayloadError>() {
        ApiError::validation(format!("invalid request body: {}", e.reason))
    } else if err.is::<ContentTypeError>() {
        ApiError::validation("request body must be JSON (Content-Type: application/json)")
    } else if let Some(e) = err.downcast_ref::<ParseParamError>() {
        ApiError::validation(format!("invalid parameter `{}`: {}", e.name, e.reason))
    } else if err.is::<ParsePathError>() {
        ApiError::validation("invalid path parameter")
    } else if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::coded(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "request body exceeds 1 MiB",
        )
    } else if err.status() == StatusCode::NOT_FOUND {
        ApiError::not_found("route")
    } else if err.status() == StatusCode::METHOD_NOT_ALLOWED {
        ApiError::coded(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "method not allowed on this route",
        )
    } else if err.status().is_server_error() {
        ApiError::internal(&err)
    } else {
        ApiError::coded(err.status(), "bad_request", err.to_string())
    };
    api_error.into_poem_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_credentials_get_the_401_of_their_class() {
        assert_eq!(
            auth_failure("/v1/admin/system/halt").body["error"],
            "Unauthorized"
        );
        assert_eq!(
            auth_failure("/v1/shield/probe-log").body["error"],
            "Unauthorized"
        );
        assert_eq!(
            auth_failure("/v1/nft/webhook/transfer").body["error"],
            "Unauthorized"
        );
        let agent = auth_failure("/v1/agent/feed");
        assert_eq!(agent.body["ok"], false);
        assert_eq!(agent.body["error"], "Invalid or missing API key");
    }
}
