//! AI drafts over HTTP (`generate` answers at once with a `jobId`, the job fills the draft,
//! `generate/status` reads it; the per-wallet daily pool), and the OpenAI-compatible reviewer
//! and drafter against a local stand-in of the provider.

mod common;

use std::sync::{Arc, Mutex};

use common::eventually;
use common::TestServer;
use narrative_api::providers::chat::ChatModel;
use narrative_api::providers::drafter::{ChatGenerator, Draft, Generator};
use narrative_api::providers::reviewer::{ChatReviewer, Review, Reviewer};
use narrative_api::values::Category;
use poem::web::{Data, Json};
use poem::{handler, post, EndpointExt, Route};
use reqwest::StatusCode;
use serde_json::{json, Value};

const WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[tokio::test]
async fn a_draft_is_generated_in_the_background_and_polled() {
    // A fixed clock: the daily pool must not roll over mid-test.
    let server = TestServer::start_at(common::clock_at_hour_start(), |_| {}).await;
    let (status, started) = server
        .post(
            "/v1/narratives/generate",
            &json!({"topic": "the fed cuts rates twice", "wallet_address": WALLET, "deadline_days": 60}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    assert_eq!(started["ok"], true);
    assert_eq!(started["status"], "queued");
    let job = started["jobId"].as_str().unwrap().to_owned();
    let path = format!("/v1/narratives/generate/status/{job}");
    eventually("the draft", || async {
        server.get(&path).await.1["status"] == "done"
    })
    .await;
    let (status, done) = server.get(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["jobId"], job.as_str());
    assert_eq!(done["error"], Value::Null);
    let draft = &done["draft"];
    assert_eq!(draft["category"], "MACRO", "suggested from the topic");
    assert_eq!(draft["title"], "The fed cuts rates twice");
    // Dated by the requested window, counted from the request.
    let created = chrono::DateTime::parse_from_rfc3339(done["created_at"].as_str().unwrap())
        .unwrap()
        .timestamp();
    let deadline = narrative_api::clock::iso(created + 60 * 86_400);
    assert_eq!(
        draft["thesis"],
        format!("The fed cuts rates twice before {}.", &deadline[..10])
    );
    assert!(draft["criteria"].as_str().unwrap().starts_with("YES if"));

    for (body, why) in [
        (json!({"topic": " ", "wallet_address": WALLET}), "no topic"),
        (
            json!({"topic": "x", "wallet_address": "nope"}),
            "not a wallet",
        ),
        (
            json!({"topic": "x", "wallet_address": WALLET, "category": "GOSSIP"}),
            "unknown category",
        ),
        (
            json!({"topic": "x", "wallet_address": WALLET, "deadline_days": 0}),
            "no window",
        ),
    ] {
        let (status, answer) = server.post("/v1/narratives/generate", &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {answer}");
        assert_eq!(answer["ok"], false);
    }
    let (status, _) = server
        .get(&format!(
            "/v1/narratives/generate/status/{}",
            uuid::Uuid::new_v4()
        ))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Five drafts per wallet per day: four more are accepted, the sixth refused.
    for _ in 0..4 {
        let (status, _) = server
            .post(
                "/v1/narratives/generate",
                &json!({"topic": "sol flips eth", "wallet_address": WALLET, "category": "market"}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    let (status, refused) = server
        .post(
            "/v1/narratives/generate",
            &json!({"topic": "one more", "wallet_address": WALLET}),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"], "daily_limit_reached");
    server.stop().await;
}

type Requests = Arc<Mutex<Vec<Value>>>;

/// The provider's chat endpoint: answers by the instruction it gets, or fails on demand.
#[handler]
fn completions(Json(request): Json<Value>, Data(seen): Data<&Requests>) -> poem::Response {
    use poem::IntoResponse;
    seen.lock().unwrap().push(request.clone());
    let instruction = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    let user = request["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    if user.contains("fail") {
        return poem::http::StatusCode::BAD_GATEWAY.into_response();
    }
    let content = if instruction == narrative_api::providers::reviewer::INSTRUCTION {
        if user.contains("garbled") {
            "not json".to_owned()
        } else {
            json!({"flagged": ["violence"], "uncertainty": 140}).to_string()
        }
    } else if user.contains("unknown category") {
        json!({"title": "t", "thesis": "x", "category": "GOSSIP", "resolution_source": "s", "criteria": "c"}).to_string()
    } else {
        json!({
            "title": "Rate cut",
            "thesis": "The Fed cuts before March 2027.",
            "category": "macro",
            "resolution_source": "federalreserve.gov",
            "criteria": "YES if the target range is lowered.",
        })
        .to_string()
    };
    Json(json!({"choices": [{"message": {"role": "assistant", "content": content}}]}))
        .into_response()
}

#[tokio::test]
async fn the_chat_reviewer_and_drafter_read_the_providers_json() {
    let seen: Requests = Arc::default();
    let base = common::serve_locally(
        Route::new()
            .at("/v1/chat/completions", post(completions))
            .data(seen.clone()),
    )
    .await;
    let model =
        || ChatModel::new(&format!("{base}/v1"), Some("sk-test".into()), "m".into()).unwrap();

    let reviewer = ChatReviewer(model());
    assert_eq!(
        reviewer.review("a thesis").await.unwrap(),
        Review {
            flagged: vec!["violence".into()],
            uncertainty: 100.0,
        },
        "uncertainty clamped to 0–100"
    );
    let asked = seen.lock().unwrap()[0].clone();
    assert_eq!(asked["response_format"], json!({"type": "json_object"}));
    assert_eq!(asked["messages"][1]["content"], "a thesis");
    assert!(reviewer.review("garbled").await.is_err());
    assert!(reviewer.review("fail").await.is_err());

    let drafter = ChatGenerator(model());
    assert_eq!(
        drafter.draft("rates", None, "2027-03-01").await.unwrap(),
        Draft {
            title: "Rate cut".into(),
            thesis: "The Fed cuts before March 2027.".into(),
            category: Some(Category::Macro),
            resolution_source: "federalreserve.gov".into(),
            criteria: "YES if the target range is lowered.".into(),
        }
    );
    let asked = seen.lock().unwrap().last().unwrap().clone();
    let prompt = asked["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("Deadline: 2027-03-01"), "{prompt}");
    assert!(prompt.contains("Category: choose one"), "{prompt}");
    assert!(
        drafter
            .draft("unknown category", Some(Category::Market), "2027-03-01")
            .await
            .is_err(),
        "a category outside the 24 is refused"
    );
}

struct Unreachable;

#[async_trait::async_trait]
impl Generator for Unreachable {
    async fn draft(&self, _: &str, _: Option<Category>, _: &str) -> anyhow::Result<Draft> {
        // What reqwest says of a host that does not answer: the provider's address.
        anyhow::bail!(
            "error sending request for url (http://10.0.0.7:8443/gateway-secret/chat/completions)"
        )
    }
}

#[tokio::test]
async fn a_provider_that_keeps_failing_ends_the_generation_as_failed() {
    use narrative_api::domain::narratives::drafts::{Drafter, ATTEMPTS, DRAFT_FAILED};
    use narrative_api::jobs::generate_narrative::GenerateNarrative;
    use narrative_api::jobs::{Handler, Leased};
    use narrative_store::entities::narrative_generations;
    use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel};

    const ID: &str = "6f9619ff-8b86-4d11-b42d-00c04fc964ff";
    let db = narrative_store::testing::TestDb::new().await;
    narrative_generations::Model {
        id: ID.into(),
        wallet_address: WALLET.into(),
        topic: "rates".into(),
        category: None,
        status: "queued".into(),
        draft: None,
        error: None,
        created_at: 1_790_000_000,
        updated_at: 1_790_000_000,
    }
    .into_active_model()
    .insert(db.store.db())
    .await
    .unwrap();
    let drafter = Drafter {
        store: db.store.clone(),
        generator: Arc::new(Unreachable),
        clock: narrative_api::clock::ManualClock::at(1_790_000_100),
    };
    let attempt = |attempt| Leased {
        id: 1,
        attempt,
        job: GenerateNarrative {
            generation_id: ID.parse().unwrap(),
            deadline_days: 30,
        },
    };
    let row = || async {
        narrative_generations::Entity::find_by_id(ID.to_owned())
            .one(db.store.db())
            .await
            .unwrap()
            .unwrap()
    };
    // Early attempts hand the error back for the queue to retry; the row stays queued.
    assert!(drafter.run(attempt(1)).await.is_err());
    let retrying = row().await;
    assert_eq!(retrying.status, "queued");
    // The public status says what happened, not where the provider lives.
    assert_eq!(retrying.error.as_deref(), Some(DRAFT_FAILED));
    // The last attempt settles it: failed, with the error, and the job is done.
    assert!(drafter.run(attempt(ATTEMPTS)).await.is_ok());
    let failed = row().await;
    assert_eq!(failed.status, "failed");
    assert_eq!(failed.draft, None);
    assert_eq!(failed.error.as_deref(), Some(DRAFT_FAILED));
}
