//! Redis sink against a real `redis-server` started on a free loopback port.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shrike_output::config::{EveConfig, FileType, RedisMode};
use shrike_output::{EvePipeline, EventKind};

/// Kills the server on drop, even when the test fails.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> Option<(Server, u16)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!("SKIP: redis-server not available");
        return None;
    };
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some((server, port))
}

/// Send one command and read a single-line or array-of-bulk reply (enough for LLEN/LRANGE).
fn cmd(port: u16, args: &[&str]) -> Vec<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{}\r\n", a.len(), a));
    }
    s.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    if let Some(n) = line.strip_prefix('*') {
        let n: usize = n.trim().parse().unwrap();
        let mut out = Vec::new();
        for _ in 0..n {
            let mut hdr = String::new();
            r.read_line(&mut hdr).unwrap();
            let mut v = String::new();
            r.read_line(&mut v).unwrap();
            out.push(v.trim_end().to_string());
        }
        out
    } else if line.starts_with('$') {
        let mut v = String::new();
        r.read_line(&mut v).unwrap();
        vec![v.trim_end().to_string()]
    } else {
        vec![line.trim_end().to_string()]
    }
}

fn run(port: u16, mode: RedisMode, key: &str, n: u64) -> shrike_output::OutputStats {
    let mut cfg = EveConfig {
        filetype: FileType::Redis,
        buffer_size: 4096,
        ..EveConfig::default()
    };
    cfg.redis.port = port;
    cfg.redis.mode = mode;
    cfg.redis.key = key.into();
    let (pipe, mut outs) = EvePipeline::start(&cfg, std::path::Path::new("."), 1).unwrap();
    let mut out = outs.pop().unwrap();
    for seq in 0..n {
        let mut r = out.record(EventKind::Alert).unwrap();
        r.start_object()
            .set_u64("seq", seq)
            .set_str("s", "a\"b\r\n")
            .close();
        r.commit().unwrap();
    }
    out.close();
    pipe.join()
}

#[test]
fn lpush_rpush_and_publish() {
    let Some((_server, port)) = start() else {
        return;
    };

    let st = run(port, RedisMode::Rpush, "eve-r", 1000);
    assert_eq!(st.write_errors, 0);
    assert_eq!(cmd(port, &["LLEN", "eve-r"]), vec![":1000"]);
    let items = cmd(port, &["LRANGE", "eve-r", "0", "2"]);
    assert_eq!(items.len(), 3);
    for (i, it) in items.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(it).unwrap();
        assert_eq!(v["seq"], i as u64, "RPUSH keeps order");
        assert_eq!(v["s"], "a\"b\r\n");
    }
    // More than one pipelined batch was sent.
    assert!(st.writes > 1);

    run(port, RedisMode::Lpush, "eve-l", 10);
    let first = cmd(port, &["LINDEX", "eve-l", "0"]);
    let v: serde_json::Value = serde_json::from_str(&first[0]).unwrap();
    assert_eq!(v["seq"], 9, "LPUSH puts the newest first");

    // PUBLISH: a subscriber sees every record.
    let sub = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    (&sub)
        .write_all(b"*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\neve-c\r\n")
        .unwrap();
    let mut r = BufReader::new(sub);
    let mut line = String::new();
    for _ in 0..6 {
        // subscribe confirmation: *3, $9, subscribe, $5, eve-c, :1
        line.clear();
        r.read_line(&mut line).unwrap();
    }
    let st = run(port, RedisMode::Publish, "eve-c", 50);
    assert_eq!(st.write_errors, 0);
    let mut got = 0;
    while got < 50 {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
            assert_eq!(v["seq"], got);
            got += 1;
        }
    }
}
