//! `/v1/waitlist` (spec 4.15): join with an email, a wallet or both; look up a wallet's place.

use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::waitlist::{self, Join, Place};
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Email, Wallet};

pub struct WaitlistApi {
    pub state: Arc<AppState>,
}

/// An email, a wallet, or both (at least one).
#[derive(Object)]
pub struct WaitlistJoin {
    pub email: Option<Email>,
    pub wallet: Option<Wallet>,
    /// The wallet that referred this one: it earns referral points when this wallet first
    /// backs.
    pub referrer: Option<Wallet>,
}

#[derive(Object)]
pub struct WaitlistPlace {
    pub ok: bool,
    /// From 1, in the order of joining.
    pub position: u64,
    /// Entries on the list.
    pub total: u64,
    /// False when the email or wallet was on the list already (nothing was written).
    pub created: bool,
    pub email: Option<String>,
    pub wallet: Option<String>,
    pub joined_at: String,
}

impl From<Place> for WaitlistPlace {
    fn from(p: Place) -> Self {
        WaitlistPlace {
            ok: true,
            position: p.position,
            total: p.total,
            created: p.created,
            email: p.entry.email,
            wallet: p.entry.wallet,
            joined_at: iso(p.entry.created_at),
        }
    }
}

refusals! {
    JoinRefusals: [400, 413];
    PlaceRefusals: [400, 404];
}

#[OpenApi(prefix_path = "/waitlist", tag = "Tag::Waitlist")]
impl WaitlistApi {
    /// Join the waitlist; joining again with a listed email or wallet answers its place.
    #[oai(path = "/", method = "post")]
    async fn join(&self, body: Json<WaitlistJoin>) -> Answer<Json<WaitlistPlace>, JoinRefusals> {
        let body = body.0;
        let place = waitlist::join(
            &self.state,
            Join {
                email: body.email,
                wallet: body.wallet,
                referrer: body.referrer,
            },
        )
        .await?;
        Ok(Json(place.into()))
    }

    /// A wallet's place on the waitlist.
    #[oai(path = "/:wallet", method = "get")]
    async fn place(&self, wallet: Path<Wallet>) -> Answer<Json<WaitlistPlace>, PlaceRefusals> {
        Ok(Json(
            waitlist::position(&self.state, &wallet.0).await?.into(),
        ))
    }
}
