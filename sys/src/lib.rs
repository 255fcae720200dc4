//! shrike-sys: the operating-system calls shrike needs outside packet capture: privilege
//! drop and capabilities ([`privileges`]), CPU pinning and CPU time ([`cpu`]), network
//! namespaces ([`netns`]) and returning freed heap to the OS ([`memory`]).
//!
//! Besides `shrike-capture` (rings, DPDK), this is the only crate allowed `unsafe`; every
//! block carries a `// SAFETY:` comment. It owns no packet, flow or output state.

pub mod cpu;
pub mod magic;
pub mod memory;
pub mod netns;
pub mod privileges;
pub mod safefs;
