//! File type by content through the system's libmagic (Suricata's `util-magic.c`:
//! `magic_open(0)`, `magic_load(NULL)`, `magic_buffer`), loaded at run time with `dlopen`
//! so shrike builds and runs without it: [`lookup`] then answers `None` (as a Suricata
//! built without `MAGIC`). One libmagic handle per thread, opened on first use.

use std::ffi::{c_char, c_int, c_void, CStr};

type OpenFn = unsafe extern "C" fn(c_int) -> *mut c_void;
type LoadFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type BufferFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *const c_char;

#[derive(Clone, Copy)]
struct Lib {
    open: OpenFn,
    load: LoadFn,
    buffer: BufferFn,
}

fn lib() -> Option<Lib> {
    static LIB: std::sync::OnceLock<Option<Lib>> = std::sync::OnceLock::new();
    *LIB.get_or_init(|| {
        for name in [c"libmagic.so.1", c"libmagic.so"] {
            // SAFETY: dlopen with a valid NUL-terminated name; the handle is kept for the
            // process's life (never dlclosed), so the symbols stay valid.
            let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                continue;
            }
            let sym = |s: &CStr| {
                // SAFETY: `h` is a live handle and `s` NUL-terminated.
                let p = unsafe { libc::dlsym(h, s.as_ptr()) };
                (!p.is_null()).then_some(p)
            };
            let (Some(o), Some(l), Some(b)) =
                (sym(c"magic_open"), sym(c"magic_load"), sym(c"magic_buffer"))
            else {
                continue;
            };
            // SAFETY: the symbols are libmagic's, with these C signatures (magic.h).
            return Some(unsafe {
                Lib {
                    open: std::mem::transmute::<*mut c_void, OpenFn>(o),
                    load: std::mem::transmute::<*mut c_void, LoadFn>(l),
                    buffer: std::mem::transmute::<*mut c_void, BufferFn>(b),
                }
            });
        }
        None
    })
}

/// A thread's libmagic cookie (never closed: it lives as long as the thread).
struct Cookie(*mut c_void);

thread_local! {
    static COOKIE: Option<Cookie> = lib().and_then(|l| {
        // SAFETY: magic_open(0) returns a new cookie or NULL.
        let c = unsafe { (l.open)(0) };
        if c.is_null() {
            return None;
        }
        // SAFETY: a valid cookie; NULL loads the default database.
        let ok = unsafe { (l.load)(c, std::ptr::null()) } == 0;
        ok.then_some(Cookie(c))
    });
}

/// Whether libmagic could be loaded.
pub fn available() -> bool {
    COOKIE.with(|c| c.is_some())
}

/// libmagic's description of `data` (`None`: no libmagic, or no answer).
pub fn lookup(data: &[u8]) -> Option<String> {
    let l = lib()?;
    COOKIE.with(|c| {
        let c = c.as_ref()?;
        // SAFETY: the cookie belongs to this thread; `data` is valid for its length. The
        // returned string is owned by the cookie and copied before any other call on it.
        let p = unsafe { (l.buffer)(c.0, data.as_ptr().cast(), data.len()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: libmagic returns a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(p) };
        Some(s.to_string_lossy().into_owned())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn pdf_is_a_pdf_when_libmagic_is_there() {
        if !super::available() {
            return;
        }
        let m = super::lookup(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n").unwrap();
        assert!(m.starts_with("PDF document"), "{m}");
    }
}
