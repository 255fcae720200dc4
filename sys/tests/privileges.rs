//! Privilege dropping in a child process (root only): the test binary re-runs itself with
//! `SHRIKE_PRIV_CHILD` set, the child drops privileges and reports what it can still do, and
//! the parent checks the report. The parent process keeps its own privileges.

use std::collections::HashMap;
use std::process::Command;

use shrike_sys::privileges::{
    ambient_set, bounding_set, current_ids, drop_privileges, lookup_user, supplementary_groups,
    thread_caps, CapSet, Capability, DropSpec, PrivError,
};

const CHILD_ENV: &str = "SHRIKE_PRIV_CHILD";

/// Opens (and closes) an AF_PACKET socket: `ok` or the errno name.
fn try_packet_socket() -> String {
    // SAFETY: socket(2) with constant arguments; the descriptor is closed right away.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW,
            (libc::ETH_P_ALL as u16).to_be() as i32,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EPERM) {
            "EPERM".into()
        } else {
            format!("{e}")
        };
    }
    // SAFETY: `fd` is a descriptor this function just opened.
    unsafe { libc::close(fd) };
    "ok".into()
}

/// Whether setresuid(0) works again (it must not after a drop).
fn try_regain_root() -> String {
    // SAFETY: plain integer arguments; in the child only.
    let rc = unsafe { libc::setresuid(0, 0, 0) };
    if rc == 0 {
        "regained".into()
    } else {
        "refused".into()
    }
}

/// The child half: drop as told by the environment, print one `key=value` line.
#[test]
fn child_drop() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return; // not the child: nothing to do
    };
    let mut parts = spec.split(';');
    let user = parts.next().filter(|s| !s.is_empty()).map(String::from);
    let group = parts.next().filter(|s| !s.is_empty()).map(String::from);
    let keep = CapSet::parse(parts.next().unwrap_or("")).unwrap();
    let spec = DropSpec { user, group, keep };
    let d = match drop_privileges(&spec) {
        Ok(d) => d,
        Err(e) => {
            println!("RESULT error={e}");
            return;
        }
    };
    let caps = thread_caps().unwrap();
    let (uid, gid) = current_ids();
    assert_eq!((uid, gid), (d.uid, d.gid));
    // A thread spawned after the drop inherits the reduced sets.
    let thread_eff = std::thread::spawn(|| thread_caps().unwrap().effective.0)
        .join()
        .unwrap();
    println!(
        "RESULT uid={uid} gid={gid} eff={:x} prm={:x} inh={:x} bnd={:x} amb={:x} groups={} \
         thread_eff={thread_eff:x} packet={} root={}",
        caps.effective.0,
        caps.permitted.0,
        caps.inheritable.0,
        bounding_set().unwrap().0,
        ambient_set().unwrap().0,
        supplementary_groups().unwrap().len(),
        try_packet_socket(),
        try_regain_root(),
    );
}

/// Runs `child_drop` in a new process with `spec` and parses its report.
fn run_child(spec: &str) -> HashMap<String, String> {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "child_drop", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, spec)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no RESULT line in {stdout}"));
    if let Some(err) = line.strip_prefix("error=") {
        return HashMap::from([("error".to_string(), err.to_string())]);
    }
    line.split(' ')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn is_root_with_setpcap() -> bool {
    current_ids().0 == 0
        && thread_caps()
            .map(|c| {
                c.effective.contains(Capability::SETPCAP)
                    && c.effective.contains(Capability::SETUID)
                    && c.effective.contains(Capability::NET_RAW)
            })
            .unwrap_or(false)
}

fn hex(s: &CapSet) -> String {
    format!("{:x}", s.0)
}

#[test]
fn drop_to_nobody_keeping_net_raw() {
    if !is_root_with_setpcap() {
        eprintln!("skipped: needs root with CAP_SETPCAP, CAP_SETUID and CAP_NET_RAW");
        return;
    }
    let (uid, gid) = lookup_user("nobody").unwrap_or((65534, 65534));
    let keep = CapSet::of(&[Capability::NET_RAW, Capability::IPC_LOCK]);
    let r = run_child(&format!("nobody;;{keep}"));
    assert_eq!(r.get("error"), None, "{r:?}");
    assert_eq!(r["uid"], uid.to_string());
    assert_eq!(r["gid"], gid.to_string());
    assert_eq!(r["eff"], hex(&keep), "{r:?}");
    assert_eq!(r["prm"], hex(&keep), "{r:?}");
    assert_eq!(r["inh"], "0");
    assert_eq!(
        r["bnd"],
        hex(&keep),
        "bounding set keeps only what was asked: {r:?}"
    );
    assert_eq!(r["amb"], "0");
    assert_eq!(r["groups"], "0", "supplementary groups dropped");
    assert_eq!(r["thread_eff"], hex(&keep), "new threads inherit the sets");
    assert_eq!(
        r["packet"], "ok",
        "CAP_NET_RAW still opens AF_PACKET sockets"
    );
    assert_eq!(r["root"], "refused", "root cannot be regained");
}

#[test]
fn drop_everything_loses_packet_sockets() {
    if !is_root_with_setpcap() {
        eprintln!("skipped: needs root with CAP_SETPCAP, CAP_SETUID and CAP_NET_RAW");
        return;
    }
    let r = run_child("65534;65534;");
    assert_eq!(r.get("error"), None, "{r:?}");
    assert_eq!(r["uid"], "65534");
    assert_eq!(r["gid"], "65534");
    assert_eq!(r["eff"], "0");
    assert_eq!(r["prm"], "0");
    assert_eq!(r["bnd"], "0");
    assert_eq!(r["packet"], "EPERM");
    assert_eq!(r["root"], "refused");
}

#[test]
fn limit_without_user_change_keeps_uid() {
    if !is_root_with_setpcap() {
        eprintln!("skipped: needs root with CAP_SETPCAP, CAP_SETUID and CAP_NET_RAW");
        return;
    }
    // No user: stays uid 0 but with only CAP_NET_ADMIN; without CAP_NET_RAW no packet socket
    // (root's uid alone grants nothing).
    let keep = CapSet::of(&[Capability::NET_ADMIN]);
    let r = run_child(&format!(";;{keep}"));
    assert_eq!(r.get("error"), None, "{r:?}");
    assert_eq!(r["uid"], "0");
    assert_eq!(r["eff"], hex(&keep));
    assert_eq!(r["bnd"], hex(&keep));
    assert_eq!(r["packet"], "EPERM");
    assert_eq!(r["root"], "regained", "same uid: setresuid(0) is a no-op");
}

#[test]
fn unknown_user_is_an_error_naming_it() {
    if !is_root_with_setpcap() {
        eprintln!("skipped: needs root");
        return;
    }
    let r = run_child("no-such-user-shrike;;cap_net_raw");
    assert!(r["error"].contains("no-such-user-shrike"), "{r:?}");
    let e = drop_privileges(&DropSpec {
        user: Some("no-such-user-shrike".into()),
        group: None,
        keep: CapSet::EMPTY,
    })
    .unwrap_err();
    assert!(matches!(e, PrivError::NoSuchUser(_)));
}
