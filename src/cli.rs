//! Command line, with Suricata's flags where they overlap.

use clap::{ArgAction, Parser, ValueEnum};
use std::path::PathBuf;

/// Checksum validation mode, as Suricata's `-k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChecksumMode {
    /// Validate TCP/UDP/ICMP checksums and drop invalid packets from inspection.
    All,
    /// Do not validate transport checksums.
    None,
}

/// Progress reporting on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// A human progress line when stderr is a terminal, nothing otherwise.
    Auto,
    /// One JSON object per second on stderr, for wrapping tools.
    Json,
    /// No progress output.
    None,
}

impl From<ProgressMode> for shrike_pipeline::progress::ProgressMode {
    fn from(m: ProgressMode) -> Self {
        match m {
            ProgressMode::Auto => Self::Auto,
            ProgressMode::Json => Self::Json,
            ProgressMode::None => Self::None,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "shrike",
    version,
    about = "shrike: a fast, Suricata-compatible network IDS sensor",
    long_about = None,
    after_help = "Exit codes: 0 ok, 1 bad input or configuration, 2 usage error."
)]
pub struct Cli {
    /// Read packets from capture files (pcap or pcapng), directories of them, or `-` for stdin.
    #[arg(short = 'r', value_name = "PATH", num_args = 1.., action = ArgAction::Append)]
    pub read: Vec<PathBuf>,

    /// Signature file(s) to load exclusively (replaces rule-files from the config).
    #[arg(short = 'S', value_name = "RULES", action = ArgAction::Append)]
    pub rules_exclusive: Vec<PathBuf>,

    /// Signature file(s) to load in addition to rule-files from the config.
    #[arg(short = 's', value_name = "RULES", action = ArgAction::Append)]
    pub rules_extra: Vec<PathBuf>,

    /// Output directory for eve.json, fast.log and stats (`-` writes EVE to stdout).
    #[arg(short = 'l', value_name = "OUTDIR")]
    pub log_dir: Option<PathBuf>,

    /// Configuration file: shrike YAML, or a Suricata suricata.yaml.
    #[arg(short = 'c', value_name = "CONFIG")]
    pub config: Option<PathBuf>,

    /// Override a configuration key, e.g. `--set stream.midstream=true`.
    #[arg(long = "set", value_name = "KEY=VALUE", action = ArgAction::Append)]
    pub set: Vec<String>,

    /// Checksum validation (Suricata's -k).
    #[arg(short = 'k', value_enum, value_name = "all|none")]
    pub checksum: Option<ChecksumMode>,

    /// Increase verbosity (repeat for more).
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,

    /// Quiet: no progress and no summary line.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Test the configuration and rules, then exit (non-zero on errors).
    #[arg(short = 'T', long = "check-config")]
    pub check_config: bool,

    /// Number of detect workers (default: every CPU the process may use).
    #[arg(long = "workers", value_name = "N")]
    pub workers: Option<usize>,

    /// Runmode: `single` (one thread, no queues), `dispatch` (reader hashes flows to workers)
    /// or `workers`/`autofp` (aliases of dispatch for files).
    #[arg(long = "runmode", value_name = "MODE")]
    pub runmode: Option<String>,

    /// Live capture on an interface (AF_PACKET).
    #[arg(short = 'i', value_name = "IFACE", action = ArgAction::Append)]
    pub interface: Vec<String>,

    /// Live capture with AF_PACKET on IFACE (or on the interfaces from the config).
    #[arg(long = "af-packet", value_name = "IFACE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub af_packet: Option<String>,

    /// Live capture with DPDK (ports from the config).
    #[arg(long = "dpdk")]
    pub dpdk: bool,

    /// Run without detection (no rules are loaded).
    #[arg(long = "disable-detection")]
    pub disable_detection: bool,

    /// Accept rule, configuration and cache files and a log directory that are world-writable
    /// or owned by another (non-root) user. Whoever can write them controls what the sensor
    /// loads or where it writes: only for a deliberate setup (docs/security.md).
    #[arg(long = "allow-insecure-files")]
    pub allow_insecure_files: bool,

    /// Write EVE records to standard output instead of eve.json.
    #[arg(long = "eve-stdout")]
    pub eve_stdout: bool,

    /// Progress reporting on stderr.
    #[arg(
        long = "progress",
        value_enum,
        value_name = "auto|json|none",
        default_value = "auto"
    )]
    pub progress: ProgressMode,

    /// Accepted for Suricata compatibility: IPS simulation (drop actions are logged as alerts).
    #[arg(long = "simulate-ips", hide = true)]
    pub simulate_ips: bool,

    /// Stop at start-up when any rule fails to load (as `-T` does), Suricata's flag; without it
    /// the bad rules are skipped with their reason and the others run.
    #[arg(long = "init-errors-fatal")]
    pub init_errors_fatal: bool,

    /// Accepted for Suricata compatibility (the flow hash seed stays random per run unless set).
    #[arg(long = "no-random", hide = true)]
    pub no_random: bool,

    /// Write the process id to FILE (removed at exit), as Suricata's --pidfile.
    #[arg(long = "pidfile", value_name = "FILE")]
    pub pidfile: Option<PathBuf>,

    /// User to switch to once the capture sockets are open (overrides `run-as.user`).
    #[arg(long = "user", value_name = "USER")]
    pub user: Option<String>,

    /// Group to switch to once the capture sockets are open (overrides `run-as.group`).
    #[arg(long = "group", value_name = "GROUP")]
    pub group: Option<String>,

    /// Control a running sensor: `shrike ctl reload|stats`.
    #[arg(hide = true, num_args = 0.., trailing_var_arg = true)]
    pub rest: Vec<String>,
}

impl Cli {
    /// Parse `--set key=value` pairs.
    pub fn set_pairs(&self) -> Result<Vec<(String, String)>, String> {
        self.set
            .iter()
            .map(|s| match s.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(format!("--set {s}: expected key=value")),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suricata_style_flags() {
        let cli = Cli::try_parse_from([
            "shrike",
            "-r",
            "a.pcap",
            "-r",
            "b.pcap",
            "-S",
            "x.rules",
            "-l",
            "out",
            "-k",
            "none",
            "--set",
            "stream.midstream=true",
            "--runmode=single",
            "-vv",
        ])
        .unwrap();
        assert_eq!(cli.read.len(), 2);
        assert_eq!(cli.checksum, Some(ChecksumMode::None));
        assert_eq!(cli.verbose, 2);
        assert_eq!(cli.runmode.as_deref(), Some("single"));
        assert_eq!(
            cli.set_pairs().unwrap(),
            vec![("stream.midstream".to_string(), "true".to_string())]
        );
    }

    #[test]
    fn several_paths_after_one_r() {
        let cli = Cli::try_parse_from(["shrike", "-r", "a.pcap", "b.pcap", "dir"]).unwrap();
        assert_eq!(cli.read.len(), 3);
    }

    #[test]
    fn bad_set_and_bad_k_are_errors() {
        let cli = Cli::try_parse_from(["shrike", "--set", "novalue"]).unwrap();
        assert!(cli.set_pairs().is_err());
        assert!(Cli::try_parse_from(["shrike", "-k", "maybe"]).is_err());
    }

    #[test]
    fn af_packet_optional_value() {
        let cli = Cli::try_parse_from(["shrike", "--af-packet"]).unwrap();
        assert_eq!(cli.af_packet.as_deref(), Some(""));
        let cli = Cli::try_parse_from(["shrike", "--af-packet=eth1"]).unwrap();
        assert_eq!(cli.af_packet.as_deref(), Some("eth1"));
    }
}
