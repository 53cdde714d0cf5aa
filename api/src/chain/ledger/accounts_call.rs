//! The `getMultipleAccounts` call, read straight into [`LedgerAccount`]s. It is the one node
//! call on the prepares' path (coalesced, [`super::coalesce`]), and `solana-rpc-client` reads
//! its answer three times over: the body into a `serde_json::Value`, that into `UiAccount`s
//! (an owned string each for owner and data), those into `Account`s; it also panics on an
//! account whose data does not decode (`expect` in `get_multiple_accounts_with_commitment`),
//! which a node, not this service, decides. Here the body is read once, borrowing its strings,
//! and anything unreadable is a [`LedgerError::Malformed`].
//!
//! The encoding asked is plain `base64`: the accounts the api reads are token accounts, reserves
//! and obligations (165 bytes to a few KiB), for which compression saves little on the wire and
//! a zstd context per account would cost more CPU than the copy it saves.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use narrative_sdk::Pubkey;
use serde::Deserialize;

use super::rpc::Redactor;
use super::{LedgerAccount, LedgerError};

/// As `solana-rpc-client`'s HTTP sender: a node that has not answered in 30 s is down.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What one call answers: the slot read at, and the accounts in the order asked.
pub type Accounts = (u64, Vec<Option<LedgerAccount>>);

pub struct AccountsCall {
    http: reqwest::Client,
    url: String,
    redactor: Arc<Redactor>,
    next_id: AtomicU64,
}

impl AccountsCall {
    pub fn new(url: &str, redactor: Arc<Redactor>) -> AccountsCall {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .unwrap_or_default();
        AccountsCall {
            http,
            url: url.to_owned(),
            redactor,
            next_id: AtomicU64::new(1),
        }
    }

    /// Reads `addresses` at `confirmed`.
    pub async fn read(&self, addresses: &[Pubkey]) -> Result<Accounts, LedgerError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let unavailable = |e: reqwest::Error| {
            LedgerError::Unavailable(self.redactor.clean(&format!("getMultipleAccounts: {e}")))
        };
        let response = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(request_body(id, addresses))
            .send()
            .await
            .map_err(unavailable)?;
        let status = response.status();
        if !status.is_success() {
            return Err(LedgerError::Unavailable(format!(
                "getMultipleAccounts: the node answered HTTP {status}"
            )));
        }
        let body = response.bytes().await.map_err(unavailable)?;
        parse(&body, addresses.len()).map_err(|e| match e {
            LedgerError::Unavailable(text) => LedgerError::Unavailable(self.redactor.clean(&text)),
            malformed => malformed,
        })
    }
}

/// The JSON-RPC request: addresses are base58, which JSON strings need no escaping for.
pub fn request_body(id: u64, addresses: &[Pubkey]) -> String {
    let mut body = String::with_capacity(128 + addresses.len() * 47);
    let _ = write!(
        body,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"getMultipleAccounts","params":[["#
    );
    for (i, address) in addresses.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        let _ = write!(body, "\"{address}\"");
    }
    body.push_str(r#"],{"commitment":"confirmed","encoding":"base64"}]}"#);
    body
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<Answer<'a>>,
    #[serde(default)]
    error: Option<NodeError>,
}

#[derive(Deserialize)]
struct Answer<'a> {
    context: Context,
    #[serde(borrow)]
    value: Vec<Option<Account<'a>>>,
}

#[derive(Deserialize)]
struct Context {
    slot: u64,
}

#[derive(Deserialize)]
struct Account<'a> {
    lamports: u64,
    #[serde(borrow)]
    owner: Cow<'a, str>,
    #[serde(borrow)]
    data: Data<'a>,
}

/// `[payload, encoding]`.
#[derive(Deserialize)]
struct Data<'a>(#[serde(borrow)] Cow<'a, str>, #[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
struct NodeError {
    code: i64,
    message: String,
}

/// Reads a `getMultipleAccounts` answer for `asked` addresses.
pub fn parse(body: &[u8], asked: usize) -> Result<Accounts, LedgerError> {
    let malformed = |what: String| LedgerError::Malformed(format!("getMultipleAccounts: {what}"));
    let envelope: Envelope =
        serde_json::from_slice(body).map_err(|e| malformed(format!("unreadable answer ({e})")))?;
    if let Some(error) = envelope.error {
        return Err(LedgerError::Unavailable(format!(
            "getMultipleAccounts: the node answered error {}: {}",
            error.code, error.message
        )));
    }
    let result = envelope
        .result
        .ok_or_else(|| malformed("neither result nor error".into()))?;
    if result.value.len() != asked {
        return Err(malformed(format!(
            "{} accounts for {asked} addresses",
            result.value.len()
        )));
    }
    let accounts = result
        .value
        .into_iter()
        .map(|account| account.map(decode).transpose())
        .collect::<Result<_, String>>()
        .map_err(malformed)?;
    Ok((result.context.slot, accounts))
}

fn decode(account: Account<'_>) -> Result<LedgerAccount, String> {
    let Data(payload, encoding) = account.data;
    if encoding != "base64" {
        return Err(format!("data in {encoding:?}, asked for base64"));
    }
    Ok(LedgerAccount {
        owner: account
            .owner
            .parse()
            .map_err(|_| format!("owner {:?} is not an address", account.owner))?,
        lamports: account.lamports,
        data: base64::engine::general_purpose::STANDARD
            .decode(payload.as_bytes())
            .map_err(|e| format!("data that is not base64 ({e})"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> Pubkey {
        Pubkey::new_from_array([byte; 32])
    }

    #[test]
    fn the_request_is_the_json_rpc_call_with_every_address_in_order() {
        let body: serde_json::Value =
            serde_json::from_str(&request_body(7, &[key(1), key(2)])).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "method": "getMultipleAccounts",
                "params": [[key(1).to_string(), key(2).to_string()],
                           {"commitment": "confirmed", "encoding": "base64"}]
            })
        );
        let empty: serde_json::Value = serde_json::from_str(&request_body(1, &[])).unwrap();
        assert_eq!(empty["params"][0], serde_json::json!([]));
    }

    #[test]
    fn accounts_are_read_in_order_with_escaped_strings_and_missing_ones() {
        // `\/` is a legal JSON escape of `/`, which base64 uses.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"context":{{"slot":88,"apiVersion":"2"}},"value":[
                {{"lamports":5,"owner":"{}","data":["AQI\/","base64"],"executable":false,"rentEpoch":0,"space":3}},
                null]}}}}"#,
            key(9)
        );
        let (slot, accounts) = parse(body.as_bytes(), 2).unwrap();
        assert_eq!(slot, 88);
        assert_eq!(
            accounts,
            vec![
                Some(LedgerAccount {
                    owner: key(9),
                    lamports: 5,
                    data: vec![1, 2, 0x3f]
                }),
                None
            ]
        );
    }

    #[test]
    fn what_cannot_be_read_is_an_error_not_a_panic() {
        let owner = key(3).to_string();
        let account = |owner: &str, data: &str, encoding: &str| {
            format!(
                r#"{{"result":{{"context":{{"slot":1}},"value":[{{"lamports":1,"owner":"{owner}","data":["{data}","{encoding}"]}}]}}}}"#
            )
        };
        for (body, asked, expected) in [
            (
                account(&owner, "AQID", "base64"),
                2,
                "1 accounts for 2 addresses",
            ),
            (account(&owner, "AQID", "base58"), 1, "data in \"base58\""),
            (account(&owner, "%%%", "base64"), 1, "not base64"),
            (
                account("not-a-key", "AQID", "base64"),
                1,
                "is not an address",
            ),
            ("{}".to_owned(), 1, "neither result nor error"),
            ("<html>".to_owned(), 1, "unreadable answer"),
        ] {
            match parse(body.as_bytes(), asked) {
                Err(LedgerError::Malformed(text)) => {
                    assert!(text.contains(expected), "{text} lacks {expected}")
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        let refused =
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"node is behind"}}"#;
        match parse(refused.as_bytes(), 1) {
            Err(LedgerError::Unavailable(text)) => {
                assert!(text.contains("-32005: node is behind"), "{text}")
            }
            other => panic!("{other:?}"),
        }
    }
}
