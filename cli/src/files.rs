//! Files the CLI reads on a user's say-so (configurations, profiles, scenario files,
//! certificates, passwords) are read through one bounded reader: at most `limit`
//! bytes are ever held, so `/dev/zero` or a huge file is a clear error, not a process
//! that grows until the machine gives out.

use std::io::Read;
use std::path::Path;

/// The file's bytes, or an error naming it when it cannot be read or holds more than
/// `limit` bytes (read up to `limit + 1`, never further).
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{}: larger than {limit} bytes", path.display()));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub(crate) fn read_text_bounded(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_bounded(path, limit)?).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}
