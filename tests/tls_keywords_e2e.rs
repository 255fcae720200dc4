//! End to end for the TLS keywords of Suricata's `tls_generic` list and certificate
//! validity (`ssl_version`, `ssl_state`, `tls.version`, `tls_cert_notbefore`,
//! `tls_cert_notafter`, `tls_cert_expired`, `tls_cert_valid`, `tls.cert_chain_len`): the
//! shrike binary on TLS captures of the shared corpus alerts on the same (sid, packet) pairs
//! as Suricata 7.0.10 (`suricata -r <pcap> -S <rules> -k none --runmode single`, pairs copied
//! from its `eve.json`; 0 is a flow-end alert). The captures cover TLS 1.2 with a key
//! exchange, an SSLv2 ClientHello, a handshake record spanning five packets (OCSP stapling),
//! SMTP STARTTLS (the keywords apply once the flow turned TLS) and TLS 1.3 draft 16.

mod common;

use common::TempDir;

const RULES: &str = "\
alert tls any any -> any any (msg:\"v12\"; ssl_version:tls1.2; sid:101;)
alert tls any any -> any any (msg:\"v13\"; ssl_version:tls1.3; sid:102;)
alert tls any any -> any any (msg:\"v10,11\"; ssl_version:tls1.0,tls1.1; sid:103;)
alert tls any any -> any any (msg:\"not12\"; ssl_version:!tls1.2; sid:104;)
alert tls any any -> any any (msg:\"sslv3\"; ssl_version:sslv3; sid:105;)
alert tls any any -> any any (msg:\"sslv2\"; ssl_version:sslv2; sid:106;)
alert tls any any -> any any (msg:\"ch\"; ssl_state:client_hello; sid:111;)
alert tls any any -> any any (msg:\"sh\"; ssl_state:server_hello; sid:112;)
alert tls any any -> any any (msg:\"ckx\"; ssl_state:client_keyx; sid:113;)
alert tls any any -> any any (msg:\"skx\"; ssl_state:server_keyx; sid:114;)
alert tls any any -> any any (msg:\"!ch\"; ssl_state:!client_hello; sid:115;)
alert tls any any -> any any (msg:\"ch|sh\"; ssl_state:client_hello|server_hello; sid:116;)
alert tls any any -> any any (msg:\"unknown\"; ssl_state:unknown; sid:117;)
alert tls any any -> any any (msg:\"nb\"; tls_cert_notbefore:<2018-01-01; sid:121;)
alert tls any any -> any any (msg:\"na\"; tls_cert_notafter:>2020-06; sid:122;)
alert tls any any -> any any (msg:\"nar\"; tls_cert_notafter:2015-01-01<>2030-01-01T00:00:00; sid:123;)
alert tls any any -> any any (msg:\"exp\"; tls_cert_expired; sid:124;)
alert tls any any -> any any (msg:\"valid\"; tls_cert_valid; sid:125;)
alert tls any any -> any any (msg:\"chain>1\"; tls.cert_chain_len:>1; sid:126;)
alert tls any any -> any any (msg:\"chain=1\"; tls.cert_chain_len:1; sid:127;)
alert tls any any -> any any (msg:\"v12 ts\"; flow:to_server; ssl_version:tls1.2; sid:128;)
alert tls any any -> any any (msg:\"v12 tc\"; flow:to_client; ssl_version:tls1.2; sid:129;)
alert tls any any -> any any (msg:\"sh tc\"; flow:to_client; ssl_state:server_hello; sid:130;)
alert tls any any -> any any (msg:\"eq\"; tls_cert_notbefore:1423764447; sid:131;)
alert tls any any -> any any (msg:\"tv12\"; tls.version:1.2; sid:140;)
alert tls any any -> any any (msg:\"tv13\"; tls.version:1.3; sid:141;)
alert tls any any -> any any (msg:\"tv10\"; tls.version:1.0; sid:142;)
alert tls any any -> any any (msg:\"tvraw\"; tls.version:0x7f12; sid:143;)
alert tls any any -> any any (msg:\"tv13 tc\"; flow:to_client; tls.version:1.3; sid:144;)
";

/// The (sid, pcap_cnt) of shrike's alerts on a corpus capture, sorted; None when the shared
/// corpus is not there.
fn alerts(rel: &str, tag: &str) -> Option<Vec<(u64, u64)>> {
    let pcap = common::shared_file(rel)?;
    Some(common::alert_pairs(&pcap, RULES, &TempDir::new(tag)))
}

fn check(rel: &str, tag: &str, mut want: Vec<(u64, u64)>) {
    let Some(got) = alerts(rel, tag) else {
        eprintln!("skipped: {rel} not in the shared corpus");
        return;
    };
    want.sort_unstable();
    assert_eq!(got, want, "{rel}");
}

#[test]
fn tls12_key_exchange() {
    check(
        "corpus/pcaps/zeek/tls_tls1.2.pcap",
        "tls12_key_exchange",
        vec![
            (111, 5),
            (116, 5),
            (101, 7),
            (112, 7),
            (115, 7),
            (116, 7),
            (128, 7),
            (140, 7),
            (101, 8),
            (112, 8),
            (115, 8),
            (129, 8),
            (130, 8),
            (140, 8),
            (113, 11),
            (121, 11),
            (123, 11),
            (125, 11),
            (126, 11),
        ],
    );
}

#[test]
fn sslv2_client_hello() {
    check(
        "corpus/pcaps/ndpi/google_ssl.pcap",
        "sslv2_client_hello",
        vec![
            (111, 5),
            (116, 5),
            (103, 7),
            (111, 7),
            (116, 7),
            (142, 7),
            (112, 9),
            (115, 9),
            (103, 10),
            (112, 10),
            (115, 10),
            (130, 10),
            (142, 10),
            (121, 12),
            (123, 12),
            (125, 12),
            (126, 12),
            (113, 17),
            (113, 18),
        ],
    );
}

#[test]
fn handshake_record_over_five_packets() {
    check(
        "corpus/pcaps/zeek/tls_ocsp-stapling.pcap",
        "handshake_record_over_five_packets",
        vec![
            (111, 5),
            (116, 5),
            (103, 7),
            (115, 7),
            (142, 7),
            (103, 8),
            (115, 8),
            (142, 8),
            (114, 13),
            (113, 15),
            (121, 15),
            (125, 15),
            (126, 15),
        ],
    );
}

#[test]
fn smtp_starttls() {
    check(
        "corpus/pcaps/ndpi/smtp-starttls.pcap",
        "smtp_starttls",
        vec![
            (111, 12),
            (116, 12),
            (103, 14),
            (112, 14),
            (115, 14),
            (116, 14),
            (142, 14),
            (103, 15),
            (112, 15),
            (115, 15),
            (130, 15),
            (142, 15),
            (113, 17),
            (121, 17),
            (125, 17),
            (126, 17),
            (111, 47),
            (116, 47),
            (101, 48),
            (114, 48),
            (115, 48),
            (128, 48),
            (140, 48),
            (101, 50),
            (113, 50),
            (115, 50),
            (121, 50),
            (122, 50),
            (123, 50),
            (125, 50),
            (127, 50),
            (129, 50),
            (140, 50),
        ],
    );
}

#[test]
fn tls13_draft16() {
    check(
        "corpus/pcaps/zeek/tls_tls13draft16-ff52.a01.pcap",
        "tls13_draft16",
        vec![
            (111, 5),
            (116, 5),
            (102, 7),
            (112, 7),
            (115, 7),
            (116, 7),
            (141, 7),
            (102, 10),
            (115, 10),
            (141, 10),
            (144, 10),
            (111, 20),
            (116, 20),
            (102, 22),
            (112, 22),
            (115, 22),
            (116, 22),
            (141, 22),
            (102, 26),
            (115, 26),
            (141, 26),
            (144, 26),
        ],
    );
}
