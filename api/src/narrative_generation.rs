//! `generate` (spec 4.1): a draft narrative from a topic, made by the job queue so the request
//! returns at once with a `jobId`; `generate/status/:jobId` reads the row the job fills.

use anyhow::Context;
use narrative_store::entities::narrative_generations;
use narrative_store::Store;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde_json::Value;

use crate::generation::Generator;
use crate::time::{iso, now};

pub const GENERATE_NARRATIVE: &str = "generate_narrative";
/// Drafts resolve this many days out unless the request says otherwise.
pub const DEFAULT_DEADLINE_DAYS: i64 = 30;

/// Attempts a generation gets: a person is waiting on its status, so a provider that fails
/// three times (2 s and 4 s apart) is reported instead of retried for an hour.
pub const ATTEMPTS: i32 = 3;

/// Runs attempt `attempt` of one generation: the draft is stored and the row `done`; a
/// provider failure is returned for the queue to retry, until the last attempt marks the row
/// `failed` with the error.
pub async fn generate(
    store: &Store,
    generator: &dyn Generator,
    payload: &Value,
    attempt: i32,
) -> anyhow::Result<()> {
    let id = payload["generation_id"]
        .as_str()
        .context("payload without generation_id")?;
    let db = store.db();
    let row = narrative_generations::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .context("the generation is gone")?;
    if row.status == "done" {
        return Ok(());
    }
    let days = payload["deadline_days"]
        .as_i64()
        .unwrap_or(DEFAULT_DEADLINE_DAYS);
    let deadline = iso(row.created_at + days * 86_400);
    let deadline = deadline.get(..10).unwrap_or(&deadline);
    let draft = generator
        .draft(&row.topic, row.category.as_deref(), deadline)
        .await;
    let draft = match draft {
        Ok(draft) => draft,
        Err(error) => {
            let last = attempt >= ATTEMPTS;
            let mut update = narrative_generations::Entity::update_many()
                .col_expr(
                    narrative_generations::Column::Error,
                    Some(format!("{error:#}")).into(),
                )
                .col_expr(narrative_generations::Column::UpdatedAt, now().into());
            if last {
                update = update.col_expr(narrative_generations::Column::Status, "failed".into());
            }
            update
                .filter(narrative_generations::Column::Id.eq(id))
                .exec(db)
                .await?;
            return if last { Ok(()) } else { Err(error) };
        }
    };
    narrative_generations::Entity::update(narrative_generations::ActiveModel {
        id: Set(id.to_owned()),
        status: Set("done".into()),
        draft: Set(Some(serde_json::to_value(&draft)?)),
        error: Set(None),
        updated_at: Set(now()),
        ..Default::default()
    })
    .exec(db)
    .await?;
    Ok(())
}
