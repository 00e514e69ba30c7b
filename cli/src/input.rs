//! The files the CLI is given — scenario files (`sql --file`, `trace --file`), knob
//! profiles (`--profile`), relay configurations (`relay --config`, `--live`), and the
//! certificates, keys and password files those name — read through one bounded reader.
//!
//! # Invariants
//! * At most `limit + 1` bytes are read from any of them (`Read::take`), so a huge
//!   file, a device (`/dev/zero`) or a pipe that never ends is refused as soon as it
//!   passes its bound, in little time and memory, with a message that names the file
//!   and the bound.
//! * What is read must be UTF-8 text.
//!
//! PostgreSQL has no counterpart here (psql reads its files whole).

use std::io::Read;

/// A scenario file: as much as the page takes (`MAX_SCRIPT_BYTES`, 1 MiB).
pub(crate) const SCRIPT_BYTES: usize = pgasync::knobs::MAX_SCRIPT_BYTES;

/// A knobs profile or a relay configuration: a few lines of JSON or TOML (64 KiB).
pub(crate) const CONFIG_BYTES: usize = 64 << 10;

/// The text of `path`, which is a `what` ("a scenario file"), if it has at most
/// `limit` bytes; the error says why not (the caller names the flag and the path).
pub(crate) fn read_text(path: &str, what: &str, limit: usize) -> Result<String, String> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|_| format!("not UTF-8 text ({what} is text)"))
}

/// The bytes of `path` (a certificate, a key), bounded as [`read_text`].
pub(crate) fn read_bytes(path: &str, what: &str, limit: usize) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() > limit {
        return Err(format!("more than {limit} bytes, the most {what} may have"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_up_to_their_bound() {
        let path = std::env::temp_dir().join(format!("pgasync-input-{}", std::process::id()));
        std::fs::write(&path, "x".repeat(100)).unwrap();
        let p = path.to_str().unwrap();
        assert_eq!(read_text(p, "a test file", 100).unwrap().len(), 100);
        assert_eq!(read_text(p, "a test file", 99).unwrap_err(), "more than 99 bytes, the most a test file may have");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(read_text(p, "a test file", 10).unwrap_err().starts_with("not UTF-8"));
        std::fs::remove_file(&path).unwrap();
        // An endless device: refused after the bound, not read to its (absent) end.
        let t = std::time::Instant::now();
        assert!(read_text("/dev/zero", "a test file", 1 << 20).unwrap_err().starts_with("more than 1048576 bytes"));
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
        assert!(read_text("/nonexistent/file", "a test file", 10).unwrap_err().contains("No such file"));
    }
}
