//! shrike: a fast, Suricata-compatible network IDS sensor.
#![forbid(unsafe_code)]
// Temporary while the pipeline is being wired: removed once every module is used.
#![allow(dead_code)]

mod cli;
mod config;
mod dispatch;
mod suricata_sections;
mod suricata_yaml;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let sets = match cli.set_pairs() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("shrike: {e}");
            std::process::exit(2);
        }
    };
    match config::load(cli.config.as_deref(), &sets) {
        Ok(loaded) => {
            if cli.verbose > 0 {
                eprintln!("{:#?}", loaded.config);
            }
        }
        Err(e) => {
            eprintln!("shrike: {e}");
            std::process::exit(1);
        }
    }
}
