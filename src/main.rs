//! shrike: a fast, Suricata-compatible network IDS sensor.
#![forbid(unsafe_code)]

mod cli;

use shrike::config;
use shrike_pipeline::{live, ops, progress, run};

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use shrike_detect::setup::{self, LoadedEngine};
use shrike_detect::EngineSetup;
use shrike_rules::parse::ErrorKind;
use shrike_rules::Vars;

use crate::cli::{ChecksumMode, Cli};
use crate::config::{Runmode, SensorConfig};

/// Exit codes (documented in the README).
const EXIT_INPUT: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let pidfile = match cli.pidfile.as_deref().map(PidFile::create).transpose() {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("shrike: error: {msg}");
            return ExitCode::from(EXIT_INPUT);
        }
    };
    let r = real_main(cli);
    drop(pidfile);
    match r {
        Ok(code) => ExitCode::from(code),
        Err((code, msg)) => {
            eprintln!("shrike: error: {msg}");
            ExitCode::from(code)
        }
    }
}

fn real_main(mut cli: Cli) -> Result<u8, (u8, String)> {
    let sets = cli.set_pairs().map_err(|e| (EXIT_USAGE, e))?;
    let loaded =
        config::load(cli.config.as_deref(), &sets).map_err(|e| (EXIT_INPUT, e.to_string()))?;
    let mut cfg = loaded.config;
    if !cli.quiet {
        let file = cli.config.as_deref().unwrap_or(Path::new("")).display();
        for u in &loaded.unknown_keys {
            eprintln!("shrike: warning: {file}: {u}");
        }
    }
    if loaded.from_suricata && !loaded.ignored.is_empty() && !cli.quiet {
        // Nothing ignored in silence: a one-line count by default, the list with -v.
        if cli.verbose > 0 {
            eprintln!(
                "shrike: note: suricata.yaml settings not used by shrike: {}",
                loaded.ignored.join(", ")
            );
        } else {
            eprintln!(
                "shrike: note: {} suricata.yaml setting(s) not used by shrike (-v lists them)",
                loaded.ignored.len()
            );
        }
    }
    if let Some(u) = &cli.user {
        cfg.run_as.user = Some(u.clone());
    }
    if let Some(g) = &cli.group {
        cfg.run_as.group = Some(g.clone());
    }
    if cli.rest.first().map(String::as_str) == Some("ctl") {
        let instance = ops::config::instance_name(cli.config.as_deref());
        let socket = cfg.unix_command.socket_path(&instance);
        return Ok(ops::run_ctl(&cli.rest[1..], &socket).clamp(0, 255) as u8);
    }
    let bpf = cli.take_bpf().map_err(|e| (EXIT_USAGE, e))?;
    if let Some(expr) = &bpf {
        // Checked once up front (for Ethernet); file runs compile it per link type met.
        shrike_capture::afpacket::BpfProgram::compile(expr).map_err(|e| {
            (
                EXIT_INPUT,
                format!(
                    "{e} (the words after the options, or a last -r value that names no \
                     file, are a BPF filter)"
                ),
            )
        })?;
    }
    if let Some(c) = cli.config.as_deref().filter(|_| !cli.allow_insecure_files) {
        shrike_sys::privileges::check_trusted(c, run_as_uid(&cfg))
            .map_err(|e| (EXIT_INPUT, e.to_string()))?;
    }
    for w in cfg.drop_unusable_cpus(&run::allowed_cpus()) {
        eprintln!("shrike: warning: {w}");
    }
    if let Some(k) = cli.checksum {
        cfg.detect.decoder.checksum_validation = k == ChecksumMode::All;
    }
    let runmode = match cli.runmode.as_deref() {
        None => cfg.workers.runmode,
        Some(s) => Runmode::parse(s).ok_or_else(|| {
            (
                EXIT_USAGE,
                format!("--runmode {s}: expected single, autofp, dispatch or workers"),
            )
        })?,
    };
    let workers = cli
        .workers
        .or(cfg.workers.count)
        .unwrap_or_else(|| run::allowed_cpus().len().max(1));
    if workers == 0 {
        return Err((EXIT_USAGE, "--workers must be at least 1".into()));
    }

    if cli.check_config {
        if cli.disable_detection {
            eprintln!("shrike: configuration OK");
            return Ok(0);
        }
        let progress = progress::Progress::new(cli.progress.into(), cli.quiet);
        let loaded = load_engine(&cfg, &cli, &progress);
        print_rule_summary(&loaded, cli.verbose, false);
        let failed = load_failures(&loaded);
        if !loaded.refused_files.is_empty() {
            return Ok(EXIT_INPUT);
        }
        if failed > 0 || !loaded.missing_files.is_empty() {
            eprintln!(
                "shrike: error: {} rule file(s) missing, {failed} rule(s) failed to load",
                loaded.missing_files.len()
            );
            return Ok(EXIT_INPUT);
        }
        // Compile and cache the Hyperscan databases now, so the next start loads them.
        shrike_detect::prefilter::wait_upgrades();
        eprintln!("shrike: configuration OK");
        return Ok(0);
    }

    let live = !cli.interface.is_empty() || cli.af_packet.is_some() || cli.dpdk;
    if live {
        if !cli.read.is_empty() {
            return Err((EXIT_USAGE, "-r cannot be combined with live capture".into()));
        }
        return run_live(&cli, &cfg, workers, bpf.as_deref());
    }
    if cli.read.is_empty() {
        return Err((
            EXIT_USAGE,
            "nothing to do: give capture files with -r (or -T to test the configuration)".into(),
        ));
    }
    let inputs =
        shrike_capture::expand_inputs(&cli.read).map_err(|e| (EXIT_INPUT, e.to_string()))?;
    // Inputs not named on the command line came from a directory.
    let from_dir: Vec<bool> = inputs.iter().map(|p| !cli.read.contains(p)).collect();
    let dir_run = from_dir.iter().any(|&d| d);
    let log_dir = resolve_log_dir(&cli, &mut cfg).map_err(|e| (EXIT_INPUT, e))?;

    let progress = progress::Progress::new(cli.progress.into(), cli.quiet);
    progress.set_total(total_size(&inputs));
    let mut rule_counts = None;
    let engine = if cli.disable_detection {
        None
    } else {
        let loaded = load_engine(&cfg, &cli, &progress);
        if !cli.quiet {
            print_rule_summary(&loaded, cli.verbose, true);
        }
        refuse_insecure(&loaded)?;
        fatal_rule_errors(&loaded, &cli)?;
        if loaded.load.files > 0 {
            // Suricata's `detect.engines` stats entry (`rules_skipped`: not enforced, or
            // `requires` not met).
            rule_counts = Some(run::RuleCounts {
                loaded: loaded.engine.len() as u64,
                failed: load_failures(&loaded) as u64,
                skipped: (loaded.engine.report().skipped.len() - invalid_rules(&loaded)
                    + loaded.load.requirements_skipped) as u64,
            });
        }
        (!loaded.engine.is_empty()).then(|| Arc::new(loaded.engine))
    };
    // The parse trees and rule texts just freed would stay resident: the workers allocate
    // from their own malloc arenas.
    shrike_sys::memory::release_freed_heap();
    let signals = live::Signals::install().map_err(|e| (EXIT_INPUT, e))?;
    signals.exit_after_grace(std::time::Duration::from_millis(800));
    let opts = run::RunOptions {
        inputs,
        from_dir,
        log_dir,
        workers: if runmode == Runmode::Single {
            1
        } else {
            workers
        },
        runmode,
        progress,
        engine,
        rule_counts,
        stop: signals.stop.clone(),
        bpf,
    };
    // The engine's memory goes back to the system with the process: freeing its hundreds
    // of thousands of small allocations one by one only delays the exit.
    let keep_engine = opts.engine.clone();
    let result = run::run_files(&cfg, opts).map_err(|e| (EXIT_INPUT, e.to_string()));
    std::mem::forget(keep_engine);
    let result = result?;
    if !cli.quiet {
        run::print_summary(&result);
    }
    if cli.verbose > 0 {
        run::print_counters(&result);
        if result.output_closed {
            eprintln!("shrike: note: the EVE output's reader went away (closed pipe): stopped reading early");
        }
    }
    // A directory run fails only when nothing in it could be read.
    let nothing_read = dir_run && result.readable_files == 0;
    Ok(if result.input_errors > 0 || nothing_read {
        EXIT_INPUT
    } else {
        0
    })
}

/// `--pidfile`: the process id, written at start, removed when the run ends.
struct PidFile(PathBuf);

impl PidFile {
    fn create(path: &Path) -> Result<PidFile, String> {
        std::fs::write(path, format!("{}\n", std::process::id()))
            .map_err(|e| format!("--pidfile {}: {e}", path.display()))?;
        Ok(PidFile(path.to_path_buf()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Rule files, variables and config files for the engine, from the config and the CLI:
/// `-S` replaces the configured rule files, `-s` adds to them; relative configured rule files
/// resolve against `default-rule-path`.
fn engine_setup(cfg: &SensorConfig, cli: &Cli) -> EngineSetup {
    let mut vars = Vars::suricata_defaults();
    for (k, v) in &cfg.vars.address_groups {
        vars.set_address(k, v);
    }
    for (k, v) in &cfg.vars.port_groups {
        vars.set_port(k, v);
    }
    let rule_files = if !cli.rules_exclusive.is_empty() {
        cli.rules_exclusive.clone()
    } else {
        let base = cfg.rules.default_rule_path.as_deref();
        let mut files: Vec<PathBuf> = cfg
            .rules
            .rule_files
            .iter()
            .map(|p| match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.clone(),
            })
            .collect();
        files.extend(cli.rules_extra.iter().cloned());
        files
    };
    EngineSetup {
        rule_files,
        vars,
        classification_file: cfg.rules.classification_file.clone(),
        reference_file: cfg.rules.reference_config_file.clone(),
        threshold_file: cfg.rules.threshold_file.clone(),
        config: {
            let mut c = cfg.detect.engine.clone();
            c.features = provided_features(cfg);
            c
        },
        allow_insecure_files: cli.allow_insecure_files,
        trusted_uid: run_as_uid(cfg),
    }
}

/// The features a rule's `requires` sees, as Suricata 7.0.10 provides them: `ja3` and
/// `ja4` unless their fingerprints are switched off, `output::file-store` with the file
/// store on.
fn provided_features(cfg: &SensorConfig) -> Vec<String> {
    let off = |v: &Option<String>| {
        matches!(
            v.as_deref().map(str::to_ascii_lowercase).as_deref(),
            Some("no" | "false" | "off" | "0")
        )
    };
    let tls = &cfg.detect.app_layer.tls;
    let mut f = Vec::new();
    if !off(&tls.ja3_fingerprints) {
        f.push("ja3".to_string());
    }
    if !off(&tls.ja4_fingerprints) {
        f.push("ja4".to_string());
    }
    if cfg.output.file_store.enabled {
        f.push("output::file-store".to_string());
    }
    f
}

/// Start-up stops when a rule, classification or threshold file was refused as insecure
/// (the reasons are printed with the rule summary).
fn refuse_insecure(l: &LoadedEngine) -> Result<(), (u8, String)> {
    match l.refused_files.first() {
        None => Ok(()),
        Some(first) => Err((
            EXIT_INPUT,
            format!(
                "{} insecure file(s) refused (first: {first}); fix the permissions or pass \
                 --allow-insecure-files",
                l.refused_files.len()
            ),
        )),
    }
}

/// Load rule files and build the engine, reporting progress.
fn load_engine(cfg: &SensorConfig, cli: &Cli, progress: &progress::Progress) -> LoadedEngine {
    let setup = engine_setup(cfg, cli);
    setup::load(
        &setup,
        &mut |done, total| progress.rules(done as u64, total as u64),
        &mut || progress.compiling(),
    )
}

/// Rules that failed to load (parse errors, unreadable files), duplicates not counted.
fn rule_failures(l: &LoadedEngine) -> usize {
    l.parse_errors
        .iter()
        .filter(|e| {
            e.error.kind != ErrorKind::Semantic("duplicate sid") && e.error.kind != setup::REPLACED
        })
        .count()
}

/// Rules that fail `-T` (and a start-up with `--init-errors-fatal`): every rule that does not
/// load, duplicates included, and every rule found invalid when compiled, as Suricata's `-T`
/// counts them; a newer revision replacing an older one is not a failure.
fn load_failures(l: &LoadedEngine) -> usize {
    l.parse_errors
        .iter()
        .filter(|e| e.error.kind != setup::REPLACED)
        .count()
        + invalid_rules(l)
}

/// `--init-errors-fatal` (Suricata's flag): a start-up with a rule that failed to load stops.
fn fatal_rule_errors(l: &LoadedEngine, cli: &Cli) -> Result<(), (u8, String)> {
    let n = load_failures(l);
    if cli.init_errors_fatal && n > 0 {
        return Err((
            EXIT_INPUT,
            format!("{n} rule(s) failed to load (--init-errors-fatal)"),
        ));
    }
    Ok(())
}

/// Rules parsed but found invalid when compiled (a `pcre` that does not compile …): Suricata
/// rejects them when it parses them.
fn invalid_rules(l: &LoadedEngine) -> usize {
    l.engine
        .report()
        .skipped
        .iter()
        .filter(|s| matches!(s.reason, shrike_detect::SkipReason::Invalid(_)))
        .count()
}

/// One line per count on stderr, and one per rule that failed to load; `-v` also lists every
/// rule that is not enforced yet. Nothing at all when no rule file was given (`-v`: a note).
fn print_rule_summary(l: &LoadedEngine, verbose: u8, running: bool) {
    let r = l.engine.report();
    let s = &l.load;
    if s.files == 0 {
        if running && verbose > 0 {
            eprintln!("shrike: note: no rule files given (-S/-s or rule-files in the config)");
        }
        return;
    }
    // Rules found invalid when compiled (a bad keyword value, a `pcre` that does not
    // compile) are rules Suricata refuses to load: counted and named as failed.
    let invalid = invalid_rules(l);
    eprintln!(
        "shrike: rules: {} file(s), {} rule(s): {} loaded, {} failed to load, {} not enforced yet",
        s.files,
        s.total,
        r.loaded,
        s.skipped + invalid,
        r.skipped.len() - invalid
    );
    if s.requirements_skipped > 0 {
        // Suricata's `rules_skipped`: `requires` not met by this engine (version, features).
        eprintln!(
            "shrike: rules: {} rule(s) skipped: their requirements (`requires`) are not met",
            s.requirements_skipped
        );
    }
    for f in &l.missing_files {
        let why = if f.exists() {
            "cannot be read"
        } else {
            "missing"
        };
        eprintln!("shrike: error: rule file {}: {why}", f.display());
    }
    for r in &l.refused_files {
        eprintln!("shrike: error: {r}");
    }
    for e in &l.parse_errors {
        eprintln!("shrike: rule failed: {e}");
    }
    for (reason, n) in &s.skipped_by_reason {
        eprintln!("shrike: rules failed to load: {n}: {reason}");
    }
    for sk in &r.skipped {
        if matches!(sk.reason, shrike_detect::SkipReason::Invalid(_)) {
            eprintln!("shrike: rule failed: {sk}");
        }
    }
    for (reason, n) in &r.by_reason {
        if !reason.starts_with("invalid rule: ") {
            eprintln!("shrike: rules not enforced: {n}: {reason}");
        }
    }
    if verbose > 0 {
        for sk in &r.skipped {
            if !matches!(sk.reason, shrike_detect::SkipReason::Invalid(_)) {
                eprintln!("shrike: rule not enforced: {sk}");
            }
        }
        eprintln!(
            "shrike: engine: {} ip-only, {} decoder-event, {} prefiltered rules; {} groups (largest {}); classification from {}; compile {:.0} ms, groups {:.0} ms (prefilters {:.0} ms, {} patterns)",
            r.ip_only,
            r.decoder_event,
            r.prefiltered,
            r.groups,
            r.biggest_group,
            l.classification_source,
            r.compile_time.as_secs_f64() * 1000.0,
            r.group_time.as_secs_f64() * 1000.0,
            r.prefilter_time.as_secs_f64() * 1000.0,
            r.prefilter_patterns
        );
    }
    for w in l.warnings.iter().chain(&r.warnings) {
        eprintln!("shrike: warning: {w}");
    }
}

/// Live capture on interfaces until SIGINT/SIGTERM.
fn run_live(
    cli: &Cli,
    cfg: &config::SensorConfig,
    workers: usize,
    bpf: Option<&str>,
) -> Result<u8, (u8, String)> {
    let mut names = cli.interface.clone();
    if let Some(n) = cli.af_packet.as_deref().filter(|n| !n.is_empty()) {
        names.push(n.to_string());
    }
    let method = if cli.dpdk {
        live::Method::Dpdk
    } else {
        live::Method::AfPacket
    };
    let runmode = cli.runmode.as_deref().and_then(Runmode::parse);
    let mut ifaces =
        live::resolve(cfg, &names, method, workers, runmode).map_err(|e| (EXIT_INPUT, e))?;
    // A BPF filter on the command line replaces the interfaces' own (as in Suricata).
    if let Some(expr) = bpf {
        for i in ifaces
            .iter_mut()
            .filter(|i| i.method == live::Method::AfPacket)
        {
            let afp = i.af_packet.get_or_insert_with(Default::default);
            afp.bpf_filter = Some(expr.to_string());
            afp.bpf_program = None;
        }
    }
    if runmode == Some(Runmode::Single) {
        for i in &mut ifaces {
            i.threads = 1;
            i.runmode = Runmode::Workers;
        }
    }
    let mut cfg = cfg.clone();
    let log_dir = resolve_log_dir(cli, &mut cfg).map_err(|e| (EXIT_INPUT, e))?;
    let cfg = &cfg;
    let signals = live::Signals::install().map_err(|e| (EXIT_INPUT, e))?;
    let instance = ops::config::instance_name(cli.config.as_deref());
    let detect = if cli.disable_detection {
        None
    } else {
        let progress = progress::Progress::new(cli.progress.into(), cli.quiet);
        let loaded = load_engine(cfg, cli, &progress);
        if !cli.quiet {
            print_rule_summary(&loaded, cli.verbose, true);
        }
        refuse_insecure(&loaded)?;
        fatal_rule_errors(&loaded, cli)?;
        // Even with no rules the workers get an (empty) engine: a reload can add rules.
        Some(live::LiveDetect {
            rules_failed: rule_failures(&loaded) as u64,
            engine: Arc::new(loaded.engine),
            setup: engine_setup(cfg, cli),
        })
    };
    shrike_sys::memory::release_freed_heap();
    let result = live::run_live(cfg, ifaces, &log_dir, &signals, detect, &instance)
        .map_err(|e| (EXIT_INPUT, e.to_string()))?;
    if !cli.quiet {
        run::print_summary(&result);
    }
    if cli.verbose > 0 {
        run::print_counters(&result);
    }
    Ok(0)
}

/// The log directory from `-l`, the config or `.`; `-l -` or `--eve-stdout` send EVE to
/// standard output (and turn off the file-only outputs when there is no log directory).
fn resolve_log_dir(cli: &Cli, cfg: &mut config::SensorConfig) -> Result<PathBuf, String> {
    let to_stdout = cli.eve_stdout || cli.log_dir.as_deref() == Some(Path::new("-"));
    if to_stdout {
        cfg.output.eve.filename = "/dev/stdout".into();
        cfg.output.eve.filetype = shrike_output::config::FileType::Regular;
        cfg.output.eve.layout = shrike_output::Layout::Shared;
    }
    // EVE on stdout and no log directory asked for: write no other file either (no stray
    // fast.log in the current directory of a wrapping tool).
    let no_dir = cli.log_dir.is_none() && cfg.default_log_dir.is_none();
    if cli.log_dir.as_deref() == Some(Path::new("-")) || (to_stdout && no_dir) {
        cfg.output.fast.enabled = false;
        cfg.output.stats.enabled = false;
        return Ok(PathBuf::from("."));
    }
    let log_dir = cli
        .log_dir
        .clone()
        .or_else(|| cfg.default_log_dir.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    check_log_dir(&log_dir, cfg, cli.allow_insecure_files)?;
    Ok(log_dir)
}

/// The `run-as` user's uid, when one is configured (a numeric user or a known name): the log
/// directory may belong to it.
fn run_as_uid(cfg: &config::SensorConfig) -> Option<u32> {
    let user = cfg.run_as.user.as_deref()?;
    user.parse::<u32>().ok().or_else(|| {
        shrike_sys::privileges::lookup_user(user)
            .ok()
            .map(|(u, _)| u)
    })
}

/// The log directory must exist (or be creatable, mode 0750), be trusted (not world-writable,
/// owned by root, the user shrike runs as or the `run-as` user; reached through a symbolic link
/// only when the link is owned by one of them too) and be writable, before any work starts.
/// The write probe is created with `O_EXCL | O_NOFOLLOW` under an unpredictable name relative
/// to the directory, then removed: nothing planted in the directory is opened.
fn check_log_dir(dir: &Path, cfg: &config::SensorConfig, insecure_ok: bool) -> Result<(), String> {
    if std::fs::symlink_metadata(dir).is_err() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(dir)
            .map_err(|e| format!("log directory {}: {e}", dir.display()))?;
    }
    if !dir.is_dir() {
        return Err(format!("log directory {}: not a directory", dir.display()));
    }
    if !insecure_ok {
        shrike_sys::privileges::check_output_dir(dir, run_as_uid(cfg))
            .map_err(|e| format!("log directory: {e}"))?;
    }
    let handle = shrike_sys::safefs::DirHandle::open(dir)
        .map_err(|e| format!("log directory {}: {e}", dir.display()))?;
    let name = shrike_sys::safefs::unpredictable_name(".shrike-write-test-");
    handle
        .create_new(std::ffi::OsStr::new(&name), 0o600)
        .map_err(|e| format!("log directory {} is not writable: {e}", dir.display()))?;
    let _ = handle.unlink(std::ffi::OsStr::new(&name));
    Ok(())
}

/// Sum of the input sizes, when every input is a regular file.
fn total_size(inputs: &[PathBuf]) -> Option<u64> {
    let mut total = 0;
    for p in inputs {
        if p.as_os_str() == "-" {
            return None;
        }
        total += std::fs::metadata(p).ok()?.len();
    }
    Some(total)
}
