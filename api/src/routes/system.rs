//! `GET /v1/system/status` and the operator's halt switch.

use std::sync::Arc;

use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::admin::Operator;
use crate::domain::system::{self, ComponentState};
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Component, Text};

pub struct SystemApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct ComponentStatus {
    pub name: Component,
    pub halted: bool,
    pub reason: Option<String>,
    /// ISO 8601 UTC of the last change; null when never changed.
    pub updated_at: Option<String>,
}

impl From<ComponentState> for ComponentStatus {
    fn from(c: ComponentState) -> Self {
        ComponentStatus {
            name: c.component,
            halted: c.halted,
            reason: c.reason,
            updated_at: c.updated_at.map(iso),
        }
    }
}

#[derive(Object)]
pub struct SystemStatus {
    pub ok: bool,
    /// True when any component is halted.
    pub halted: bool,
    pub components: Vec<ComponentStatus>,
}

#[derive(Object)]
pub struct HaltRequest {
    pub component: Component,
    /// True halts the component's writes, false resumes them.
    pub halted: bool,
    /// Shown in the status; at most 500 characters.
    pub reason: Option<Text<500, 0>>,
}

refusals! {
    StatusRefusals: [];
    HaltRefusals: [400, 413];
}

#[OpenApi(tag = "Tag::System")]
impl SystemApi {
    /// Per-component halted flags. A halted component's writes answer 503 `system_halted`.
    #[oai(path = "/system/status", method = "get")]
    async fn status(&self) -> Answer<Json<SystemStatus>, StatusRefusals> {
        Ok(Json(self.read().await?))
    }

    /// Halt or resume a component (admin).
    #[oai(path = "/admin/system/halt", method = "post")]
    async fn halt(
        &self,
        admin: AdminAuth,
        body: Json<HaltRequest>,
    ) -> Answer<Json<SystemStatus>, HaltRefusals> {
        let HaltRequest {
            component,
            halted,
            reason,
        } = body.0;
        let reason = reason.and_then(Text::non_empty);
        let operator = Operator(admin.0);
        system::set_halted(&self.state, &operator, component, halted, reason).await?;
        Ok(Json(self.read().await?))
    }
}

impl SystemApi {
    async fn read(&self) -> Result<SystemStatus, crate::error::ApiError> {
        let components: Vec<ComponentStatus> = system::status(&self.state)
            .await?
            .into_iter()
            .map(ComponentStatus::from)
            .collect();
        Ok(SystemStatus {
            ok: true,
            halted: components.iter().any(|c| c.halted),
            components,
        })
    }
}
