//! Prometheus metrics of the HTTP surface, served at `/metrics`. Paths are labelled by their
//! shape (`/v1/shield/protocols/:id`) so that ids cannot blow up the label set.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

pub struct HttpMetrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub duration: HistogramVec,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpMetrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "Requests answered, by method, route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let duration = HistogramVec::new(
            HistogramOpts::new("http_request_duration_seconds", "Time to answer a request")
                .buckets(vec![
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                ]),
            &["method", "route"],
        )
        .expect("valid metric");
        registry
            .register(Box::new(requests.clone()))
            .expect("unique metric");
        registry
            .register(Box::new(duration.clone()))
            .expect("unique metric");
        HttpMetrics {
            registry,
            requests,
            duration,
        }
    }

    pub fn observe(&self, method: &str, path: &str, status: u16, seconds: f64) {
        let route = route_label(path);
        self.requests
            .with_label_values(&[method, &route, &status.to_string()])
            .inc();
        self.duration
            .with_label_values(&[method, &route])
            .observe(seconds);
    }

    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("text encoding");
        String::from_utf8(out).expect("prometheus text is UTF-8")
    }
}

/// The path with every identifier-like segment (keys, UUIDs, hex ids, numbers) as `:id`.
pub fn route_label(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if looks_like_id(segment) {
                ":id"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn looks_like_id(segment: &str) -> bool {
    !segment.is_empty() && (segment.len() >= 24 || segment.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_collapse_in_route_labels() {
        assert_eq!(route_label("/v1/shield/protocols"), "/v1/shield/protocols");
        assert_eq!(
            route_label(&format!("/v1/shield/protocols/{}", "ab".repeat(32))),
            "/v1/shield/protocols/:id"
        );
        assert_eq!(
            route_label("/v1/binary/positions/11111111111111111111111111111111"),
            "/v1/binary/positions/:id"
        );
        assert_eq!(route_label("/v1/things/42"), "/v1/things/:id");
    }

    #[test]
    fn observed_requests_are_rendered() {
        let metrics = HttpMetrics::new();
        metrics.observe("GET", "/health", 200, 0.002);
        metrics.observe("GET", "/health", 200, 0.004);
        let text = metrics.render();
        assert!(
            text.contains(r#"http_requests_total{method="GET",route="/health",status="200"} 2"#),
            "{text}"
        );
        assert!(
            text.contains("http_request_duration_seconds_count"),
            "{text}"
        );
    }
}
