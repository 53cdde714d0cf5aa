//! Counters shared by every process through Redis: `INCR` and `EXPIRE` in one MULTI per hit, on
//! a key per window, so processes agree without coordinating. If Redis cannot be reached the
//! hit is let through (and logged) marked `limiter_down`: a limiter outage must not take the API
//! down with it, but the cost quotas refuse such a hit (they fail closed; see `limits`).

use std::time::Duration;

use redis::aio::ConnectionManager;

use super::{window, Decision, Policy};

/// The longest a hit waits for Redis, reconnection included: a limiter that is down costs a
/// request this much at most, then the hit is let through or refused as its policy says.
const HIT_DEADLINE: Duration = Duration::from_millis(750);

pub struct RedisLimiter {
    connection: ConnectionManager,
    namespace: String,
}

impl RedisLimiter {
    pub async fn connect(url: &str, namespace: &str) -> redis::RedisResult<RedisLimiter> {
        let client = redis::Client::open(url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(std::time::Duration::from_secs(2))
            .set_response_timeout(std::time::Duration::from_millis(500))
            // A dropped connection is tried again once, not with a backoff of seconds that
            // every waiting hit would sit through.
            .set_number_of_retries(1);
        Ok(RedisLimiter {
            connection: client.get_connection_manager_with_config(config).await?,
            namespace: namespace.to_owned(),
        })
    }

    pub async fn hit(&self, policy: &Policy, subject: &str, now: u64) -> Decision {
        let (index, retry_after_secs) = window(now, policy.window_secs);
        let key = format!(
            "{}:rl:{}:{}:{}",
            self.namespace, policy.name, subject, index
        );
        let mut connection = self.connection.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .incr(&key, 1u64)
            .expire(&key, policy.window_secs as i64 + 1)
            .ignore();
        let counting = pipe.query_async::<(u64,)>(&mut connection);
        let counted = tokio::time::timeout(HIT_DEADLINE, counting)
            .await
            .unwrap_or_else(|_| {
                Err(redis::RedisError::from((
                    redis::ErrorKind::IoError,
                    "no answer within the hit deadline",
                )))
            });
        match counted {
            Ok((count,)) => Decision {
                allowed: count <= u64::from(policy.limit),
                count,
                retry_after_secs,
                limiter_down: false,
            },
            Err(e) => {
                tracing::warn!(error = %e, policy = policy.name, "rate limiter unavailable");
                Decision {
                    allowed: true,
                    count: 0,
                    retry_after_secs,
                    limiter_down: true,
                }
            }
        }
    }
}
