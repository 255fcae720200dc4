//! Expansion of `-r` arguments: files, directories of files, and `-` for stdin.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::CaptureError;

/// Expands `-r` arguments into the list of inputs to read, in order.
///
/// A file stays as it is (also FIFOs and devices). A directory becomes the regular files
/// directly inside it (not recursive), sorted by name, skipping hidden ones (names starting
/// with `.`); symlinks to files count as files. `-` stays `-`, meaning standard input.
/// A missing path, an unreadable directory or a directory with no files is an error
/// naming it.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CaptureError> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        if p.as_os_str() == "-" {
            out.push(p.clone());
            continue;
        }
        let meta = fs::metadata(p).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => CaptureError::NotFound {
                path: p.display().to_string(),
            },
            _ => CaptureError::Open {
                path: p.display().to_string(),
                source: e,
            },
        })?;
        if meta.is_dir() {
            let before = out.len();
            list_dir(p, &mut out)?;
            if out.len() == before {
                return Err(CaptureError::EmptyDirectory {
                    path: p.display().to_string(),
                });
            }
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn list_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CaptureError> {
    let err = |source| CaptureError::ReadDir {
        path: dir.display().to_string(),
        source,
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let name = entry.file_name();
        if name.as_encoded_bytes().first() == Some(&b'.') {
            continue;
        }
        let path = entry.path();
        // Follows symlinks; a dangling one is skipped like any non-file.
        if fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            files.push((name, path));
        }
    }
    files.sort();
    out.extend(files.into_iter().map(|(_, p)| p));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_dirs_sorted_skipping_hidden_and_subdirs() {
        let base = std::env::temp_dir().join(format!("shrike-inputs-{}", std::process::id()));
        let d = base.join("d");
        fs::create_dir_all(d.join("sub")).unwrap();
        for n in ["b.pcap", "a.pcap", ".hidden.pcap", "c.pcapng"] {
            fs::write(d.join(n), b"x").unwrap();
        }
        fs::write(d.join("sub").join("z.pcap"), b"x").unwrap();
        let single = base.join("single.pcap");
        fs::write(&single, b"x").unwrap();
        let empty = base.join("empty");
        fs::create_dir_all(&empty).unwrap();

        let got = expand_inputs(&[single.clone(), PathBuf::from("-"), d.clone()]).unwrap();
        assert_eq!(
            got,
            vec![
                single,
                PathBuf::from("-"),
                d.join("a.pcap"),
                d.join("b.pcap"),
                d.join("c.pcapng")
            ]
        );

        let missing = base.join("nope.pcap");
        let e = expand_inputs(&[missing]).unwrap_err();
        assert!(matches!(e, CaptureError::NotFound { .. }), "{e}");
        assert!(e.to_string().contains("nope.pcap"), "{e}");

        let e = expand_inputs(&[empty]).unwrap_err();
        assert!(matches!(e, CaptureError::EmptyDirectory { .. }), "{e}");
        fs::remove_dir_all(&base).unwrap();
    }
}
