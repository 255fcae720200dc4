//! The pcap/pcapng reader over arbitrary bytes (FileSource::from_reader), read to the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_capture::FileSource;
use shrike_capture::PacketSource;

fuzz_target!(|data: &[u8]| {
    let Ok(mut src) = FileSource::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    let mut n = 0u64;
    let mut bytes = 0usize;
    while let Ok(Some(p)) = src.next_packet() {
        n += 1;
        bytes += p.data.len();
        assert!(
            p.data.len() as u64 <= data.len() as u64,
            "packet larger than input"
        );
        assert!(n <= data.len() as u64, "more packets than input bytes");
    }
    let _ = (src.stats(), src.is_truncated(), src.link_type(), bytes);
    // After the end (or an error) the source stays finished.
    assert!(
        matches!(src.next_packet(), Ok(None)),
        "a finished source must stay finished"
    );
});
