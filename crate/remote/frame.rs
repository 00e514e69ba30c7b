//! A check of the backend message at the head of a connection's inbox, made before
//! `postgres_protocol`'s `Message::parse` sees it.
//!
//! `Message::parse` reads the length word as a `u32` and, until that many bytes have
//! arrived, reserves room for them and waits: a length word of `0xffff_fff0` (a
//! negative `i32`) or `0x7fff_ffff` would make the inbox wait for gigabytes, and on a
//! 32-bit target (wasm32) `len + 1` can overflow. So a bad header is a protocol error
//! before a single byte of its body is awaited.
//!
//! Invariants:
//! - The check runs as soon as the type byte is there (an unknown type is refused at
//!   once), and again once the length word is; `Ok` only means "nothing wrong so far".
//! - No length word outside its type's bounds reaches `Message::parse`: the inbox never
//!   waits for more than `MAX_BACKEND_MESSAGE_LEN` bytes of one message.
//! - The check reads at most five bytes and allocates nothing but its error message.
//!
//! Where it departs from libpq (`pqParseInput3`, `src/interfaces/libpq/fe-protocol3.c`):
//! libpq refuses a length below 4, and above 30000 for a type not in
//! `VALID_LONG_MESSAGE_TYPE` (`T D d V E N A`), as here. This check is stricter: the
//! messages of fixed size must have exactly it (ReadyForQuery 5, BackendKeyData 12, the
//! empty ones 4), the long ones stop at 64 MiB (PostgreSQL may send a 1 GiB DataRow), and
//! a type byte the 3.0 protocol does not have is refused before its length is read.

/// The largest backend message the client waits for: 64 MiB, the same bound the
/// simulated shard puts on the frontend messages it buffers (`LARGE_MESSAGE_LIMIT`).
/// PostgreSQL itself may send a DataRow up to 1 GiB; a sandbox in a browser tab does
/// not, and a length word above this is treated as garbage.
pub const MAX_BACKEND_MESSAGE_LEN: usize = 64 << 20;

/// The bound libpq uses for the backend messages it does not expect to be long
/// (`VALID_LONG_MESSAGE_TYPE` in fe-protocol3.c): everything but DataRow, CopyData,
/// ErrorResponse, NoticeResponse, NotificationResponse, RowDescription, ...
pub const SMALL_BACKEND_MESSAGE_LEN: usize = 30_000;

/// The bounds of the length word (which counts itself, not the type byte) of a backend
/// message of type `tag`: `(min, max)`; None for a type the PostgreSQL 3.0 protocol
/// does not have.
pub fn backend_length_bounds(tag: u8) -> Option<(usize, usize)> {
    let long = (4, MAX_BACKEND_MESSAGE_LEN);
    let small = (4, SMALL_BACKEND_MESSAGE_LEN);
    Some(match tag {
        // ParseComplete, BindComplete, CloseComplete, CopyDone, EmptyQueryResponse,
        // NoData, PortalSuspended: no body.
        b'1' | b'2' | b'3' | b'c' | b'I' | b'n' | b's' => (4, 4),
        b'Z' => (5, 5),   // ReadyForQuery: the status byte
        b'K' => (12, 12), // BackendKeyData: process id and secret key
        // DataRow, CopyData, ErrorResponse, NoticeResponse, NotificationResponse,
        // RowDescription, FunctionCallResponse.
        b'D' | b'd' | b'E' | b'N' | b'A' | b'T' | b'V' => long,
        // Authentication*, CommandComplete, CopyInResponse, CopyOutResponse,
        // CopyBothResponse, ParameterStatus, ParameterDescription,
        // NegotiateProtocolVersion.
        b'R' | b'C' | b'G' | b'H' | b'W' | b'S' | b't' | b'v' => small,
        _ => return None,
    })
}

/// Checks the header of the backend message at the head of `buf`, as far as it has
/// arrived: the type byte must be a backend message type, and the length word (an
/// `i32`, big-endian, counting itself) must be within that type's bounds. `Ok` means
/// "nothing wrong so far": the message may still be incomplete, or its body malformed
/// (that is for the parser to find). An error names what was wrong.
pub fn check_backend_frame(buf: &[u8]) -> Result<(), String> {
    let Some(&tag) = buf.first() else { return Ok(()) };
    let Some((min, max)) = backend_length_bounds(tag) else {
        return Err(format!("invalid backend message type 0x{tag:02x}"));
    };
    let Some(word) = buf.get(1..5) else { return Ok(()) };
    let len = i32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    match usize::try_from(len) {
        Ok(n) if (min..=max).contains(&n) => Ok(()),
        _ => Err(format!("invalid message length {len} for backend message type '{}'", tag as char)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tag: u8, len: i32) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&len.to_be_bytes());
        v
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn accepts_valid_headers_and_partial_input() {
        assert_eq!(check_backend_frame(&[]), Ok(()));
        assert_eq!(check_backend_frame(b"D"), Ok(()));
        assert_eq!(check_backend_frame(&frame(b'D', 4)[..3]), Ok(()));
        assert_eq!(check_backend_frame(&frame(b'Z', 5)), Ok(()));
        assert_eq!(check_backend_frame(&frame(b'D', MAX_BACKEND_MESSAGE_LEN as i32)), Ok(()));
        assert_eq!(check_backend_frame(&frame(b'K', 12)), Ok(()));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn refuses_bad_types_and_lengths() {
        assert!(check_backend_frame(b"Q").is_err());
        assert!(check_backend_frame(&[0]).is_err());
        for len in [i32::MIN, -1, 0, 3, i32::MAX, 1 << 30, MAX_BACKEND_MESSAGE_LEN as i32 + 1] {
            assert!(check_backend_frame(&frame(b'D', len)).is_err(), "{len}");
        }
        assert!(check_backend_frame(&frame(b'Z', 4)).is_err());
        assert!(check_backend_frame(&frame(b'Z', 6)).is_err());
        assert!(check_backend_frame(&frame(b'C', 30_001)).is_err());
    }
}
