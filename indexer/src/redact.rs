//! Text that quotes a node's URL, without the credentials the URL may carry (an API key in
//! its query or path, user info): RPC providers put keys in the URL, and their clients quote
//! the URL in their errors, which are logged and may be answered.

/// Removes what a node URL may carry of a credential from text that quotes it: the URL whole
/// (as configured, and as the HTTP client normalizes it) becomes its origin, and its query,
/// user info and path become `[redacted]` wherever they still appear.
pub struct Redactor {
    /// The URLs as written (and normalized), longest first.
    urls: Vec<(String, String)>,
    /// Fragments that may hold a credential, longest first.
    fragments: Vec<String>,
    /// What is shown instead of the (first) URL: its scheme, host and port.
    shown: String,
}

impl Redactor {
    /// Shorter fragments are not taken for credentials (and replacing them would garble text).
    const MIN_FRAGMENT: usize = 4;

    pub fn new(url: &str) -> Redactor {
        Redactor::for_urls(&[url])
    }

    /// One redactor for several URLs (a gRPC endpoint and its JSON-RPC node); each is shown
    /// as its origin, and [`Redactor::shown`] is the first's.
    pub fn for_urls(all: &[&str]) -> Redactor {
        let mut urls = Vec::new();
        let mut fragments = Vec::new();
        for url in all {
            let shown = Self::origin(url);
            urls.push(((*url).to_owned(), shown.clone()));
            if let Ok(parsed) = url::Url::parse(url) {
                urls.push((parsed.to_string(), shown));
                fragments.extend(parsed.query().map(str::to_owned));
                fragments.extend(url.split_once('?').map(|(_, query)| query.to_owned()));
                fragments.push(parsed.username().to_owned());
                fragments.extend(parsed.password().map(str::to_owned));
                let path = parsed.path().trim_matches('/');
                fragments.push(path.to_owned());
                // Each segment too: a token is often one segment of several.
                fragments.extend(path.split('/').map(str::to_owned));
            }
        }
        let shown = Self::origin(all.first().copied().unwrap_or_default());
        fragments.retain(|f| f.len() >= Self::MIN_FRAGMENT);
        fragments.sort_by_key(|s| std::cmp::Reverse(s.len()));
        fragments.dedup();
        urls.sort_by_key(|(url, _)| std::cmp::Reverse(url.len()));
        urls.dedup();
        Redactor {
            urls,
            fragments,
            shown,
        }
    }

    /// What a URL is shown as: its scheme, host and port.
    fn origin(url: &str) -> String {
        match url::Url::parse(url) {
            Ok(parsed) => parsed.origin().ascii_serialization(),
            Err(_) => "the configured RPC URL".to_owned(),
        }
    }

    /// What the (first) URL is shown as in place of itself.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// An error as it is logged (`{error:#}`, its causes included), cleaned.
    pub fn error(&self, error: &anyhow::Error) -> String {
        self.clean(&format!("{error:#}"))
    }

    /// `text` with the URL and its secrets taken out.
    pub fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (url, shown) in &self.urls {
            text = text.replace(url.as_str(), shown);
        }
        for fragment in &self.fragments {
            text = text.replace(fragment.as_str(), "[redacted]");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Redactor;

    #[test]
    fn the_node_urls_credentials_are_taken_out_of_text() {
        let redactor =
            Redactor::new("https://user:pass-99@rpc.example:8443/v2/path-token-42?api-key=key-77");
        let text = "error sending request for url (https://user:pass-99@rpc.example:8443/v2/path-token-42?api-key=key-77): refused; api-key=key-77 path-token-42";
        let cleaned = redactor.clean(text);
        for secret in ["key-77", "pass-99", "path-token-42", "user:"] {
            assert!(!cleaned.contains(secret), "{secret} in {cleaned}");
        }
        assert!(cleaned.contains("https://rpc.example:8443"), "{cleaned}");
        assert!(cleaned.contains("refused"), "{cleaned}");
        // Without a credential, nothing changes but the URL itself.
        let plain = Redactor::new("http://127.0.0.1:8899");
        assert_eq!(
            plain.clean("node at http://127.0.0.1:8899/ is down"),
            "node at http://127.0.0.1:8899 is down"
        );
    }

    #[test]
    fn each_of_several_urls_is_shown_as_its_own_origin() {
        let redactor = Redactor::for_urls(&[
            "https://grpc.example:10000/x-token-31",
            "https://rpc.example/?api-key=key-77",
        ]);
        let cleaned = redactor.clean(
            "subscribe to https://grpc.example:10000/x-token-31 failed; \
             snapshot from https://rpc.example/?api-key=key-77 failed",
        );
        assert_eq!(
            cleaned,
            "subscribe to https://grpc.example:10000 failed; snapshot from https://rpc.example failed"
        );
        assert_eq!(redactor.shown(), "https://grpc.example:10000");
    }
}
