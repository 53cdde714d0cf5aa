//! A JSON-RPC node for tests: `getProgramAccounts` (with context), `getSignaturesForAddress`,
//! `getTransaction` (base64) and `getSlot`, served from a recording's real accounts and
//! transactions over HTTP, so the indexer's real RPC client is what talks to it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use narrative_sdk::Pubkey;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json};
use poem::{handler, post, EndpointExt, Route};
use serde_json::{json, Value};
use solana_transaction::versioned::VersionedTransaction;

use super::recording::Recording;

#[derive(Clone)]
pub struct RecordedTransaction {
    pub signature: String,
    pub slot: u64,
    pub keys: Vec<Pubkey>,
    pub transaction_base64: String,
    pub meta: Value,
}

#[derive(Default, Clone)]
pub struct Chain {
    pub slot: u64,
    /// address → (owner, lamports, data)
    pub accounts: BTreeMap<Pubkey, (Pubkey, u64, Vec<u8>)>,
    /// Oldest first.
    pub transactions: Vec<RecordedTransaction>,
    /// Answer every request with a server error, like a node that is down.
    pub failing: bool,
}

impl Chain {
    /// The chain as it stands at the end of `recording`.
    pub fn from_recording(recording: &Recording) -> Chain {
        Chain::at(recording, recording.steps.len())
    }

    /// The chain once the first `blocks` steps of `recording` have happened.
    pub fn at(recording: &Recording, blocks: usize) -> Chain {
        let mut chain = Chain {
            slot: match blocks {
                0 => recording.steps[0].slot - 1,
                n => recording.steps[n - 1].slot,
            },
            ..Default::default()
        };
        for step in &recording.steps[..blocks] {
            for closed in &step.closed {
                chain.accounts.remove(closed);
            }
            for a in &step.accounts {
                chain
                    .accounts
                    .insert(a.address, (a.owner, a.lamports, a.data.clone()));
            }
            let Some(executed) = &step.tx else { continue };
            let tx = &executed.transaction;
            let inner: Vec<Value> = executed
                .inner_instructions
                .iter()
                .enumerate()
                .filter(|(_, list)| !list.is_empty())
                .map(|(index, list)| {
                    json!({
                        "index": index,
                        "instructions": list.iter().map(|i| json!({
                            "programIdIndex": i.instruction.program_id_index,
                            "accounts": i.instruction.accounts,
                            "data": bs58::encode(&i.instruction.data).into_string(),
                            "stackHeight": i.stack_height,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let versioned = VersionedTransaction::from(tx.clone());
            chain.transactions.push(RecordedTransaction {
                signature: tx.signatures[0].to_string(),
                slot: step.slot,
                keys: tx.message.account_keys.clone(),
                transaction_base64: BASE64.encode(bincode::serialize(&versioned).unwrap()),
                meta: json!({
                    "err": null, "status": {"Ok": null}, "fee": 5000,
                    "preBalances": [], "postBalances": [],
                    "innerInstructions": inner, "logMessages": [],
                    "preTokenBalances": [], "postTokenBalances": [], "rewards": [],
                    "loadedAddresses": {"writable": [], "readonly": []},
                }),
            });
        }
        chain
    }
}

pub type SharedChain = Arc<Mutex<Chain>>;

fn result(id: &Value, result: Value) -> Json<Value> {
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

#[handler]
fn rpc(chain: Data<&SharedChain>, Json(request): Json<Value>) -> Json<Value> {
    let chain = chain.lock().unwrap();
    let id = &request["id"];
    let params = &request["params"];
    if chain.failing {
        return Json(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32005, "message": "node is behind"}}));
    }
    match request["method"].as_str().unwrap_or_default() {
        "getSlot" => result(id, json!(chain.slot)),
        "getProgramAccounts" => {
            let program: Pubkey = params[0].as_str().unwrap().parse().unwrap();
            let value: Vec<Value> = chain
                .accounts
                .iter()
                .filter(|(_, (owner, _, _))| *owner == program)
                .map(|(address, (owner, lamports, data))| {
                    json!({"pubkey": address.to_string(), "account": {
                        "lamports": lamports, "data": [BASE64.encode(data), "base64"],
                        "owner": owner.to_string(), "executable": false, "rentEpoch": u64::MAX, "space": data.len(),
                    }})
                })
                .collect();
            result(id, json!({"context": {"slot": chain.slot}, "value": value}))
        }
        "getSignaturesForAddress" => {
            let address: Pubkey = params[0].as_str().unwrap().parse().unwrap();
            let until = params[1]["until"].as_str();
            let before = params[1]["before"].as_str();
            let limit = params[1]["limit"].as_u64().unwrap_or(1000) as usize;
            let newest_first = chain
                .transactions
                .iter()
                .rev()
                .filter(|t| t.keys.contains(&address));
            let mut started = before.is_none();
            let mut page = Vec::new();
            for t in newest_first {
                if Some(t.signature.as_str()) == until || page.len() == limit {
                    break;
                }
                if started {
                    page.push(
                        json!({"signature": t.signature, "slot": t.slot, "err": null, "memo": null,
                        "blockTime": null, "confirmationStatus": "confirmed"}),
                    );
                }
                started |= Some(t.signature.as_str()) == before;
            }
            result(id, json!(page))
        }
        "getTransaction" => {
            let signature = params[0].as_str().unwrap();
            let found = chain.transactions.iter().find(|t| t.signature == signature);
            result(
                id,
                found.map_or(Value::Null, |t| {
                    json!({"slot": t.slot, "blockTime": null, "version": "legacy",
                        "transaction": [t.transaction_base64, "base64"], "meta": t.meta})
                }),
            )
        }
        other => Json(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": format!("method {other} not found")}})),
    }
}

pub struct RpcServer {
    pub url: String,
    handle: tokio::task::JoinHandle<()>,
}

impl Drop for RpcServer {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

pub async fn start(chain: SharedChain) -> RpcServer {
    let acceptor = TcpListener::bind("127.0.0.1:0")
        .into_acceptor()
        .await
        .expect("bind mock rpc");
    let addr: SocketAddr = acceptor.local_addr()[0]
        .as_socket_addr()
        .copied()
        .expect("tcp address");
    let app = Route::new().at("/", post(rpc)).data(chain);
    let handle = tokio::spawn(async move {
        let _ = poem::Server::new_with_acceptor(acceptor).run(app).await;
    });
    RpcServer {
        url: format!("http://{addr}"),
        handle,
    }
}
