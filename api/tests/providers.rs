//! The real clients of outside providers against local HTTP servers: Turnstile's siteverify
//! and the JSON-RPC ledger (blockhashes, accounts, signatures, a token account's history).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use narrative_api::chain::ledger::rpc::{BLOCKHASH_RETRY_AFTER_SECS, BLOCKHASH_TTL_SECS};
use narrative_api::chain::ledger::{Ledger, LedgerError, RpcLedger};
use narrative_api::providers::human::{HumanVerifier, TurnstileVerifier, Verdict};
use poem::web::{Data, Form, Json};
use poem::{handler, post, EndpointExt, IntoResponse, Route};
use serde_json::{json, Value};

use common::serve_locally as serve;

#[derive(serde::Deserialize)]
struct Siteverify {
    secret: String,
    response: String,
    remoteip: Option<String>,
}

/// Cloudflare's documented answers: success, or failure with `error-codes`.
#[handler]
fn siteverify(Form(form): Form<Siteverify>) -> poem::Response {
    if form.secret != "sekret" {
        return Json(json!({"success": false, "error-codes": ["invalid-input-secret"]}))
            .into_response();
    }
    match (form.response.as_str(), form.remoteip.as_deref()) {
        ("good", Some("203.0.113.9")) => {
            Json(json!({"success": true, "error-codes": [], "hostname": "app.example"}))
                .into_response()
        }
        ("explode", _) => poem::Response::builder()
            .status(poem::http::StatusCode::BAD_GATEWAY)
            .finish(),
        _ => Json(json!({"success": false, "error-codes": ["invalid-input-response"]}))
            .into_response(),
    }
}

#[tokio::test]
async fn turnstile_client_posts_the_form_and_reads_the_verdict() {
    let base = serve(Route::new().at("/siteverify", post(siteverify))).await;
    let url = Some(format!("{base}/siteverify"));
    let ip = Some("203.0.113.9".parse().unwrap());
    let verifier = TurnstileVerifier::new("sekret".into(), url.clone()).unwrap();
    assert_eq!(verifier.verify("good", ip).await.unwrap(), Verdict::Human);
    assert_eq!(
        verifier.verify("bad", ip).await.unwrap(),
        Verdict::Refused(vec!["invalid-input-response".into()])
    );
    assert!(
        verifier.verify("explode", ip).await.is_err(),
        "a 502 is an outage, not a verdict"
    );
    let wrong_secret = TurnstileVerifier::new("other".into(), url).unwrap();
    assert_eq!(
        wrong_secret.verify("good", ip).await.unwrap(),
        Verdict::Refused(vec!["invalid-input-secret".into()])
    );
}

/// A JSON-RPC node answering the four methods the ledger uses, counting calls per method.
#[handler]
async fn rpc(Json(request): Json<Value>, Data(calls): Data<&Arc<Calls>>) -> Json<Value> {
    let method = request["method"].as_str().unwrap_or_default().to_owned();
    let result = match method.as_str() {
        "getLatestBlockhash" => {
            calls.blockhash.fetch_add(1, Ordering::SeqCst);
            json!({"context": {"slot": 77}, "value": {"blockhash": "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM", "lastValidBlockHeight": 1000}})
        }
        "getTransaction" => Value::Null,
        "getSignatureStatuses" => json!({"context": {"slot": 90}, "value": [
            {"slot": 89, "confirmations": 3, "err": null, "confirmationStatus": "confirmed", "status": {"Ok": null}}
        ]}),
        "sendTransaction" => {
            // The wire transaction, as a node decodes it; its first signature is the answer.
            use base64::Engine;
            assert_eq!(request["params"][1]["encoding"], "base64");
            let wire = base64::engine::general_purpose::STANDARD
                .decode(request["params"][0].as_str().unwrap())
                .unwrap();
            let tx: solana_transaction::versioned::VersionedTransaction =
                bincode::deserialize(&wire).unwrap();
            calls.sent.fetch_add(1, Ordering::SeqCst);
            json!(tx.signatures[0].to_string())
        }
        "getMultipleAccounts" => json!({"context": {"slot": 88}, "value": [
            {"lamports": 5, "owner": "11111111111111111111111111111111", "data": ["AQID", "base64"], "executable": false, "rentEpoch": 0, "space": 3},
            null
        ]}),
        _ => {
            return Json(
                json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}),
            )
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

#[derive(Default)]
struct Calls {
    blockhash: AtomicUsize,
    sent: AtomicUsize,
}

#[tokio::test]
async fn rpc_ledger_caches_blockhashes_and_reads_accounts_and_missing_transactions() {
    let calls = Arc::new(Calls::default());
    let base = serve(Route::new().at("/", post(rpc)).data(calls.clone())).await;
    let clock = narrative_api::clock::ManualClock::at(1_790_000_000);
    let ledger = RpcLedger::new(&base, clock.clone());
    let first = ledger.latest_blockhash().await.unwrap();
    assert_eq!(
        first.to_string(),
        "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM"
    );
    for _ in 0..5 {
        assert_eq!(ledger.latest_blockhash().await.unwrap(), first);
    }
    assert_eq!(
        calls.blockhash.load(Ordering::SeqCst),
        1,
        "served from the cache"
    );
    clock.advance(BLOCKHASH_TTL_SECS - 1);
    ledger.latest_blockhash().await.unwrap();
    assert_eq!(
        calls.blockhash.load(Ordering::SeqCst),
        1,
        "still cached just before the ttl"
    );
    clock.advance(1);
    ledger.latest_blockhash().await.unwrap();
    assert_eq!(
        calls.blockhash.load(Ordering::SeqCst),
        2,
        "refetched after the ttl"
    );
    // The system clock steps back (an NTP correction): the cached blockhash, now dated in the
    // future, is not served on until it expires by the clock.
    clock.advance(-60);
    ledger.latest_blockhash().await.unwrap();
    assert_eq!(
        calls.blockhash.load(Ordering::SeqCst),
        3,
        "refetched after the clock stepped back"
    );

    let unknown = solana_signature::Signature::from([1u8; 64]);
    assert_eq!(ledger.transaction(&unknown).await.unwrap(), None);

    let a = narrative_sdk::Pubkey::new_unique();
    let b = narrative_sdk::Pubkey::new_unique();
    let (slot, accounts) = ledger.accounts(&[a, b]).await.unwrap();
    assert_eq!(slot, 88);
    let first = accounts[0].as_ref().expect("first account");
    assert_eq!(
        (first.lamports, first.data.as_slice()),
        (5, &[1u8, 2, 3][..])
    );
    assert_eq!(accounts[1], None);
    // One call for the two addresses, as `/metrics` shows it.
    let metrics = ledger.metrics();
    assert!(
        metrics.contains("ledger_account_calls_total 1\n")
            && metrics.contains("ledger_account_addresses_total 2\n"),
        "{metrics}"
    );

    let status = ledger
        .signature_status(&unknown)
        .await
        .unwrap()
        .expect("a status");
    assert_eq!((status.slot, status.error), (89, None));

    // Sending skips nothing: the node gets the transaction and its signature comes back.
    let payer = solana_keypair::Keypair::new();
    let ix = anchor_lang::solana_program::system_instruction::transfer(
        &solana_signer::Signer::pubkey(&payer),
        &narrative_sdk::Pubkey::new_unique(),
        1,
    );
    let tx = solana_transaction::Transaction::new_signed_with_payer(
        &[ix],
        Some(&solana_signer::Signer::pubkey(&payer)),
        &[&payer],
        ledger.latest_blockhash().await.unwrap(),
    );
    let expected = tx.signatures[0];
    let sent = ledger
        .send(&solana_transaction::versioned::VersionedTransaction::from(
            tx,
        ))
        .await
        .unwrap();
    assert_eq!(sent, expected);
    assert_eq!(calls.sent.load(Ordering::SeqCst), 1);

    let down = RpcLedger::new("http://127.0.0.1:1", clock);
    assert!(matches!(
        down.latest_blockhash().await,
        Err(narrative_api::chain::ledger::LedgerError::Unavailable(_))
    ));
}

/// A node that answers every call with a JSON-RPC error (a node that has fallen behind),
/// counting them.
#[handler]
fn node_behind(Json(request): Json<Value>, Data(calls): Data<&Arc<AtomicUsize>>) -> Json<Value> {
    calls.fetch_add(1, Ordering::SeqCst);
    Json(json!({"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32005, "message": "Node is behind by 300 slots"}}))
}

/// Prepares that ask for a blockhash while a fetch of it fails share that failure instead of
/// each asking the node again in turn (against a node that hung, the n-th waited n of the
/// client's 30 s timeouts), and a failure is answered for BLOCKHASH_RETRY_AFTER_SECS before the
/// node is asked again.
#[tokio::test]
async fn a_failed_blockhash_fetch_is_shared_not_repeated_by_each_prepare() {
    let calls = Arc::new(AtomicUsize::new(0));
    let base = serve(Route::new().at("/", post(node_behind)).data(calls.clone())).await;
    let clock = narrative_api::clock::ManualClock::at(1_790_000_000);
    let ledger = Arc::new(RpcLedger::new(&base, clock.clone()));
    let prepares: Vec<_> = (0..8)
        .map(|_| {
            let ledger = ledger.clone();
            tokio::spawn(async move { ledger.latest_blockhash().await })
        })
        .collect();
    for prepare in prepares {
        let refused = prepare.await.unwrap().unwrap_err();
        assert!(
            matches!(&refused, LedgerError::Unavailable(text) if text.contains("behind")),
            "{refused}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one fetch for the eight");
    clock.advance(BLOCKHASH_RETRY_AFTER_SECS - 1);
    assert!(ledger.latest_blockhash().await.is_err());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "not asked within the retry time"
    );
    clock.advance(1);
    assert!(ledger.latest_blockhash().await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2, "asked again after it");
}

/// A token account's history on a JSON-RPC node: `count` transactions, newest first, one a
/// minute back from `newest`, each adding 1 to the balance; every tenth failed. The node
/// counts its pages.
struct History {
    account: narrative_sdk::Pubkey,
    mint: narrative_sdk::Pubkey,
    newest: i64,
    count: usize,
    pages: AtomicUsize,
}

impl History {
    fn signature(i: usize) -> String {
        let mut bytes = [0u8; 64];
        bytes[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
        solana_signature::Signature::from(bytes).to_string()
    }

    /// The index [`History::signature`] made `signature` from.
    fn index(signature: &str) -> usize {
        let signature: solana_signature::Signature = signature.parse().unwrap();
        let bytes: &[u8] = signature.as_ref();
        u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize - 1
    }
}

#[handler]
async fn history_rpc(
    Json(request): Json<Value>,
    Data(history): Data<&Arc<History>>,
) -> Json<Value> {
    let params = &request["params"];
    let result = match request["method"].as_str().unwrap_or_default() {
        "getSignaturesForAddress" => {
            assert_eq!(params[0], history.account.to_string());
            history.pages.fetch_add(1, Ordering::SeqCst);
            let start = params[1]["before"]
                .as_str()
                .map_or(0, |before| History::index(before) + 1);
            let limit = params[1]["limit"].as_u64().unwrap() as usize;
            json!((start..history.count.min(start + limit))
                .map(|i| json!({"signature": History::signature(i), "slot": 10_000 - i,
                                "err": if i % 10 == 9 { json!({"InstructionError": [0, "Custom"]}) } else { Value::Null },
                                "blockTime": history.newest - 60 * i as i64}))
                .collect::<Vec<_>>())
        }
        "getTransaction" => {
            let signature = params[0].as_str().unwrap();
            let i = History::index(signature);
            assert_ne!(i % 10, 9, "a failed transaction is not read");
            // The account is the message's second key; the balance after is count - i.
            let after = (history.count - i) as u64;
            let balance = |amount: u64| {
                json!([{"accountIndex": 1, "mint": history.mint.to_string(),
                "uiTokenAmount": {"amount": amount.to_string(), "decimals": 0}}])
            };
            json!({"slot": 10_000 - i, "blockTime": history.newest - 60 * i as i64,
                   "meta": {"err": null, "preTokenBalances": balance(after - 1), "postTokenBalances": balance(after)},
                   "transaction": {"message": {"accountKeys": [narrative_sdk::Pubkey::new_unique().to_string(), history.account.to_string()]}}})
        }
        other => panic!("asked {other}"),
    };
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

#[tokio::test]
async fn token_history_pages_back_to_the_period_and_stops_at_its_bound() {
    use narrative_api::chain::ledger::{LedgerError, TokenAccountRef};
    let history = Arc::new(History {
        account: narrative_sdk::Pubkey::new_unique(),
        mint: narrative_sdk::Pubkey::new_unique(),
        newest: 1_800_000_000,
        count: 1_205,
        pages: AtomicUsize::new(0),
    });
    let base = serve(
        Route::new()
            .at("/", post(history_rpc))
            .data(history.clone()),
    )
    .await;
    let ledger = RpcLedger::new(&base, narrative_api::clock::ManualClock::at(1_800_000_000));
    let account = TokenAccountRef {
        address: history.account,
        mint: history.mint,
    };
    // Back to transaction 1,100 (110,000 s ago): past the first page of 1,000 signatures.
    let since = history.newest - 60 * 1_100 + 1;
    let changes = ledger
        .token_history(&account, since, 0, 5_000)
        .await
        .unwrap();
    assert_eq!(
        history.pages.load(Ordering::SeqCst),
        2,
        "a second page, before the first's last"
    );
    // 0..=1_100 less the failed ones (every tenth): the last is the first before the period.
    assert_eq!(changes.len(), 1_101 - 110);
    let last = changes.last().unwrap();
    assert_eq!(last.block_time, Some(history.newest - 60 * 1_100));
    assert!(last.block_time.unwrap() < since);
    assert_eq!((changes[0].before, changes[0].after), (1_204, 1_205));
    assert_eq!(changes[0].signature.to_string(), History::signature(0));

    // The caller's bound: more changes in the period than it allows is refused, not read on.
    assert!(matches!(
        ledger.token_history(&account, since, 0, 100).await,
        Err(LedgerError::Unavailable(reason)) if reason.contains("more than 100")
    ));
    // The whole history, when it starts inside the period.
    let all = ledger.token_history(&account, 0, 0, 5_000).await.unwrap();
    assert_eq!(all.len(), 1_205 - 120);

    // Asked for a hold of 1,200: the walk ends at the change that rose from under it (the
    // sixth, whose balance before was 1,199), on the first page.
    history.pages.store(0, Ordering::SeqCst);
    let held = ledger
        .token_history(&account, since, 1_200, 5_000)
        .await
        .unwrap();
    assert_eq!(held.len(), 6);
    assert_eq!((held[5].before, held[5].after), (1_199, 1_200));
    assert_eq!(history.pages.load(Ordering::SeqCst), 1);
}

/// How the refusing node answers `getMultipleAccounts`.
#[derive(Default)]
struct Refusing {
    /// 0 answers the accounts; anything else is the HTTP status answered, with a body.
    status: std::sync::atomic::AtomicU16,
    calls: AtomicUsize,
}

#[handler]
async fn refusing_rpc(
    Json(request): Json<Value>,
    Data(node): Data<&Arc<Refusing>>,
) -> poem::Response {
    assert_eq!(request["method"], "getMultipleAccounts");
    node.calls.fetch_add(1, Ordering::SeqCst);
    match node.status.load(Ordering::SeqCst) {
        0 => Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "context": {"slot": 12},
            "value": [{"lamports": 9, "owner": "11111111111111111111111111111111",
                       "data": ["AQID", "base64"], "executable": false, "rentEpoch": 0, "space": 3}]
        }}))
        .into_response(),
        status => poem::Response::builder()
            .status(poem::http::StatusCode::from_u16(status).unwrap())
            .header("retry-after", "1")
            .body("slow down"),
    }
}

/// A node that refuses the account read (rate-limited, or failing) is unavailable at once: one
/// call, no retries that would hold the prepare for seconds, and the error names the status but
/// not the node URL's key. The next read, once the node answers, gets the accounts.
#[tokio::test]
async fn an_account_read_the_node_refuses_is_unavailable_after_one_call() {
    use narrative_api::chain::ledger::LedgerError;
    let node = Arc::new(Refusing::default());
    let base = serve(Route::new().at("/", post(refusing_rpc)).data(node.clone())).await;
    let ledger = RpcLedger::new(
        &format!("{base}/?api-key=refused-key-42"),
        narrative_api::clock::ManualClock::at(1_800_000_000),
    );
    let address = narrative_sdk::Pubkey::new_unique();
    for status in [429u16, 500, 502, 503] {
        node.status.store(status, Ordering::SeqCst);
        let before = node.calls.load(Ordering::SeqCst);
        let refused = ledger.accounts(&[address]).await;
        let Err(LedgerError::Unavailable(reason)) = &refused else {
            panic!("HTTP {status}: {refused:?}");
        };
        assert!(reason.contains(&status.to_string()), "{reason}");
        assert!(!format!("{refused:?}").contains("refused-key-42"));
        assert_eq!(
            node.calls.load(Ordering::SeqCst),
            before + 1,
            "HTTP {status}"
        );
    }
    node.status.store(0, Ordering::SeqCst);
    let (slot, accounts) = ledger.accounts(&[address]).await.unwrap();
    assert_eq!(slot, 12);
    assert_eq!(accounts[0].as_ref().map(|a| a.lamports), Some(9));
}
