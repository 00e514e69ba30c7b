//! PostgreSQL 15's own arithmetic for the SQL front end: where a row lands, what
//! `random()` returns, and how numbers print, bit for bit as a real server does it.
//!
//! A setup script run in the sandbox must leave exactly the rows PostgreSQL would leave,
//! in the partitions PostgreSQL would put them in, and print them as `psql` shows them.
//! Each function here mirrors one in PostgreSQL 15's sources (read there, written anew):
//!
//! | here | PostgreSQL 15 |
//! |---|---|
//! | [`hash_bytes_extended`], [`hash_uint32_extended`] | `src/common/hashfn.c` (`hash_bytes_extended`, `hash_bytes_uint32_extended`; `hash_any_extended` and `hash_uint32_extended` in `src/include/common/hashfn.h`) |
//! | [`hash_combine64`] | `src/include/common/hashfn.h` |
//! | [`hashint2extended`], [`hashint4extended`], [`hashint8extended`], [`hashtextextended`], [`hashbpcharextended`] | `src/backend/access/hash/hashfunc.c` (bpchar: `varchar.c`) |
//! | [`hash_numeric_extended`], [`Numeric::parse`] | `src/backend/utils/adt/numeric.c` (`hash_numeric_extended`, `numeric_in`) |
//! | [`compute_partition_hash_value`], [`hash_partition_index`], [`satisfies_hash_partition`], [`find_hash_partition`] | `src/backend/partitioning/partbounds.c` (`compute_partition_hash_value`, `satisfies_hash_partition`, the hash arm of `get_partition_for_tuple`); [`HASH_PARTITION_SEED`] from `src/include/catalog/partition.h` |
//! | [`PgRandom`] | `src/common/pg_prng.c` (xoroshiro128**, `splitmix64`, `pg_prng_seed`, `pg_prng_fseed`, `pg_prng_double`) and `src/backend/utils/adt/float.c` (`setseed`, `drandom`) |
//! | [`float8_out`] | `float8out` in `float.c` with `extra_float_digits = 1` (the default): `double_to_shortest_decimal_buf` of `src/common/d2s.c` |
//! | [`dtoi2`], [`dtoi4`], [`dtoi8`] | `dtoi2`, `dtoi4` (`float.c`), `dtoi8` (`int8.c`): the float8 → integer casts |
//! | [`float8_numeric`] | `float8_numeric` (`numeric.c`) followed by `numeric_out` |
//! | [`to_char_int`] | `int4_to_char` / `int8_to_char` with `NUMDesc_prepare`, `NUM_processor`, `NUM_numpart_to_char` (`src/backend/utils/adt/formatting.c`), for the patterns `0`, `9` and `FM` only |
//!
//! Invariants:
//! - Hashes are those of a **little-endian** server (x86-64, arm64: every platform
//!   PostgreSQL is built for in practice). `hash_bytes` reads its input a word at a time
//!   in native byte order, so a big-endian server hashes text and numeric keys (not
//!   integers) differently, and puts such rows in other partitions.
//! - Text keys are hashed as their UTF-8 bytes: right for deterministic collations (the
//!   default ones, `C`, `C.UTF-8`, every libc collation). A nondeterministic ICU
//!   collation hashes a sort key instead, which is not done here.
//! - A NULL partition key column adds nothing to the row's hash (PostgreSQL skips it),
//!   so a row whose key columns are all NULL hashes to 0 and lands in remainder 0.
//! - Every function is pure and deterministic (no clock, no global state): the same
//!   inputs give the same outputs natively and in wasm32.

use std::fmt;

// ---------------------------------------------------------------------------------
// Hashing (hashfn.c / hashfn.h).

/// The seed every hash-partition key is hashed with (`HASH_PARTITION_SEED`).
pub const HASH_PARTITION_SEED: u64 = 0x7A5B_2236_7996_DCFD;

/// Bob Jenkins' lookup3 start value, as `hash_bytes` sets up its state.
const JENKINS_INIT: u32 = 0x9e37_79b9u32.wrapping_add(3_923_095);

#[inline]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

#[inline]
fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

/// A seed perturbs the state as if it were a leading 12-byte block (seed, then four
/// zero bytes); seed 0 leaves the state alone so that seed 0 gives the 32-bit hash in
/// the low half.
#[inline]
fn perturb(seed: u64, a: &mut u32, b: &mut u32, c: &mut u32) {
    if seed != 0 {
        *a = a.wrapping_add((seed >> 32) as u32);
        *b = b.wrapping_add(seed as u32);
        mix(a, b, c);
    }
}

/// Up to four bytes as a little-endian word; missing bytes count as zero.
#[inline]
fn le_word(bytes: &[u8]) -> u32 {
    bytes.iter().take(4).enumerate().fold(0u32, |w, (i, &x)| w | (u32::from(x) << (8 * i)))
}

/// `hash_any_extended` (`hash_bytes_extended`): lookup3 over `key` with a 64-bit seed;
/// the high half of the result is lookup3's `b`, the low half its `c`.
///
/// PostgreSQL reads aligned input a word at a time and unaligned input byte by byte;
/// on a little-endian machine both paths compute what this does.
pub fn hash_bytes_extended(key: &[u8], seed: u64) -> u64 {
    // keylen is a C int: lengths wrap as PostgreSQL's do (values are far below 1 GB).
    let mut a = JENKINS_INIT.wrapping_add(key.len() as u32);
    let (mut b, mut c) = (a, a);
    perturb(seed, &mut a, &mut b, &mut c);

    let mut blocks = key.chunks_exact(12);
    for block in &mut blocks {
        a = a.wrapping_add(le_word(&block[0..4]));
        b = b.wrapping_add(le_word(&block[4..8]));
        c = c.wrapping_add(le_word(&block[8..12]));
        mix(&mut a, &mut b, &mut c);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        // The lowest byte of c is reserved for the length: the tail's bytes 8..11 go
        // into c's upper three bytes.
        c = c.wrapping_add(le_word(&tail[8..]) << 8);
    }
    if tail.len() > 4 {
        b = b.wrapping_add(le_word(&tail[4..]));
    }
    if !tail.is_empty() {
        a = a.wrapping_add(le_word(tail));
    }
    final_mix(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// `hash_uint32_extended` (`hash_bytes_uint32_extended`): the same as
/// `hash_bytes_extended` of the value's four bytes, without the tail handling.
pub fn hash_uint32_extended(k: u32, seed: u64) -> u64 {
    let mut a = JENKINS_INIT.wrapping_add(4);
    let (mut b, mut c) = (a, a);
    perturb(seed, &mut a, &mut b, &mut c);
    a = a.wrapping_add(k);
    final_mix(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// `hash_combine64`: folds one column's hash into the row's hash (boost-style).
pub fn hash_combine64(a: u64, b: u64) -> u64 {
    a ^ b.wrapping_add(0x49a0_f4dd_15e5_a8e3).wrapping_add(a << 54).wrapping_add(a >> 7)
}

/// `hashint2extended`: sign-extended to int4 first, so `int2`, `int4` and `int8`
/// columns holding equal values hash alike (cross-type hash joins rely on it).
pub fn hashint2extended(v: i16, seed: u64) -> u64 {
    hash_uint32_extended(i32::from(v) as u32, seed)
}

/// `hashint4extended`.
pub fn hashint4extended(v: i32, seed: u64) -> u64 {
    hash_uint32_extended(v as u32, seed)
}

/// `hashint8extended`: the high half is folded into the low half (complemented for
/// negative values) so that every int8 inside the int4 range hashes as that int4.
pub fn hashint8extended(v: i64, seed: u64) -> u64 {
    let hi = (v >> 32) as u32;
    let lo = v as u32 ^ if v >= 0 { hi } else { !hi };
    hash_uint32_extended(lo, seed)
}

/// `hashtextextended` (also `varchar`) under a deterministic collation: the bytes.
pub fn hashtextextended(s: &str, seed: u64) -> u64 {
    hash_bytes_extended(s.as_bytes(), seed)
}

/// `hashbpcharextended`: `char(n)` ignores trailing spaces in comparisons, so they are
/// not hashed either.
pub fn hashbpcharextended(s: &str, seed: u64) -> u64 {
    hash_bytes_extended(s.trim_end_matches(' ').as_bytes(), seed)
}

// ---------------------------------------------------------------------------------
// numeric, as far as hashing needs it.

/// A `numeric` value reduced to what `hash_numeric_extended` reads: base-10000 digits
/// and the weight of the first one. Sign and display scale are not kept, because
/// PostgreSQL does not hash them (`1.5`, `1.50` and `-1.5` hash alike).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Numeric {
    kind: NumericKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum NumericKind {
    /// NaN, Infinity and -Infinity (`NUMERIC_IS_SPECIAL`).
    Special,
    /// Base-10000 digits, leading and trailing zero digits stripped (empty for zero);
    /// the value's magnitude is `sum(digits[i] * 10000^(weight - i))`.
    Finite { weight: i32, digits: Vec<i16> },
}

impl Numeric {
    /// Parses `numeric_in`'s syntax: optional sign, digits with an optional point,
    /// an optional exponent (`1.5e-3`), or `NaN` / `[+-]Infinity` / `[+-]inf`
    /// (case-insensitive), with surrounding white space.
    pub fn parse(text: &str) -> Result<Numeric, String> {
        let bad = || format!("invalid input syntax for type numeric: \"{text}\"");
        let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        if ["nan", "infinity", "inf"].iter().any(|w| unsigned.eq_ignore_ascii_case(w)) {
            // NaN takes no sign.
            if unsigned.eq_ignore_ascii_case("nan") && unsigned.len() != s.len() {
                return Err(bad());
            }
            return Ok(Numeric { kind: NumericKind::Special });
        }
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(i) => {
                let e: i64 = unsigned[i + 1..].parse().map_err(|_| bad())?;
                (&unsigned[..i], e)
            }
            None => (unsigned, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if int_part.len() + frac_part.len() == 0 || !all_digits(int_part) || !all_digits(frac_part) {
            return Err(bad());
        }
        // numeric_in refuses exponents beyond NUMERIC_MAX_PRECISION the same way.
        if exponent.unsigned_abs() > 1000 {
            return Err(bad());
        }
        let digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).map(|b| b - b'0').collect();
        // Position of the decimal point within `digits`.
        let point = int_part.len() as i64 + exponent;
        Ok(Numeric::from_decimal(&digits, point))
    }

    /// Groups decimal digits by four around the decimal point, as numeric stores them.
    /// `point` is where the decimal point sits in `digits` (may lie outside it).
    fn from_decimal(digits: &[u8], point: i64) -> Numeric {
        let mut padded = digits.to_vec();
        let mut point = point;
        // Zeros on the left until the point is inside and falls on a group boundary,
        // on the right until the last group is whole and the point is inside.
        let lead = (-point).max(0) + (4 - point.max(0) % 4) % 4;
        padded.splice(0..0, std::iter::repeat_n(0, lead as usize));
        point += lead;
        while (padded.len() as i64) < point || !padded.len().is_multiple_of(4) {
            padded.push(0);
        }
        let groups: Vec<i16> =
            padded.chunks(4).map(|g| g.iter().fold(0i16, |acc, &d| acc * 10 + i16::from(d))).collect();
        let kind = match groups.iter().position(|&g| g != 0) {
            None => NumericKind::Finite { weight: 0, digits: Vec::new() },
            Some(first) => {
                let last = groups.iter().rposition(|&g| g != 0).expect("a nonzero group exists");
                // The group just left of the point has weight 0.
                let weight = (point / 4 - 1 - first as i64) as i32;
                NumericKind::Finite { weight, digits: groups[first..=last].to_vec() }
            }
        };
        Numeric { kind }
    }
}

/// `hash_numeric_extended`: the base-10000 digits (little-endian int16s) hashed with
/// the seed, then the weight XORed in; NaN and infinities hash to the seed and zero to
/// `seed - 1`.
pub fn hash_numeric_extended(n: &Numeric, seed: u64) -> u64 {
    match &n.kind {
        NumericKind::Special => seed,
        NumericKind::Finite { digits, .. } if digits.is_empty() => seed.wrapping_sub(1),
        NumericKind::Finite { weight, digits } => {
            let bytes: Vec<u8> = digits.iter().flat_map(|d| d.to_le_bytes()).collect();
            // C converts the int weight to uint64 for the XOR: sign-extended.
            hash_bytes_extended(&bytes, seed) ^ (*weight as i64 as u64)
        }
    }
}

// ---------------------------------------------------------------------------------
// Hash partitioning (partbounds.c).

/// One partition key column's value, typed as the column is: the type picks the hash
/// function (the column's default hash operator class).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyValue<'a> {
    Null,
    /// `smallint`.
    Int2(i16),
    /// `integer`.
    Int4(i32),
    /// `bigint`.
    Int8(i64),
    /// `text` and `varchar(n)` (both use `hashtextextended`).
    Text(&'a str),
    /// `char(n)`: trailing spaces are not hashed.
    Bpchar(&'a str),
    /// `numeric`.
    Numeric(&'a Numeric),
}

impl KeyValue<'_> {
    /// The column's extended hash with `seed`, or None for NULL.
    pub fn hash_extended(&self, seed: u64) -> Option<u64> {
        Some(match *self {
            KeyValue::Null => return None,
            KeyValue::Int2(v) => hashint2extended(v, seed),
            KeyValue::Int4(v) => hashint4extended(v, seed),
            KeyValue::Int8(v) => hashint8extended(v, seed),
            KeyValue::Text(s) => hashtextextended(s, seed),
            KeyValue::Bpchar(s) => hashbpcharextended(s, seed),
            KeyValue::Numeric(n) => hash_numeric_extended(n, seed),
        })
    }
}

/// `compute_partition_hash_value`: each non-NULL key column hashed with
/// [`HASH_PARTITION_SEED`] and combined in key order; NULL columns are skipped.
pub fn compute_partition_hash_value(keys: &[KeyValue]) -> u64 {
    keys.iter().filter_map(|k| k.hash_extended(HASH_PARTITION_SEED)).fold(0, hash_combine64)
}

/// The remainder of the hash partition a row with these key values belongs to, among
/// partitions of modulus `modulus`: `compute_partition_hash_value(keys) % modulus`.
///
/// With partitions of different moduli PostgreSQL takes the hash modulo the greatest
/// modulus; since every modulus divides the greatest one, each partition's own test is
/// this one with its own modulus ([`find_hash_partition`]).
///
/// Panics if `modulus` is 0 (PostgreSQL refuses such a partition bound).
pub fn hash_partition_index(keys: &[KeyValue], modulus: u64) -> u64 {
    assert!(modulus > 0, "hash partition modulus must be a positive integer");
    compute_partition_hash_value(keys) % modulus
}

/// `satisfies_hash_partition`: the partition constraint of `FOR VALUES WITH (MODULUS
/// modulus, REMAINDER remainder)`. Never "unknown" for NULL keys (they hash too).
pub fn satisfies_hash_partition(keys: &[KeyValue], modulus: u64, remainder: u64) -> bool {
    modulus > 0 && hash_partition_index(keys, modulus) == remainder
}

/// The index in `bounds` (`(modulus, remainder)` pairs, one per partition) of the
/// partition that takes the row, or None when no partition covers its remainder
/// (PostgreSQL: "no partition of relation … found for row"; hash-partitioned tables
/// have no default partition).
pub fn find_hash_partition(keys: &[KeyValue], bounds: &[(u64, u64)]) -> Option<usize> {
    let hash = compute_partition_hash_value(keys);
    bounds.iter().position(|&(modulus, remainder)| modulus > 0 && hash % modulus == remainder)
}

// ---------------------------------------------------------------------------------
// random() and setseed() (pg_prng.c, float.c).

/// The generator behind `random()` and `setseed()`: xoroshiro128** seeded through
/// splitmix64, one per backend in PostgreSQL, one per session here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgRandom {
    s0: u64,
    s1: u64,
}

/// Knuth's LCG constants: what `pg_prng_seed_check` substitutes for an all-zero state
/// (a fixed point of xoroshiro).
const PRNG_ZERO_FALLBACK: (u64, u64) = (0x5851_F42D_4C95_7F2D, 0x1405_7B7E_F767_814F);

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

impl Default for PgRandom {
    fn default() -> Self {
        PgRandom::new()
    }
}

impl PgRandom {
    /// A generator before any `setseed()`. PostgreSQL seeds it from
    /// `pg_strong_random` at the first `random()`; the sandbox must be reproducible, so
    /// it starts as if `setseed(0)` had run.
    pub fn new() -> PgRandom {
        let mut r = PgRandom { s0: 0, s1: 0 };
        r.seed_u64(0);
        r
    }

    /// `pg_prng_seed`: the state from a 64-bit seed.
    pub fn seed_u64(&mut self, seed: u64) {
        let mut s = seed;
        self.s0 = splitmix64(&mut s);
        self.s1 = splitmix64(&mut s);
        if self.s0 == 0 && self.s1 == 0 {
            (self.s0, self.s1) = PRNG_ZERO_FALLBACK;
        }
    }

    /// `setseed(seed)`: seeds from a float8 in [-1, 1] (`pg_prng_fseed`), or fails with
    /// PostgreSQL's message (the value printed with `%g`) and leaves the state alone.
    pub fn setseed(&mut self, seed: f64) -> Result<(), String> {
        if seed.is_nan() || !(-1.0..=1.0).contains(&seed) {
            return Err(format!("setseed parameter {} is out of allowed range [-1,1]", format_g(seed, 6)));
        }
        // About 52 mantissa bits and the sign; C's double → int64 conversion
        // truncates toward zero, as `as` does.
        let scaled = ((1u64 << 52) - 1) as f64 * seed;
        self.seed_u64(scaled as i64 as u64);
        Ok(())
    }

    /// xoroshiro128** (`pg_prng_uint64`).
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `random()` (`drandom` → `pg_prng_double`): the top 52 bits as a fraction in
    /// [0, 1); every result is a multiple of 2^-52, converted exactly.
    pub fn random(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * f64::powi(2.0, -52)
    }
}

// ---------------------------------------------------------------------------------
// Output and casts (float.c, d2s.c, int8.c, numeric.c).

/// The shortest decimal digits that read back as `v` (finite, nonzero, sign ignored)
/// and the decimal exponent of the first digit: `v = d.ddd × 10^exp`.
///
/// PostgreSQL's Ryu (d2s.c, built without `STRICTLY_SHORTEST`) looks for the shortest
/// digits strictly inside `v`'s rounding interval and, at that length, takes the ones
/// nearest `v`, ties to even. Rust's `{:e}` is not the same: like the original Ryu it
/// also accepts the interval's ends when the significand is even (`1e23` for the double
/// 99999999999999991611392, where PostgreSQL prints `9.999999999999999e+22`), and it
/// rounds ties up (235866910055489.125 prints as …489.13, PostgreSQL's …489.12). So the
/// digits are searched for exactly, in [`shortest_open_interval`].
fn shortest_digits(v: f64) -> (String, i32) {
    let bits = v.abs().to_bits();
    let biased_exp = (bits >> 52) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (significand, exp2) =
        if biased_exp == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased_exp - 1075) };
    // At a power of two (not the smallest normal) the gap below is half the gap above.
    shortest_open_interval(significand, exp2, fraction == 0 && biased_exp > 1)
}

/// Steele & White's free-format digit generation (Dragon4) in exact arithmetic, for
/// `significand × 2^exp2`, with both ends of the rounding interval excluded.
fn shortest_open_interval(significand: u64, exp2: i32, narrow_below: bool) -> (String, i32) {
    // v = r/s; the interval is (v - m_minus/s, v + m_plus/s). One (or two, for the
    // narrow side) extra bits keep the half-gaps integral.
    let extra = if narrow_below { 2 } else { 1 };
    let (mut r, mut s, mut m_plus, mut m_minus) = if exp2 >= 0 {
        (
            Big::from_u64(significand).shl(exp2 as u32 + extra),
            Big::from_u64(1 << extra),
            Big::from_u64(1).shl(exp2 as u32 + extra - 1),
            Big::from_u64(1).shl(exp2 as u32),
        )
    } else {
        (
            Big::from_u64(significand << extra),
            Big::from_u64(1).shl((-exp2) as u32 + extra),
            Big::from_u64(1 << (extra - 1)),
            Big::from_u64(1),
        )
    };
    // Scale by 10^k so the interval's top is at most 1 but above 0.1: then the digits
    // are those of 0.d1d2… × 10^k. Start from an estimate and correct it both ways.
    // (log10 of v itself would underflow for subnormals.)
    let log10_v = ((significand as f64).log2() + f64::from(exp2)) * std::f64::consts::LOG10_2;
    let mut k = log10_v.ceil() as i32;
    if k >= 0 {
        s = s.mul_pow10(k as u32);
    } else {
        r = r.mul_pow10((-k) as u32);
        m_plus = m_plus.mul_pow10((-k) as u32);
        m_minus = m_minus.mul_pow10((-k) as u32);
    }
    while r.add(&m_plus) > s {
        s = s.mul_small(10);
        k += 1;
    }
    while r.add(&m_plus).mul_small(10) <= s {
        r = r.mul_small(10);
        m_plus = m_plus.mul_small(10);
        m_minus = m_minus.mul_small(10);
        k -= 1;
    }

    let mut digits = Vec::new();
    loop {
        r = r.mul_small(10);
        m_plus = m_plus.mul_small(10);
        m_minus = m_minus.mul_small(10);
        let mut d = 0u8;
        while r >= s {
            r.sub_assign(&s);
            d += 1;
        }
        let low = r < m_minus;
        let high = r.add(&m_plus) > s;
        if !low && !high {
            digits.push(d);
            continue;
        }
        // Stop here: d, or d + 1 when only it is inside or it is nearer v; an exact
        // tie goes to the even digit, as Ryu rounds.
        let round_up = match (low, high) {
            (true, false) => false,
            (false, true) => true,
            _ => match r.mul_small(2).cmp(&s) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => d % 2 == 1,
            },
        };
        digits.push(d + u8::from(round_up));
        break;
    }
    debug_assert!(digits.iter().all(|&d| d <= 9), "a rounded-up last digit never carries");
    (digits.iter().map(|d| char::from(b'0' + d)).collect(), k - 1)
}

/// The small unsigned bignum that [`shortest_open_interval`] needs: base 2^32 limbs,
/// least significant first, no leading zero limbs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        Big(vec![v as u32, (v >> 32) as u32]).trimmed()
    }

    fn trimmed(mut self) -> Big {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    fn shl(&self, bits: u32) -> Big {
        let (limbs, bits) = ((bits / 32) as usize, bits % 32);
        let mut out = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            out.push((l << bits) | carry);
            carry = if bits == 0 { 0 } else { l >> (32 - bits) };
        }
        out.push(carry);
        Big(out).trimmed()
    }

    fn mul_small(&self, m: u32) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u64;
        for &l in &self.0 {
            let t = u64::from(l) * u64::from(m) + carry;
            out.push(t as u32);
            carry = t >> 32;
        }
        out.push(carry as u32);
        Big(out).trimmed()
    }

    fn mul_pow10(&self, mut n: u32) -> Big {
        let mut out = self.clone();
        while n > 0 {
            let step = n.min(9);
            out = out.mul_small(10u32.pow(step));
            n -= step;
        }
        out
    }

    fn add(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(other.0.len()) {
            let t = u64::from(*self.0.get(i).unwrap_or(&0)) + u64::from(*other.0.get(i).unwrap_or(&0)) + carry;
            out.push(t as u32);
            carry = t >> 32;
        }
        out.push(carry as u32);
        Big(out).trimmed()
    }

    /// `self -= other`; `self >= other` is required.
    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let t = i64::from(self.0[i]) - i64::from(*other.0.get(i).unwrap_or(&0)) - borrow;
            self.0[i] = t.rem_euclid(1 << 32) as u32;
            borrow = i64::from(t < 0);
        }
        debug_assert_eq!(borrow, 0);
        *self = std::mem::take(self).trimmed();
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Big) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

/// Splits Rust's `d.ddde±x` into the digits (point removed) and the exponent.
fn split_exp(s: &str) -> (String, i32) {
    let (mantissa, exp) = s.split_once('e').expect("{:e} output has an exponent");
    (mantissa.replace('.', ""), exp.parse().expect("{:e} exponent is an integer"))
}

/// `float8out` with `extra_float_digits = 1` (the default, and what `psql` and
/// postgres_fdw see): shortest round-trip digits (strictly inside the rounding
/// interval, see [`shortest_digits`]), fixed notation for decimal exponents -4..14 and
/// `d.ddde±XX` otherwise; `NaN`, `Infinity`, `-Infinity`, `-0`.
pub fn float8_out(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v.is_infinite() {
        return format!("{sign}Infinity");
    }
    if v == 0.0 {
        return format!("{sign}0");
    }
    let (digits, exp) = shortest_digits(v);
    // d2s.c's thresholds match printf's %g: fixed point from 1e-4 up to below 1e15.
    if (-4..15).contains(&exp) {
        format!("{sign}{}", fixed_point(&digits, exp))
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{point}{rest}e{esign}{:02}", exp.unsigned_abs())
    }
}

/// Digits `d.ddd × 10^exp` written without an exponent and without trailing
/// fractional zeros.
fn fixed_point(digits: &str, exp: i32) -> String {
    if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{digits}{}", "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    }
}

/// C's `%.{precision}g` as PostgreSQL's `snprintf` prints it (error messages):
/// `NaN`, `Infinity`, `-Infinity` spelled out, else glibc's %g.
fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v == 0.0 {
        return format!("{sign}0");
    }
    let (digits, exp) = rounded_digits(v, precision);
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if exp < -4 || exp >= precision as i32 {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{point}{rest}e{esign}{:02}", exp.unsigned_abs())
    } else {
        format!("{sign}{}", fixed_point(digits, exp))
    }
}

/// `v` (finite, nonzero) correctly rounded to `precision` significant digits, ties to
/// even as glibc's printf does: the digits and the exponent of the first one.
fn rounded_digits(v: f64, precision: usize) -> (String, i32) {
    split_exp(&format!("{:.*e}", precision - 1, v.abs()))
}

/// The float8 → integer casts round half to even (`rint`) before the range check, so
/// values just outside the range that round into it are accepted.
fn float_to_int(v: f64, min: f64, what: &str) -> Result<i64, String> {
    let r = v.round_ties_even();
    // The range is [min, -min): -min itself is not representable in the target.
    if r.is_nan() || r < min || r >= -min {
        return Err(format!("{what} out of range"));
    }
    Ok(r as i64)
}

/// `dtoi4`: float8 → integer, as in `INSERT INTO t(int_col) SELECT random()*100`.
pub fn dtoi4(v: f64) -> Result<i32, String> {
    float_to_int(v, i32::MIN as f64, "integer").map(|i| i as i32)
}

/// `dtoi2`: float8 → smallint.
pub fn dtoi2(v: f64) -> Result<i16, String> {
    float_to_int(v, i16::MIN as f64, "smallint").map(|i| i as i16)
}

/// `dtoi8`: float8 → bigint.
pub fn dtoi8(v: f64) -> Result<i64, String> {
    float_to_int(v, i64::MIN as f64, "bigint")
}

/// `float8_numeric` then `numeric_out`: the value printed with `%.15g` (DBL_DIG
/// significant digits, so `random()` loses its last digits) and read back as numeric,
/// whose display scale keeps exactly the fraction digits that string had; exponents
/// are written out in full (`1e-05` → `0.00001`). `-0` becomes `0`.
pub fn float8_numeric(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let (digits, exp) = rounded_digits(v, 15);
    let digits = digits.trim_end_matches('0');
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{}", fixed_point(digits, exp))
}

// ---------------------------------------------------------------------------------
// to_char(integer, text) (formatting.c).

/// What `0`, `9` and `FM` set in `NUMDesc`: how many digit positions there are, where
/// the first `0` is, and fill mode.
#[derive(Debug, Default)]
struct NumDesc {
    /// Digit positions (`pre`; no decimal point, so no `post`).
    pre: usize,
    /// 1-based position of the first `0` (`zero_start`; 0 when there is none).
    zero_start: usize,
    /// `FM`: no padding spaces and no space for a plus sign.
    fill_mode: bool,
}

/// An error for a picture this subset cannot render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedPattern {
    /// The format string as given.
    pub format: String,
    /// The part of it that is not `0`, `9` or `FM`.
    pub pattern: String,
}

impl fmt::Display for UnsupportedPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "to_char: pattern \"{}\" in format \"{}\" is not supported (only 0, 9 and FM are)",
            self.pattern, self.format
        )
    }
}

/// Parses the picture (`NUMDesc_prepare`) for the subset `0`, `9`, `FM`/`fm`. Over
/// bytes: every accepted pattern is ASCII, and `to_char` parses its picture for each
/// row it formats (a scenario file's `to_char(i, 'FM00000')`, 100,000 rows; issue 20).
fn parse_num_format(format: &str) -> Result<NumDesc, UnsupportedPattern> {
    let mut desc = NumDesc::default();
    let bytes = format.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match &bytes[i..] {
            [b'F', b'M', ..] | [b'f', b'm', ..] => {
                desc.fill_mode = true;
                i += 2;
                continue;
            }
            [b'9', ..] => {}
            [b'0', ..] if desc.zero_start == 0 => desc.zero_start = desc.pre + 1,
            [b'0', ..] => {}
            _ => {
                // `i` is on a character boundary: only ASCII was passed over.
                let c = format[i..].chars().next().unwrap_or_default();
                return Err(UnsupportedPattern { format: format.to_string(), pattern: c.to_string() });
            }
        }
        desc.pre += 1;
        i += 1;
    }
    Ok(desc)
}

/// `to_char(integer, format)` / `to_char(bigint, format)` for pictures made of `0`,
/// `9` and `FM`: `to_char(5, 'FM00000')` = `00005`, `to_char(5, '00000')` = ` 00005`
/// (a space stands for the plus sign), `to_char(5, '9909')` = `   05`, and a number
/// with more digits than the picture prints `#` in every digit position. Any other
/// pattern (`.`, `D`, `G`, `S`, `PR`, `RN`, `EEEE`, literals, …) is an
/// [`UnsupportedPattern`].
pub fn to_char_int(value: i64, format: &str) -> Result<String, UnsupportedPattern> {
    let desc = parse_num_format(format)?;
    // int4_to_char: the digits of int4out/int8out, the sign split off; too many
    // digits and every digit position shows '#', nothing padded.
    let negative = value < 0;
    let digits = value.unsigned_abs().to_string();
    let out_pre_spaces = desc.pre.saturating_sub(digits.len());
    let hashes;
    let number: &[u8] = if digits.len() > desc.pre {
        hashes = vec![b'#'; desc.pre];
        &hashes
    } else {
        digits.as_bytes()
    };

    // NUM_processor: zero_start becomes 0-based; a plus sign in fill mode takes no
    // room, so it counts as already written.
    let has_zero = desc.zero_start > 0;
    let zero_start = desc.zero_start.saturating_sub(1);
    let mut sign_wrote = !negative && desc.fill_mode;
    let mut out: Vec<u8> = Vec::with_capacity(desc.pre + 1);
    let mut digits = number.iter();
    for num_curr in 0..desc.pre {
        // NUM_numpart_to_char: the sign goes just before the first position that
        // prints something other than padding (a digit, or the first forced zero).
        if !sign_wrote && (num_curr >= out_pre_spaces || (has_zero && zero_start == num_curr)) {
            if negative {
                out.push(b'-');
            } else if !desc.fill_mode {
                out.push(b' ');
            }
            sign_wrote = true;
        }
        if num_curr < out_pre_spaces && (zero_start > num_curr || !has_zero) {
            if !desc.fill_mode {
                out.push(b' ');
            }
        } else if has_zero && num_curr < out_pre_spaces {
            // From the first '0' on, positions without digits print zeros.
            out.push(b'0');
        } else if let Some(&d) = digits.next() {
            out.push(d);
        }
    }
    Ok(String::from_utf8(out).expect("to_char writes ASCII only"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from PostgreSQL 15.18 (x86-64): `SELECT hashint4extended(0, 0), …`,
    // bigint results read as u64.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn hash_functions_match_postgres_vectors() {
        assert_eq!(hashint4extended(0, 0) as i64, 4154612158245552303);
        assert_eq!(hashint4extended(1, 0) as i64, -3670598878359251130);
        assert_eq!(hashint4extended(-1, 8816678312871386365) as i64, -5017072347659237694);
        assert_eq!(hashint8extended(5_000_000_000, 42) as i64, 6876896016766404142);
        assert_eq!(hashint8extended(-5_000_000_000, 0) as i64, 6327884766802921082);
        assert_eq!(hashint2extended(-7, 3) as i64, -3061289239652332668);
        assert_eq!(hashtextextended("", 0) as i64, -6939563903564495251);
        assert_eq!(hashtextextended("abc", 0) as i64, -6747756470228489321);
        assert_eq!(hashtextextended("hello world, twelve+", 8816678312871386365) as i64, 755260594366283619);
        assert_eq!(hashtextextended("abcdefghijkl", 1) as i64, -6429754808531195817);
        assert_eq!(hashtextextended("abcdefghijkl", 0) as i64, -7556637188122330412);
        assert_eq!(hashtextextended("abcdefghijklmnopqrstuvw", 0) as i64, -1198571854151947912);
        assert_eq!(hashtextextended("é", 0) as i64, -763932721387459829);
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn int_hashes_agree_across_widths() {
        for v in [0i32, 1, -1, 12345, -98765, i32::MAX, i32::MIN] {
            assert_eq!(hashint4extended(v, HASH_PARTITION_SEED), hashint8extended(v as i64, HASH_PARTITION_SEED));
        }
        for v in [0i16, 7, -7, i16::MAX, i16::MIN] {
            assert_eq!(hashint2extended(v, 9), hashint4extended(v as i32, 9));
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn hash_uint32_is_hash_bytes_of_the_word() {
        for (k, seed) in [(0u32, 0u64), (1, 0), (0xdead_beef, 77), (u32::MAX, HASH_PARTITION_SEED)] {
            assert_eq!(hash_uint32_extended(k, seed), hash_bytes_extended(&k.to_le_bytes(), seed));
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn numeric_hash_matches_postgres_vectors() {
        let h = |s: &str, seed: u64| hash_numeric_extended(&Numeric::parse(s).unwrap(), seed) as i64;
        assert_eq!(h("0", 5), 4);
        assert_eq!(h("1.5", 0), -8828336294488843818);
        assert_eq!(h("-1.5", 0), -8828336294488843818);
        assert_eq!(h("1.50", 0), -8828336294488843818);
        assert_eq!(h("0.001", 0), 219908382603017345);
        assert_eq!(h("12345678.9", 7), -1484598596060607659);
        assert_eq!(h("NaN", 3), 3);
        assert_eq!(h("Infinity", 1), 1);
        assert_eq!(h("0.001", 8816678312871386365), -3161032435659866578);
        assert_eq!(h("-123.0001", 8816678312871386365), 6487643501955454312);
        assert_eq!(h("1e20", 1), 90269248940323819);
        assert_eq!(h("100000000000000000000", 1), 90269248940323819);
        assert!(Numeric::parse("1.2.3").is_err());
        assert!(Numeric::parse("-NaN").is_err());
        assert!(Numeric::parse("").is_err());
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn null_keys_are_skipped() {
        assert_eq!(compute_partition_hash_value(&[KeyValue::Null]), 0);
        assert_eq!(hash_partition_index(&[KeyValue::Null, KeyValue::Null], 4), 0);
        assert_eq!(
            compute_partition_hash_value(&[KeyValue::Null, KeyValue::Int4(5)]),
            compute_partition_hash_value(&[KeyValue::Int4(5)])
        );
        assert_eq!(
            compute_partition_hash_value(&[KeyValue::Int4(5), KeyValue::Text("x")]),
            hash_combine64(
                hash_combine64(0, hashint4extended(5, HASH_PARTITION_SEED)),
                hashtextextended("x", HASH_PARTITION_SEED)
            )
        );
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn find_hash_partition_uses_each_bound() {
        let keys = [KeyValue::Int4(42)];
        let r4 = hash_partition_index(&keys, 4);
        let bounds: Vec<(u64, u64)> = (0..4).map(|r| (4, r)).collect();
        assert_eq!(find_hash_partition(&keys, &bounds), Some(r4 as usize));
        // Mixed moduli: 2 divides 4.
        let mixed = [(2, r4 % 2), (4, (r4 + 1) % 4)];
        assert_eq!(find_hash_partition(&keys, &mixed), Some(0));
        assert!(satisfies_hash_partition(&keys, 4, r4));
        assert!(!satisfies_hash_partition(&keys, 4, (r4 + 1) % 4));
        assert_eq!(find_hash_partition(&keys, &[(4, (r4 + 1) % 4)]), None);
    }

    // `SELECT setseed(s); SELECT random() FROM generate_series(1, 5)` on PostgreSQL 15.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn random_matches_postgres_sequences() {
        let mut r = PgRandom::new();
        r.setseed(0.5).unwrap();
        let got: Vec<String> = (0..5).map(|_| float8_out(r.random())).collect();
        assert_eq!(
            got,
            [
                "0.9851677175347999",
                "0.825301858027981",
                "0.12974610012450416",
                "0.16356291958601088",
                "0.6476186144084"
            ]
        );
        r.setseed(-0.25).unwrap();
        let got: Vec<String> = (0..3).map(|_| float8_out(r.random())).collect();
        assert_eq!(got, ["0.5553213340039351", "0.25148985326005135", "0.7088686957046861"]);
        let mut fresh = PgRandom::default();
        let got: Vec<String> = (0..3).map(|_| float8_out(fresh.random())).collect();
        assert_eq!(got, ["0.8702553105818676", "0.426569726107606", "0.6684808914837377"], "new() is setseed(0)");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn setseed_range_errors_print_like_postgres() {
        let mut r = PgRandom::new();
        let before = r.clone();
        let msg = |r: &mut PgRandom, v: f64| r.setseed(v).unwrap_err();
        assert_eq!(msg(&mut r, 2.0), "setseed parameter 2 is out of allowed range [-1,1]");
        assert_eq!(msg(&mut r, f64::NAN), "setseed parameter NaN is out of allowed range [-1,1]");
        assert_eq!(msg(&mut r, 1.0000001), "setseed parameter 1 is out of allowed range [-1,1]");
        assert_eq!(msg(&mut r, -1e10), "setseed parameter -1e+10 is out of allowed range [-1,1]");
        assert_eq!(msg(&mut r, f64::NEG_INFINITY), "setseed parameter -Infinity is out of allowed range [-1,1]");
        assert_eq!(msg(&mut r, 1234567.0), "setseed parameter 1.23457e+06 is out of allowed range [-1,1]");
        assert_eq!(r, before, "a refused seed leaves the state alone");
        assert!(r.setseed(1.0).is_ok() && r.setseed(-1.0).is_ok());
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn float8_out_matches_postgres() {
        for (v, want) in [
            (1e-5, "1e-05"),
            (1.2345e16, "1.2345e+16"),
            (1e15, "1e+15"),
            (123456789012345.0, "123456789012345"),
            (-0.0, "-0"),
            (0.0, "0"),
            (5e-324, "5e-324"),
            (0.1, "0.1"),
            (1234567890123455.0, "1.234567890123455e+15"),
            (1e22, "1e+22"),
            (0.0001, "0.0001"),
            (100.0, "100"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (-2.5, "-2.5"),
            (1e23, "9.999999999999999e+22"),
            (9007199254740992.0, "9.007199254740992e+15"),
            (1e-320, "1e-320"),
            // 235866910055489.125: exactly between …489.12 and …489.13.
            (1_886_935_280_443_913.0 / 8.0, "235866910055489.12"),
        ] {
            assert_eq!(float8_out(v), want, "{v:e}");
        }
    }

    /// The exact open-interval search against Rust's formatter: the same digits but
    /// where Rust's sit exactly on an end of the interval (even significands only; ours
    /// are longer) or on an exact tie (Rust rounds up, we to even); always the same
    /// double when read back.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn open_interval_search_agrees_with_rust_shortest() {
        let mut g = PgRandom::new();
        g.setseed(0.3).unwrap();
        let mut differing = 0;
        for i in 0..20_000u32 {
            let mut bits = g.next_u64();
            if i % 4 == 0 {
                // Powers of two: the narrow gap below.
                bits &= !((1 << 52) - 1);
            }
            let v = f64::from_bits(bits).abs();
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            let bits = v.to_bits();
            let biased = (bits >> 52) as i32;
            let frac = bits & ((1 << 52) - 1);
            let (m, e) = if biased == 0 { (frac, -1074) } else { (frac | (1 << 52), biased - 1075) };
            let ours = shortest_open_interval(m, e, frac == 0 && biased > 1);
            let rust = split_exp(&format!("{v:e}"));
            if ours != rust {
                let tie = ours.0.len() == rust.0.len() && ours.1 == rust.1 && {
                    let (o, r) = (ours.0.as_bytes(), rust.0.as_bytes());
                    let n = o.len() - 1;
                    o[..n] == r[..n] && o[n] % 2 == 0 && r[n] == o[n] + 1
                };
                let on_end = m & 1 == 0 && ours.0.len() > rust.0.len();
                assert!(tie || on_end, "{v:e}: ours {ours:?}, Rust {rust:?}");
                differing += 1;
            }
            let text = format!("{}.{}e{}", &ours.0[..1], &ours.0[1..], ours.1);
            assert_eq!(text.parse::<f64>().unwrap(), v, "{v:e} printed as {text}");
        }
        assert!(differing < 100, "{differing} values differ from Rust's shortest digits");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn float8_numeric_matches_postgres() {
        for (v, want) in [
            (1e-5, "0.00001"),
            (1.2345e16, "12345000000000000"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (1234567890123455.0, "1234567890123460"),
            (1e22, "10000000000000000000000"),
            (100.0, "100"),
            (0.9851677175347999, "0.9851677175348"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(float8_numeric(v), want, "{v:e}");
        }
        // 4.94065645841247e-324 written out: the 4 is the 324th fraction digit.
        assert_eq!(float8_numeric(5e-324), format!("0.{}494065645841247", "0".repeat(323)));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn float_to_int_casts_round_half_even_and_check_range() {
        assert_eq!(dtoi4(2.5), Ok(2));
        assert_eq!(dtoi4(3.5), Ok(4));
        assert_eq!(dtoi4(-2.5), Ok(-2));
        assert_eq!(dtoi4(98.49999), Ok(98));
        assert_eq!(dtoi4(2147483647.4), Ok(i32::MAX));
        assert_eq!(dtoi4(-2147483648.4), Ok(i32::MIN));
        assert_eq!(dtoi4(2147483647.5), Err("integer out of range".to_string()));
        assert_eq!(dtoi4(f64::NAN), Err("integer out of range".to_string()));
        assert_eq!(dtoi2(32767.5), Err("smallint out of range".to_string()));
        assert_eq!(dtoi2(-32768.5), Ok(i16::MIN));
        assert_eq!(dtoi8(9.3e18), Err("bigint out of range".to_string()));
        assert_eq!(dtoi8(-9223372036854775808.0), Ok(i64::MIN));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn to_char_matches_postgres() {
        for (v, f, want) in [
            (5, "00000", " 00005"),
            (-5, "FM00000", "-00005"),
            (5, "99999", "     5"),
            (5, "9909", "   05"),
            (123456, "00000", " #####"),
            (-123456, "FM00000", "-#####"),
            (0, "999", "   0"),
            (0, "FM999", "0"),
            (5, "fm000", "005"),
            (42, "FM00000", "00042"),
            (5, "", ""),
        ] {
            assert_eq!(to_char_int(v, f).unwrap(), want, "to_char({v}, '{f}')");
        }
        let e = to_char_int(5, "FM0.00").unwrap_err();
        assert_eq!(e.pattern, ".");
        assert!(e.to_string().contains("\".\""), "{e}");
        assert_eq!(to_char_int(5, "Fm000").unwrap_err().pattern, "F");
    }
}
