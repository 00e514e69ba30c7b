//! The wire layer of a simulated shard: framing of frontend messages with
//! PostgreSQL's bounds (`ProcessStartupPacket` in postmaster.c, `SocketBackend` in
//! postgres.c, `pq_getmessage` in pqcomm.c), a reader of message bodies with the
//! checks of `pq_getmsg*` (pqformat.c), and the writers of backend messages.
//!
//! Invariants:
//! - Every decoder here returns an error for negative, huge or truncated lengths, for
//!   an unknown message type and for a string without its terminator; none indexes past
//!   a slice or trusts a length it has not checked, so hostile bytes never panic.
//! - A message's type is checked as soon as its first byte is there and its length word
//!   as soon as that is: a partial message is never awaited beyond its type's bound
//!   (`message_limit`), so a lying length word cannot make the server buffer more.
//! - `MsgReader::end` insists the whole body was read (`pq_getmsgend`): bytes left
//!   over are an error, never silently ignored.
//! - Strings are UTF-8, the only client encoding; invalid bytes are 22021 with the
//!   offending bytes shown, as `report_invalid_encoding` shows them.
//! - `put_msg` is the one writer of a backend frame: every length word counts itself
//!   and the body.
//!
//! Where it departs from PostgreSQL: Query, Parse, Bind, FunctionCall and CopyData stop
//! at 64 MiB (`PQ_LARGE_MESSAGE_LIMIT` is 1 GiB); an ErrorResponse carries S, V, C, M,
//! D, H and P but not PostgreSQL's F, L and R (source file, line, routine); a
//! RowDescription gives no table OID or column number and a type size of -1 for every
//! column (PostgreSQL gives int8's 8).

use crate::types::{Column, Datum};
use std::ops::Range;

/// The largest startup packet body PostgreSQL accepts (`MAX_STARTUP_PACKET_LENGTH`).
pub const MAX_STARTUP_PACKET_LEN: usize = 10_000;
/// PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`: the bound for Sync, Flush, Terminate, Close,
/// Describe, Execute and the COPY control messages.
pub const SMALL_MESSAGE_LIMIT: usize = 10_000;
/// The bound for Query, Parse, Bind, FunctionCall and CopyData. PostgreSQL's
/// `PQ_LARGE_MESSAGE_LIMIT` is `MaxAllocSize - 1` (1 GiB); a sandbox in a browser tab
/// settles for 64 MiB, so a hostile length word never makes it buffer more than that.
pub const LARGE_MESSAGE_LIMIT: usize = 64 << 20;

/// The protocol version of PostgreSQL 7.4 and later: 3.0.
pub const PROTOCOL_3_0: i32 = 3 << 16;
/// Special "protocol versions" of the startup packet.
pub const CANCEL_REQUEST_CODE: i32 = (1234 << 16) | 5678;
pub const SSL_REQUEST_CODE: i32 = (1234 << 16) | 5679;
pub const GSSENC_REQUEST_CODE: i32 = (1234 << 16) | 5680;

/// An error to report to the client as ErrorResponse (or NoticeResponse), with
/// PostgreSQL's fields. A FATAL error closes the connection after it is sent.
#[derive(Clone, Debug, PartialEq)]
pub struct PgError {
    pub fatal: bool,
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query text.
    pub position: Option<usize>,
}

impl PgError {
    pub fn error(code: &'static str, message: impl Into<String>) -> PgError {
        PgError { fatal: false, code, message: message.into(), detail: None, hint: None, position: None }
    }

    pub fn fatal(code: &'static str, message: impl Into<String>) -> PgError {
        PgError { fatal: true, ..PgError::error(code, message) }
    }

    /// ERRCODE_PROTOCOL_VIOLATION, at ERROR level (the session goes on).
    pub fn protocol(message: impl Into<String>) -> PgError {
        PgError::error("08P01", message)
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> PgError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> PgError {
        self.hint = Some(hint.into());
        self
    }

    pub fn into_fatal(mut self) -> PgError {
        self.fatal = true;
        self
    }
}

/// The maximum length word of a frontend message of type `tag`, as `SocketBackend`
/// chooses it; None for a type PostgreSQL does not know (a FATAL protocol violation).
pub fn message_limit(tag: u8) -> Option<usize> {
    match tag {
        b'Q' | b'F' | b'P' | b'B' | b'd' => Some(LARGE_MESSAGE_LIMIT),
        b'X' | b'C' | b'D' | b'E' | b'H' | b'S' | b'c' | b'f' => Some(SMALL_MESSAGE_LIMIT),
        _ => None,
    }
}

/// Finds the startup packet at the head of `buf`: the range of its body (after the
/// length word) once it is complete, None while bytes are missing.
pub fn frame_startup(buf: &[u8]) -> Result<Option<Range<usize>>, PgError> {
    let Some(word) = buf.get(..4) else { return Ok(None) };
    let len = i32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    // PostgreSQL: the body must hold at least the protocol version and at most
    // MAX_STARTUP_PACKET_LENGTH bytes.
    let body = i64::from(len) - 4;
    if body < 4 || body > MAX_STARTUP_PACKET_LEN as i64 {
        return Err(PgError::fatal("08P01", "invalid length of startup packet"));
    }
    let end = len as usize;
    Ok((buf.len() >= end).then_some(4..end))
}

/// Finds the message at the head of `buf`: its type and the range of its body once it
/// is complete, None while bytes are missing. The type is checked as soon as it
/// arrives and the length word as soon as it is there, before any body is awaited.
pub fn frame_message(buf: &[u8]) -> Result<Option<(u8, Range<usize>)>, PgError> {
    let Some(&tag) = buf.first() else { return Ok(None) };
    let Some(limit) = message_limit(tag) else {
        return Err(PgError::fatal("08P01", format!("invalid frontend message type {tag}")));
    };
    let Some(word) = buf.get(1..5) else { return Ok(None) };
    let len = i32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    if len < 4 || len as usize > limit {
        return Err(PgError::fatal("08P01", "invalid message length"));
    }
    let end = 1 + len as usize;
    Ok((buf.len() >= end).then_some((tag, 5..end)))
}

/// Reads a message body with the checks of PostgreSQL's `pq_getmsg*`: running out of
/// data, a string without its terminator and bytes left over are protocol errors.
#[derive(Clone)]
pub struct MsgReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> MsgReader<'a> {
    pub fn new(buf: &'a [u8]) -> MsgReader<'a> {
        MsgReader { buf, pos: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], PgError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| PgError::protocol("insufficient data left in message"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn byte(&mut self) -> Result<u8, PgError> {
        let b = *self.buf.get(self.pos).ok_or_else(|| PgError::protocol("no data left in message"))?;
        self.pos += 1;
        Ok(b)
    }

    /// `pq_getmsgint(msg, 2)`: unsigned, so a count word reads 0 to 65535.
    pub fn uint16(&mut self) -> Result<u16, PgError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn int16(&mut self) -> Result<i16, PgError> {
        self.uint16().map(|v| v as i16)
    }

    pub fn int32(&mut self) -> Result<i32, PgError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string, checked to be valid UTF-8 (the client encoding).
    pub fn string(&mut self) -> Result<&'a str, PgError> {
        let rest = &self.buf[self.pos.min(self.buf.len())..];
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(|| PgError::protocol("invalid string in message"))?;
        let bytes = &rest[..nul];
        self.pos += nul + 1;
        std::str::from_utf8(bytes).map_err(|e| invalid_encoding(&bytes[e.valid_up_to()..]))
    }

    /// `pq_getmsgend`: the whole body must have been read.
    pub fn end(&self) -> Result<(), PgError> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(PgError::protocol("invalid message format"))
        }
    }
}

/// PostgreSQL's `report_invalid_encoding`: the bytes of the offending character, as
/// many as its lead byte announces (at most what is there).
fn invalid_encoding(bad: &[u8]) -> PgError {
    let want = match bad.first().copied().unwrap_or(0) {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    let shown: Vec<String> = bad.iter().take(want).map(|b| format!("0x{b:02x}")).collect();
    PgError::error("22021", format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
}

/// Writes one backend message: type, length word, body.
pub fn put_msg(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
}

fn cstr(body: &mut Vec<u8>, s: &str) {
    body.extend_from_slice(s.as_bytes());
    body.push(0);
}

/// ErrorResponse (or NoticeResponse with `severity` WARNING): S and V severity, C code,
/// M message, then D detail, H hint and P position when present.
pub fn error_response(out: &mut Vec<u8>, e: &PgError, tag: u8, severity: &str) {
    let mut b = Vec::new();
    for (t, v) in [(b'S', severity), (b'V', severity), (b'C', e.code), (b'M', e.message.as_str())] {
        b.push(t);
        cstr(&mut b, v);
    }
    for (t, v) in [(b'D', &e.detail), (b'H', &e.hint)] {
        if let Some(v) = v {
            b.push(t);
            cstr(&mut b, v);
        }
    }
    if let Some(p) = e.position {
        b.push(b'P');
        cstr(&mut b, &p.to_string());
    }
    b.push(0);
    put_msg(out, tag, &b);
}

pub fn command_complete(out: &mut Vec<u8>, tag: &str) {
    let mut b = Vec::new();
    cstr(&mut b, tag);
    put_msg(out, b'C', &b);
}

pub fn parameter_status(out: &mut Vec<u8>, name: &str, value: &str) {
    let mut b = Vec::new();
    cstr(&mut b, name);
    cstr(&mut b, value);
    put_msg(out, b'S', &b);
}

/// NegotiateProtocolVersion: the newest minor version we speak and the `_pq_.`
/// options we did not recognise.
pub fn negotiate_protocol_version(out: &mut Vec<u8>, minor: i32, options: &[String]) {
    let mut b = minor.to_be_bytes().to_vec();
    b.extend_from_slice(&(options.len() as i32).to_be_bytes());
    for o in options {
        cstr(&mut b, o);
    }
    put_msg(out, b'v', &b);
}

/// ParameterDescription: no parameters (the simulated shard takes none).
pub fn parameter_description_none(out: &mut Vec<u8>) {
    put_msg(out, b't', &0i16.to_be_bytes());
}

/// RowDescription of `columns`, every column in text format.
pub fn row_description(out: &mut Vec<u8>, columns: &[Column]) {
    let mut b = Vec::new();
    b.extend_from_slice(&(columns.len() as i16).to_be_bytes());
    for c in columns {
        cstr(&mut b, &c.name);
        b.extend_from_slice(&0i32.to_be_bytes()); // table oid
        b.extend_from_slice(&0i16.to_be_bytes()); // column number
        b.extend_from_slice(&c.ty.oid().to_be_bytes());
        b.extend_from_slice(&(-1i16).to_be_bytes()); // type size
        b.extend_from_slice(&(-1i32).to_be_bytes()); // type modifier
        b.extend_from_slice(&0i16.to_be_bytes()); // text format
    }
    put_msg(out, b'T', &b);
}

/// DataRow of one row in text format; `scratch` is reused between rows.
pub fn data_row(out: &mut Vec<u8>, row: &[Datum], scratch: &mut Vec<u8>) {
    scratch.clear();
    scratch.extend_from_slice(&(row.len() as i16).to_be_bytes());
    for d in row {
        if d.is_null() {
            scratch.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let at = scratch.len();
        scratch.extend_from_slice(&[0; 4]);
        d.write_text(scratch);
        let len = (scratch.len() - at - 4) as i32;
        scratch[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    put_msg(out, b'D', scratch);
}
