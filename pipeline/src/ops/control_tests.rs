//! Tests of the control socket: a real server on a temporary path, a main-loop thread that
//! answers, and clients (ours, raw bytes, and Suricata's `suricatasc` when installed).

use super::*;
use std::os::unix::fs::MetadataExt;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shrike-ctl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("run").join("test.sock")
}

/// A stand-in main loop: answers reload and shutdown, counts reloads, exits on shutdown.
fn spawn_main_loop(control: Control) -> std::thread::JoinHandle<Vec<Command>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        loop {
            let Some(req) = control.recv_timeout(Duration::from_secs(20)) else {
                return seen;
            };
            seen.push(req.command);
            match req.command {
                Command::Reload => {
                    let n = seen.iter().filter(|c| **c == Command::Reload).count();
                    req.reply(Reply::Ok(json!({"reloads": n})))
                }
                Command::Shutdown => {
                    req.reply(Reply::ok_text("Closing shrike"));
                    return seen;
                }
                Command::ReopenLogs => drop(req), // unanswered: the client gets NOK
                _ => req.reply(Reply::Err("unexpected".into())),
            }
        }
    })
}

fn stats_source() -> StatsFn {
    Arc::new(|| {
        let mut s = Snapshot::default();
        s.add("decoder.pkts", 1234);
        s.add("capture.kernel_drops", 5);
        s
    })
}

fn raw_exchange(path: &Path, bytes: &[u8], replies: usize) -> Vec<Value> {
    let mut s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    let mut r = BufReader::new(s);
    (0..replies)
        .map(|_| {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            assert!(
                line.ends_with('\n'),
                "reply not newline-terminated: {line:?}"
            );
            serde_json::from_str(&line).unwrap()
        })
        .collect()
}

#[test]
fn commands_round_trip() {
    let path = temp_path("rt");
    let opts = ControlOptions {
        stats: Some(stats_source()),
        ..Default::default()
    };
    let (server, control) = ControlServer::bind(&path, opts).unwrap();
    assert_eq!(server.path(), path);
    let md = std::fs::metadata(&path).unwrap();
    assert!(md.file_type().is_socket());
    assert_eq!(md.mode() & 0o777, 0o660, "socket mode");
    let main = spawn_main_loop(control);
    let t = Duration::from_secs(10);

    assert_eq!(
        send_command(&path, "version", None, t).unwrap(),
        Reply::ok_text(format!("shrike {}", env!("CARGO_PKG_VERSION")))
    );
    match send_command(&path, "stats", None, t).unwrap() {
        Reply::Ok(v) => {
            assert_eq!(v["decoder"]["pkts"], 1234);
            assert_eq!(v["capture"]["kernel_drops"], 5);
            assert!(v["uptime"].is_u64());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        send_command(&path, "reload", None, t).unwrap(),
        Reply::Ok(json!({"reloads": 1}))
    );
    // Suricata's name for the same command.
    assert_eq!(
        send_command(&path, "reload-rules", None, t).unwrap(),
        Reply::Ok(json!({"reloads": 2}))
    );
    match send_command(&path, "reopen-log-files", None, t).unwrap() {
        Reply::Err(m) => assert!(m.contains("did not answer"), "{m}"),
        other => panic!("{other:?}"),
    }
    match send_command(&path, "iface-list", None, t).unwrap() {
        Reply::Err(m) => assert!(m.contains("unknown command `iface-list`"), "{m}"),
        other => panic!("{other:?}"),
    }
    match send_command(&path, "command-list", None, t).unwrap() {
        Reply::Ok(v) => {
            let cmds: Vec<&str> = v["commands"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c.as_str())
                .collect();
            assert!(cmds.contains(&"reload-rules") && cmds.contains(&"shutdown"));
            assert_eq!(v["count"], cmds.len());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        send_command(&path, "shutdown", None, t).unwrap(),
        Reply::ok_text("Closing shrike")
    );
    let seen = main.join().unwrap();
    assert_eq!(
        seen,
        [
            Command::Reload,
            Command::Reload,
            Command::ReopenLogs,
            Command::Shutdown
        ]
    );
    // The main loop is gone: forwarded commands are refused, local ones still work.
    match send_command(&path, "reload", None, t).unwrap() {
        Reply::Err(m) => assert!(m.contains("not accepting"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        send_command(&path, "uptime", None, t).unwrap(),
        Reply::Ok(Value::Number(_))
    ));
    server.shutdown();
    assert!(!path.exists(), "socket removed on shutdown");
    assert!(send_command(&path, "version", None, t).is_err());
}

#[test]
fn suricatasc_framing_and_bad_input() {
    let path = temp_path("raw");
    let (server, control) = ControlServer::bind(&path, ControlOptions::default()).unwrap();
    let main = spawn_main_loop(control);
    // The handshake without a newline, then two commands in one write.
    let r = raw_exchange(
        &path,
        b"{\"version\": \"0.2\"}{\"command\": \"reload\"}\n{\"command\":\"shutdown\"}\n",
        3,
    );
    assert_eq!(r[0], json!({"return": "OK"}));
    assert_eq!(r[1]["return"], "OK");
    assert_eq!(r[2]["message"], "Closing shrike");
    main.join().unwrap();
    let r = raw_exchange(&path, b"{\"version\": \"9.9\"}", 1);
    assert_eq!(r[0]["return"], "NOK");
    let r = raw_exchange(&path, b"{\"command\": ]\n", 1);
    assert_eq!(r[0]["return"], "NOK");
    assert!(r[0]["message"].as_str().unwrap().contains("invalid JSON"));
    let r = raw_exchange(&path, b"[1,2]\n", 1);
    assert_eq!(r[0]["return"], "NOK");
    // Without a stats source, `stats` is forwarded; nobody listens any more.
    let r = raw_exchange(&path, b"{\"command\":\"dump-counters\"}\n", 1);
    assert_eq!(r[0]["return"], "NOK");
    // An over-long request is refused.
    let mut long = b"{\"command\": \"".to_vec();
    long.extend(std::iter::repeat_n(b'a', MAX_REQUEST + 10));
    let r = raw_exchange(&path, &long, 1);
    assert_eq!(r[0]["message"], "request too long");
    drop(server);
    assert!(!path.exists());
}

#[test]
fn stale_live_and_foreign_paths() {
    let path = temp_path("stale");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A stale socket from a dead process is replaced.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let (server, _control) = ControlServer::bind(&path, ControlOptions::default()).unwrap();
    // A second server on the same path is refused while the first answers.
    let err = ControlServer::bind(&path, ControlOptions::default()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse, "{err}");
    drop(server);
    // A regular file is never removed.
    std::fs::write(&path, "not a socket").unwrap();
    let err = ControlServer::bind(&path, ControlOptions::default()).unwrap_err();
    assert!(err.to_string().contains("not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a socket");
    std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
}

#[test]
fn too_many_clients_and_timeouts() {
    let path = temp_path("many");
    let opts = ControlOptions {
        max_clients: 1,
        reply_timeout: Duration::from_millis(200),
        ..Default::default()
    };
    let (server, control) = ControlServer::bind(&path, opts).unwrap();
    // The main loop never answers: the client gets NOK after the reply timeout.
    let t0 = Instant::now();
    match send_command(&path, "reload", None, Duration::from_secs(10)).unwrap() {
        Reply::Err(m) => assert!(m.contains("no answer"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert!(
        control.try_recv().is_some(),
        "the request did reach the main loop"
    );
    // One idle client holds the only slot; the next is turned away.
    // (Wait until the first client's thread has seen it close, then prove the slot is held.)
    std::thread::sleep(Duration::from_millis(300));
    let mut idle = UnixStream::connect(&path).unwrap();
    idle.write_all(b"{\"command\":\"version\"}\n").unwrap();
    let mut idle = BufReader::new(idle);
    let mut line = String::new();
    idle.read_line(&mut line).unwrap();
    assert!(line.contains("shrike"), "{line}");
    let mut turned_away = BufReader::new(UnixStream::connect(&path).unwrap());
    let mut line = String::new();
    turned_away.read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["message"], "too many control clients");
    drop(server);
}

#[test]
fn ctl_client_exit_codes() {
    let path = temp_path("ctl");
    let opts = ControlOptions {
        stats: Some(stats_source()),
        ..Default::default()
    };
    let (server, control) = ControlServer::bind(&path, opts).unwrap();
    let main = spawn_main_loop(control);
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(run_ctl(&args(&["stats"]), &path), 0);
    assert_eq!(run_ctl(&args(&["reload"]), &path), 0);
    assert_eq!(run_ctl(&args(&["version", "--timeout", "5"]), &path), 0);
    assert_eq!(run_ctl(&args(&["bogus"]), &path), 1);
    assert_eq!(run_ctl(&args(&[]), &path), 2);
    assert_eq!(run_ctl(&args(&["--frob", "stats"]), &path), 2);
    assert_eq!(run_ctl(&args(&["stats", "notkv"]), &path), 2);
    assert_eq!(run_ctl(&args(&["--timeout", "0", "stats"]), &path), 2);
    assert_eq!(run_ctl(&args(&["--help"]), &path), 0);
    let missing = path.with_file_name("missing.sock");
    assert_eq!(run_ctl(&args(&["stats"]), &missing), 1);
    // --socket overrides the default path.
    assert_eq!(
        run_ctl(
            &args(&["--socket", path.to_str().unwrap(), "shutdown"]),
            &missing
        ),
        0
    );
    main.join().unwrap();
    drop(server);
}

/// Suricata's own client talks to shrike's socket (skipped when suricatasc is absent).
#[test]
fn suricatasc_client_works() {
    let Ok(out) = std::process::Command::new("suricatasc").arg("-h").output() else {
        eprintln!("skipped: suricatasc not installed");
        return;
    };
    if !out.status.success() {
        eprintln!("skipped: suricatasc -h failed");
        return;
    }
    let path = temp_path("sc");
    let opts = ControlOptions {
        stats: Some(stats_source()),
        ..Default::default()
    };
    let (server, control) = ControlServer::bind(&path, opts).unwrap();
    let main = spawn_main_loop(control);
    let run = |cmd: &str| {
        let out = std::process::Command::new("suricatasc")
            .args(["-c", cmd, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{cmd}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        v
    };
    let v = run("dump-counters");
    assert_eq!(v["return"], "OK");
    assert_eq!(v["message"]["decoder"]["pkts"], 1234);
    let v = run("reload-rules");
    assert_eq!(v["message"]["reloads"], 1);
    let v = run("shutdown");
    assert_eq!(v["message"], "Closing shrike");
    main.join().unwrap();
    drop(server);
}
