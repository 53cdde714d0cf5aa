//! The framework's own failures in the spec's envelopes: a request body that is not JSON or
//! misses a field → 400, a parameter that does not parse → 400, a missing security header → the
//! 401 of the route's class, an unknown route → 404, a method the path does not serve → 405
//! with `Allow`, a body over 1 MiB → 413. Responses built on purpose pass through unchanged.

use poem::http::{header, HeaderValue, Method, StatusCode};
use poem::IntoResponse;

use crate::error::ApiError;
use crate::http::contract::Contract;

/// The 401 of a missing security header, in the shape of the credential the operation asks for
/// (spec 5): the operators' pair and the NFT webhook secret answer `{error, message}`, an agent
/// key `{ok: false, error}`.
fn auth_failure(scheme: Option<&str>) -> ApiError {
    match scheme {
        Some("AdminAuth") => ApiError::admin_unauthorized(),
        Some("WebhookAuth") => ApiError::webhook_unauthorized(),
        _ => ApiError::invalid_api_key(),
    }
}

/// 405 with the methods `path` serves in `Allow`. Every route outside the document is GET-only,
/// so that is what a path the document does not know serves.
pub fn method_not_allowed(path: &str, contract: &Contract) -> poem::Response {
    let allowed = contract
        .allowed_methods(path)
        .unwrap_or_else(|| vec![Method::GET, Method::HEAD]);
    let list = allowed
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut response = ApiError::coded(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("this path serves {list}"),
    )
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&list) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}

/// poem-openapi's parse error as a sentence: `failed to parse "wallet": must be …
/// (occurred while parsing "TermsAck")` becomes `wallet: must be …`, and `Expected input type
/// "wallet", found null.` (a missing field) becomes `wallet required`.
fn plain(reason: &str) -> String {
    let mut text = reason.to_owned();
    while let Some(at) = text.rfind(" (occurred while parsing \"") {
        text.truncate(at);
    }
    if let Some(rest) = text.strip_prefix("failed to parse \"") {
        if let Some((kind, message)) = rest.split_once("\": ") {
            return format!("{kind}: {}", plain(message));
        }
    }
    if let Some(rest) = text.strip_prefix("Expected input type \"") {
        if let Some((kind, found)) = rest.split_once("\", found ") {
            return if found.starts_with("null") {
                format!("{kind} required")
            } else {
                format!("{kind} expected, found {}", found.trim_end_matches('.'))
            };
        }
    }
    text
}

pub fn render_error(
    err: poem::Error,
    method: &Method,
    path: &str,
    contract: &Contract,
) -> poem::Response {
    use poem_openapi::error::{
        AuthorizationError, ContentTypeError, ParseParamError, ParsePathError,
        ParseRequestPayloadError,
    };
    if err.is_from_response() {
        return err.into_response();
    }
    let api_error = if err.is::<AuthorizationError>() {
        auth_failure(contract.security_scheme(method, path))
    } else if let Some(e) = err.downcast_ref::<ParseRequestPayloadError>() {
        ApiError::validation(format!("invalid request body: {}", plain(&e.reason)))
    } else if err.is::<ContentTypeError>() {
        ApiError::validation("request body must be JSON (Content-Type: application/json)")
    } else if let Some(e) = err.downcast_ref::<ParseParamError>() {
        ApiError::validation(format!(
            "invalid parameter `{}`: {}",
            e.name,
            plain(&e.reason)
        ))
    } else if let Some(e) = err.downcast_ref::<ParsePathError>() {
        ApiError::validation(format!("invalid path: {}", plain(&e.reason)))
    } else if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::coded(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "request body exceeds 1 MiB",
        )
    } else if err.status() == StatusCode::METHOD_NOT_ALLOWED {
        return method_not_allowed(path, contract);
    } else if err.status() == StatusCode::NOT_FOUND {
        ApiError::not_found("route")
    } else if err.status().is_server_error() {
        ApiError::internal(&err)
    } else {
        ApiError::coded(err.status(), "bad_request", err.to_string())
    };
    api_error.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_read_as_sentences() {
        assert_eq!(
            plain(
                r#"failed to parse "wallet": must be a base58 public key of 32 bytes (occurred while parsing "TermsAck")"#
            ),
            "wallet: must be a base58 public key of 32 bytes"
        );
        assert_eq!(
            plain(
                r#"Expected input type "wallet", found null. (occurred while parsing "TermsAck")"#
            ),
            "wallet required"
        );
        assert_eq!(
            plain(
                r#"Expected input type "sol_amount", found "x". (occurred while parsing "ShieldBack")"#
            ),
            r#"sol_amount expected, found "x""#
        );
        assert_eq!(plain("EOF while parsing"), "EOF while parsing");
    }

    #[test]
    fn missing_credentials_get_the_401_of_their_class() {
        for scheme in ["AdminAuth", "WebhookAuth"] {
            let refusal = auth_failure(Some(scheme));
            assert_eq!(refusal.status, StatusCode::UNAUTHORIZED);
            assert_eq!(refusal.body["error"], "Unauthorized", "{scheme}");
        }
        let agent = auth_failure(Some("ApiKeyAuth"));
        assert_eq!(agent.body["ok"], false);
        assert_eq!(agent.body["error"], "Invalid or missing API key");
    }
}
