//! Links libpcap (found with pkg-config) when the `bpf-compile` feature is on; nothing else.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bpf-compile")]
    {
        if let Err(e) = pkg_config::Config::new().probe("libpcap") {
            panic!("feature bpf-compile needs libpcap (apt-get install libpcap-dev): {e}");
        }
    }
}
