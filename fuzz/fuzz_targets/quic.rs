//! The QUIC parser through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, each step one datagram (or stream chunk), with gaps and the close;
//! every sticky buffer and event of every transaction is read, and the alert objects must be
//! valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    shrike_fuzz::drive_registry_parser(&shrike_app::quic::PROTOCOL, false, data);
});
