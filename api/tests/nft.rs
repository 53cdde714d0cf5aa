//! Tier NFTs over HTTP on a program-test bank running the real Token-2022 program (spec 4.12):
//! collections deployed by the operator's tool, a mint the service co-signs and the wallet pays,
//! one NFT per wallet and collection, the score gate, the holder re-derived from the ledger by
//! the webhooks (never taken from the payload), and the conviction tier honouring a held NFT.

mod common;

use anchor_lang::solana_program::system_instruction;
use common::bank::BankLedger;
use common::chain::{sign, sign_send_confirm, start_on_bank_with};
use common::TestServer;
use integration_tests::harness::HarnessOptions;
use narrative_api::chain::holdings::{associated_token_account, TOKEN_2022_PROGRAM};
use narrative_api::chain::ledger::Ledger;
use narrative_api::chain::send::send_and_confirm;
use narrative_api::chain::tier_nfts::{
    collection_address, deploy_collections, nft_address, read_nft,
};
use narrative_api::values::NftTier;
use narrative_sdk::Pubkey;
use narrative_store::freshness::{generations, Topic};
use reqwest::StatusCode;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;
use spl_token_2022_interface::extension::{BaseStateWithExtensions, StateWithExtensions};
use spl_token_2022_interface::state::Mint;
use spl_token_group_interface::state::TokenGroup;

const HOOK_SECRET: &str = "nft-inbound-hook-secret";

/// Gives `wallet` a conviction score: `wins` correct backings in a row (10, 12, 14, … points),
/// or one loss (score 0, tier `initiate`) when `wins` is 0.
async fn give_score(server: &TestServer, wallet: &Pubkey, first_market: i64, wins: i64) {
    let wallet = wallet.to_string();
    let db = server.db.store.db();
    if wins == 0 {
        common::fixtures::settled(db, &wallet, first_market, "no", &[(&wallet, "yes")]).await;
    }
    for t in 0..wins {
        common::fixtures::settled(db, &wallet, first_market + t, "yes", &[(&wallet, "yes")]).await;
    }
}

/// `from` sends its NFT `mint` to `to`, on the ledger (creating `to`'s account).
async fn give_nft(ledger: &BankLedger, from: &Keypair, to: &Pubkey, mint: &Pubkey) {
    let transfer = spl_token_2022_interface::instruction::transfer_checked(
        &TOKEN_2022_PROGRAM,
        &associated_token_account(&from.pubkey(), mint, &TOKEN_2022_PROGRAM),
        mint,
        &associated_token_account(to, mint, &TOKEN_2022_PROGRAM),
        &from.pubkey(),
        &[],
        1,
        0,
    )
    .unwrap();
    ledger
        .harness
        .lock()
        .await
        .process(
            &[
                narrative_api::chain::venues::create_associated_account(
                    &from.pubkey(),
                    to,
                    mint,
                    &narrative_api::chain::holdings::TOKEN_2022_PROGRAM,
                ),
                transfer,
            ],
            &[from],
        )
        .await
        .expect("the transfer lands");
}

async fn webhook(server: &TestServer, path: &str, payload: &Value) -> (StatusCode, Value) {
    server.webhook_post(path, HOOK_SECRET, payload).await
}

#[tokio::test]
async fn a_wallet_mints_its_tier_nft_once_and_the_ledger_says_who_holds_it() {
    let options = HarnessOptions {
        wallets: 4,
        ..HarnessOptions::default()
    };
    let mut keys = None;
    let (server, ledger) = start_on_bank_with(options, |harness, c| {
        let authority = harness.wallets[3].insecure_clone();
        c.nft_authority_keypair = Some(bs58::encode(authority.to_bytes()).into_string().into());
        c.nft_collections = NftTier::ALL
            .iter()
            .map(|tier| {
                format!(
                    "{tier}={}",
                    collection_address(&authority.pubkey(), *tier).0
                )
            })
            .collect();
        c.webhook_secret = Some(HOOK_SECRET.into());
        keys = Some((
            authority,
            harness.wallets[0].insecure_clone(),
            harness.wallets[1].insecure_clone(),
            harness.wallets[2].insecure_clone(),
        ));
    })
    .await;
    let (authority, minter, receiver, bystander) = keys.unwrap();
    // 10 + 12 + 14 + 16 + 18 = 70: ember (50) but not flare (100).
    give_score(&server, &minter.pubkey(), 100, 5).await;
    // One loss: score 0, tier initiate.
    give_score(&server, &receiver.pubkey(), 200, 0).await;
    let mint_request = |tier: &str| json!({"wallet": minter.pubkey().to_string(), "tier": tier});

    // Configured but not on the ledger yet.
    let (status, body) = server.post("/v1/nft/mint", &mint_request("ember")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "collection_not_deployed");

    // Anyone can send lamports to the derivable addresses, which `create_account_with_seed`
    // would refuse for ever: here to the ember collection's and to the minter's ember NFT's,
    // each short of the rent they need. Both are still created.
    let squatted = [
        collection_address(&authority.pubkey(), NftTier::Ember).0,
        nft_address(&authority.pubkey(), &minter.pubkey(), NftTier::Ember).0,
    ];
    for address in squatted {
        let transfer = system_instruction::transfer(&bystander.pubkey(), &address, 1_000_000);
        send_and_confirm(ledger.as_ref(), &bystander, &[transfer])
            .await
            .unwrap();
    }

    // The operator's tool creates the five collections once; a second run changes nothing.
    let deployed = deploy_collections(ledger.as_ref(), &authority)
        .await
        .unwrap();
    assert_eq!(deployed.len(), 5);
    assert!(deployed.iter().all(|d| d.created));
    let again = deploy_collections(ledger.as_ref(), &authority)
        .await
        .unwrap();
    assert!(again.iter().all(|d| !d.created));
    assert_eq!(
        again.iter().map(|d| d.collection).collect::<Vec<_>>(),
        deployed.iter().map(|d| d.collection).collect::<Vec<_>>()
    );
    let ember_collection = deployed[0].collection;

    // Flare needs 100.
    let (status, body) = server.post("/v1/nft/mint", &mint_request("flare")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "conviction_score_required");
    assert_eq!(body["current_score"], 70.0);
    assert_eq!(body["required_score"], 100.0);

    // Ember: prepared, co-signed by the authority, paid and signed by the wallet.
    let (status, prepared) = server.post("/v1/nft/mint", &mint_request("ember")).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let (mint, _) = nft_address(&authority.pubkey(), &minter.pubkey(), NftTier::Ember);
    assert_eq!(prepared["mint"], mint.to_string());
    assert_eq!(prepared["tier"], "ember");
    assert_eq!(prepared["collection"], ember_collection.to_string());
    assert_eq!(
        prepared["uri"],
        "http://127.0.0.1:8080/v1/nft/metadata/ember"
    );
    let signed = sign(&prepared, &minter);
    assert_eq!(signed.signatures.len(), 2, "the wallet and the authority");
    let minter_balance_before = ledger.harness.lock().await.lamports(minter.pubkey()).await;
    let (status, confirmed) =
        sign_send_confirm(&server, &ledger, &prepared, &minter, "/v1/nft/mint/confirm").await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["status"], "confirmed");
    assert_eq!(confirmed["nft"]["mint"], mint.to_string());
    assert_eq!(confirmed["nft"]["owner"], minter.pubkey().to_string());
    assert_eq!(confirmed["nft"]["minted_by"], minter.pubkey().to_string());
    // The wallet paid the accounts' rent and the fee.
    let minter_balance_after = ledger.harness.lock().await.lamports(minter.pubkey()).await;
    assert!(minter_balance_after < minter_balance_before);

    // On the ledger: a tier NFT (`read_nft` takes only a supply of one with no mint authority)
    // in the ember collection, with its tier in the metadata; the collection counts one member.
    let (_, accounts) = ledger
        .accounts(&[
            mint,
            associated_token_account(&minter.pubkey(), &mint, &TOKEN_2022_PROGRAM),
            ember_collection,
        ])
        .await
        .unwrap();
    let nft = read_nft(&mint, accounts[0].as_ref().unwrap()).expect("a tier NFT");
    assert_eq!(nft.collection, ember_collection);
    assert_eq!(nft.tier_field.as_deref(), Some("ember"));
    assert_eq!(nft.name, "Ember conviction tier");
    let holder = accounts[1].as_ref().unwrap();
    assert_eq!(
        u64::from_le_bytes(holder.data[64..72].try_into().unwrap()),
        1
    );
    let collection = StateWithExtensions::<Mint>::unpack(&accounts[2].as_ref().unwrap().data)
        .unwrap()
        .get_extension::<TokenGroup>()
        .unwrap()
        .size;
    assert_eq!(u64::from(collection), 1);

    // A replay answers the same; a second mint of the tier is refused.
    let (status, replay) = server
        .post(
            "/v1/nft/mint/confirm",
            &json!({"prepared_id": prepared["prepared_id"], "signature": confirmed["signature"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(replay["nft"], confirmed["nft"]);
    let (status, body) = server.post("/v1/nft/mint", &mint_request("ember")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "already_minted");

    // The reads.
    let (status, wallet) = server
        .get(&format!("/v1/nft/wallet/{}", minter.pubkey()))
        .await;
    assert_eq!(status, StatusCode::OK, "{wallet}");
    assert_eq!(wallet["nft_tier"], "ember");
    assert_eq!(wallet["conviction_score"], 70.0);
    assert_eq!(wallet["nfts"][0]["mint"], mint.to_string());
    assert_eq!(wallet["tiers"].as_array().unwrap().len(), 5);
    assert_eq!(wallet["tiers"][0]["unlocked"], true);
    assert_eq!(wallet["tiers"][0]["minted"], mint.to_string());
    assert_eq!(wallet["tiers"][0]["collection_deployed"], true);
    assert_eq!(wallet["tiers"][1]["unlocked"], false);
    assert_eq!(wallet["tiers"][1]["min_score"], 100.0);
    let (status, scored) = server.get(&format!("/v1/nft/score/{mint}")).await;
    assert_eq!(status, StatusCode::OK, "{scored}");
    assert_eq!(scored["tier"], "ember");
    assert_eq!(scored["tier_min_score"], 50.0);
    assert_eq!(scored["owner"], minter.pubkey().to_string());
    assert_eq!(scored["owner_conviction_score"], 70.0);
    assert_eq!(scored["owner_conviction_tier"], "ember");

    // A mint that landed without its confirm reaching the service: the ledger says it exists.
    give_score(&server, &bystander.pubkey(), 300, 5).await;
    let bystander_request = json!({"wallet": bystander.pubkey().to_string(), "tier": "ember"});
    let (status, unconfirmed) = server.post("/v1/nft/mint", &bystander_request).await;
    assert_eq!(status, StatusCode::OK, "{unconfirmed}");
    let unconfirmed_tx = sign(&unconfirmed, &bystander);
    ledger
        .process(unconfirmed_tx.clone())
        .await
        .expect("the mint lands");
    let (status, body) = server.post("/v1/nft/mint", &bystander_request).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "already_minted");
    assert_eq!(body["mint"], unconfirmed["mint"]);

    // The receiver is initiate until it holds the NFT.
    let receiver_profile = format!("/v1/conviction/{}", receiver.pubkey());
    let (_, profile) = server.get(&receiver_profile).await;
    assert_eq!(profile["conviction_tier"], "initiate");
    assert_eq!(profile["nft_tier"], Value::Null);

    // The minter sends it to the receiver, on the ledger.
    give_nft(&ledger, &minter, &receiver.pubkey(), &mint).await;

    // A webhook naming the mint and a wallet that does not hold it: the recorded holder is
    // asked too, the ledger shows neither holding it, so the NFT has no known holder now.
    let (status, body) = webhook(
        &server,
        "/v1/nft/webhook/indexer",
        &json!({"mint": mint.to_string(), "owner": bystander.pubkey().to_string()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rederived"][0]["owner"], Value::Null);

    // The indexer's transfer event (Helius-style) names both wallets: the receiver holds it.
    let event = json!([{
        "type": "TRANSFER",
        "tokenTransfers": [{
            "mint": mint.to_string(),
            "fromUserAccount": minter.pubkey().to_string(),
            "toUserAccount": receiver.pubkey().to_string(),
            "tokenAmount": 1
        }]
    }]);
    let (status, body) = webhook(&server, "/v1/nft/webhook/transfer", &event).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rederived"][0]["owner"], receiver.pubkey().to_string());
    assert_eq!(body["rederived"][0]["tier"], "ember");
    assert_eq!(
        body["rederived"][0]["minted_by"],
        minter.pubkey().to_string()
    );
    assert_eq!(body["ignored"], json!([]));

    // The receiver's tier honours the NFT; its score, multipliers and fee do not move.
    let (_, profile) = server.get(&receiver_profile).await;
    assert_eq!(profile["conviction_tier"], "ember");
    assert_eq!(profile["nft_tier"], "ember");
    assert_eq!(profile["conviction_score"], 0.0);
    assert_eq!(profile["fee_pct"], 2.0);
    let (_, minter_profile) = server
        .get(&format!("/v1/conviction/{}", minter.pubkey()))
        .await;
    assert_eq!(minter_profile["nft_tier"], Value::Null);
    assert_eq!(minter_profile["conviction_tier"], "ember");

    // A lying webhook cannot take it from the receiver: the ledger still shows it there.
    let (_, body) = webhook(
        &server,
        "/v1/nft/webhook/transfer",
        &json!({"mint": mint.to_string(), "to": bystander.pubkey().to_string()}),
    )
    .await;
    assert_eq!(body["rederived"][0]["owner"], receiver.pubkey().to_string());

    // Mints that are no tier NFT are ignored: a collection, an unknown address.
    let unknown = Pubkey::new_unique();
    let (_, body) = webhook(
        &server,
        "/v1/nft/webhook/indexer",
        &json!({"items": [{"mint": ember_collection.to_string()}, {"mintAddress": unknown.to_string()}]}),
    )
    .await;
    assert_eq!(body["rederived"], json!([]));
    assert_eq!(
        body["ignored"],
        json!([ember_collection.to_string(), unknown.to_string()])
    );

    // The minter gave its NFT away and still cannot mint a second.
    let (status, body) = server.post("/v1/nft/mint", &mint_request("ember")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // The bystander's unconfirmed NFT goes to the receiver, a webhook records that, and only
    // then the bystander's confirm arrives: it records the mint, not a holder it no longer is.
    let bystander_mint: Pubkey = unconfirmed["mint"].as_str().unwrap().parse().unwrap();
    give_nft(&ledger, &bystander, &receiver.pubkey(), &bystander_mint).await;
    let (_, body) = webhook(
        &server,
        "/v1/nft/webhook/transfer",
        &json!({"mint": bystander_mint.to_string(), "to": receiver.pubkey().to_string()}),
    )
    .await;
    assert_eq!(body["rederived"][0]["owner"], receiver.pubkey().to_string());
    let (status, late) = server
        .post(
            "/v1/nft/mint/confirm",
            &json!({
                "prepared_id": unconfirmed["prepared_id"],
                "signature": unconfirmed_tx.signatures[0].to_string(),
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{late}");
    assert_eq!(late["nft"]["minted_by"], bystander.pubkey().to_string());
    assert_eq!(late["nft"]["owner"], receiver.pubkey().to_string());

    // One webhook naming both NFTs records both (in one statement), and the cached answers
    // that read them (the markets topic) are dropped.
    let db = server.db.store.db();
    let before = generations(db).await.unwrap().of(Topic::Markets);
    let (status, body) = webhook(
        &server,
        "/v1/nft/webhook/indexer",
        &json!({"items": [{"mint": mint.to_string()}, {"mint": bystander_mint.to_string()}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let owners: Vec<&Value> = body["rederived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|nft| &nft["owner"])
        .collect();
    assert_eq!(owners, [&json!(receiver.pubkey().to_string()); 2]);
    assert!(generations(db).await.unwrap().of(Topic::Markets) > before);

    // Score reads: 404 for an unknown mint, 400 for what is no address.
    let (status, _) = server.get(&format!("/v1/nft/score/{unknown}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = server.get("/v1/nft/score/not-a-mint").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    server.stop().await;
}

#[tokio::test]
async fn minting_answers_503_until_configured_and_while_halted() {
    let server = TestServer::start(|_| {}).await;
    let wallet = Keypair::new().pubkey().to_string();
    let (status, body) = server
        .post("/v1/nft/mint", &json!({"wallet": wallet, "tier": "ember"}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "collection_not_deployed");
    assert_eq!(body["tier"], "ember");
    let (status, body) = server
        .post(
            "/v1/nft/mint",
            &json!({"wallet": wallet, "tier": "initiate"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = server
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "nft", "halted": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server
        .post("/v1/nft/mint", &json!({"wallet": wallet, "tier": "ember"}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "system_halted");

    // A wallet without NFTs: every tier locked, none held; each tier's metadata document.
    let (status, body) = server.get(&format!("/v1/nft/wallet/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["nft_tier"], Value::Null);
    assert_eq!(body["nfts"], json!([]));
    assert_eq!(body["tiers"][0]["collection_deployed"], false);
    assert_eq!(body["tiers"][4]["tier"], "volcanic");
    assert_eq!(body["tiers"][4]["min_score"], 900.0);
    let (status, document) = server.get("/v1/nft/metadata/molten").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document["name"], "Molten conviction tier");
    assert_eq!(document["symbol"], "MOLTEN");
    assert_eq!(
        document["attributes"],
        json!([{"trait_type": "tier", "value": "molten"}, {"trait_type": "min_score", "value": "300"}])
    );
    let (status, _) = server.get("/v1/nft/metadata/initiate").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    server.stop().await;
}
