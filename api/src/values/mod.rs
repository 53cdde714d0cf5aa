//! Values parsed once, where a request arrives, into types that cannot hold an invalid value:
//! wallets, signatures, ids, sides, categories, oracle statuses, amounts with their bounds and
//! free text with its limits. Each type's OpenAPI schema states the constraint its parser
//! enforces (pattern, format, enum, bounds), so the document and the server agree on what a
//! valid request is. Caps that clamp rather than reject (spec 8) are here too.

mod amount;
mod category;
mod chain_address;
mod component;
mod defi;
mod email;
mod id;
mod json;
mod nft_tier;
mod notification_kind;
mod number;
mod oracle_status;
mod proof_domain;
mod push;
mod side;
mod signature;
mod text;
mod verify_method;
mod wallet;

pub use amount::{Lamports, Sol, SolOrZero, LAMPORTS_PER_SOL};
pub use category::Category;
pub use chain_address::ChainAddress;
pub use component::Component;
pub use defi::{Cluster, FastAction, LendingVenue, SolAmount, TokenSymbol, UiAmount, VenueId};
pub use email::Email;
pub use id::{
    AgentId, CreationId, GenerationId, KeyId, MarketRef, NarrativeId, PreparedId, ProtocolId,
};
pub use json::JsonDocument;
pub use nft_tier::NftTier;
pub use notification_kind::NotificationKind;
pub use number::{Confidence, DeadlineDays, UnixSeconds, UsdAmount};
pub use oracle_status::OracleStatus;
pub use proof_domain::{ProofDomain, DEFAULT_PROOF_DOMAIN};
pub use push::{PushAuth, PushPublicKey};
pub use side::{BinarySide, NarrativeSide, ShieldSide};
pub use signature::Base58Signature;
pub use text::{HttpsUrl, Text};
pub use verify_method::VerifyMethod;
pub use wallet::{MintAddress, Wallet};

/// Lamports as SOL, for display.
pub fn sol(lamports: i64) -> f64 {
    lamports as f64 / LAMPORTS_PER_SOL as f64
}

/// [`sol`] of an unsigned amount.
pub fn sol_u64(lamports: u64) -> f64 {
    lamports as f64 / LAMPORTS_PER_SOL as f64
}

/// A cap that clamps: absent → `default`, outside `min..=max` → the nearest bound.
pub fn clamp(value: Option<i64>, default: i64, min: i64, max: i64) -> i64 {
    value.unwrap_or(default).clamp(min, max)
}

/// `limit` and `offset` query values as a page: the limit clamped to `1..=max` (absent →
/// `default`), a negative or absent offset → 0.
pub fn page(limit: Option<i64>, offset: Option<i64>, default: i64, max: i64) -> (u64, u64) {
    (
        clamp(limit, default, 1, max) as u64,
        offset.unwrap_or(0).max(0) as u64,
    )
}

/// poem-openapi's `Type` for a value type that is its own raw value: its kind (as parse errors
/// name it) and its schema, inline, titled with the kind, so that a parse error's kind can be
/// traced back to the fields of that kind (`http::errors`). `[...]` holds the impl's generic
/// parameters.
macro_rules! value_type {
    ([$($generics:tt)*] $ty:ty, $name:expr, $schema:expr) => {
        impl<$($generics)*> poem_openapi::types::Type for $ty {
            const IS_REQUIRED: bool = true;
            type RawValueType = Self;
            type RawElementValueType = Self;

            fn name() -> std::borrow::Cow<'static, str> {
                ($name).into()
            }

            fn schema_ref() -> poem_openapi::registry::MetaSchemaRef {
                let schema: poem_openapi::registry::MetaSchema = $schema;
                poem_openapi::registry::MetaSchemaRef::Inline(Box::new(
                    poem_openapi::registry::MetaSchema {
                        title: Some(std::string::String::from($name)),
                        ..schema
                    },
                ))
            }

            fn as_raw_value(&self) -> Option<&Self> {
                Some(self)
            }

            fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Self> + 'a> {
                Box::new(std::iter::once(self))
            }
        }
    };
}
pub(crate) use value_type;

/// Implements poem-openapi's schema and parsing traits, and serde, for a value written as a JSON
/// string: `FromStr` parses it (its error is the client's message), `Display` writes it, and
/// `$schema` (a `MetaSchema`) describes exactly what `FromStr` accepts.
macro_rules! string_value {
    ($ty:ty, $name:literal, $schema:expr) => {
        $crate::values::value_type!([] $ty, $name, $schema);

        impl poem_openapi::types::ParseFromJSON for $ty {
            fn parse_from_json(
                value: Option<serde_json::Value>,
            ) -> poem_openapi::types::ParseResult<Self> {
                match value.unwrap_or_default() {
                    serde_json::Value::String(text) => text
                        .parse()
                        .map_err(poem_openapi::types::ParseError::custom),
                    other => Err(poem_openapi::types::ParseError::expected_type(other)),
                }
            }
        }

        impl poem_openapi::types::ParseFromParameter for $ty {
            fn parse_from_parameter(value: &str) -> poem_openapi::types::ParseResult<Self> {
                value
                    .parse()
                    .map_err(poem_openapi::types::ParseError::custom)
            }
        }

        impl poem_openapi::types::ToJSON for $ty {
            fn to_json(&self) -> Option<serde_json::Value> {
                Some(serde_json::Value::String(self.to_string()))
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use string_value;

/// A closed set of words: an enum with `ALL`, `as_str`, `FromStr` and `Display` over exactly
/// those words, and a schema listing them. With `any_case`, the words are accepted in any
/// ASCII case (and written as declared), and the schema says so with a pattern.
macro_rules! enum_value {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $description:literal,
     [$($variant:ident => $text:literal),+ $(,)?]) => {
        $crate::values::enum_value!(@define $(#[$doc])* $ty, [$($variant => $text),+]);

        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(text: &str) -> Result<Self, String> {
                match text {
                    $($text => Ok($ty::$variant),)+
                    _ => Err(format!("must be one of {}", [$($text),+].join(", "))),
                }
            }
        }

        $crate::values::string_value!(
            $ty,
            $name,
            $crate::values::enum_schema($description, &[$($text),+])
        );
    };
    ($(#[$doc:meta])* $ty:ident, $name:literal, $description:literal,
     [$($variant:ident => $text:literal),+ $(,)?], any_case) => {
        $crate::values::enum_value!(@define $(#[$doc])* $ty, [$($variant => $text),+]);

        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(text: &str) -> Result<Self, String> {
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|value| value.as_str().eq_ignore_ascii_case(text))
                    .ok_or_else(|| {
                        format!("must be one of {} (any case)", [$($text),+].join(", "))
                    })
            }
        }

        $crate::values::string_value!(
            $ty,
            $name,
            $crate::values::any_case_schema($description, &[$($text),+])
        );
    };
    (@define $(#[$doc:meta])* $ty:ident, [$($variant:ident => $text:literal),+]) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $ty {
            $($variant),+
        }

        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use enum_value;

/// A string schema with a description, a pattern and optionally a format.
pub(crate) fn string_schema(
    description: &'static str,
    pattern: &str,
    format: Option<&'static str>,
) -> poem_openapi::registry::MetaSchema {
    poem_openapi::registry::MetaSchema {
        description: Some(description),
        pattern: Some(pattern.to_owned()),
        format,
        ..poem_openapi::registry::MetaSchema::new("string")
    }
}

/// A string schema whose rule is a named format (described in `description`), for values no
/// regular expression states well.
pub(crate) fn format_schema(
    description: &'static str,
    format: &'static str,
) -> poem_openapi::registry::MetaSchema {
    poem_openapi::registry::MetaSchema {
        description: Some(description),
        format: Some(format),
        ..poem_openapi::registry::MetaSchema::new("string")
    }
}

/// A string schema listing every accepted value.
pub(crate) fn enum_schema(
    description: &'static str,
    values: &[&'static str],
) -> poem_openapi::registry::MetaSchema {
    poem_openapi::registry::MetaSchema {
        description: Some(description),
        enum_items: values.iter().map(|v| serde_json::json!(v)).collect(),
        ..poem_openapi::registry::MetaSchema::new("string")
    }
}

/// A string schema accepting each of `values` in any ASCII case: a pattern, since a JSON Schema
/// `enum` is case-sensitive.
pub(crate) fn any_case_schema(
    description: &'static str,
    values: &[&'static str],
) -> poem_openapi::registry::MetaSchema {
    let alternatives: Vec<String> = values
        .iter()
        .map(|value| {
            value
                .chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                    } else {
                        regex_escape(c)
                    }
                })
                .collect()
        })
        .collect();
    poem_openapi::registry::MetaSchema {
        description: Some(description),
        pattern: Some(format!("^({})$", alternatives.join("|"))),
        example: values.first().map(|v| serde_json::json!(v)),
        ..poem_openapi::registry::MetaSchema::new("string")
    }
}

fn regex_escape(c: char) -> String {
    if "\\^$.|?*+()[]{}".contains(c) {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_clamp() {
        assert_eq!(clamp(None, 20, 1, 100), 20);
        assert_eq!(clamp(Some(500), 20, 1, 100), 100);
        assert_eq!(clamp(Some(0), 20, 1, 100), 1);
        assert_eq!(clamp(Some(-5), 20, 1, 100), 1);
    }

    #[test]
    fn pages_clamp_limit_and_offset() {
        assert_eq!(page(None, None, 50, 200), (50, 0));
        assert_eq!(page(Some(10_000), Some(-3), 50, 200), (200, 0));
        assert_eq!(page(Some(0), Some(7), 50, 200), (1, 7));
    }
}
