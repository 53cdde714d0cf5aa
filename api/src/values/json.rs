//! A JSON document kept as received: an object or an array.

use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON};
use serde_json::Value;

use super::value_type;

#[derive(Debug, Clone, PartialEq)]
pub struct JsonDocument(pub Value);

value_type!(
    [] JsonDocument,
    "json_document",
    MetaSchema {
        description: Some("A JSON object or array."),
        any_of: vec![
            MetaSchemaRef::Inline(Box::new(MetaSchema::new("object"))),
            MetaSchemaRef::Inline(Box::new(MetaSchema {
                items: Some(Box::new(MetaSchemaRef::Inline(Box::new(MetaSchema::ANY)))),
                ..MetaSchema::new("array")
            })),
        ],
        ..MetaSchema::ANY
    }
);

impl ParseFromJSON for JsonDocument {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            value @ (Value::Object(_) | Value::Array(_)) => Ok(JsonDocument(value)),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl ToJSON for JsonDocument {
    fn to_json(&self) -> Option<Value> {
        Some(self.0.clone())
    }
}
