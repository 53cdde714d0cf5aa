//! Free text with its limits, and a callback URL. What counts as blank is ASCII whitespace
//! (space, tab, line feed, vertical tab, form feed, carriage return), here and in the schemas'
//! patterns alike, so a client validating against the document agrees with the server.

use std::fmt;
use std::str::FromStr;

use poem_openapi::registry::MetaSchema;
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON};
use serde_json::Value;

use super::{format_schema, string_value, value_type};

const BLANK: [char; 6] = [' ', '\t', '\n', '\u{0b}', '\u{0c}', '\r'];
const BLANK_CLASS: &str = "[\\t\\n\\x0b\\x0c\\r ]";
const NON_BLANK_CLASS: &str = "[^\\t\\n\\x0b\\x0c\\r ]";

/// Text of at most `MAX` characters as sent, with at least `MIN` characters that are not blank;
/// held trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<const MAX: usize, const MIN: usize = 1>(String);

impl<const MAX: usize, const MIN: usize> Text<MAX, MIN> {
    pub fn new(text: &str) -> Result<Self, String> {
        let non_blank = text.chars().filter(|c| !BLANK.contains(c)).count();
        if text.chars().count() > MAX || non_blank < MIN {
            return Err(if MIN <= 1 {
                format!("must be text of at most {MAX} characters, not blank")
            } else {
                format!("must be at most {MAX} characters with at least {MIN} that are not blank")
            });
        }
        Ok(Text(text.trim_matches(BLANK).to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// The text, or `None` when it is blank (an optional field left empty).
    pub fn non_empty(self) -> Option<String> {
        (!self.0.is_empty()).then_some(self.0)
    }

    /// The words separated by single spaces.
    pub fn collapsed(&self) -> String {
        self.0
            .split(BLANK)
            // Spelled out: poem-openapi's `Type::is_empty` (always false for `&str`) would be
            // picked over `str::is_empty` by method resolution here.
            .filter(|word| !str::is_empty(word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

value_type!(
    [const MAX: usize, const MIN: usize] Text<MAX, MIN>,
    "text",
    MetaSchema {
        max_length: Some(MAX),
        // Unanchored: `MIN` characters that are not blank, anywhere.
        pattern: (MIN > 0).then(|| format!("({NON_BLANK_CLASS}{BLANK_CLASS}*){{{MIN}}}")),
        description: (MIN == 0).then_some("Optional text; blank counts as none."),
        ..MetaSchema::new("string")
    }
);

impl<const MAX: usize, const MIN: usize> ParseFromJSON for Text<MAX, MIN> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::String(text) => Self::new(&text).map_err(ParseError::custom),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl<const MAX: usize, const MIN: usize> ToJSON for Text<MAX, MIN> {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(self.0.clone()))
    }
}

/// An `http` or `https` URL of at most 2,000 characters with a host. Whether the service may
/// call it is decided when it does (see `providers::outbound`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpsUrl(reqwest::Url);

impl HttpsUrl {
    const MAX_CHARS: usize = 2_000;

    pub fn url(&self) -> &reqwest::Url {
        &self.0
    }
}

impl FromStr for HttpsUrl {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const REFUSED: &str = "must be an http(s) URL with a host, at most 2000 characters";
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        if text.chars().count() > Self::MAX_CHARS
            || !(lower.starts_with("https://") || lower.starts_with("http://"))
        {
            return Err(REFUSED);
        }
        let url = reqwest::Url::parse(text).map_err(|_| REFUSED)?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(REFUSED);
        }
        Ok(HttpsUrl(url))
    }
}

impl fmt::Display for HttpsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

string_value!(HttpsUrl, "url", {
    let mut schema = format_schema(
        "An absolute http(s) URL with a host, at most 2,000 characters (format `https-url`). \
         The service calls only https URLs whose host resolves to public addresses (http and \
         loopback only where a development setting allows them).",
        "https-url",
    );
    schema.max_length = Some(HttpsUrl::MAX_CHARS);
    schema
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_bounded_and_trimmed() {
        type Name = Text<10>;
        assert_eq!(Name::new("  ada ").unwrap().as_str(), "ada");
        assert!(Name::new("   \t").is_err());
        assert!(Name::new("").is_err());
        assert!(Name::new("abcdefghijk").is_err());
        assert_eq!(Name::new("\u{a0}").unwrap().as_str(), "\u{a0}");
        assert_eq!(Text::<10, 0>::new("  ").unwrap().non_empty(), None);
        type Thesis = Text<40, 10>;
        assert!(Thesis::new("a b c d e f g h i").is_err());
        let thesis = Thesis::new(" SOL  above\n$300 ").unwrap();
        assert_eq!(thesis.collapsed(), "SOL above $300");
    }

    #[test]
    fn urls_are_http_or_https_with_a_host() {
        assert!("https://example.com/hook".parse::<HttpsUrl>().is_ok());
        assert!("HTTP://10.0.0.1:8080/x".parse::<HttpsUrl>().is_ok());
        assert!("ftp://example.com".parse::<HttpsUrl>().is_err());
        assert!("https://".parse::<HttpsUrl>().is_err());
        assert!("not a url".parse::<HttpsUrl>().is_err());
    }
}
