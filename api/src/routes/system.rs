//! `GET /v1/system/status` and the operator's halt switch.

use std::sync::Arc;

use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::auth::AdminAuth;
use crate::error::ApiResult;
use crate::routes::Tag;
use crate::state::AppState;
use crate::system;
use crate::time::{iso, now};

pub struct SystemApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct Component {
    pub name: String,
    pub halted: bool,
    pub reason: Option<String>,
    /// ISO 8601 UTC of the last change; null when never changed.
    pub updated_at: Option<String>,
}

#[derive(Object)]
pub struct SystemStatus {
    pub ok: bool,
    /// True when any component is halted.
    pub halted: bool,
    pub components: Vec<Component>,
}

#[derive(Object)]
pub struct HaltRequest {
    /// One of `shield`, `binary`, `markets`, `agents`, `narratives`.
    pub component: String,
    /// True halts the component's writes, false resumes them.
    pub halted: bool,
    pub reason: Option<String>,
}

#[OpenApi(tag = "Tag::System")]
impl SystemApi {
    /// Per-component halted flags. A halted component's writes answer 503 `system_halted`.
    #[oai(path = "/system/status", method = "get")]
    async fn status(&self) -> ApiResult<Json<SystemStatus>> {
        let components: Vec<Component> = system::status(self.state.store.db())
            .await?
            .into_iter()
            .map(|c| Component {
                name: c.name,
                halted: c.halted,
                reason: c.reason,
                updated_at: (c.updated_at > 0).then(|| iso(c.updated_at)),
            })
            .collect();
        Ok(Json(SystemStatus {
            ok: true,
            halted: components.iter().any(|c| c.halted),
            components,
        }))
    }

    /// Halt or resume a component (admin).
    #[oai(path = "/admin/system/halt", method = "post")]
    async fn halt(
        &self,
        _admin: AdminAuth,
        body: Json<HaltRequest>,
    ) -> ApiResult<Json<SystemStatus>> {
        let HaltRequest {
            component,
            halted,
            reason,
        } = body.0;
        let component = component.trim().to_owned();
        system::set_halted(self.state.store.db(), &component, halted, reason, now()).await?;
        tracing::info!(%component, halted, "component halt flag changed");
        self.status().await
    }
}
