//! Progress: a bar on a terminal, one structured line per wave otherwise, and the metrics.

use indicatif::{ProgressBar, ProgressStyle};
use kingmaker_kernel::WaveSummary;
use kingmaker_process::metrics::Registry;
use std::io::IsTerminal;
use std::sync::{Arc, OnceLock};

/// The coordinator's metrics (served by `--metrics ADDR`).
pub fn metrics() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default).clone()
}

/// Progress of one layer: a bar of decided states (on a terminal) plus a log line per wave.
pub struct LayerProgress {
    bar: Option<ProgressBar>,
}

impl LayerProgress {
    pub fn new(layer: &str, states: u64) -> LayerProgress {
        let m = metrics();
        m.counter(
            "kingmaker_layers_started_total",
            "Layers started or resumed by this process.",
        )
        .add(1);
        m.gauge(
            "kingmaker_layer_states",
            "States of the layer being solved.",
        )
        .set(states);
        m.gauge(
            "kingmaker_layer_decided",
            "States of the layer being solved decided so far.",
        )
        .set(0);
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(states);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>10} [{bar:40}] {pos}/{len} decided, wave {msg} ({elapsed})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(layer.to_string());
            bar
        });
        LayerProgress { bar }
    }

    pub fn wave(&self, w: &WaveSummary) {
        // Remote workers report the bytes they sent (builds with `--workers`); in-process ones
        // have no wire.
        let on_wire = match w.wire_bytes {
            Some(wire) => format!(", {wire} bytes on the wire"),
            None => String::new(),
        };
        // Decided states sent in place of their updates (the receiver lists their predecessors).
        let states = match w.stats.sent_states {
            0 => String::new(),
            n => format!(" and {n} decided states"),
        };
        let line = format!(
            "layer {} wave {}: decided {} (total {}), expanded {}, updates applied {}, sent {}{states}{on_wire}, {:.2}s",
            w.layer, w.wave, w.decided, w.decided_total, w.stats.expanded, w.stats.applied, w.stats.sent, w.seconds
        );
        let m = metrics();
        m.counter("kingmaker_waves_total", "Waves closed (all layers).")
            .add(1);
        m.gauge("kingmaker_wave", "The last wave closed.")
            .set(u64::from(w.wave));
        m.gauge(
            "kingmaker_layer_decided",
            "States of the layer being solved decided so far.",
        )
        .set(w.decided_total);
        m.counter(
            "kingmaker_states_decided_total",
            "States decided (all layers).",
        )
        .add(w.decided);
        m.counter(
            "kingmaker_updates_applied_total",
            "Predecessor updates applied.",
        )
        .add(w.stats.applied);
        m.counter(
            "kingmaker_updates_sent_total",
            "Predecessor updates sent between workers.",
        )
        .add(w.stats.sent);
        m.counter(
            "kingmaker_states_sent_total",
            "Decided states sent between workers in place of their predecessor updates.",
        )
        .add(w.stats.sent_states);
        m.counter(
            "kingmaker_wire_bytes_total",
            "Bytes of updates exchanged between remote workers.",
        )
        .add(w.wire_bytes.unwrap_or(0));
        match &self.bar {
            Some(bar) => {
                bar.set_position(w.decided_total);
                bar.set_message(w.wave.to_string());
                bar.suspend(|| tracing::debug!("{line}"));
            }
            None => tracing::info!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Serve the coordinator's metrics at `http://ADDR/metrics` for the rest of the process, on a
/// thread of its own (embedded builds have no async runtime).
pub fn serve_metrics(addr: &str) -> anyhow::Result<std::net::SocketAddr> {
    let addr = kingmaker_rpc::resolve(addr)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => return drop(tx.send(Err(e))),
            };
            runtime.block_on(async move {
                let _ = tx.send(kingmaker_process::metrics::serve(addr, metrics()).await);
                std::future::pending::<()>().await
            })
        })?;
    let bound = rx
        .recv()?
        .map_err(|e| anyhow::anyhow!("cannot serve metrics on {addr}: {e}"))?;
    Ok(bound)
}
