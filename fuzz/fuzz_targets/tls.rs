//! The TLS parser (TlsState): both directions, split where the input says, with gaps;
//! every inspection buffer is read and the EVE `tls` object (extended, with JA4) is
//! written and must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::tls::eve::{write_tls, TlsLogConfig};
use shrike_app::tls::{TlsBuffer, TlsConfig, TlsState};
use shrike_app::Dir;
use shrike_fuzz::{steps, Step};
use shrike_output::JsonWriter;

const BUFFERS: [TlsBuffer; 14] = [
    TlsBuffer::Sni,
    TlsBuffer::CertSubject,
    TlsBuffer::CertIssuer,
    TlsBuffer::CertSerial,
    TlsBuffer::CertFingerprint,
    TlsBuffer::Certs,
    TlsBuffer::Random,
    TlsBuffer::RandomTime,
    TlsBuffer::RandomBytes,
    TlsBuffer::Ja3Hash,
    TlsBuffer::Ja3String,
    TlsBuffer::Ja3sHash,
    TlsBuffer::Ja3sString,
    TlsBuffer::Ja4Hash,
];

fn dir(ts: bool) -> Dir {
    if ts {
        Dir::ToServer
    } else {
        Dir::ToClient
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&c, rest)) = data.split_first() else {
        return;
    };
    let mut st = TlsState::new(TlsConfig::default());
    for s in steps(rest) {
        match s {
            Step::Data(ts, d) => {
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n),
            Step::Close(_) => {}
        }
    }
    for b in BUFFERS {
        for d in [Dir::ToServer, Dir::ToClient] {
            st.buffer(d, b, &mut |x| {
                let _ = x.len();
            });
        }
    }
    let _ = (
        st.sni(),
        st.version(),
        st.alpn(),
        st.cert_chain_len(),
        st.handshake_done(),
    );
    let _ = (st.cert_expired(1_700_000_000), st.cert_valid(1_700_000_000));
    let cfg = TlsLogConfig::new(c & 1 != 0, c & 2 != 0, None);
    let mut w = JsonWriter::new();
    w.start_object();
    write_tls(&mut w, &st, &cfg);
    w.close();
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(w.as_bytes()) {
        panic!(
            "invalid EVE tls JSON ({e}): {}",
            String::from_utf8_lossy(w.as_bytes())
        );
    }
});
