//! Tests of the Prometheus endpoint: rendering rules and real TCP scrapes.

use super::*;
use std::collections::HashSet;

fn snap(pairs: &[(&str, u64)]) -> Snapshot {
    let mut s = Snapshot::default();
    for (k, v) in pairs {
        s.add(k, *v);
    }
    s
}

fn sample() -> MetricsSnapshot {
    MetricsSnapshot {
        workers: vec![
            snap(&[
                ("capture.kernel_packets", 1000),
                ("capture.kernel_drops", 7),
                ("decoder.pkts", 993),
                ("decoder.bytes", 500_000),
                ("decoder.max_pkt_size", 1514),
                ("flow.total", 40),
                ("detect.alert", 3),
                ("output.eve.dropped.flow", 2),
                ("output.eve.dropped.alert", 1),
            ]),
            snap(&[
                ("decoder.pkts", 10),
                ("flow.total", 1),
                ("weird-name/with spaces", 4),
            ]),
        ],
        global: snap(&[
            ("shrike.dispatch.queue_drops", 9),
            ("detect.rules.loaded", 42),
        ]),
    }
}

/// Checks the text format: HELP and TYPE precede each family's samples, samples of a family
/// are contiguous, names and labels are well formed, no series is repeated, values parse.
/// Returns series → value.
fn parse_exposition(text: &str) -> BTreeMap<String, f64> {
    let mut series = BTreeMap::new();
    let mut typed: Option<String> = None;
    let mut closed: HashSet<String> = HashSet::new();
    let mut last_family: Option<String> = None;
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut p = rest.split(' ');
            let name = p.next().unwrap().to_string();
            let kind = p.next().unwrap();
            assert!(["counter", "gauge"].contains(&kind), "{line}");
            if let Some(prev) = last_family.take() {
                closed.insert(prev);
            }
            assert!(!closed.contains(&name), "family {name} split: {line}");
            typed = Some(name);
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(!line.starts_with('#'), "stray comment {line}");
        let (key, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("bad line {line}"));
        let name = key.split('{').next().unwrap();
        assert!(name_ok(name), "bad metric name in {line}");
        assert_eq!(
            typed.as_deref(),
            Some(name),
            "sample before its TYPE: {line}"
        );
        if let Some(labels) = key.strip_prefix(name).filter(|l| !l.is_empty()) {
            let inner = labels
                .strip_prefix('{')
                .and_then(|l| l.strip_suffix('}'))
                .unwrap();
            for kv in inner.split(',') {
                let (k, v) = kv.split_once('=').unwrap();
                assert!(name_ok(k), "{line}");
                assert!(v.starts_with('"') && v.ends_with('"'), "{line}");
            }
        }
        let v: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value in {line}"));
        assert!(
            series.insert(key.to_string(), v).is_none(),
            "duplicate series {key}"
        );
        last_family = Some(name.to_string());
    }
    series
}

#[test]
fn sanitized_names() {
    for (raw, want) in [
        ("decoder.pkts", "shrike_decoder_pkts"),
        ("capture.kernel_drops", "shrike_capture_kernel_drops"),
        ("shrike.dispatch.queue_drops", "shrike_dispatch_queue_drops"),
        ("app_layer.flow.dns-udp", "shrike_app_layer_flow_dns_udp"),
        ("weird-name/with spaces", "shrike_weird_name_with_spaces"),
        ("é", "shrike__"),
    ] {
        assert_eq!(sanitize(raw), want, "{raw}");
    }
}

#[test]
fn renders_headlines_drops_and_raw_counters() {
    let text = render(&sample(), Duration::from_secs(12));
    let s = parse_exposition(&text);
    let get = |k: &str| *s.get(k).unwrap_or_else(|| panic!("missing {k}\n{text}"));
    assert_eq!(get("shrike_up"), 1.0);
    assert_eq!(get("shrike_uptime_seconds"), 12.0);
    assert_eq!(
        get(&format!(
            "shrike_build_info{{version=\"{}\"}}",
            env!("CARGO_PKG_VERSION")
        )),
        1.0
    );
    // Headlines: capture count preferred over decoder count, per worker.
    assert_eq!(get("shrike_packets_total{worker=\"0\"}"), 1000.0);
    assert_eq!(get("shrike_packets_total{worker=\"1\"}"), 10.0);
    assert_eq!(get("shrike_bytes_total{worker=\"0\"}"), 500_000.0);
    assert_eq!(get("shrike_bytes_total{worker=\"1\"}"), 0.0);
    assert_eq!(get("shrike_flows_total{worker=\"0\"}"), 40.0);
    assert_eq!(get("shrike_alerts_total{worker=\"0\"}"), 3.0);
    // Drops by place, every place for every worker; output sums the prefix.
    assert_eq!(
        get("shrike_drops_total{worker=\"0\",place=\"kernel\"}"),
        7.0
    );
    assert_eq!(get("shrike_drops_total{worker=\"0\",place=\"ring\"}"), 0.0);
    assert_eq!(
        get("shrike_drops_total{worker=\"0\",place=\"output\"}"),
        3.0
    );
    assert_eq!(get("shrike_drops_total{worker=\"1\",place=\"queue\"}"), 0.0);
    assert_eq!(get("shrike_drops_total{place=\"queue\"}"), 9.0);
    // Raw counters keep their values, with and without worker labels.
    assert_eq!(get("shrike_decoder_pkts_total{worker=\"0\"}"), 993.0);
    assert_eq!(get("shrike_decoder_pkts_total{worker=\"1\"}"), 10.0);
    assert_eq!(
        get("shrike_weird_name_with_spaces_total{worker=\"1\"}"),
        4.0
    );
    assert_eq!(get("shrike_detect_rules_loaded"), 42.0);
    assert!(text.contains("# TYPE shrike_decoder_max_pkt_size gauge"));
    assert!(text.contains("# TYPE shrike_decoder_pkts_total counter"));
    assert!(text.contains("# TYPE shrike_detect_rules_loaded gauge"));
}

#[test]
fn colliding_names_keep_one_series() {
    let m = MetricsSnapshot {
        workers: vec![snap(&[("a.x", 1), ("a_x", 2)])],
        global: Snapshot::default(),
    };
    let s = parse_exposition(&render(&m, Duration::ZERO));
    assert_eq!(s["shrike_a_x_total{worker=\"0\"}"], 1.0);
}

#[test]
fn empty_snapshot_is_valid() {
    let s = parse_exposition(&render(&MetricsSnapshot::default(), Duration::ZERO));
    assert_eq!(s["shrike_up"], 1.0);
}

fn http(addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(request).unwrap();
    let mut resp = String::new();
    c.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    (head.to_string(), body.to_string())
}

#[test]
fn real_tcp_scrapes() {
    let calls = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let calls2 = calls.clone();
    let source: MetricsSource = Arc::new(move || {
        let n = calls2.fetch_add(1, Ordering::SeqCst) + 1;
        let mut m = sample();
        m.workers[1].add("detect.alert", n);
        m
    });
    let server = MetricsServer::spawn("127.0.0.1:0".parse().unwrap(), source).unwrap();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0);

    let (head, body) = http(
        addr,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: Prometheus\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.0 200 OK\r\n"), "{head}");
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4"),
        "{head}"
    );
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(len, body.len());
    let s = parse_exposition(&body);
    assert_eq!(s["shrike_alerts_total{worker=\"1\"}"], 1.0);
    // Each scrape takes a fresh snapshot.
    let (_, body) = http(addr, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n");
    assert_eq!(
        parse_exposition(&body)["shrike_alerts_total{worker=\"1\"}"],
        2.0
    );

    let (head, body) = http(addr, b"HEAD /metrics HTTP/1.0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert!(body.is_empty());
    let (head, _) = http(addr, b"GET /nope HTTP/1.0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 404"), "{head}");
    let (head, _) = http(addr, b"POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 405"), "{head}");
    let mut huge = b"GET /metrics HTTP/1.0\r\nX: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', MAX_HEAD + 100));
    let (head, _) = http(addr, &huge);
    assert!(head.starts_with("HTTP/1.0 431"), "{head}");
    // A client that connects and says nothing does not block the next one for long.
    let _silent = TcpStream::connect(addr).unwrap();
    let t0 = Instant::now();
    let (head, _) = http(addr, b"GET /metrics HTTP/1.0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 200"));
    assert!(t0.elapsed() < Duration::from_secs(5));
    server.shutdown();
    assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err());
}

#[test]
fn counters_end_in_total_gauges_do_not_and_units_are_base_units() {
    let m = MetricsSnapshot {
        workers: vec![snap(&[
            ("output.eve.blocked_us", 2_500_000),
            ("flow.active", 4),
            ("tcp.reassembly_memuse", 9),
            ("flow.total", 5),
        ])],
        global: snap(&[("detect.engine.last_build_ms", 1500)]),
    };
    let text = render(&m, Duration::ZERO);
    let s = parse_exposition(&text);
    assert_eq!(
        s["shrike_output_eve_blocked_seconds_total{worker=\"0\"}"],
        2.5
    );
    assert_eq!(s["shrike_detect_engine_last_build_seconds"], 1.5);
    assert_eq!(s["shrike_flow_active{worker=\"0\"}"], 4.0);
    assert_eq!(s["shrike_flow_total{worker=\"0\"}"], 5.0);
    assert!(text.contains("# TYPE shrike_flow_active gauge"));
    assert!(text.contains("# TYPE shrike_tcp_reassembly_memuse gauge"));
    assert!(text.contains("# TYPE shrike_flow_total counter"));
    assert!(text.contains("# TYPE shrike_detect_engine_last_build_seconds gauge"));
}
