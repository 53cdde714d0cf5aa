//! `/admin/queues` (spec 5 rule 6, 9.2): the job queue as one small HTML page for operators,
//! behind HTTP Basic and the admin header pair. Jobs by kind and status (each count links to
//! its list), the queue's health, the latest jobs with their last errors, and a Retry / Cancel
//! button per job that allows it (forms posting to `/admin/queues/jobs/{id}/{retry|cancel}`,
//! which answer with a redirect back). Everything a job carries is escaped: a last error is
//! whatever a remote server answered.

use std::fmt::Write;
use std::sync::Arc;

use narrative_store::entities::jobs;
use poem::http::StatusCode;
use poem::web::{Data, Path, Query};
use poem::{handler, IntoResponse, Request, Response};
use serde::Deserialize;

use crate::clock::iso;
use crate::domain::admin::dashboard;
use crate::domain::admin::queue_monitor::{self, Filter, JobAction, STATUSES};
use crate::domain::admin::Operator;
use crate::http::auth::queue_monitor_operator;
use crate::state::AppState;

#[derive(Debug, Default, Deserialize)]
pub struct PageQuery {
    kind: Option<String>,
    status: Option<String>,
    /// What the last action did, shown once after its redirect (`retry:12`).
    done: Option<String>,
}

/// `GET /admin/queues`.
#[handler]
pub async fn page(
    req: &Request,
    Data(state): Data<&Arc<AppState>>,
    Query(query): Query<PageQuery>,
) -> Response {
    if let Err(refused) = queue_monitor_operator(req, state) {
        return refused.into_response();
    }
    let filter = Filter {
        kind: query.kind.filter(|k| !k.is_empty()),
        status: query.status.filter(|s| !s.is_empty()),
    };
    let notice = query.done.map(|done| (true, format!("Done: {done}")));
    render(state, &filter, notice, StatusCode::OK).await
}

/// `POST /admin/queues/jobs/{id}/{retry|cancel}`: the action, then back to the page (or the
/// page with the refusal).
#[handler]
pub async fn act(
    req: &Request,
    Data(state): Data<&Arc<AppState>>,
    Path((id, action)): Path<(i64, String)>,
) -> Response {
    let operator = match queue_monitor_operator(req, state) {
        Ok(wallet) => Operator(wallet),
        Err(refused) => return refused.into_response(),
    };
    let action = match action.as_str() {
        "retry" => JobAction::Retry,
        "cancel" => JobAction::Cancel,
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    match queue_monitor::act(state, &operator, id, action).await {
        Ok(job) => Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(
                "location",
                format!("/admin/queues?done={}:{}", action.name(), job.id),
            )
            .finish(),
        Err(refused) => {
            let message = refused.body["message"]
                .as_str()
                .unwrap_or("refused")
                .to_owned();
            render(
                state,
                &Filter::default(),
                Some((false, message)),
                refused.status,
            )
            .await
        }
    }
}

async fn render(
    state: &AppState,
    filter: &Filter,
    notice: Option<(bool, String)>,
    status: StatusCode,
) -> Response {
    let (board, latest) = match tokio::try_join!(
        dashboard::queue_board(state),
        queue_monitor::latest(state, filter)
    ) {
        Ok(both) => both,
        Err(error) => return error.into_response(),
    };
    let html = document(&board, &latest, filter, notice.as_ref());
    Response::builder()
        .status(status)
        .content_type("text/html; charset=utf-8")
        // Credentials gate it: never kept by a cache on the way.
        .header("cache-control", "no-store")
        .body(html)
}

/// Text as HTML: `& < > " '` escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A query-string value: everything but unreserved characters percent-encoded.
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;\
text-align:left;vertical-align:top}.ok{color:#176b2c}.degraded,.error{color:#a11}\
form{display:inline}td.last-error{max-width:40em;white-space:pre-wrap;font-family:monospace}";

fn document(
    board: &dashboard::QueueBoard,
    latest: &[jobs::Model],
    filter: &Filter,
    notice: Option<&(bool, String)>,
) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Job queue</title><style>{STYLE}</style></head><body><h1>Job queue</h1>"
    );
    if let Some((ok, text)) = notice {
        let class = if *ok { "ok" } else { "error" };
        let _ = write!(
            html,
            "<p id=\"notice\" class=\"{class}\">{}</p>",
            escape(text)
        );
    }
    let queue = &board.queue;
    let _ = write!(
        html,
        "<p id=\"health\" class=\"{status}\">Queue {status}: <span id=\"dead\">{dead}</span> dead, \
         oldest due job waiting <span id=\"oldest-due\">{oldest}</span> s.</p>",
        status = queue.status,
        dead = queue.dead,
        oldest = queue.oldest_due_secs,
    );
    counts_table(&mut html, board);
    let mut title = String::from("Latest jobs");
    if let Some(kind) = &filter.kind {
        let _ = write!(title, " of kind {}", escape(kind));
    }
    if let Some(status) = &filter.status {
        let _ = write!(title, " that are {}", escape(status));
    }
    let _ = write!(
        html,
        "<h2 id=\"list-title\">{title}</h2><p><a href=\"/admin/queues\">All jobs</a></p>\
         <table id=\"jobs\"><thead><tr><th>id</th><th>kind</th><th>subject</th><th>status</th>\
         <th>attempts</th><th>runs at</th><th>updated</th><th>last error</th><th></th></tr>\
         </thead><tbody>"
    );
    for job in latest {
        job_row(&mut html, job);
    }
    if latest.is_empty() {
        html.push_str("<tr><td colspan=\"9\" id=\"no-jobs\">No jobs.</td></tr>");
    }
    html.push_str("</tbody></table></body></html>");
    html
}

fn counts_table(html: &mut String, board: &dashboard::QueueBoard) {
    html.push_str("<h2>By kind and status</h2><table id=\"counts\"><thead><tr><th>kind</th>");
    for status in STATUSES {
        let _ = write!(html, "<th>{status}</th>");
    }
    html.push_str("</tr></thead><tbody>");
    let mut kinds: Vec<&str> = board.jobs.iter().map(|j| j.kind.as_str()).collect();
    kinds.dedup();
    for kind in kinds {
        let _ = write!(
            html,
            "<tr data-kind=\"{k}\"><td><a href=\"/admin/queues?kind={q}\">{k}</a></td>",
            k = escape(kind),
            q = query_value(kind)
        );
        for status in STATUSES {
            let count = board
                .jobs
                .iter()
                .find(|j| j.kind == kind && j.status == status)
                .map_or(0, |j| j.count);
            let _ = write!(
                html,
                "<td data-status=\"{status}\"><a href=\"/admin/queues?kind={q}&amp;status={status}\">\
                 {count}</a></td>",
                q = query_value(kind)
            );
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
}

fn job_row(html: &mut String, job: &jobs::Model) {
    let _ = write!(
        html,
        "<tr id=\"job-{id}\" data-status=\"{status}\"><td>{id}</td><td>{kind}</td><td>{subject}</td>\
         <td class=\"status\">{status}</td><td class=\"attempts\">{attempts}</td><td>{run_at}</td>\
         <td>{updated}</td><td class=\"last-error\">{error}</td><td>",
        id = job.id,
        status = escape(&job.status),
        kind = escape(&job.kind),
        subject = escape(job.subject.as_deref().unwrap_or("")),
        attempts = job.attempts,
        run_at = iso(job.run_at),
        updated = iso(job.updated_at),
        error = escape(job.last_error.as_deref().unwrap_or("")),
    );
    let retryable = queue_monitor::retryable(job);
    let cancellable = queue_monitor::cancellable(job);
    for (allowed, action, label) in [
        (retryable, "retry", "Retry"),
        (cancellable, "cancel", "Cancel"),
    ] {
        if allowed {
            let _ = write!(
                html,
                "<form method=\"post\" action=\"/admin/queues/jobs/{id}/{action}\">\
                 <button type=\"submit\" class=\"{action}\">{label}</button></form> ",
                id = job.id
            );
        }
    }
    html.push_str("</td></tr>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_job_carries_is_escaped_and_quoted() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
        assert_eq!(
            query_value("deliver webhook&x=1"),
            "deliver%20webhook%26x%3D1"
        );
    }
}
