//! The NFS (ONC RPC over TCP) parser through the registry trait alone (as the engine and the
//! pipeline reach it): both directions, split where the input says (each piece one stream
//! segment, so RPC records cut and joined anywhere), with gaps and the close; every
//! transaction's sticky buffers, files and events are read, and each alert object must be
//! valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    shrike_fuzz::drive_registry_parser(&shrike_app::nfs::PROTOCOL, true, data);
});
