//! Classic BPF filters for the socket: parsing a compiled program (`tcpdump -ddd` or `-dd`
//! output), compiling an expression with libpcap (feature `bpf-compile`), and attaching it.

use std::os::fd::RawFd;

/// Linux' BPF_MAXINSNS.
pub const MAX_INSNS: usize = 4096;

/// A classic BPF program ready for `SO_ATTACH_FILTER`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BpfProgram {
    /// `(code, jt, jf, k)` per instruction.
    insns: Vec<(u16, u8, u8, u32)>,
}

impl BpfProgram {
    /// The instructions as `(code, jt, jf, k)`.
    pub fn instructions(&self) -> impl Iterator<Item = (u16, u8, u8, u32)> + '_ {
        self.insns.iter().copied()
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// True for a program without instructions (never returned by the constructors).
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Builds a program from `(code, jt, jf, k)` tuples.
    pub fn from_instructions(ins: &[(u16, u8, u8, u32)]) -> Result<BpfProgram, String> {
        if ins.is_empty() || ins.len() > MAX_INSNS {
            return Err(format!(
                "a BPF program has 1..={MAX_INSNS} instructions, not {}",
                ins.len()
            ));
        }
        Ok(BpfProgram {
            insns: ins.to_vec(),
        })
    }

    /// Parses `tcpdump -ddd` output (a count line, then `code jt jf k` in decimal per line) or
    /// `tcpdump -dd` output (`{ 0x28, 0, 0, 0x0000000c },` per line). The count line is
    /// optional; when present it must match.
    pub fn parse(text: &str) -> Result<BpfProgram, String> {
        let mut count: Option<usize> = None;
        let mut ins = Vec::new();
        for (lineno, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c == '{' || c == '}' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let bad = || {
                format!(
                    "bpf-program line {}: `{line}`: expected `code jt jf k`",
                    lineno + 1
                )
            };
            match fields.len() {
                1 if count.is_none() && ins.is_empty() => {
                    count = Some(parse_num(fields[0]).ok_or_else(bad)? as usize);
                }
                4 => {
                    let n: Vec<u64> = fields
                        .iter()
                        .map(|f| parse_num(f))
                        .collect::<Option<_>>()
                        .ok_or_else(bad)?;
                    if n[0] > u16::MAX as u64 || n[1] > 255 || n[2] > 255 || n[3] > u32::MAX as u64
                    {
                        return Err(format!(
                            "bpf-program line {}: value out of range",
                            lineno + 1
                        ));
                    }
                    ins.push((n[0] as u16, n[1] as u8, n[2] as u8, n[3] as u32));
                }
                _ => return Err(bad()),
            }
        }
        if let Some(c) = count {
            if c != ins.len() {
                return Err(format!(
                    "bpf-program says {c} instructions but has {}",
                    ins.len()
                ));
            }
        }
        BpfProgram::from_instructions(&ins)
    }

    /// Compiles a filter expression for Ethernet with libpcap's `pcap_compile`.
    #[cfg(feature = "bpf-compile")]
    pub fn compile(expr: &str) -> Result<BpfProgram, String> {
        compile::compile(expr)
    }

    /// Without the `bpf-compile` feature an expression cannot be compiled.
    #[cfg(not(feature = "bpf-compile"))]
    pub fn compile(expr: &str) -> Result<BpfProgram, String> {
        Err(format!(
            "bpf-filter `{expr}` needs shrike built with the `bpf-compile` feature (libpcap); \
             or give the compiled program as bpf-program (`tcpdump -ddd EXPR` output)"
        ))
    }

    /// Attaches the program to a socket (`SO_ATTACH_FILTER`).
    pub(crate) fn attach(&self, fd: RawFd) -> std::io::Result<()> {
        let mut insns: Vec<libc::sock_filter> = self
            .insns
            .iter()
            .map(|&(code, jt, jf, k)| libc::sock_filter { code, jt, jf, k })
            .collect();
        let prog = libc::sock_fprog {
            len: insns.len() as u16,
            filter: insns.as_mut_ptr(),
        };
        // The kernel copies the instructions during the call; `insns` outlives it.
        super::sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog)
    }
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(feature = "bpf-compile")]
mod compile {
    use super::BpfProgram;
    use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

    #[repr(C)]
    struct BpfInsn {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct PcapBpfProgram {
        bf_len: c_uint,
        bf_insns: *mut BpfInsn,
    }

    extern "C" {
        fn pcap_open_dead(linktype: c_int, snaplen: c_int) -> *mut c_void;
        fn pcap_close(p: *mut c_void);
        fn pcap_compile(
            p: *mut c_void,
            fp: *mut PcapBpfProgram,
            s: *const c_char,
            optimize: c_int,
            netmask: c_uint,
        ) -> c_int;
        fn pcap_freecode(fp: *mut PcapBpfProgram);
        fn pcap_geterr(p: *mut c_void) -> *const c_char;
    }

    pub(super) fn compile(expr: &str) -> Result<BpfProgram, String> {
        let c = CString::new(expr).map_err(|_| "bpf-filter contains a NUL byte".to_string())?;
        // SAFETY: plain libpcap call; DLT_EN10MB = 1, tcpdump's default snaplen 262144.
        let p = unsafe { pcap_open_dead(1, 262144) };
        if p.is_null() {
            return Err("pcap_open_dead failed".into());
        }
        let mut prog = PcapBpfProgram {
            bf_len: 0,
            bf_insns: std::ptr::null_mut(),
        };
        // SAFETY: `p` is a live pcap handle, `prog` a writable program, `c` NUL-terminated;
        // PCAP_NETMASK_UNKNOWN is 0xffffffff.
        let rc = unsafe { pcap_compile(p, &mut prog, c.as_ptr(), 1, 0xffff_ffff) };
        let result = if rc != 0 {
            // SAFETY: pcap_geterr returns a NUL-terminated string owned by `p`, copied here
            // before `p` is closed.
            let msg = unsafe { CStr::from_ptr(pcap_geterr(p)) }
                .to_string_lossy()
                .into_owned();
            Err(format!("bpf-filter `{expr}`: {msg}"))
        } else {
            // SAFETY: on success `bf_insns` points to `bf_len` instructions owned by `prog`
            // until pcap_freecode below; they are copied out first.
            let ins = unsafe { std::slice::from_raw_parts(prog.bf_insns, prog.bf_len as usize) };
            let v: Vec<(u16, u8, u8, u32)> =
                ins.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect();
            // SAFETY: `prog` was filled by pcap_compile and is freed once.
            unsafe { pcap_freecode(&mut prog) };
            BpfProgram::from_instructions(&v)
        };
        // SAFETY: `p` came from pcap_open_dead and is closed once.
        unsafe { pcap_close(p) };
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `tcpdump -ddd udp` (Ethernet).
    const UDP_DDD: &str = "12\n40 0 0 12\n21 0 5 34525\n48 0 0 20\n21 6 0 17\n21 0 6 44\n48 0 0 54\n21 3 4 17\n21 0 3 2048\n48 0 0 23\n21 0 1 17\n6 0 0 262144\n6 0 0 0\n";

    #[test]
    fn parses_ddd_and_dd() {
        let p = BpfProgram::parse(UDP_DDD).unwrap();
        assert_eq!(p.len(), 12);
        assert_eq!(p.instructions().next(), Some((40, 0, 0, 12)));
        let dd = "{ 0x28, 0, 0, 0x0000000c },\n{ 0x15, 0, 1, 0x00000800 },\n{ 0x6, 0, 0, 0x00040000 },\n{ 0x6, 0, 0, 0x00000000 },\n";
        let p = BpfProgram::parse(dd).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p.instructions().nth(1), Some((0x15, 0, 1, 0x800)));
    }

    #[test]
    fn rejects_bad_programs() {
        for bad in [
            "",
            "3\n6 0 0 0\n",
            "6 0 0\n",
            "x 0 0 0\n",
            "6 0 0 0 0\n",
            "70000 0 0 0\n",
            "6 300 0 0\n",
        ] {
            assert!(BpfProgram::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[cfg(not(feature = "bpf-compile"))]
    #[test]
    fn expression_needs_the_feature() {
        let e = BpfProgram::compile("udp").unwrap_err();
        assert!(e.contains("bpf-compile"), "{e}");
    }

    #[cfg(feature = "bpf-compile")]
    #[test]
    fn compiles_like_tcpdump() {
        let p = BpfProgram::compile("udp").unwrap();
        // libpcap 1.10 tests IPv4 first; same decisions as UDP_DDD.
        let want = "40 0 0 12\n21 0 2 2048\n48 0 0 23\n21 6 7 17\n21 0 6 34525\n48 0 0 20\n\
                    21 3 0 17\n21 0 3 44\n48 0 0 54\n21 0 1 17\n6 0 0 262144\n6 0 0 0\n";
        assert_eq!(p, BpfProgram::parse(want).unwrap());
        assert!(BpfProgram::compile("nonsense ((").is_err());
    }
}
