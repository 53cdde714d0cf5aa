//! An email address as the waitlist takes it: one `@`, a local part of the characters mail
//! systems accept unquoted, and a domain of dot-separated labels ending in a label of letters.
//! Held lower-case, so one address is one entry however it is typed.

use std::fmt;
use std::str::FromStr;

use super::{string_schema, string_value};

/// The rule, as the schema states it and [`Email::from_str`] applies it.
pub const EMAIL_PATTERN: &str = "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,24}$";
/// RFC 5321's limit on a whole address.
const MAX_LEN: usize = 254;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Email(String);

impl Email {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const LOCAL_SPECIALS: &str = "!#$%&'*+/=?^_`{|}~.-";

fn label_ok(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

impl FromStr for Email {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const REFUSED: &str = "must be an email address such as name@example.com";
        if text.len() > MAX_LEN {
            return Err(REFUSED);
        }
        let (local, domain) = text.split_once('@').ok_or(REFUSED)?;
        let local_ok = (1..=64).contains(&local.len())
            && local
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || LOCAL_SPECIALS.contains(c));
        let labels: Vec<&str> = domain.split('.').collect();
        let (tld, rest) = labels.split_last().ok_or(REFUSED)?;
        let domain_ok = !rest.is_empty()
            && rest.iter().all(|l| label_ok(l))
            && (2..=24).contains(&tld.len())
            && tld.chars().all(|c| c.is_ascii_alphabetic());
        if !(local_ok && domain_ok) {
            return Err(REFUSED);
        }
        Ok(Email(text.to_ascii_lowercase()))
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_value!(Email, "email", {
    let mut schema = string_schema(
        "An email address (stored lower-case): a local part of letters, digits and \
         !#$%&'*+/=?^_`{|}~.- up to 64 characters, `@`, and a domain of labels ending in 2–24 \
         letters; at most 254 characters.",
        EMAIL_PATTERN,
        // No `format: email`: generators read it as the RFC's far wider syntax, and the pattern
        // is the rule.
        None,
    );
    schema.max_length = Some(MAX_LEN);
    schema.example = Some(serde_json::json!("name@example.com"));
    schema
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_and_held_lower_case() {
        let email: Email = "Ada.Lovelace+nms@Example.CO.uk".parse().unwrap();
        assert_eq!(email.as_str(), "ada.lovelace+nms@example.co.uk");
        for refused in [
            "",
            "plain",
            "@example.com",
            "name@",
            "name@example",
            "name@@example.com",
            "na me@example.com",
            "name@-example.com",
            "name@example-.com",
            "name@exa_mple.com",
            "name@example.c",
            "name@example.c0m",
            "name@.example.com",
        ] {
            assert!(refused.parse::<Email>().is_err(), "{refused:?}");
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        assert!(long_local.parse::<Email>().is_err());
    }
}
