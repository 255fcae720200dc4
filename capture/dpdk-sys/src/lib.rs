//! Raw DPDK bindings for shrike's capture crate.
//!
//! With the `link` feature: `bindgen` output over DPDK's headers (found with
//! `pkg-config libdpdk`, 22.11 or newer) for the EAL, ethdev, mempool and mbuf functions the
//! capture crate uses, plus `shim_*` wrappers (csrc/shim.c) for DPDK's `static inline`
//! functions and macros (`rte_eth_rx_burst`, `rte_pktmbuf_free_bulk`, `rte_pktmbuf_mtod`,
//! `rte_errno`, the RSS flag sets). Without `link` this crate is empty, so workspace builds
//! need no DPDK installed. Use it only through `shrike-capture` (feature `dpdk`).

#[cfg(feature = "link")]
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    missing_docs,
    unsafe_op_in_unsafe_fn,
    unnecessary_transmutes,
    clippy::all,
    clippy::pedantic,
    rustdoc::all
)]
mod bindings {
    include!(concat!(env!("OUT_DIR"), "/dpdk.rs"));
}

#[cfg(feature = "link")]
pub use bindings::*;
