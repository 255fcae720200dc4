//! Prints one line per packet (`secs.nanos caplen orig_len link`) and the file's stats.
//! Usage: `cargo run -p shrike-capture --example capdump -- FILE|DIR|- ...`

use std::path::PathBuf;

use shrike_capture::{expand_inputs, FileSource, PacketSource};

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let inputs = match expand_inputs(&args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let mut status = 0;
    for path in inputs {
        let mut src = match FileSource::open_arg(&path) {
            Ok(s) => s,
            Err(e) if e.is_unsupported_link() => {
                eprintln!("warning: {e}");
                continue;
            }
            Err(e) => {
                eprintln!("error: {e}");
                status = 1;
                continue;
            }
        };
        loop {
            match src.next_packet() {
                Ok(Some(p)) => println!(
                    "{}.{:09} {} {} {}",
                    p.ts.secs(),
                    p.ts.subsec_nanos(),
                    p.data.len(),
                    p.orig_len,
                    p.link
                ),
                Ok(None) => break,
                Err(e) => {
                    eprintln!("error: {e}");
                    status = 1;
                    break;
                }
            }
        }
        if src.is_truncated() {
            eprintln!("warning: {}: truncated capture file", src.name());
        }
        for lt in src.unsupported_link_types() {
            eprintln!(
                "warning: {}: skipped packets of unsupported link type {lt}",
                src.name()
            );
        }
        let mut line = Vec::new();
        src.stats().visit(&mut |k, v| line.push(format!("{k}={v}")));
        eprintln!("{}: {} {}", src.name(), src.format().name(), line.join(" "));
    }
    std::process::exit(status);
}
