//! API keys (spec 4.11, 5.5): the operator issues them (beta: manual issuance, Free tier by
//! default), wallets list and revoke theirs, an agent reads its own.

use std::sync::Arc;

use narrative_store::entities::api_keys;
use poem::http::StatusCode;
use poem::Request;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::auth::{admin_matches, AdminAuth, ApiKeyAuth};
use crate::error::{ApiError, ApiResult};
use crate::keys::{self, revoke_message, tier_limit};
use crate::routes::Tag;
use crate::signature;
use crate::state::AppState;
use crate::time::iso;
use crate::validate::wallet;

pub struct ApiKeysApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct IssueKey {
    /// The wallet the key belongs to.
    pub wallet: Option<String>,
    pub name: Option<String>,
    /// `free` (default), `pro` or `enterprise`.
    pub tier: Option<String>,
}

#[derive(Object)]
pub struct IssuedKey {
    pub ok: bool,
    pub id: String,
    /// The whole key. It is shown this once and cannot be recovered.
    pub key: String,
    pub prefix: String,
    pub tier: String,
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

impl From<api_keys::Model> for KeyInfo {
    fn from(k: api_keys::Model) -> Self {
        KeyInfo {
            active: k.revoked_at.is_none(),
            id: k.id,
            prefix: k.prefix,
            tier: k.tier,
            name: k.name,
            created_at: iso(k.created_at),
            revoked_at: k.revoked_at.map(iso),
        }
    }
}

#[derive(Object)]
pub struct KeyList {
    pub ok: bool,
    pub wallet: String,
    pub keys: Vec<KeyInfo>,
}

#[derive(Object)]
pub struct RevokeKey {
    pub id: String,
    pub wallet_address: String,
    /// Base58 signature by `wallet_address` of
    /// `narrative-market-service:revoke-api-key:<id>:<wallet_address>`; not needed with the
    /// admin headers.
    pub signature: Option<String>,
}

#[derive(Object)]
pub struct Revoked {
    pub ok: bool,
    pub id: String,
    pub revoked: bool,
}

#[derive(Object)]
pub struct Me {
    pub ok: bool,
    pub id: String,
    pub tier: String,
    pub wallet: Option<String>,
    pub limit_per_minute: u32,
}

#[OpenApi(tag = "Tag::ApiKeys")]
impl ApiKeysApi {
    /// Issue a key (admin). The response is the only time the key is shown.
    #[oai(path = "/admin/apikeys", method = "post")]
    async fn issue(&self, _admin: AdminAuth, body: Json<IssueKey>) -> ApiResult<Issued> {
        let owner = match body.0.wallet.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(w) => Some(wallet("wallet", w)?.to_string()),
        };
        let tier = body
            .0
            .tier
            .as_deref()
            .unwrap_or("free")
            .trim()
            .to_ascii_lowercase();
        let issued = keys::issue(self.state.store.db(), &tier, owner, body.0.name.clone()).await?;
        tracing::info!(id = %issued.row.id, prefix = %issued.row.prefix, tier, "api key issued");
        Ok(Issued::Created(Json(IssuedKey {
            ok: true,
            id: issued.row.id,
            key: issued.key,
            prefix: issued.row.prefix,
            tier: issued.row.tier,
            wallet: issued.row.wallet,
            created_at: iso(issued.row.created_at),
        })))
    }

    /// The key presenting this request.
    #[oai(path = "/apikeys/me", method = "get")]
    async fn me(&self, auth: ApiKeyAuth) -> ApiResult<Json<Me>> {
        let caller = auth.0;
        Ok(Json(Me {
            ok: true,
            limit_per_minute: tier_limit(&caller.tier).unwrap_or(0),
            id: caller.key_id,
            tier: caller.tier,
            wallet: caller.wallet,
        }))
    }

    /// Keys issued to a wallet (never their secrets).
    #[oai(path = "/apikeys/:wallet_address", method = "get")]
    async fn list(&self, wallet_address: Path<String>) -> ApiResult<Json<KeyList>> {
        let owner = wallet("wallet_address", &wallet_address.0)?.to_string();
        let rows = keys::list_for_wallet(self.state.store.db(), &owner).await?;
        Ok(Json(KeyList {
            ok: true,
            wallet: owner,
            keys: rows.into_iter().map(KeyInfo::from).collect(),
        }))
    }

    /// Revoke a key: the operator, or the owning wallet's signature.
    #[oai(path = "/apikeys/revoke", method = "post")]
    async fn revoke(&self, req: &Request, body: Json<RevokeKey>) -> ApiResult<Json<Revoked>> {
        let owner = wallet("wallet_address", &body.wallet_address)?;
        let id = crate::validate::uuid("id", &body.id)?.to_string();
        let admin = admin_matches(
            &self.state,
            req.header("x-admin-wallet").unwrap_or_default(),
            req.header("x-admin-secret").unwrap_or_default(),
        );
        let signed = body.signature.as_deref().is_some_and(|s| {
            signature::verify(
                &owner,
                revoke_message(&id, &owner.to_string()).as_bytes(),
                s,
            )
        });
        if !admin && !signed {
            return Err(ApiError::coded(
                StatusCode::UNAUTHORIZED,
                "invalid_signature",
                "revoking needs the wallet's signature of the revoke message or the admin headers",
            )
            .into());
        }
        if !keys::revoke(self.state.store.db(), &id, &owner.to_string()).await? {
            return Err(ApiError::not_found("api key").into());
        }
        Ok(Json(Revoked {
            ok: true,
            id,
            revoked: true,
        }))
    }
}
