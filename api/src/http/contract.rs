//! The OpenAPI document as served at `/v1/openapi.json` and `/docs`: the one poem-openapi
//! derives from the route types, completed with what types cannot say.
//!
//! - Every optional property is `nullable`: the server writes `null` for an absent value and
//!   accepts `null` for an optional field.
//! - Bounds that come from configuration (the publish fee a prepare-mint must cover, the shield
//!   terms version a backer signs) are written in from the running settings.
//!
//! It also knows each path's template, the methods it serves and the credential each operation
//! asks for: the `Allow` header of a 405, the 401 of a missing security header and the route
//! label of a metric all come from the document, so none is a second list to keep in step.

use std::collections::HashMap;

use poem::http::Method;
use serde_json::{json, Value};

/// A value written into the document: `schemas.<schema>.properties.<property>.<key> = value`,
/// or `schemas.<schema>.<key> = value` for a rule about the whole object (no property).
pub struct Patch {
    pub schema: &'static str,
    pub property: Option<&'static str>,
    pub key: &'static str,
    pub value: Value,
}

pub struct Contract {
    document: String,
    /// Each object schema's properties by the kind of value they hold (the title a value
    /// type's schema carries): a parse error names the kind, a client needs the field.
    fields: HashMap<String, Vec<(String, String)>>,
    /// The templates by their number of segments: a request path is compared only with those
    /// of its own length.
    by_length: Vec<Vec<PathTemplate>>,
}

/// One path of the document (or one of the plain routes beside it).
struct PathTemplate {
    /// The full template, `/v1/narratives/{id}`: the route label of its metrics.
    template: String,
    /// The template's segments, `None` for a `{parameter}`.
    segments: Vec<Option<String>>,
    /// Which segments are literal, the first one in the highest bit: of two templates that both
    /// match a path, the router serves the greater (a literal wins over a parameter, from the
    /// left).
    precedence: u64,
    operations: Vec<Operation>,
}

struct Operation {
    method: Method,
    /// The security scheme the operation asks for (`AdminAuth`, `ApiKeyAuth`…), if any.
    scheme: Option<String>,
    /// The query parameters it declares, sorted: the only ones that can change its answer
    /// (poem-openapi ignores the others).
    query: Vec<String>,
}

/// A `GET` route as the response cache sees it.
pub struct GetRoute<'a> {
    /// Its template: the route label.
    pub template: &'a str,
    /// The query parameters its operation declares, sorted.
    pub query: &'a [String],
}

/// The most segments a template may have: a request path is split onto the stack with room
/// for this many.
const MAX_SEGMENTS: usize = 16;

/// The label of a request no route serves (so that unknown paths cannot grow the label set).
pub const UNMATCHED: &str = "unmatched";

impl Contract {
    /// Completes `spec` (poem-openapi's JSON, served under `/v1`); `plain_routes` are the
    /// GET-only paths served beside it (`/health`, the document itself…). Panics when a patch
    /// names a property the document does not have: the routes and the patches disagree, a bug
    /// to see at start.
    pub fn new(spec: &str, patches: &[Patch], plain_routes: &[&str]) -> Contract {
        let mut document: Value = serde_json::from_str(spec).expect("poem-openapi writes JSON");
        let schemas = document["components"]["schemas"]
            .as_object_mut()
            .expect("the document has component schemas");
        for schema in schemas.values_mut() {
            nullable_optionals(schema);
        }
        for patch in patches {
            let schema = schemas.get_mut(patch.schema);
            let target = match patch.property {
                Some(property) => schema.and_then(|s| s["properties"].get_mut(property)),
                None => schema,
            };
            let target = target.and_then(Value::as_object_mut).unwrap_or_else(|| {
                panic!(
                    "the document has no property {}.{}",
                    patch.schema,
                    patch.property.unwrap_or("(itself)")
                )
            });
            target.insert(patch.key.to_owned(), patch.value.clone());
        }
        let documented =
            document["paths"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(template, operations)| {
                    let operations = operations
                        .as_object()
                        .into_iter()
                        .flatten()
                        .filter_map(|(method, operation)| {
                            Some(Operation {
                                method: method.to_ascii_uppercase().parse().ok()?,
                                scheme: operation["security"][0]
                                    .as_object()
                                    .and_then(|s| s.keys().next().cloned()),
                                query: query_parameters(operation),
                            })
                        })
                        .collect();
                    PathTemplate::new(format!("/v1{template}"), operations)
                });
        let plain = plain_routes.iter().map(|path| {
            let get = Operation {
                method: Method::GET,
                scheme: None,
                query: Vec::new(),
            };
            PathTemplate::new((*path).to_owned(), vec![get])
        });
        let fields = document["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, schema)| (name.clone(), fields_by_kind(schema)))
            .collect();
        Contract {
            document: serde_json::to_string_pretty(&document).expect("JSON"),
            fields,
            by_length: documented
                .chain(plain)
                .fold(Vec::new(), |mut by_length, route| {
                    let length = route.segments.len();
                    if by_length.len() <= length {
                        by_length.resize_with(length + 1, Vec::new);
                    }
                    by_length[length].push(route);
                    by_length
                }),
        }
    }

    pub fn document(&self) -> &str {
        &self.document
    }

    /// The template `path` is served by. Like the router, a literal segment wins over a
    /// parameter.
    /// Every request asks this a few times (metrics, cache, gates), so it allocates nothing,
    /// and the path is split once, onto the stack, rather than again for each template of its
    /// length (that re-split was most of this lookup's 5.5 % of a cached route's samples).
    fn route(&self, path: &str) -> Option<&PathTemplate> {
        let mut segments = [""; MAX_SEGMENTS];
        let mut count = 0;
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            // Longer than every template (`new` keeps them within the bound).
            *segments.get_mut(count)? = segment;
            count += 1;
        }
        let segments = &segments[..count];
        self.by_length
            .get(count)?
            .iter()
            .filter(|route| {
                route
                    .segments
                    .iter()
                    .zip(segments)
                    .all(|(t, s)| t.as_deref().is_none_or(|literal| literal == *s))
            })
            .max_by_key(|route| route.precedence)
    }

    /// The methods served at `path` (a request path, e.g. `/v1/narratives/x`), `HEAD` wherever
    /// `GET` is; `None` when no route has that path.
    pub fn allowed_methods(&self, path: &str) -> Option<Vec<Method>> {
        let mut methods: Vec<Method> = self
            .route(path)?
            .operations
            .iter()
            .map(|o| o.method.clone())
            .collect();
        if methods.contains(&Method::GET) && !methods.contains(&Method::HEAD) {
            methods.push(Method::HEAD);
        }
        Some(methods)
    }

    /// The security scheme the operation at `method path` asks for.
    pub fn security_scheme(&self, method: &Method, path: &str) -> Option<&str> {
        self.route(path)?
            .operations
            .iter()
            .find(|o| o.method == *method)?
            .scheme
            .as_deref()
    }

    /// The metric label of a request: its route's template, or [`UNMATCHED`].
    pub fn route_label(&self, path: &str) -> &str {
        self.route(path).map_or(UNMATCHED, |r| r.template.as_str())
    }

    /// The properties of the object schema `object` that hold a value of `kind` (a value type's
    /// name, as poem-openapi's parse errors give it), alphabetically.
    pub fn fields_of_kind(&self, object: &str, kind: &str) -> Vec<&str> {
        self.fields
            .get(object)
            .into_iter()
            .flatten()
            .filter(|(_, k)| k == kind)
            .map(|(field, _)| field.as_str())
            .collect()
    }

    /// Whether the document has an object schema named `name`.
    pub fn has_object(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    /// The `GET` operation served at `path`, if there is one.
    pub fn get_route(&self, path: &str) -> Option<GetRoute<'_>> {
        let route = self.route(path)?;
        let get = route.operations.iter().find(|o| o.method == Method::GET)?;
        Some(GetRoute {
            template: &route.template,
            query: &get.query,
        })
    }
}

/// `schema`'s properties with the kind each holds: the title of its own schema, of its items
/// (an array), or of the one schema it wraps (`allOf` of a nullable value); `(property, kind)`.
fn fields_by_kind(schema: &Value) -> Vec<(String, String)> {
    let kind_of = |property: &Value| -> Option<String> {
        [
            &property["title"],
            &property["items"]["title"],
            &property["allOf"][0]["title"],
        ]
        .into_iter()
        .find_map(|title| title.as_str().map(str::to_owned))
    };
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), kind_of(property)?)))
        .collect()
}

/// The names of the query parameters an operation of the document declares, sorted.
fn query_parameters(operation: &Value) -> Vec<String> {
    let mut names: Vec<String> = operation["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    names.sort_unstable();
    names
}

impl PathTemplate {
    fn new(template: String, operations: Vec<Operation>) -> PathTemplate {
        let segments = template
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
            .collect::<Vec<_>>();
        assert!(
            segments.len() <= MAX_SEGMENTS,
            "{template} has more than {MAX_SEGMENTS} segments"
        );
        let precedence = segments
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, s)| s.is_some())
            .fold(0u64, |bits, (i, _)| bits | 1 << (63 - i));
        PathTemplate {
            template,
            segments,
            precedence,
            operations,
        }
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
            // OpenAPI 3.0.3: an enum that does not list null does not allow it, nullable or not.
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                if !values.contains(&Value::Null) {
                    values.push(Value::Null);
                }
            }
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
                "/narratives": {"get": {"parameters": [
                    {"name": "limit", "in": "query"},
                    {"name": "id", "in": "path"},
                    {"name": "filter", "in": "query"},
                    {"name": "X-Api-Key", "in": "header"},
                ]}},
                "/narratives/{id}": {"get": {}},
                "/narratives/publish": {"post": {}},
                "/narratives/{id}/back": {"post": {"security": [{"ApiKeyAuth": []}]}},
                "/admin/system/halt": {"post": {"security": [{"AdminAuth": []}]}},
            },
            "components": {"schemas": {
                "Thing": {
                    "type": "object",
                    "required": ["id", "side"],
                    "properties": {
                        "id": {"type": "string"},
                        "note": {"type": "string"},
                        "tier": {"type": "string", "enum": ["free", "pro"]},
                        "side": {"type": "string", "enum": ["yes", "no"]},
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
                property: Some("n"),
                key: "minimum",
                value: json!(5),
            }],
            &[],
        );
        let document: Value = serde_json::from_str(contract.document()).unwrap();
        let thing = &document["components"]["schemas"]["Thing"]["properties"];
        assert_eq!(thing["id"].get("nullable"), None);
        assert_eq!(thing["note"]["nullable"], true);
        // An optional enum lists null among its values; a required one does not.
        assert_eq!(thing["tier"]["enum"], json!(["free", "pro", null]));
        assert_eq!(thing["side"]["enum"], json!(["yes", "no"]));
        assert_eq!(
            thing["child"],
            json!({"allOf": [{"$ref": "#/components/schemas/Child"}], "nullable": true, "description": "d"})
        );
        let child = &document["components"]["schemas"]["Child"]["properties"]["n"];
        assert_eq!(child["minimum"], 5);
        assert_eq!(child["nullable"], true);
    }

    #[test]
    fn a_patch_without_a_property_states_a_rule_of_the_whole_object() {
        let rule = json!([{"required": ["id"]}, {"required": ["note"]}]);
        let contract = Contract::new(
            &spec(),
            &[Patch {
                schema: "Thing",
                property: None,
                key: "anyOf",
                value: rule.clone(),
            }],
            &[],
        );
        let document: Value = serde_json::from_str(contract.document()).unwrap();
        assert_eq!(document["components"]["schemas"]["Thing"]["anyOf"], rule);
    }

    #[test]
    #[should_panic(expected = "no property Child.missing")]
    fn a_patch_of_a_missing_property_is_a_bug_seen_at_start() {
        Contract::new(
            &spec(),
            &[Patch {
                schema: "Child",
                property: Some("missing"),
                key: "minimum",
                value: json!(1),
            }],
            &[],
        );
    }

    #[test]
    fn allowed_methods_follow_the_router() {
        let contract = Contract::new(&spec(), &[], &["/health"]);
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
        assert_eq!(
            contract.allowed_methods("/health"),
            Some(vec![Method::GET, Method::HEAD])
        );
        assert_eq!(contract.allowed_methods("/v1/nothing/here"), None);
        assert_eq!(
            contract.allowed_methods("/narratives"),
            None,
            "not under /v1"
        );
    }

    #[test]
    fn operations_name_their_credential() {
        let contract = Contract::new(&spec(), &[], &[]);
        assert_eq!(
            contract.security_scheme(&Method::POST, "/v1/admin/system/halt"),
            Some("AdminAuth")
        );
        assert_eq!(
            contract.security_scheme(&Method::POST, "/v1/narratives/x/back"),
            Some("ApiKeyAuth")
        );
        assert_eq!(
            contract.security_scheme(&Method::GET, "/v1/narratives/x"),
            None
        );
        assert_eq!(
            contract.security_scheme(&Method::GET, "/v1/admin/system/halt"),
            None,
            "a method the path does not serve asks for nothing"
        );
    }

    #[test]
    fn route_labels_are_templates_so_ids_cannot_grow_the_label_set() {
        let contract = Contract::new(&spec(), &[], &["/health"]);
        assert_eq!(contract.route_label("/v1/narratives"), "/v1/narratives");
        assert_eq!(
            contract.route_label(&format!("/v1/narratives/{}", "ab".repeat(32))),
            "/v1/narratives/{id}"
        );
        assert_eq!(
            contract.route_label("/v1/narratives/abc1"),
            "/v1/narratives/{id}"
        );
        assert_eq!(
            contract.route_label("/v1/narratives/publish"),
            "/v1/narratives/publish"
        );
        assert_eq!(contract.route_label("/health"), "/health");
        assert_eq!(contract.route_label("/v1/anything/else/at/all"), UNMATCHED);
        assert_eq!(contract.route_label("/wp-login.php"), UNMATCHED);
        // Longer than any template may be: unmatched, not a panic or a read past the stack.
        assert_eq!(
            contract.route_label(&"/v1".repeat(MAX_SEGMENTS + 1)),
            UNMATCHED
        );
        assert_eq!(contract.route_label(&"/x".repeat(10_000)), UNMATCHED);
    }

    #[test]
    fn get_routes_name_their_declared_query_parameters() {
        let contract = Contract::new(&spec(), &[], &["/health"]);
        let feed = contract.get_route("/v1/narratives").unwrap();
        assert_eq!(feed.template, "/v1/narratives");
        assert_eq!(feed.query, ["filter", "limit"]);
        let one = contract.get_route("/v1/narratives/abc1").unwrap();
        assert_eq!(one.template, "/v1/narratives/{id}");
        assert!(one.query.is_empty());
        assert!(contract.get_route("/v1/narratives/publish").is_none());
        assert!(contract.get_route("/health").unwrap().query.is_empty());
        assert!(contract.get_route("/wp-login.php").is_none());
    }
}
