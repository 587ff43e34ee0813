//! An opt-in Prometheus endpoint (`--metrics ADDR`, on coordinator and workers): a few counters
//! and gauges kept as atomics, rendered in the Prometheus text format at `GET /metrics` by a tiny
//! axum server.

use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A counter (only goes up) or a gauge (set to the current value).
pub struct Metric {
    name: &'static str,
    help: &'static str,
    gauge: bool,
    value: AtomicU64,
}

impl Metric {
    /// Add `n` (a counter).
    pub fn add(&self, n: u64) {
        self.value.fetch_add(n, Relaxed);
    }
    /// Set the current value (a gauge).
    pub fn set(&self, v: u64) {
        self.value.store(v, Relaxed);
    }
    /// The current value.
    pub fn get(&self) -> u64 {
        self.value.load(Relaxed)
    }
}

/// Every metric of a process, in registration order.
#[derive(Default)]
pub struct Registry {
    metrics: Mutex<Vec<Arc<Metric>>>,
}

impl Registry {
    fn register(&self, name: &'static str, help: &'static str, gauge: bool) -> Arc<Metric> {
        let mut metrics = self.metrics.lock().expect("metrics registry");
        if let Some(m) = metrics.iter().find(|m| m.name == name) {
            return m.clone();
        }
        let m = Arc::new(Metric {
            name,
            help,
            gauge,
            value: AtomicU64::new(0),
        });
        metrics.push(m.clone());
        m
    }
    /// The counter `name`, registered with `help` unless a metric of that name already is.
    pub fn counter(&self, name: &'static str, help: &'static str) -> Arc<Metric> {
        self.register(name, help, false)
    }
    /// The gauge `name`, registered with `help` unless a metric of that name already is.
    pub fn gauge(&self, name: &'static str, help: &'static str) -> Arc<Metric> {
        self.register(name, help, true)
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for m in self.metrics.lock().expect("metrics registry").iter() {
            let kind = if m.gauge { "gauge" } else { "counter" };
            let _ = writeln!(
                out,
                "# HELP {} {}\n# TYPE {} {kind}\n{} {}",
                m.name,
                m.help,
                m.name,
                m.name,
                m.get()
            );
        }
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
                    [("content-type", "text/plain; version=0.0.4")],
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
            text.contains("# TYPE kingmaker_test_total counter\nkingmaker_test_total 3\n"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE kingmaker_wave gauge\nkingmaker_wave 7\n"),
            "{text}"
        );
    }
}
