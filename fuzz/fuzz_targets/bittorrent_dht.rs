//! The BitTorrent DHT parser (bencode decoding) through the registry trait alone: both
//! directions, each step one datagram, with the close; every transaction's events are read
//! and each alert object must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    shrike_fuzz::drive_registry_parser(&shrike_app::bittorrent_dht::PROTOCOL, false, data);
});
