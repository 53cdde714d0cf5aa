//! Polishing a thesis (spec 4.1 polish-text / polish-voice): an OpenAI-compatible chat model
//! when configured, otherwise a local polisher that tidies the text without rewording it. Both
//! answer in the input's language: the model is told to, and the local one never translates.

use crate::providers::chat::ChatModel;

#[async_trait::async_trait]
pub trait Polisher: Send + Sync {
    async fn polish(&self, text: &str) -> anyhow::Result<String>;
}

/// The instruction the model gets; the thesis travels as the user message.
pub const INSTRUCTION: &str = "Rewrite the user's prediction-market thesis as one clear, \
falsifiable YES/NO statement with a date if it has one. Keep its meaning. Answer only with the \
statement, in the same language as the user's text.";

/// An OpenAI-compatible chat model.
pub struct ChatPolisher(pub ChatModel);

#[async_trait::async_trait]
impl Polisher for ChatPolisher {
    async fn polish(&self, text: &str) -> anyhow::Result<String> {
        self.0.complete(INSTRUCTION, text).await
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
