//! The KRB5 parser through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, each step one datagram (or stream chunk), with gaps and the close;
//! every sticky buffer and event of every transaction is read, and the alert objects must be
//! valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let tcp = data.first().is_some_and(|b| b & 1 == 1);
    shrike_fuzz::drive_registry_parser(&shrike_app::krb5::PROTOCOL, tcp, data);
});
