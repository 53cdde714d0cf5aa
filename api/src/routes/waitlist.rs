//! `/v1/waitlist` (spec 4.15): join with an email, a wallet (by its signature) or both; look up
//! a wallet's place. No answer carries an entry's email, nor the wallet joined with an email.

use std::sync::Arc;

use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::waitlist::{self, Join, Place};
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, Email, UnixSeconds, Wallet};

pub struct WaitlistApi {
    pub state: Arc<AppState>,
}

/// An email, a wallet, or both (at least one).
#[derive(Object)]
pub struct WaitlistJoin {
    pub email: Option<Email>,
    /// Joins by the wallet's signature (`signature`, `issued_at`).
    pub wallet: Option<Wallet>,
    /// The wallet that referred this one (only with `wallet`, which signs it): it earns
    /// referral points when this wallet first backs, if this wallet had not backed before
    /// joining.
    pub referrer: Option<Wallet>,
    /// With `wallet`: the wallet's ed25519 signature (base58) of
    /// `narrative-market-service:waitlist-join:<wallet>:<referrer, or none>:issued-at:<issued_at>`.
    /// Missing or not the wallet's: 401 `invalid_signature`, nothing written. Not needed to
    /// join with an email only.
    pub signature: Option<Base58Signature>,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: Option<UnixSeconds>,
}

/// A join's answer: the place only (never the email or wallet of an entry found listed).
#[derive(Object)]
pub struct WaitlistJoined {
    pub ok: bool,
    /// From 1, in the order of joining: for an entry this join wrote, or the joining wallet's
    /// own (proven by its signature); null for an entry found by its email, whose place would
    /// tell which wallet joined with it.
    pub position: Option<u64>,
    /// Entries on the list, when `position` is given.
    pub total: Option<u64>,
    /// False when the email or wallet was on the list already (nothing was written).
    pub created: bool,
    /// When this join named a referrer and wrote the entry: `recorded`, or `not_eligible` when
    /// the wallet had backed before joining (the referrer is not kept).
    pub referral: Option<String>,
}

impl From<Place> for WaitlistJoined {
    fn from(p: Place) -> Self {
        WaitlistJoined {
            ok: true,
            position: p.standing.map(|(position, _)| position),
            total: p.standing.map(|(_, total)| total),
            created: p.created,
            referral: p.referral.map(|r| r.as_str().to_owned()),
        }
    }
}

/// A wallet's place (never its email).
#[derive(Object)]
pub struct WaitlistPlace {
    pub ok: bool,
    /// From 1, in the order of joining.
    pub position: u64,
    /// Entries on the list.
    pub total: u64,
    pub wallet: Wallet,
    pub joined_at: String,
}

refusals! {
    JoinRefusals: [400, 413];
    PlaceRefusals: [400, 404];
}

#[OpenApi(prefix_path = "/waitlist", tag = "Tag::Waitlist")]
impl WaitlistApi {
    /// Join the waitlist; joining again with a listed email or wallet answers its place. A
    /// wallet joins by its signature.
    #[oai(path = "/", method = "post")]
    async fn join(&self, body: Json<WaitlistJoin>) -> Answer<Json<WaitlistJoined>, JoinRefusals> {
        let body = body.0;
        let place = waitlist::join(
            &self.state,
            Join {
                email: body.email,
                wallet: body.wallet,
                referrer: body.referrer,
                signature: body.signature,
                issued_at: body.issued_at,
            },
        )
        .await?;
        Ok(Json(place.into()))
    }

    /// A wallet's place on the waitlist.
    #[oai(path = "/:wallet", method = "get")]
    async fn place(&self, wallet: Path<Wallet>) -> Answer<Json<WaitlistPlace>, PlaceRefusals> {
        let place = waitlist::position(&self.state, &wallet.0).await?;
        let (position, total) = place.standing.unwrap_or_default();
        Ok(Json(WaitlistPlace {
            ok: true,
            position,
            total,
            wallet: wallet.0,
            joined_at: iso(place.entry.created_at),
        }))
    }
}
