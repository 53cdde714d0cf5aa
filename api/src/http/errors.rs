//! The framework's own failures in the spec's envelopes: a request body that is not JSON or
//! misses a field → 400, a parameter that does not parse → 400, a missing security header → the
//! 401 of the route's class, an unknown route → 404, a method the path does not serve → 405
//! with `Allow`, a body over 1 MiB → 413. Responses built on purpose pass through unchanged.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use poem::http::{header, HeaderValue, Method, StatusCode};
use poem::IntoResponse;
use serde_json::Value;

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

/// A request's body as `limit_body` read it, kept for the error renderer (which wraps the
/// limit) so that a parse error can be traced to the field the client sent.
#[derive(Clone, Default)]
pub struct ReadBody(Arc<OnceLock<Bytes>>);

impl ReadBody {
    pub fn keep(&self, body: &Bytes) {
        let _ = self.0.set(body.clone());
    }

    pub fn get(&self) -> Option<&[u8]> {
        self.0.get().map(|b| b.as_ref())
    }
}

/// What a parse error says about the value of its kind.
enum Problem<'a> {
    /// Absent (or null) where it is required.
    Missing,
    /// Of another JSON type: the value, as poem-openapi writes it.
    Found(&'a str),
    /// Present and of the right type, but against the kind's rule.
    Rule,
}

/// poem-openapi's parse error as a sentence: `failed to parse "wallet": must be …
/// (occurred while parsing "TermsAck")` becomes `wallet: must be …`, and `Expected input type
/// "wallet", found null.` (a missing field) becomes `wallet required`. poem-openapi names the
/// value's kind, not its field: `fields` (the document's object schemas) turns the kind back into
/// the field of that kind in the innermost object the error passed through, so a body whose
/// wallet is `wallet_address` reads `wallet_address required`. Of several fields of one kind, the
/// ones the top-level `body` shows to fit the error are named (the absent one for `required`, the
/// one holding the value found, the ones present for a broken rule), all of them otherwise
/// (`referrer or wallet: …`, alphabetically); a kind no field has stays as it is.
fn plain(reason: &str, fields: Option<&Contract>, body: Option<&[u8]>) -> String {
    const WITHIN: &str = " (occurred while parsing \"";
    let mut text = reason.to_owned();
    let mut objects = Vec::new();
    while let Some(at) = text.rfind(WITHIN) {
        if let Some(name) = text[at + WITHIN.len()..].split('"').next() {
            objects.push(name.to_owned());
        }
        text.truncate(at);
    }
    let field = |kind: &str, problem: Problem| -> String {
        let Some(contract) = fields else {
            return kind.to_owned();
        };
        // Suffixes were taken from the outermost in: the innermost object comes last.
        let mut known = objects.iter().rev().filter(|o| contract.has_object(o));
        let Some(object) = known.next() else {
            return kind.to_owned();
        };
        let named = contract.fields_of_kind(object, kind);
        if named.is_empty() {
            return kind.to_owned();
        }
        // The body says which field it is only when the field is at its top level.
        let top = (known.next().is_none())
            .then(|| body.and_then(|b| serde_json::from_slice::<Value>(b).ok()))
            .flatten();
        let fits = |name: &&str| {
            let sent = top
                .as_ref()
                .and_then(|t| t.get(*name))
                .filter(|v| !v.is_null());
            match problem {
                Problem::Missing => sent.is_none(),
                Problem::Found(found) => sent
                    .is_some_and(|v| serde_json::from_str::<Value>(found).is_ok_and(|f| f == *v)),
                Problem::Rule => sent.is_some(),
            }
        };
        let narrowed: Vec<&str> = named.iter().copied().filter(fits).collect();
        if top.is_some() && !narrowed.is_empty() {
            narrowed.join(" or ")
        } else {
            named.join(" or ")
        }
    };
    if let Some(rest) = text.strip_prefix("failed to parse \"") {
        if let Some((kind, message)) = rest.split_once("\": ") {
            return format!(
                "{}: {}",
                field(kind, Problem::Rule),
                plain(message, None, None)
            );
        }
    }
    if let Some(rest) = text.strip_prefix("Expected input type \"") {
        if let Some((kind, found)) = rest.split_once("\", found ") {
            return if found.starts_with("null") {
                format!("{} required", field(kind, Problem::Missing))
            } else {
                let found = found.trim_end_matches('.');
                format!(
                    "{} expected, found {found}",
                    field(kind, Problem::Found(found))
                )
            };
        }
    }
    text
}

/// `err` in the spec's envelope; `body`, the request's body when it was read, names the field
/// a body's parse error is about.
pub fn render_error(
    err: poem::Error,
    method: &Method,
    path: &str,
    contract: &Contract,
    body: Option<&[u8]>,
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
        ApiError::validation(format!(
            "invalid request body: {}",
            plain(&e.reason, Some(contract), body)
        ))
    } else if err.is::<ContentTypeError>() {
        ApiError::validation("request body must be JSON (Content-Type: application/json)")
    } else if let Some(e) = err.downcast_ref::<ParseParamError>() {
        ApiError::validation(format!(
            "invalid parameter `{}`: {}",
            e.name,
            plain(&e.reason, None, None)
        ))
    } else if let Some(e) = err.downcast_ref::<ParsePathError>() {
        ApiError::validation(format!("invalid path: {}", plain(&e.reason, None, None)))
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
                r#"failed to parse "wallet": must be a base58 public key of 32 bytes (occurred while parsing "TermsAck")"#,
                None,
                None
            ),
            "wallet: must be a base58 public key of 32 bytes"
        );
        assert_eq!(
            plain(
                r#"Expected input type "wallet", found null. (occurred while parsing "TermsAck")"#,
                None,
                None
            ),
            "wallet required"
        );
        assert_eq!(
            plain(
                r#"Expected input type "sol_amount", found "x". (occurred while parsing "ShieldBack")"#,
                None,
                None
            ),
            r#"sol_amount expected, found "x""#
        );
        assert_eq!(plain("EOF while parsing", None, None), "EOF while parsing");
    }

    /// The kind poem-openapi names becomes the field of that kind in the innermost object the
    /// error passed through, as the document lists its properties.
    #[test]
    fn a_parse_error_names_the_field_not_only_its_kind() {
        let document = serde_json::json!({
            "paths": {},
            "components": {"schemas": {
                "Deposit": {"type": "object", "properties": {
                    "wallet_address": {"type": "string", "title": "wallet"},
                    "amount_sol": {"type": "number", "title": "sol_amount"},
                    "memo": {"type": "string"},
                }},
                "Referral": {"type": "object", "properties": {
                    "wallet": {"type": "string", "title": "wallet"},
                    "referrer": {"allOf": [{"type": "string", "title": "wallet"}], "nullable": true},
                    "friends": {"type": "array", "items": {"type": "string", "title": "wallet"}},
                    "deposit": {"$ref": "#/components/schemas/Deposit"},
                }},
            }},
        });
        let contract = Contract::new(&document.to_string(), &[], &[]);
        let read = |reason: &str| plain(reason, Some(&contract), None);
        assert_eq!(
            read(r#"Expected input type "wallet", found null. (occurred while parsing "Deposit")"#),
            "wallet_address required"
        );
        assert_eq!(
            read(
                r#"failed to parse "sol_amount": has more than 9 decimals (occurred while parsing "Deposit")"#
            ),
            "amount_sol: has more than 9 decimals"
        );
        assert_eq!(
            read(
                r#"Expected input type "sol_amount", found "x". (occurred while parsing "Deposit")"#
            ),
            r#"amount_sol expected, found "x""#
        );
        // Nested: the innermost object decides.
        assert_eq!(
            read(
                r#"failed to parse "sol_amount": must be greater than 0 (occurred while parsing "Deposit") (occurred while parsing "Referral")"#
            ),
            "amount_sol: must be greater than 0"
        );
        // Several fields of the kind (a value, a nullable one, an array's items): all named,
        // alphabetically.
        assert_eq!(
            read(
                r#"failed to parse "wallet": must be a base58 public key of 32 bytes (occurred while parsing "[wallet]") (occurred while parsing "Referral")"#
            ),
            "friends or referrer or wallet: must be a base58 public key of 32 bytes"
        );
        // With the body the client sent, the field that fits the error.
        let sent = |reason: &str, body: Value| {
            plain(reason, Some(&contract), Some(body.to_string().as_bytes()))
        };
        let broken = r#"failed to parse "wallet": must be a base58 public key of 32 bytes (occurred while parsing "Referral")"#;
        assert_eq!(
            sent(broken, serde_json::json!({"wallet": "nope"})),
            "wallet: must be a base58 public key of 32 bytes"
        );
        assert_eq!(
            sent(
                broken,
                serde_json::json!({"wallet": "nope", "referrer": "nope"})
            ),
            "referrer or wallet: must be a base58 public key of 32 bytes"
        );
        assert_eq!(
            sent(
                r#"Expected input type "wallet", found 7. (occurred while parsing "Referral")"#,
                serde_json::json!({"wallet": "x", "referrer": 7})
            ),
            "referrer expected, found 7"
        );
        // Below the top level the body is not searched.
        assert_eq!(
            sent(
                r#"failed to parse "sol_amount": must be greater than 0 (occurred while parsing "Deposit") (occurred while parsing "Referral")"#,
                serde_json::json!({"deposit": {"amount_sol": 0}})
            ),
            "amount_sol: must be greater than 0"
        );
        // A body that is not JSON, or fits no field: every field of the kind.
        assert_eq!(
            plain(broken, Some(&contract), Some(b"{")),
            "friends or referrer or wallet: must be a base58 public key of 32 bytes"
        );
        // A kind no field of the object has, or an object the document lacks: the kind.
        assert_eq!(
            read(r#"Expected input type "string", found 7. (occurred while parsing "Deposit")"#),
            "string expected, found 7"
        );
        assert_eq!(
            read(r#"Expected input type "wallet", found null. (occurred while parsing "Other")"#),
            "wallet required"
        );
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
