//! A JSON document kept as received: an object or an array.

use std::borrow::Cow;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct JsonDocument(pub Value);

impl Type for JsonDocument {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "json_document".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Inline(Box::new(MetaSchema {
            description: Some("A JSON object or array."),
            any_of: vec![
                MetaSchemaRef::Inline(Box::new(MetaSchema::new("object"))),
                MetaSchemaRef::Inline(Box::new(MetaSchema {
                    items: Some(Box::new(MetaSchemaRef::Inline(Box::new(MetaSchema::ANY)))),
                    ..MetaSchema::new("array")
                })),
            ],
            ..MetaSchema::ANY
        }))
    }

    fn as_raw_value(&self) -> Option<&Self> {
        Some(self)
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Self> + 'a> {
        Box::new(std::iter::once(self))
    }
}

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
