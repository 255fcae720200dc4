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

    /// Read the BPF filter expression from FILE (Suricata's -F).
    #[arg(short = 'F', value_name = "FILE")]
    pub bpf_file: Option<PathBuf>,

    /// A BPF filter expression after the options (`shrike -r x.pcap 'tcp port 80'`), or
    /// `ctl reload|stats` to control a running sensor.
    #[arg(value_name = "BPF", num_args = 0.., trailing_var_arg = true)]
    pub rest: Vec<String>,
}

impl Cli {
    /// The BPF filter, from `-F FILE` or the words after the options (Suricata joins them
    /// with spaces). `-r` takes several paths, so in `-r x.pcap 'udp'` the expression is the
    /// last `-r` value: one that names no file and is not `-` is taken as the expression (and
    /// removed from the inputs). Both `-F` and an expression: an error, as in Suricata.
    pub fn take_bpf(&mut self) -> Result<Option<String>, String> {
        let mut words = std::mem::take(&mut self.rest);
        if words.is_empty() && self.read.len() > 1 {
            if let Some(last) = self.read.last() {
                if last.as_os_str() != "-" && std::fs::symlink_metadata(last).is_err() {
                    words.push(last.to_string_lossy().into_owned());
                    self.read.pop();
                }
            }
        }
        let expr = words.join(" ");
        let from_file = match &self.bpf_file {
            None => None,
            Some(f) => Some(
                std::fs::read_to_string(f)
                    .map_err(|e| format!("-F {}: {e}", f.display()))?
                    .lines()
                    // libpcap filter files may carry `#` comments.
                    .map(|l| l.split('#').next().unwrap_or("").trim())
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        };
        match (from_file, expr.trim()) {
            (Some(_), e) if !e.is_empty() => Err(format!(
                "-F and a BPF expression (`{e}`) on the command line: give one of them"
            )),
            (Some(f), _) => Ok((!f.is_empty()).then_some(f)),
            (None, "") => Ok(None),
            (None, e) => Ok(Some(e.to_string())),
        }
    }

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
    fn bpf_expression_after_the_options_or_from_a_file() {
        let pcap = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sample.pcap");
        let mut cli = Cli::try_parse_from(["shrike", "-r", pcap, "tcp port 80"]).unwrap();
        assert_eq!(cli.take_bpf().unwrap().as_deref(), Some("tcp port 80"));
        assert_eq!(cli.read, vec![PathBuf::from(pcap)]);
        let mut cli = Cli::try_parse_from([
            "shrike", "-r", pcap, "-l", "out", "udp", "and", "port", "53",
        ])
        .unwrap();
        assert_eq!(cli.take_bpf().unwrap().as_deref(), Some("udp and port 53"));
        // A single -r value is always an input, even when missing.
        let mut cli = Cli::try_parse_from(["shrike", "-r", "missing.pcap"]).unwrap();
        assert_eq!(cli.take_bpf().unwrap(), None);
        assert_eq!(cli.read.len(), 1);
        let dir = std::env::temp_dir().join(format!("shrike-bpf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("filter.bpf");
        std::fs::write(
            &f,
            "# only DNS\nudp port 53\n  and not host 10.0.0.1 # not that one\n",
        )
        .unwrap();
        let fs = f.to_str().unwrap();
        let mut cli = Cli::try_parse_from(["shrike", "-r", pcap, "-F", fs]).unwrap();
        assert_eq!(
            cli.take_bpf().unwrap().as_deref(),
            Some("udp port 53 and not host 10.0.0.1")
        );
        let mut cli = Cli::try_parse_from(["shrike", "-F", fs, "-r", pcap, "udp"]).unwrap();
        assert!(cli
            .take_bpf()
            .unwrap_err()
            .contains("-F and a BPF expression"));
        let mut cli = Cli::try_parse_from(["shrike", "-F", "/nonexistent/f"]).unwrap();
        assert!(cli.take_bpf().unwrap_err().contains("/nonexistent/f"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn af_packet_optional_value() {
        let cli = Cli::try_parse_from(["shrike", "--af-packet"]).unwrap();
        assert_eq!(cli.af_packet.as_deref(), Some(""));
        let cli = Cli::try_parse_from(["shrike", "--af-packet=eth1"]).unwrap();
        assert_eq!(cli.af_packet.as_deref(), Some("eth1"));
    }
}
