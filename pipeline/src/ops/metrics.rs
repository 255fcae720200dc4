//! A Prometheus endpoint: `GET /metrics` over plain TCP (HTTP/1.0, one request per
//! connection), rendering the counters of a [`MetricsSnapshot`] in the text exposition format
//! (version 0.0.4). Off by default; listens on loopback unless configured otherwise.
//!
//! What is exported:
//! * `shrike_up`, `shrike_build_info{version}`, `shrike_uptime_seconds`;
//! * per worker (`worker="0"` …; in file mode the packets and bytes the worker handled):
//!   `shrike_packets_total`, `shrike_bytes_total`,
//!   `shrike_flows_total`, `shrike_alerts_total` and `shrike_drops_total{place=…}` with
//!   `place` one of `kernel`, `ring`, `queue`, `output` (see [`DROP_PLACES`]);
//! * every counter of the snapshot under its sanitized name (`decoder.pkts` →
//!   `shrike_decoder_pkts_total`; a counter's name ends in `_total`, a gauge's does not, as
//!   `promtool check metrics` wants), per worker, and without a `worker` label for the process-wide
//!   counters in [`MetricsSnapshot::global`].
//!
//! Rendering runs on the endpoint's thread when a scrape arrives; the packet path only
//! publishes snapshots as it already does for stats.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::stats::Snapshot;

/// Counters to export: one snapshot per worker plus process-wide ones.
#[derive(Clone, Debug, Default)]
pub struct MetricsSnapshot {
    /// Worker `i`'s counters (labelled `worker="i"`).
    pub workers: Vec<Snapshot>,
    /// Counters of the process as a whole (reader, dispatch, rules loaded …), no label.
    pub global: Snapshot,
}

/// A source of snapshots, called on the endpoint's thread for each scrape.
pub type MetricsSource = Arc<dyn Fn() -> MetricsSnapshot + Send + Sync>;

/// Headline per-worker metrics: name, help, source counters (the first one present wins).
pub const HEADLINE: [(&str, &str, &[&str]); 4] = [
    (
        "shrike_packets_total",
        "Packets received (capture count, drops included, or decoded packets).",
        &[
            "capture.kernel_packets",
            "decoder.pkts",
            "shrike.worker.pkts",
        ],
    ),
    (
        "shrike_bytes_total",
        "Bytes received.",
        &["decoder.bytes", "capture.bytes", "shrike.worker.bytes"],
    ),
    ("shrike_flows_total", "Flows created.", &["flow.total"]),
    ("shrike_alerts_total", "Alerts raised.", &["detect.alert"]),
];

/// Where packets or records are dropped, and the counters summed for each place. A name
/// ending in `.` is a prefix (every counter below it).
pub const DROP_PLACES: [(&str, &[&str]); 4] = [
    // The socket's ring was full when the kernel had a packet (AF_PACKET tp_drops; DPDK
    // imissed + rx_nombuf, as capture.kernel_drops).
    ("kernel", &["capture.kernel_drops"]),
    // The NIC's own RX ring overflowed (DPDK imissed; a subset of `kernel` there).
    ("ring", &["capture.dpdk.imissed"]),
    // A reader→worker queue was full in live dispatch mode.
    ("queue", &["shrike.dispatch.queue_drops"]),
    // EVE records dropped under output overload.
    ("output", &["output.eve.dropped."]),
];

/// Counters that are gauges rather than monotonic counters: sizes, memory in use, things
/// active now, rules loaded now, the last build's duration and the last reload's time.
fn is_gauge(name: &str) -> bool {
    name.ends_with("max_pkt_size")
        || name.ends_with("avg_pkt_size")
        || name.ends_with("memuse")
        || name.ends_with("active")
        || name.ends_with("active_sessions")
        || name.ends_with(".loaded")
        || name.ends_with("rules_loaded")
        || name.ends_with("rules_failed")
        || name.ends_with("rules_skipped")
        || name.ends_with("last_build_ms")
        || name.ends_with("last_reload")
}

/// Unit abbreviations `promtool check metrics` refuses in a name, with the base unit it wants
/// instead and the factor to it: `output.eve.blocked_us` becomes
/// `shrike_output_eve_blocked_seconds_total`, its value in seconds.
const UNITS: [(&str, &str, f64); 14] = [
    ("s", "seconds", 1.0),
    ("sec", "seconds", 1.0),
    ("ms", "seconds", 1e-3),
    ("us", "seconds", 1e-6),
    ("ns", "seconds", 1e-9),
    ("m", "seconds", 60.0),
    ("h", "seconds", 3600.0),
    ("d", "seconds", 86400.0),
    ("b", "bytes", 1.0),
    ("kb", "bytes", 1e3),
    ("mb", "bytes", 1e6),
    ("gb", "bytes", 1e9),
    ("tb", "bytes", 1e12),
    ("pb", "bytes", 1e15),
];

/// `name` with every `_`-separated unit abbreviation replaced by its base unit, and the factor
/// that converts the value.
fn base_units(name: &str) -> (String, f64) {
    let mut factor = 1.0;
    let parts: Vec<&str> = name
        .split('_')
        .map(|t| match UNITS.iter().find(|(a, _, _)| *a == t) {
            Some((_, base, f)) => {
                factor *= f;
                *base
            }
            None => t,
        })
        .collect();
    (parts.join("_"), factor)
}

/// `shrike_` plus the name with every character outside `[a-zA-Z0-9_]` turned into `_` (a
/// leading `shrike.` is not repeated).
pub fn sanitize(name: &str) -> String {
    let base = name.strip_prefix("shrike.").unwrap_or(name);
    let mut s = String::with_capacity(base.len() + 7);
    s.push_str("shrike_");
    for c in base.chars() {
        s.push(if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        });
    }
    s
}

fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn sum_sources(s: &Snapshot, sources: &[&str]) -> u64 {
    let mut total = 0u64;
    for src in sources {
        if src.ends_with('.') {
            total = s
                .iter()
                .filter(|(k, _)| k.starts_with(src))
                .fold(total, |a, (_, v)| a.saturating_add(v));
        } else {
            total = total.saturating_add(s.get(src));
        }
    }
    total
}

fn first_present(s: &Snapshot, sources: &[&str]) -> Option<u64> {
    sources
        .iter()
        .find_map(|src| s.iter().find(|(k, _)| k == src).map(|(_, v)| v))
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Renders `snap` in the Prometheus text format.
pub fn render(snap: &MetricsSnapshot, uptime: Duration) -> String {
    let mut out = String::with_capacity(16 * 1024);
    family(&mut out, "shrike_up", "gauge", "1 while the sensor runs.");
    out.push_str("shrike_up 1\n");
    family(&mut out, "shrike_build_info", "gauge", "Build version.");
    let _ = writeln!(
        out,
        "shrike_build_info{{version=\"{}\"}} 1",
        escape_label(env!("CARGO_PKG_VERSION"))
    );
    family(
        &mut out,
        "shrike_uptime_seconds",
        "gauge",
        "Seconds since start.",
    );
    let _ = writeln!(out, "shrike_uptime_seconds {}", uptime.as_secs());

    for (name, help, sources) in HEADLINE {
        family(&mut out, name, "counter", help);
        for (i, w) in snap.workers.iter().enumerate() {
            let v = first_present(w, sources).unwrap_or(0);
            let _ = writeln!(out, "{name}{{worker=\"{i}\"}} {v}");
        }
    }
    family(
        &mut out,
        "shrike_drops_total",
        "counter",
        "Packets or records dropped, by place (kernel, ring, queue, output).",
    );
    for (i, w) in snap.workers.iter().enumerate() {
        for (place, sources) in DROP_PLACES {
            let v = sum_sources(w, sources);
            let _ = writeln!(
                out,
                "shrike_drops_total{{worker=\"{i}\",place=\"{place}\"}} {v}"
            );
        }
    }
    for (place, sources) in DROP_PLACES {
        if snap
            .global
            .iter()
            .any(|(k, _)| sources.iter().any(|s| k.starts_with(s)))
        {
            let v = sum_sources(&snap.global, sources);
            let _ = writeln!(out, "shrike_drops_total{{place=\"{place}\"}} {v}");
        }
    }

    // Every raw counter, grouped into families by sanitized name. Label `None` is global.
    let mut families: BTreeMap<String, (String, BTreeMap<Option<usize>, u64>)> = BTreeMap::new();
    let mut add = |name: &str, worker: Option<usize>, v: u64| {
        let key = base_units(&sanitize(name)).0;
        let entry = families
            .entry(key)
            .or_insert_with(|| (name.to_string(), BTreeMap::new()));
        // Two names that sanitize alike (`a.b`, `a_b`): the first keeps the series.
        if entry.0 == name {
            entry.1.entry(worker).or_insert(v);
        }
    };
    for (k, v) in snap.global.iter() {
        add(k, None, v);
    }
    for (i, w) in snap.workers.iter().enumerate() {
        for (k, v) in w.iter() {
            add(k, Some(i), v);
        }
    }
    for (base, (orig, series)) in &families {
        let gauge = is_gauge(orig);
        let factor = base_units(&sanitize(orig)).1;
        // Prometheus naming: a counter's name ends in `_total`, a gauge's does not.
        let metric = match (gauge, base.strip_suffix("_total")) {
            (false, None) => format!("{base}_total"),
            (true, Some(b)) => b.to_string(),
            _ => base.clone(),
        };
        // A name taken by a headline family above (the headline keeps it).
        if HEADLINE.iter().any(|(h, _, _)| *h == metric) || metric == "shrike_drops_total" {
            continue;
        }
        let kind = if gauge { "gauge" } else { "counter" };
        let metric = metric.as_str();
        family(
            &mut out,
            metric,
            kind,
            &format!("Suricata-style {kind} `{orig}`."),
        );
        for (worker, v) in series {
            let labels = match worker {
                Some(i) => format!("{{worker=\"{i}\"}}"),
                None => String::new(),
            };
            if factor == 1.0 {
                let _ = writeln!(out, "{metric}{labels} {v}");
            } else {
                let _ = writeln!(out, "{metric}{labels} {}", *v as f64 * factor);
            }
        }
    }
    out
}

/// The HTTP endpoint and its thread. Dropping it stops the thread.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MetricsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsServer")
            .field("addr", &self.addr)
            .finish()
    }
}

/// Largest request head read (bytes).
const MAX_HEAD: usize = 8192;

impl MetricsServer {
    /// Listens on `addr` (port 0 picks a free port; see [`MetricsServer::local_addr`]) and
    /// serves scrapes from `source` on a thread of its own, one connection at a time.
    pub fn spawn(addr: SocketAddr, source: MetricsSource) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("shrike-metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if stop2.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = conn {
                        let _ = serve(stream, &source, started);
                    }
                }
            })?;
        Ok(MetricsServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the endpoint and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::SeqCst);
            let mut wake = self.addr;
            if wake.ip().is_unspecified() {
                wake.set_ip(if wake.is_ipv4() {
                    Ipv4Addr::LOCALHOST.into()
                } else {
                    Ipv6Addr::LOCALHOST.into()
                });
            }
            let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
            let _ = t.join();
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn serve(mut stream: TcpStream, source: &MetricsSource, started: Instant) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
        if head.len() > MAX_HEAD {
            return respond(
                &mut stream,
                "431 Request Header Fields Too Large",
                "text/plain",
                b"request too large\n",
                false,
            );
        }
    }
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().next().unwrap_or("");
    let mut parts = first.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let head_only = method == "HEAD";
    match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let body = render(&source(), started.elapsed());
            respond(
                &mut stream,
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                body.as_bytes(),
                head_only,
            )
        }
        ("GET" | "HEAD", "/") => respond(
            &mut stream,
            "200 OK",
            "text/plain; charset=utf-8",
            b"shrike: metrics at /metrics\n",
            head_only,
        ),
        ("GET" | "HEAD", _) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            head_only,
        ),
        ("", _) => Ok(()),
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET\n",
            false,
        ),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.0 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
