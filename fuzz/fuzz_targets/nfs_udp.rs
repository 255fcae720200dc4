//! The NFS (ONC RPC over UDP) parser through the registry trait alone: each piece of the input
//! one datagram of the direction the input says; every transaction's sticky buffers, files
//! and events are read, and each alert object must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    shrike_fuzz::drive_registry_parser(&shrike_app::nfs::PROTOCOL, false, data);
});
