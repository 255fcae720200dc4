//! The control socket: a unix stream socket (mode 0660) where `shrike ctl` (or Suricata's
//! `suricatasc`) sends commands such as `reload`, `stats`, `version` and `shutdown`.
//!
//! A [`ControlServer`] accepts connections on its own thread (one short-lived thread per
//! client, at most [`ControlOptions::max_clients`]). It answers `version`, `uptime`,
//! `command-list` and (given [`ControlOptions::stats`]) `stats` itself; `reload`,
//! `reopen-log-files`, `shutdown` (and `stats` without a stats source) become [`Request`]s
//! that the main loop takes from its [`Control`] handle, off the packet path:
//!
//! ```ignore
//! let (server, control) = ControlServer::bind(&path, ControlOptions::default())?;
//! loop {
//!     // ... packets ...
//!     while let Some(req) = control.try_recv() {
//!         match req.command {
//!             Command::Reload => { /* build the engine, swap it into the workers */
//!                 req.reply(Reply::ok_text("done")) }
//!             Command::Shutdown => { req.reply(Reply::ok_text("Closing Suricata")); break }
//!             _ => req.reply(Reply::Err("not supported".into())),
//!         }
//!     }
//! }
//! ```
//! The client waits for the reply up to [`ControlOptions::reply_timeout`].

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::control_proto::{classify, nest_counters, take_values, Message, MAX_REQUEST, VERSIONS};
pub use super::control_proto::{Command, Reply};
use crate::stats::Snapshot;

/// A source of current counters for `stats`, called on the server thread.
pub type StatsFn = Arc<dyn Fn() -> Snapshot + Send + Sync>;

/// Settings of a [`ControlServer`].
#[derive(Clone)]
pub struct ControlOptions {
    /// Permission bits of the socket file (default 0660: owner and group).
    pub mode: u32,
    /// How long a client waits for the main loop's answer (default 600 s: a big reload).
    pub reply_timeout: Duration,
    /// Idle time after which a client connection is closed (default 60 s).
    pub idle_timeout: Duration,
    /// Concurrent client connections (default 8); more are answered `NOK` and closed.
    pub max_clients: usize,
    /// Answers `stats` on the server thread; without it `stats` goes to the main loop.
    pub stats: Option<StatsFn>,
}

impl Default for ControlOptions {
    fn default() -> Self {
        ControlOptions {
            mode: 0o660,
            reply_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(60),
            max_clients: 8,
            stats: None,
        }
    }
}

/// A command for the main loop. Answer it with [`Request::reply`]; dropping it unanswered
/// sends `NOK` to the client.
#[derive(Debug)]
pub struct Request {
    /// What to do.
    pub command: Command,
    /// The request's `arguments` (`null` when none).
    pub arguments: Value,
    reply: SyncSender<Reply>,
}

impl Request {
    /// Sends the answer to the waiting client (ignored if it has gone).
    pub fn reply(self, r: Reply) {
        let _ = self.reply.try_send(r);
    }
}

/// The main loop's end: commands to carry out.
#[derive(Debug)]
pub struct Control {
    rx: Receiver<Request>,
}

impl Control {
    /// The next pending command, if any (never blocks).
    pub fn try_recv(&self) -> Option<Request> {
        self.rx.try_recv().ok()
    }

    /// Waits up to `d` for a command.
    pub fn recv_timeout(&self, d: Duration) -> Option<Request> {
        self.rx.recv_timeout(d).ok()
    }
}

/// The listening socket and its accept thread. Dropping it stops the thread and removes
/// the socket file.
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ControlServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlServer")
            .field("path", &self.path)
            .finish()
    }
}

impl ControlServer {
    /// Binds the socket at `path` (creating its directory), sets its mode and starts the
    /// accept thread. A stale socket file left by a dead process is replaced; a live one
    /// (another sensor answering there) is an `AddrInUse` error, and a path that is not a
    /// socket is never removed.
    pub fn bind(path: &Path, opts: ControlOptions) -> io::Result<(ControlServer, Control)> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        remove_stale(path)?;
        // Bind under a temporary name, set the mode, then rename: the socket never exists at
        // its real path with the umask's permissions.
        let tmp = path.with_file_name(format!(
            ".{}.{}.tmp",
            path.file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("control"),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        let listener = UnixListener::bind(&tmp)?;
        let set = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(opts.mode))
            .and_then(|_| std::fs::rename(&tmp, path));
        if let Err(e) = set {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let ctx = Arc::new(Ctx {
            opts,
            started: Instant::now(),
            clients: AtomicUsize::new(0),
        });
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("shrike-control".into())
            .spawn(move || accept_loop(listener, tx, stop2, ctx))?;
        Ok((
            ControlServer {
                path: path.to_path_buf(),
                stop,
                thread: Some(thread),
            },
            Control { rx },
        ))
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, waits for the accept thread and removes the socket file. Clients
    /// already connected finish their current request.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::SeqCst);
            // Wake the blocking accept.
            let _ = UnixStream::connect(&self.path);
            let _ = t.join();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn remove_stale(path: &Path) -> io::Result<()> {
    let md = match std::fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !md.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not a socket", path.display()),
        ));
    }
    if UnixStream::connect(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("{}: another process is listening there", path.display()),
        ));
    }
    std::fs::remove_file(path)
}

struct Ctx {
    opts: ControlOptions,
    started: Instant,
    clients: AtomicUsize,
}

fn accept_loop(listener: UnixListener, tx: Sender<Request>, stop: Arc<AtomicBool>, ctx: Arc<Ctx>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = conn else { continue };
        if ctx.clients.fetch_add(1, Ordering::SeqCst) >= ctx.opts.max_clients {
            ctx.clients.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.write_all(
                Reply::Err("too many control clients".into())
                    .to_line()
                    .as_bytes(),
            );
            continue;
        }
        let (tx, ctx2) = (tx.clone(), ctx.clone());
        let spawned = std::thread::Builder::new()
            .name("shrike-ctl-client".into())
            .spawn(move || {
                let _ = serve_client(stream, &tx, &ctx2);
                ctx2.clients.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            ctx.clients.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn serve_client(mut stream: UnixStream, tx: &Sender<Request>, ctx: &Ctx) -> io::Result<()> {
    stream.set_read_timeout(Some(ctx.opts.idle_timeout))?;
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        let values = match take_values(&mut buf) {
            Ok(v) => v,
            Err(e) => {
                stream.write_all(Reply::Err(e).to_line().as_bytes())?;
                return Ok(());
            }
        };
        if buf.len() > MAX_REQUEST {
            stream.write_all(Reply::Err("request too long".into()).to_line().as_bytes())?;
            return Ok(());
        }
        for v in values {
            let reply = answer(&v, tx, ctx);
            stream.write_all(reply.to_line().as_bytes())?;
        }
    }
}

fn answer(v: &Value, tx: &Sender<Request>, ctx: &Ctx) -> Reply {
    let (command, arguments) = match classify(v) {
        Message::Hello(ver) if VERSIONS.contains(&ver.as_str()) => return Reply::Ok(Value::Null),
        Message::Hello(ver) => return Reply::Err(format!("unsupported protocol version `{ver}`")),
        Message::Invalid(why) => return Reply::Err(why),
        Message::Command(c, a) => (c, a),
    };
    let uptime = ctx.started.elapsed().as_secs();
    match command {
        Command::Version => {
            return Reply::ok_text(format!("shrike {}", env!("CARGO_PKG_VERSION")));
        }
        Command::Uptime => return Reply::Ok(Value::from(uptime)),
        Command::List => {
            let names = Command::all_names();
            return Reply::Ok(json!({"count": names.len(), "commands": names}));
        }
        Command::Stats => {
            if let Some(f) = &ctx.opts.stats {
                let snap = f();
                let mut v = nest_counters(snap.iter());
                if let Value::Object(m) = &mut v {
                    m.insert("uptime".into(), Value::from(uptime));
                }
                return Reply::Ok(v);
            }
        }
        Command::Reload | Command::ReopenLogs | Command::Shutdown => {}
    }
    let (rtx, rrx) = mpsc::sync_channel(1);
    let req = Request {
        command,
        arguments,
        reply: rtx,
    };
    if tx.send(req).is_err() {
        return Reply::Err("the sensor is not accepting commands".into());
    }
    match rrx.recv_timeout(ctx.opts.reply_timeout) {
        Ok(r) => r,
        Err(RecvTimeoutError::Timeout) => Reply::Err(format!(
            "no answer from the sensor within {} s",
            ctx.opts.reply_timeout.as_secs()
        )),
        Err(RecvTimeoutError::Disconnected) => {
            Reply::Err(format!("the sensor did not answer `{}`", command.name()))
        }
    }
}

/// Sends one command and returns the reply (client side of `shrike ctl`).
pub fn send_command(
    socket: &Path,
    command: &str,
    arguments: Option<Value>,
    timeout: Duration,
) -> Result<Reply, String> {
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|_| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    let mut req = json!({ "command": command });
    if let Some(a) = arguments {
        req["arguments"] = a;
    }
    let mut line = req.to_string();
    line.push('\n');
    stream
        .write_all(line.as_bytes())
        .map_err(|e| format!("{}: {e}", socket.display()))?;
    let mut reply = String::new();
    BufReader::new(stream.take(16 << 20))
        .read_line(&mut reply)
        .map_err(|e| format!("{}: no reply: {e}", socket.display()))?;
    if reply.trim().is_empty() {
        return Err(format!(
            "{}: the connection closed without a reply",
            socket.display()
        ));
    }
    let v: Value = serde_json::from_str(&reply).map_err(|e| format!("bad reply: {e}"))?;
    Reply::from_value(&v)
}

const CTL_USAGE: &str = "usage: shrike ctl [--socket PATH | --instance NAME] [--timeout SECS] \
COMMAND [KEY=VALUE ...]
commands: reload, stats, version, uptime, reopen-log-files, shutdown, command-list
(Suricata's names work too: reload-rules, dump-counters ...)";

/// `shrike ctl ...`: `args` are the words after `ctl`; `socket` is the default socket (from
/// the configuration). Prints the answer and returns the exit code: 0 OK, 1 refused or
/// unreachable, 2 usage.
pub fn run_ctl(args: &[String], socket: &Path) -> i32 {
    let mut socket = socket.to_path_buf();
    let mut timeout = Duration::from_secs(600);
    let mut it = args.iter();
    let mut command = None;
    let mut kv = serde_json::Map::new();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" | "help" => {
                out(CTL_USAGE);
                return 0;
            }
            "--socket" | "-s" => match it.next() {
                Some(p) => socket = PathBuf::from(p),
                None => return usage("--socket needs a path"),
            },
            "--instance" => match it.next() {
                Some(n) => socket = Path::new(super::config::RUN_DIR).join(format!("{n}.sock")),
                None => return usage("--instance needs a name"),
            },
            "--timeout" => match it.next().and_then(|s| s.parse::<u64>().ok()) {
                Some(s) if s > 0 => timeout = Duration::from_secs(s),
                _ => return usage("--timeout needs a positive number of seconds"),
            },
            s if s.starts_with('-') => return usage(&format!("unknown option `{s}`")),
            s if command.is_none() => command = Some(s.to_string()),
            s => match s.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    let val = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.into()));
                    kv.insert(k.to_string(), val);
                }
                _ => return usage(&format!("argument `{s}`: expected KEY=VALUE")),
            },
        }
    }
    let Some(command) = command else {
        return usage("no command");
    };
    let arguments = (!kv.is_empty()).then_some(Value::Object(kv));
    match send_command(&socket, &command, arguments, timeout) {
        Ok(Reply::Ok(Value::Null)) => {
            out("OK");
            0
        }
        Ok(Reply::Ok(Value::String(s))) => {
            out(&s);
            0
        }
        Ok(Reply::Ok(v)) => {
            out(&serde_json::to_string_pretty(&v).unwrap_or_default());
            0
        }
        Ok(Reply::Err(msg)) => {
            eprintln!("shrike ctl: {command}: {msg}");
            1
        }
        Err(e) => {
            eprintln!("shrike ctl: {e}");
            1
        }
    }
}

/// One answer on standard output. A closed pipe (`shrike ctl stats | head`) is not an error:
/// the reader has what it wanted, as with any filter.
fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{text}").and_then(|()| o.flush());
}

fn usage(msg: &str) -> i32 {
    eprintln!("shrike ctl: {msg}\n{CTL_USAGE}");
    2
}

#[cfg(test)]
#[path = "control_tests.rs"]
mod tests;
