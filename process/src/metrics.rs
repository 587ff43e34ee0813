//! An opt-in Prometheus endpoint (`--metrics ADDR`, on coordinator and workers): a few counters
//! and gauges in a `prometheus-client` registry, rendered in the OpenMetrics text format at
//! `GET /metrics` by a tiny axum server.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// A counter (only goes up) or a gauge (set to the current value).
pub struct Metric {
    name: &'static str,
    kind: Kind,
}

enum Kind {
    Counter(Counter<u64, AtomicU64>),
    Gauge(Gauge<u64, AtomicU64>),
}

impl Metric {
    /// Add `n` (a counter; a gauge goes up by `n`).
    pub fn add(&self, n: u64) {
        match &self.kind {
            Kind::Counter(c) => {
                c.inc_by(n);
            }
            Kind::Gauge(g) => {
                g.inc_by(n);
            }
        }
    }
    /// Set the current value (a gauge; a counter is left as it is, counters only go up).
    pub fn set(&self, v: u64) {
        if let Kind::Gauge(g) = &self.kind {
            g.set(v);
        }
    }
    /// The current value.
    pub fn get(&self) -> u64 {
        match &self.kind {
            Kind::Counter(c) => c.get(),
            Kind::Gauge(g) => g.get(),
        }
    }
}

/// Every metric of a process, in registration order, in a `prometheus-client` registry.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    registry: prometheus_client::registry::Registry,
    metrics: Vec<Arc<Metric>>,
}

impl Registry {
    fn register(&self, name: &'static str, help: &'static str, gauge: bool) -> Arc<Metric> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = inner.metrics.iter().find(|m| m.name == name) {
            return m.clone();
        }
        // The exposition ends every help text with a full stop.
        let help = help.trim_end_matches('.');
        let kind = if gauge {
            let g = Gauge::<u64, AtomicU64>::default();
            inner.registry.register(name, help, g.clone());
            Kind::Gauge(g)
        } else {
            // The exposition adds `_total` to a counter's name.
            let c = Counter::<u64, AtomicU64>::default();
            let family = name.strip_suffix("_total").unwrap_or(name);
            inner.registry.register(family, help, c.clone());
            Kind::Counter(c)
        };
        let m = Arc::new(Metric { name, kind });
        inner.metrics.push(m.clone());
        m
    }
    /// The counter `name` (ending in `_total`), registered with `help` unless a metric of that
    /// name already is.
    pub fn counter(&self, name: &'static str, help: &'static str) -> Arc<Metric> {
        self.register(name, help, false)
    }
    /// The gauge `name`, registered with `help` unless a metric of that name already is.
    pub fn gauge(&self, name: &'static str, help: &'static str) -> Arc<Metric> {
        self.register(name, help, true)
    }

    /// The OpenMetrics text exposition of every metric (which Prometheus scrapes).
    pub fn render(&self) -> String {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &inner.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Serve `GET /metrics` on `addr` until the process ends. Binds before returning, so a bad
/// address is reported at once.
pub async fn serve(addr: SocketAddr, registry: Arc<Registry>) -> std::io::Result<SocketAddr> {
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let registry = registry.clone();
            async move {
                (
                    [(
                        "content-type",
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    registry.render(),
                )
            }
        }),
    );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!("metrics endpoint on {bound} stopped: {e}");
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_text_format() {
        let r = Registry::default();
        let c = r.counter("kingmaker_test_total", "A test counter.");
        c.add(3);
        r.gauge("kingmaker_wave", "The wave.").set(7);
        assert!(Arc::ptr_eq(&c, &r.counter("kingmaker_test_total", "again")));
        let text = r.render();
        assert!(
            text.contains("# HELP kingmaker_test A test counter.\n# TYPE kingmaker_test counter\nkingmaker_test_total 3\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "# HELP kingmaker_wave The wave.\n# TYPE kingmaker_wave gauge\nkingmaker_wave 7\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
