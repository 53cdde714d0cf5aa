//! API keys (spec 4.11, 5.5): the operator issues them (beta: manual issuance, Free tier by
//! default), wallets list and revoke theirs, an agent reads its own.

use std::sync::Arc;

use poem::Request;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::admin::Operator;
use crate::domain::keys::{self, AccessTier};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::auth::{admin_wallet, AdminAuth, ApiKeyAuth};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, KeyId, Text, UnixSeconds, Wallet};

pub struct ApiKeysApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct IssueKey {
    /// The wallet the key belongs to.
    pub wallet: Option<Wallet>,
    pub name: Option<Text<100>>,
    /// `free` by default; `pro` and `enterprise` only once the paid tiers are active
    /// (`PAID_TIERS_ACTIVE`), 403 `tier_inactive` before.
    pub tier: Option<AccessTier>,
}

#[derive(Object)]
pub struct IssuedKey {
    pub ok: bool,
    pub id: KeyId,
    /// The whole key. It is shown this once and cannot be recovered.
    pub key: String,
    pub prefix: String,
    pub tier: AccessTier,
    pub wallet: Option<String>,
    pub created_at: String,
}

#[derive(ApiResponse)]
pub enum Issued {
    #[oai(status = 201)]
    Created(Json<IssuedKey>),
}

#[derive(Object)]
pub struct KeyInfo {
    pub id: String,
    /// The public part, `<prefix>_<4 hex>`.
    pub prefix: String,
    pub tier: String,
    pub name: Option<String>,
    pub active: bool,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

#[derive(Object)]
pub struct KeyList {
    pub ok: bool,
    pub wallet: Wallet,
    pub keys: Vec<KeyInfo>,
}

#[derive(Object)]
pub struct RevokeKey {
    pub id: KeyId,
    pub wallet_address: Wallet,
    /// Base58 signature by `wallet_address` of
    /// `narrative-market-service:revoke-api-key:<id>:<wallet_address>:issued-at:<issued_at>`;
    /// not needed with the admin headers.
    pub signature: Option<Base58Signature>,
    /// When the wallet signed (unix seconds), with `signature`: accepted within 300 s before
    /// the server's time (60 s after), once.
    pub issued_at: Option<UnixSeconds>,
}

#[derive(Object)]
pub struct Revoked {
    pub ok: bool,
    pub id: KeyId,
    pub revoked: bool,
}

#[derive(Object)]
pub struct Me {
    pub ok: bool,
    pub id: String,
    pub tier: AccessTier,
    pub wallet: Option<String>,
    pub limit_per_minute: u32,
}

refusals! {
    /// 403 `tier_inactive`: a Pro or Enterprise key while the paid tiers are inactive.
    IssueRefusals: [400, 403, 413];
    MeRefusals: [];
    ListRefusals: [400];
    RevokeRefusals: [400, 404, 413];
}

#[OpenApi(tag = "Tag::ApiKeys")]
impl ApiKeysApi {
    /// Issue a key (admin). The response is the only time the key is shown.
    #[oai(path = "/admin/apikeys", method = "post")]
    async fn issue(&self, admin: AdminAuth, body: Json<IssueKey>) -> Answer<Issued, IssueRefusals> {
        let body = body.0;
        let issued = keys::issue_by_operator(
            &self.state,
            &Operator(admin.0),
            body.tier.unwrap_or(AccessTier::Free),
            body.wallet,
            body.name.map(Text::into_string),
        )
        .await?;
        Ok(Issued::Created(Json(IssuedKey {
            ok: true,
            id: issued
                .row
                .id
                .parse()
                .map_err(crate::error::ApiError::internal)?,
            key: issued.key,
            prefix: issued.row.prefix,
            tier: issued.tier,
            wallet: issued.row.wallet,
            created_at: iso(issued.row.created_at),
        })))
    }

    /// The key presenting this request.
    #[oai(path = "/apikeys/me", method = "get")]
    async fn me(&self, auth: ApiKeyAuth) -> Answer<Json<Me>, MeRefusals> {
        let caller = auth.0;
        Ok(Json(Me {
            ok: true,
            limit_per_minute: caller.tier.limit_per_minute(),
            id: caller.key_id,
            tier: caller.tier,
            wallet: caller.wallet,
        }))
    }

    /// Keys issued to a wallet (never their secrets).
    #[oai(path = "/apikeys/:wallet_address", method = "get")]
    async fn list(&self, wallet_address: Path<Wallet>) -> Answer<Json<KeyList>, ListRefusals> {
        let owner = wallet_address.0;
        let rows = keys::list(&self.state, &owner).await?;
        Ok(Json(KeyList {
            ok: true,
            wallet: owner,
            keys: rows
                .into_iter()
                .map(|k| KeyInfo {
                    active: k.revoked_at.is_none(),
                    id: k.id,
                    prefix: k.prefix,
                    tier: k.tier,
                    name: k.name,
                    created_at: iso(k.created_at),
                    revoked_at: k.revoked_at.map(iso),
                })
                .collect(),
        }))
    }

    /// Revoke a key: the owning wallet's signature, or the operator (who may also revoke a key
    /// issued to no wallet, whatever `wallet_address` names).
    #[oai(path = "/apikeys/revoke", method = "post")]
    async fn revoke(
        &self,
        req: &Request,
        body: Json<RevokeKey>,
    ) -> Answer<Json<Revoked>, RevokeRefusals> {
        let body = body.0;
        let operator = admin_wallet(req, &self.state).map(Operator);
        let proof = match (&body.signature, body.issued_at) {
            (Some(signature), Some(issued_at)) => Some(Proof {
                wallet: &body.wallet_address,
                signature,
                issued_at,
            }),
            _ => None,
        };
        keys::revoke_by_owner(
            &self.state,
            body.id,
            &body.wallet_address,
            proof,
            operator.as_ref(),
        )
        .await?;
        Ok(Json(Revoked {
            ok: true,
            id: body.id,
            revoked: true,
        }))
    }
}
