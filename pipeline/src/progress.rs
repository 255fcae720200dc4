//! Progress on stderr: a human line on a terminal, or one JSON object per second for wrapping
//! tools (`--progress=json`). Phases: `loading-rules` (n of N files), `compiling`, `processing`
//! (bytes read of the total when known, packets, alerts), `done`.

use std::cell::{Cell, RefCell};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Off,
    Human,
    Json,
}

/// The progress reporter. Used from the reader thread only.
pub struct Progress {
    style: Style,
    started: Instant,
    last: Cell<Option<Instant>>,
    phase: Cell<&'static str>,
    /// Bytes of all inputs before the current one, and the total when every size is known.
    done_bytes: Cell<u64>,
    cur_bytes: Cell<u64>,
    total: Cell<Option<u64>>,
    cur_name: RefCell<String>,
    packets: Cell<u64>,
    /// Alerts so far, bumped by the workers once per batch.
    pub alerts: Arc<AtomicU64>,
    rules: Cell<(u64, u64)>,
}

impl Progress {
    /// `mode` from the CLI; `quiet` silences everything.
    pub fn new(mode: ProgressMode, quiet: bool) -> Progress {
        let style = match (mode, quiet) {
            (_, true) | (ProgressMode::None, _) => Style::Off,
            (ProgressMode::Json, _) => Style::Json,
            (ProgressMode::Auto, _) if std::io::stderr().is_terminal() => Style::Human,
            _ => Style::Off,
        };
        Progress {
            style,
            started: Instant::now(),
            last: Cell::new(None),
            phase: Cell::new("starting"),
            done_bytes: Cell::new(0),
            cur_bytes: Cell::new(0),
            total: Cell::new(Some(0)),
            cur_name: RefCell::new(String::new()),
            packets: Cell::new(0),
            alerts: Arc::new(AtomicU64::new(0)),
            rules: Cell::new((0, 0)),
        }
    }

    /// Set the total input size up front (sum of file sizes; `None` when a pipe is read).
    pub fn set_total(&self, total: Option<u64>) {
        self.total.set(total);
    }

    /// Rule loading: `done` of `total` files.
    #[allow(dead_code)] // called by rule loading
    pub fn rules(&self, done: u64, total: u64) {
        self.phase.set("loading-rules");
        self.rules.set((done, total));
        self.tick(done == total);
    }

    /// Compiling the detection engine.
    #[allow(dead_code)] // called by rule loading
    pub fn compiling(&self) {
        self.phase.set("compiling");
        self.tick(true);
    }

    /// A new input file starts.
    pub fn start_file(&self, path: &Path, _size: Option<u64>) {
        self.done_bytes
            .set(self.done_bytes.get() + self.cur_bytes.get());
        self.cur_bytes.set(0);
        *self.cur_name.borrow_mut() = path.display().to_string();
        self.phase.set("processing");
        self.tick(false);
    }

    /// Progress inside the current file.
    pub fn update(&self, file_bytes_read: u64, packets: u64, _bytes: u64) {
        self.cur_bytes.set(file_bytes_read);
        self.packets.set(packets);
        self.tick(false);
    }

    /// The run is over: print the final line (JSON mode) or clear the human line.
    pub fn done(&self, packets: u64, alerts: u64) {
        self.packets.set(packets);
        self.alerts.store(alerts, Ordering::Relaxed);
        self.phase.set("done");
        match self.style {
            Style::Off => {}
            Style::Json => self.print_json(),
            Style::Human => {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        }
    }

    fn tick(&self, force: bool) {
        if self.style == Style::Off {
            return;
        }
        let now = Instant::now();
        let due = match self.last.get() {
            None => true,
            Some(t) => now.duration_since(t) >= Duration::from_secs(1),
        };
        if !(due || (force && self.style == Style::Human)) {
            return;
        }
        self.last.set(Some(now));
        match self.style {
            Style::Json => self.print_json(),
            Style::Human => self.print_human(),
            Style::Off => {}
        }
    }

    fn bytes_read(&self) -> u64 {
        self.done_bytes.get() + self.cur_bytes.get()
    }

    fn print_json(&self) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let total = match self.total.get() {
            Some(t) if t > 0 => t.to_string(),
            _ => "null".to_string(),
        };
        let (rd, rt) = self.rules.get();
        let _ = writeln!(
            std::io::stderr(),
            "{{\"phase\":\"{}\",\"bytes_read\":{},\"bytes_total\":{},\"packets\":{},\"alerts\":{},\"rule_files_loaded\":{},\"rule_files_total\":{},\"elapsed\":{:.3}}}",
            self.phase.get(),
            self.bytes_read(),
            total,
            self.packets.get(),
            self.alerts.load(Ordering::Relaxed),
            rd,
            rt,
            elapsed
        );
    }

    fn print_human(&self) {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-6);
        let line = match self.phase.get() {
            "loading-rules" => {
                let (d, t) = self.rules.get();
                format!("loading rules: {d}/{t} files")
            }
            "compiling" => "compiling rules".to_string(),
            _ => {
                let read = self.bytes_read();
                let pps = self.packets.get() as f64 / elapsed;
                let mbps = read as f64 * 8.0 / elapsed / 1e6;
                let alerts = self.alerts.load(Ordering::Relaxed);
                match self.total.get() {
                    Some(t) if t > 0 => {
                        let pct = read as f64 * 100.0 / t as f64;
                        let eta = if read > 0 {
                            elapsed * (t.saturating_sub(read)) as f64 / read as f64
                        } else {
                            0.0
                        };
                        format!(
                            "processing {pct:5.1}%  {pps:>10.0} pkt/s  {mbps:>8.1} Mbit/s  {alerts} alerts  ETA {eta:.0}s"
                        )
                    }
                    _ => format!(
                        "processing {} MB  {pps:>10.0} pkt/s  {mbps:>8.1} Mbit/s  {alerts} alerts",
                        read / 1_000_000
                    ),
                }
            }
        };
        let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
    }
}

/// Progress reporting on stderr (the binary's `--progress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// A human progress line when stderr is a terminal, nothing otherwise.
    Auto,
    /// One JSON object per second on stderr, for wrapping tools.
    Json,
    /// No progress output.
    None,
}
