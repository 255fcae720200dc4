//! The DCERPC parsers (TCP when the first input byte is even, UDP otherwise) through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, each step one datagram (or stream chunk), with gaps and the close;
//! every sticky buffer and event of every transaction is read, and the alert objects must be
//! valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    shrike_fuzz::drive_registry_parser(&shrike_app::dcerpc::PROTOCOL, first % 2 == 0, data);
});
