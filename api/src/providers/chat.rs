//! The OpenAI-compatible chat API behind the AI providers (polishing, thesis review, drafts):
//! `POST {base}/chat/completions` with a system instruction and the user's text.

use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use serde_json::{json, Value};

pub struct ChatModel {
    http: reqwest::Client,
    base: String,
    key: Option<SecretString>,
    model: String,
}

impl ChatModel {
    pub fn new(base: &str, key: Option<SecretString>, model: String) -> anyhow::Result<Self> {
        Ok(ChatModel {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()?,
            base: base.trim_end_matches('/').to_owned(),
            key,
            model,
        })
    }

    /// The model's text answer to `user` under `instruction`.
    pub async fn complete(&self, instruction: &str, user: &str) -> anyhow::Result<String> {
        self.ask(instruction, user, false).await
    }

    /// The model's answer as a JSON object (`response_format: json_object`).
    pub async fn complete_json(&self, instruction: &str, user: &str) -> anyhow::Result<Value> {
        let text = self.ask(instruction, user, true).await?;
        serde_json::from_str(&text).context("the model did not answer JSON")
    }

    async fn ask(&self, instruction: &str, user: &str, json_mode: bool) -> anyhow::Result<String> {
        let mut request = json!({
            "model": self.model,
            "temperature": 0.2,
            "messages": [
                {"role": "system", "content": instruction},
                {"role": "user", "content": user},
            ],
        });
        if json_mode {
            request["response_format"] = json!({"type": "json_object"});
        }
        let mut post = self.http.post(format!("{}/chat/completions", self.base));
        if let Some(key) = &self.key {
            post = post.bearer_auth(key.expose_secret());
        }
        let answer: Value = post
            .json(&request)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        answer["choices"][0]["message"]["content"]
            .as_str()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| anyhow::anyhow!("the model answered no text"))
    }
}
