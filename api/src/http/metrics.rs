//! Prometheus metrics of the HTTP surface, served at `/metrics`. Requests are labelled by the
//! template of the route that serves them (`/v1/shield/protocols/{id}`, from
//! [`Contract::route_label`](crate::http::contract::Contract::route_label)) and by a standard
//! method, so neither ids nor made-up paths and methods can grow the label set.

use poem::http::Method;
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

    /// One answered request: `route` is its template's label.
    pub fn observe(&self, method: &Method, route: &str, status: u16, seconds: f64) {
        let method = method_label(method);
        self.requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.duration
            .with_label_values(&[method, route])
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

/// The method's name if it is one of HTTP's own, else `OTHER` (extension methods are any token).
fn method_label(method: &Method) -> &'static str {
    const STANDARD: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    STANDARD
        .iter()
        .find(|m| *m == method)
        .map_or("OTHER", |m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_methods_share_one_label() {
        assert_eq!(method_label(&Method::POST), "POST");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "OTHER");
    }

    #[test]
    fn observed_requests_are_rendered() {
        let metrics = HttpMetrics::new();
        metrics.observe(&Method::GET, "/health", 200, 0.002);
        metrics.observe(&Method::GET, "/health", 200, 0.004);
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
