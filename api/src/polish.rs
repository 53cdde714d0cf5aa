//! Polishing a thesis (spec 4.1 polish-text / polish-voice): an OpenAI-compatible chat model
//! when configured, otherwise a local polisher that tidies the text without rewording it. Both
//! answer in the input's language: the model is told to, and the local one never translates.

use std::time::Duration;

use serde_json::{json, Value};

#[async_trait::async_trait]
pub trait Polisher: Send + Sync {
    async fn polish(&self, text: &str) -> anyhow::Result<String>;
}

/// The instruction the model gets; the thesis travels as the user message.
pub const INSTRUCTION: &str = "Rewrite the user's prediction-market thesis as one clear, \
falsifiable YES/NO statement with a date if it has one. Keep its meaning. Answer only with the \
statement, in the same language as the user's text.";

/// `POST {base}/chat/completions` of an OpenAI-compatible API.
pub struct ChatPolisher {
    http: reqwest::Client,
    base: String,
    key: String,
    model: String,
}

impl ChatPolisher {
    pub fn new(base: &str, key: String, model: String) -> anyhow::Result<Self> {
        Ok(ChatPolisher {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()?,
            base: base.trim_end_matches('/').to_owned(),
            key,
            model,
        })
    }
}

#[async_trait::async_trait]
impl Polisher for ChatPolisher {
    async fn polish(&self, text: &str) -> anyhow::Result<String> {
        let answer: Value = self
            .http
            .post(format!("{}/chat/completions", self.base))
            .bearer_auth(&self.key)
            .json(&json!({
                "model": self.model,
                "temperature": 0.2,
                "messages": [
                    {"role": "system", "content": INSTRUCTION},
                    {"role": "user", "content": text},
                ],
            }))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let polished = answer["choices"][0]["message"]["content"]
            .as_str()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| anyhow::anyhow!("the model answered no text"))?;
        Ok(polished.to_owned())
    }
}

/// Collapses whitespace, capitalises the first letter and ends the sentence, in any language.
pub struct LocalPolisher;

#[async_trait::async_trait]
impl Polisher for LocalPolisher {
    async fn polish(&self, text: &str) -> anyhow::Result<String> {
        Ok(tidy(text))
    }
}

pub fn tidy(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = collapsed.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    if !out.ends_with(['.', '?', '!', '。', '？', '！']) {
        // Chinese and Japanese end a sentence with their own full stop.
        let cjk = out
            .chars()
            .last()
            .is_some_and(|c| ('\u{3000}'..='\u{9fff}').contains(&c));
        out.push(if cjk { '。' } else { '.' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn tidying_keeps_words_and_language() {
        assert_eq!(
            tidy("  sol   above 300  by june "),
            "Sol above 300 by june."
        );
        assert_eq!(tidy("¿el bitcoin supera 100k?"), "¿el bitcoin supera 100k?");
        assert_eq!(tidy("éthereum dépasse 5000"), "Éthereum dépasse 5000.");
        assert_eq!(
            tidy("比特币年底前突破十万美元"),
            "比特币年底前突破十万美元。"
        );
        assert_eq!(tidy("   "), "");
    }
}
