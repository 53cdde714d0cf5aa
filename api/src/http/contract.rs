//! The OpenAPI document as served at `/v1/openapi.json` and `/docs`: the one poem-openapi
//! derives from the route types, completed with what types cannot say.
//!
//! - Every optional property is `nullable`: the server writes `null` for an absent value and
//!   accepts `null` for an optional field.
//! - Bounds that come from configuration (the publish fee a prepare-mint must cover, the shield
//!   terms version a backer signs) are written in from the running settings.
//!
//! It also knows which methods each path serves, for the `Allow` header of a 405.

use poem::http::Method;
use serde_json::{json, Value};

/// A value written into the document: `schemas.<schema>.properties.<property>.<key> = value`.
pub struct Patch {
    pub schema: &'static str,
    pub property: &'static str,
    pub key: &'static str,
    pub value: Value,
}

pub struct Contract {
    document: String,
    /// Path templates under `/v1`, split in segments (`None` for a `{parameter}`), with the
    /// methods each serves.
    paths: Vec<(Vec<Option<String>>, Vec<Method>)>,
}

impl Contract {
    /// Completes `spec` (poem-openapi's JSON). Panics when a patch names a property the
    /// document does not have: the routes and the patches disagree, a bug to see at start.
    pub fn new(spec: &str, patches: &[Patch]) -> Contract {
        let mut document: Value = serde_json::from_str(spec).expect("poem-openapi writes JSON");
        let schemas = document["components"]["schemas"]
            .as_object_mut()
            .expect("the document has component schemas");
        for schema in schemas.values_mut() {
            nullable_optionals(schema);
        }
        for patch in patches {
            let property = schemas
                .get_mut(patch.schema)
                .and_then(|s| s["properties"].get_mut(patch.property))
                .and_then(Value::as_object_mut)
                .unwrap_or_else(|| {
                    panic!(
                        "the document has no property {}.{}",
                        patch.schema, patch.property
                    )
                });
            property.insert(patch.key.to_owned(), patch.value.clone());
        }
        let paths = document["paths"]
            .as_object()
            .map(|paths| {
                paths
                    .iter()
                    .map(|(template, operations)| {
                        let segments = template
                            .split('/')
                            .filter(|s| !s.is_empty())
                            .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                            .collect();
                        let methods = operations
                            .as_object()
                            .into_iter()
                            .flat_map(|ops| ops.keys())
                            .filter_map(|m| m.to_ascii_uppercase().parse().ok())
                            .collect();
                        (segments, methods)
                    })
                    .collect()
            })
            .unwrap_or_default();
        Contract {
            document: serde_json::to_string_pretty(&document).expect("JSON"),
            paths,
        }
    }

    pub fn document(&self) -> &str {
        &self.document
    }

    /// The methods served at `path` (a request path under `/v1`, e.g. `/v1/narratives/x`),
    /// `HEAD` wherever `GET` is; `None` when no route has that path. Like the router, a literal
    /// segment wins over a parameter.
    pub fn allowed_methods(&self, path: &str) -> Option<Vec<Method>> {
        let rest = path.strip_prefix("/v1")?;
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        let best = self
            .paths
            .iter()
            .filter(|(template, _)| {
                template.len() == segments.len()
                    && template
                        .iter()
                        .zip(&segments)
                        .all(|(t, s)| t.as_deref().is_none_or(|literal| literal == *s))
            })
            // Literal segments first, from the left.
            .max_by_key(|(template, _)| template.iter().map(|t| t.is_some()).collect::<Vec<_>>())?;
        let mut methods = best.1.clone();
        if methods.contains(&Method::GET) && !methods.contains(&Method::HEAD) {
            methods.push(Method::HEAD);
        }
        Some(methods)
    }
}

/// Marks every property that is not required as nullable, here and in nested inline objects.
fn nullable_optionals(schema: &mut Value) {
    let required: Vec<String> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        nullable_optionals(property);
        if let Some(items) = property.get_mut("items") {
            nullable_optionals(items);
        }
        if required.contains(name) {
            continue;
        }
        // OpenAPI 3.0 ignores keywords beside `$ref`: a nullable reference is an `allOf`.
        if let Some(reference) = property.get("$ref").cloned() {
            let description = property.get("description").cloned();
            *property = json!({"allOf": [{"$ref": reference}], "nullable": true});
            if let Some(description) = description {
                property["description"] = description;
            }
        } else if let Some(object) = property.as_object_mut() {
            object.insert("nullable".into(), json!(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> String {
        json!({
            "openapi": "3.0.0",
            "paths": {
                "/narratives": {"get": {}},
                "/narratives/{id}": {"get": {}},
                "/narratives/publish": {"post": {}},
                "/narratives/{id}/back": {"post": {}},
            },
            "components": {"schemas": {
                "Thing": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": {"type": "string"},
                        "note": {"type": "string"},
                        "child": {"$ref": "#/components/schemas/Child", "description": "d"},
                    },
                },
                "Child": {"type": "object", "properties": {"n": {"type": "integer"}}},
            }},
        })
        .to_string()
    }

    #[test]
    fn optional_properties_are_nullable_and_patches_apply() {
        let contract = Contract::new(
            &spec(),
            &[Patch {
                schema: "Child",
                property: "n",
                key: "minimum",
                value: json!(5),
            }],
        );
        let document: Value = serde_json::from_str(contract.document()).unwrap();
        let thing = &document["components"]["schemas"]["Thing"]["properties"];
        assert_eq!(thing["id"].get("nullable"), None);
        assert_eq!(thing["note"]["nullable"], true);
        assert_eq!(
            thing["child"],
            json!({"allOf": [{"$ref": "#/components/schemas/Child"}], "nullable": true, "description": "d"})
        );
        let child = &document["components"]["schemas"]["Child"]["properties"]["n"];
        assert_eq!(child["minimum"], 5);
        assert_eq!(child["nullable"], true);
    }

    #[test]
    #[should_panic(expected = "no property Child.missing")]
    fn a_patch_of_a_missing_property_is_a_bug_seen_at_start() {
        Contract::new(
            &spec(),
            &[Patch {
                schema: "Child",
                property: "missing",
                key: "minimum",
                value: json!(1),
            }],
        );
    }

    #[test]
    fn allowed_methods_follow_the_router() {
        let contract = Contract::new(&spec(), &[]);
        assert_eq!(
            contract.allowed_methods("/v1/narratives/publish"),
            Some(vec![Method::POST])
        );
        assert_eq!(
            contract.allowed_methods("/v1/narratives/abc"),
            Some(vec![Method::GET, Method::HEAD])
        );
        assert_eq!(
            contract.allowed_methods("/v1/narratives/abc/back"),
            Some(vec![Method::POST])
        );
        assert_eq!(contract.allowed_methods("/v1/nothing/here"), None);
        assert_eq!(contract.allowed_methods("/health"), None);
    }
}
