//! PostgreSQL's exact decimal `numeric` (`src/backend/utils/adt/numeric.c`), over an
//! `i128` mantissa: what a numeric column holds, what `sum` and `avg` return, what
//! numeric arithmetic computes, on the coordinator and in the simulated shards alike.
//!
//! Protocol: a value is `mant × 10^-exp`, shown with `dscale` digits after the point
//! (PostgreSQL's display scale). Each operation computes its exact result and the
//! display scale PostgreSQL gives it:
//!
//! | operation | result's display scale | PostgreSQL |
//! |---|---|---|
//! | `+` `-` | the larger of the two | `add_var`, `sub_var` |
//! | `*` | the sum of the two, exact | `mul_var` from `numeric_mul` |
//! | `/` | [`select_div_scale`]: at least 16 significant digits, at least either input's scale; rounded half away from zero | `div_var` from `numeric_div` |
//! | `%` | the larger of the two; `x - trunc(x/y)*y` | `mod_var` |
//! | round to an integer | 0, half away from zero | `numericvar_to_int64` |
//!
//! Invariants:
//! - `exp <= dscale`: no digit beyond the display scale is ever stored, as
//!   PostgreSQL rounds every result to its scale; `mant` has no trailing zero (zero is
//!   `0 × 10^0`), so equal values have equal `mant` and `exp`; `==` compares values
//!   (1.10 = 1.1), not display scales, as `numeric_eq` does.
//! - `|mant| < 10^38` ([`MAX_DIGITS`] significant digits). A result that would need
//!   more is an error naming that limit ([`NumericError::TooManyDigits`]), never a
//!   rounded or wrapped value: every value this type accepts is exact.
//! - NaN and ±Infinity exist as in PostgreSQL 14+: NaN equals NaN and sorts above
//!   everything, arithmetic with NaN gives NaN, `Inf - Inf` and `Inf * 0` give NaN.
//!
//! Why our own type and not a crate: `rust_decimal` holds 28 digits and divides to 28
//! digits, not to `select_div_scale`'s scale, and `bigdecimal` brings a bignum crate;
//! either would still need PostgreSQL's scale rules written around it (neither was
//! measured in the page's module; this file with its callers costs about 8 KB gzipped).
//!
//! Departs from PostgreSQL: the 38-digit limit (PostgreSQL keeps up to 131072 digits
//! before the point and 16383 after); `exp` may be negative (1e30 is `1 × 10^30`) so
//! large round numbers stay small. Base 10 here where PostgreSQL computes in base
//! 10000 (NBASE); the results are the same, the division scale reads base-10000
//! digits from ours ([`Numeric::nbase_lead`]).

use std::cmp::Ordering;
use std::fmt;

/// Significant digits a value may have (`|mant| < 10^38`).
pub const MAX_DIGITS: u32 = 38;
/// `NUMERIC_MIN_SIG_DIGITS`: a quotient's significant digits, at least.
const MIN_SIG_DIGITS: i32 = 16;
/// `NUMERIC_MAX_DISPLAY_SCALE`: a quotient's scale, at most.
const MAX_DISPLAY_SCALE: i32 = 1000;
/// `NUMERIC_DSCALE_MAX`: the largest display scale a value may carry.
const DSCALE_MAX: i32 = 0x3FFF;
/// `numeric_in` refuses exponents beyond this (`NUMERIC_MAX_PRECISION`).
const MAX_EXPONENT: i32 = 1000;
/// `(NUMERIC_WEIGHT_MAX + 1) * DEC_DIGITS`: the most digits before the point.
const MAX_INTEGER_DIGITS: i64 = 131072;
const LIMIT: u128 = 10u128.pow(MAX_DIGITS);

/// One numeric value.
#[derive(Clone, Debug)]
pub enum Numeric {
    Finite { mant: i128, exp: i32, dscale: u16 },
    NaN,
    PosInf,
    NegInf,
}

/// Why an operation has no numeric result (PostgreSQL's message in `Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumericError {
    DivisionByZero,
    /// The exact result needs more than [`MAX_DIGITS`] significant digits.
    TooManyDigits,
    /// A display scale past `NUMERIC_DSCALE_MAX`, or more than 131072 digits before
    /// the point ("value overflows numeric format").
    Overflow,
    InvalidInput(String),
    /// NaN or Infinity (named) where an integer is needed (`cannot convert NaN to
    /// bigint`; the caller names another target type).
    NotFinite(&'static str),
}

impl fmt::Display for NumericError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumericError::DivisionByZero => write!(f, "division by zero"),
            // MAX_DIGITS, spelled out: a literal costs the page's module less.
            NumericError::TooManyDigits => {
                f.write_str("not supported by the sandbox: a numeric value of more than 38 significant digits")
            }
            NumericError::Overflow => f.write_str("value overflows numeric format"),
            NumericError::InvalidInput(s) => write!(f, "invalid input syntax for type numeric: \"{s}\""),
            NumericError::NotFinite(what) => write!(f, "cannot convert {what} to bigint"),
        }
    }
}

type R = Result<Numeric, NumericError>;

/// `numeric_in`'s complaint about `text` (one function: the page's module is small).
#[cold]
#[inline(never)]
fn invalid(text: &str) -> NumericError {
    NumericError::InvalidInput(text.to_string())
}

/// `10^n`, None past 10^38 (the largest power a `u128` holds). One loop rather than
/// `pow` inlined at every call keeps the page's module small.
#[inline(never)]
fn pow10(n: u32) -> Option<u128> {
    if n > MAX_DIGITS {
        return None;
    }
    let mut p = 1u128;
    for _ in 0..n {
        p *= 10;
    }
    Some(p)
}

/// Decimal digits of a magnitude (0 has none).
fn digits_of(m: u128) -> u32 {
    let mut n = 0;
    while n <= MAX_DIGITS && pow10(n).is_some_and(|p| p <= m) {
        n += 1;
    }
    n
}

/// A magnitude times `10^n`, None past [`LIMIT`].
fn scale_up(m: u128, n: u32) -> Option<u128> {
    pow10(n).and_then(|p| m.checked_mul(p)).filter(|&v| v < LIMIT)
}

/// `m / 10^n` rounded half away from zero (`round_var` on a magnitude).
fn shift_right_round(m: u128, n: u32) -> u128 {
    if n == 0 {
        return m;
    }
    match pow10(n) {
        Some(p) => {
            let (q, r) = (m / p, m % p);
            // r >= p/2, written so that it cannot overflow.
            if r >= p - r {
                q + 1
            } else {
                q
            }
        }
        // 10^n > every magnitude: m < 10^38 <= 10^n / 2 rounds to zero.
        None => 0,
    }
}

impl Numeric {
    pub const ZERO: Numeric = Numeric::Finite { mant: 0, exp: 0, dscale: 0 };

    /// A finite value from a signed magnitude, normalized (trailing zeros moved into
    /// `exp`), checked against the digit limit and `NUMERIC_DSCALE_MAX`.
    fn make(neg: bool, mag: u128, exp: i32, dscale: i32) -> R {
        if dscale > DSCALE_MAX {
            return Err(NumericError::Overflow);
        }
        let (mut m, mut e) = (mag, exp);
        if m == 0 {
            e = 0;
        }
        while m != 0 && m % 10 == 0 {
            m /= 10;
            e -= 1;
        }
        if m >= LIMIT {
            return Err(NumericError::TooManyDigits);
        }
        // `make_result`'s weight check: at most NUMERIC_WEIGHT_MAX + 1 = 32768 base-10000
        // digits (131072 decimal digits) before the point.
        if digits_of(m) as i64 - e as i64 > MAX_INTEGER_DIGITS {
            return Err(NumericError::Overflow);
        }
        let mant = if neg { -(m as i128) } else { m as i128 };
        Ok(Numeric::Finite { mant, exp: e, dscale: dscale.max(0) as u16 })
    }

    /// `int64_to_numeric`.
    pub fn from_i64(v: i64) -> Numeric {
        Numeric::make(v < 0, v.unsigned_abs() as u128, 0, 0).expect("an int64 has 19 digits")
    }

    /// An exact integer (a sum of int8s past int8's range).
    pub fn from_i128(v: i128) -> R {
        Numeric::make(v < 0, v.unsigned_abs(), 0, 0)
    }

    /// `float8_numeric`: the value printed with 15 significant digits (`DBL_DIG`,
    /// `%.15g`: trailing zeros dropped) and read back, so 0.1 becomes exactly 0.1.
    pub fn from_f64(v: f64) -> R {
        if v.is_nan() {
            return Ok(Numeric::NaN);
        }
        if v.is_infinite() {
            return Ok(Numeric::inf(v > 0.0));
        }
        // Rust's `{:.14e}` rounds as glibc's `%.15g` does; `%g` drops trailing zeros,
        // so the display scale is the digits after the point the exact value needs.
        match Numeric::parse(&format!("{v:.14e}"))? {
            Numeric::Finite { mant, exp, .. } => Ok(Numeric::Finite { mant, exp, dscale: exp.max(0) as u16 }),
            other => Ok(other),
        }
    }

    /// `numeric_in`: spaces around, a sign, digits with an optional point, an optional
    /// exponent; `NaN`, `Infinity`, `inf` in any case. The display scale is the digits
    /// written after the point less the exponent (`1.50` has 2, `1e3` has 0).
    pub fn parse(text: &str) -> R {
        let s = text.trim_ascii();
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case("nan") && body.len() == s.len() {
            return Ok(Numeric::NaN);
        }
        if body.eq_ignore_ascii_case("infinity") || body.eq_ignore_ascii_case("inf") {
            return Ok(Numeric::inf(!neg));
        }
        // Digits accumulate into `mag`; zeros after a nonzero digit wait in `zeros`
        // until a nonzero digit follows, so trailing zeros never count as digits.
        let (mut mag, mut zeros, mut frac, mut digits) = (0u128, 0u32, 0i32, 0);
        let (mut point, mut exponent, mut in_exponent) = (false, None::<i32>, false);
        let tail = |i: usize| body.get(i..).unwrap_or("");
        for (i, c) in body.bytes().enumerate() {
            match c {
                b'0'..=b'9' => {
                    digits += 1;
                    frac += point as i32;
                    if c == b'0' {
                        zeros += (mag != 0) as u32;
                        continue;
                    }
                    for _ in 0..=zeros {
                        // A digit still follows: the digits fit only below 10^37 now.
                        if mag >= LIMIT / 10 {
                            return Err(NumericError::TooManyDigits);
                        }
                        mag *= 10;
                    }
                    mag += (c - b'0') as u128;
                    zeros = 0;
                }
                b'.' if !point => point = true,
                b'e' | b'E' => {
                    let e: Option<i64> = tail(i + 1).parse().ok();
                    exponent = e.filter(|e| e.abs() <= MAX_EXPONENT as i64).map(|e| e as i32);
                    in_exponent = true;
                    break;
                }
                _ => return Err(invalid(text)),
            }
        }
        let exponent = match (in_exponent, exponent) {
            (false, _) => 0,
            (true, Some(e)) => e,
            (true, None) => return Err(invalid(text)),
        };
        if digits == 0 {
            return Err(invalid(text));
        }
        Numeric::make(neg, mag, frac - exponent - zeros as i32, frac - exponent)
    }

    pub fn is_nan(&self) -> bool {
        matches!(self, Numeric::NaN)
    }

    /// -1, 0 or 1; NaN has none.
    fn sign(&self) -> Option<i32> {
        match self {
            Numeric::Finite { mant, .. } => Some(mant.signum() as i32),
            Numeric::PosInf => Some(1),
            Numeric::NegInf => Some(-1),
            Numeric::NaN => None,
        }
    }

    fn inf(positive: bool) -> Numeric {
        if positive {
            Numeric::PosInf
        } else {
            Numeric::NegInf
        }
    }

    /// The display scale (0 for the special values).
    pub fn dscale(&self) -> i32 {
        match self {
            Numeric::Finite { dscale, .. } => *dscale as i32,
            _ => 0,
        }
    }

    /// Two finite values with the same exponent (the larger), magnitudes signed, each
    /// within the digit limit.
    fn align(a: (i128, i32), b: (i128, i32)) -> Result<(i128, i128, i32), NumericError> {
        let e = a.1.max(b.1);
        let up = |(m, x): (i128, i32)| match scale_up(m.unsigned_abs(), (e - x) as u32) {
            Some(v) if m < 0 => Ok(-(v as i128)),
            Some(v) => Ok(v as i128),
            None => Err(NumericError::TooManyDigits),
        };
        Ok((up(a)?, up(b)?, e))
    }

    /// `add_var`: the exact sum, the larger display scale.
    pub fn add(&self, other: &Numeric) -> R {
        use Numeric::*;
        match (self, other) {
            (Finite { mant: m1, exp: e1, dscale: d1 }, Finite { mant: m2, exp: e2, dscale: d2 }) => {
                let (a, b, e) = Numeric::align((*m1, *e1), (*m2, *e2))?;
                let s = a.checked_add(b).ok_or(NumericError::TooManyDigits)?;
                Numeric::make(s < 0, s.unsigned_abs(), e, (*d1).max(*d2) as i32)
            }
            (NaN, _) | (_, NaN) | (PosInf, NegInf) | (NegInf, PosInf) => Ok(NaN),
            (PosInf | NegInf, _) => Ok(self.clone()),
            (_, _) => Ok(other.clone()),
        }
    }

    /// `numeric_uminus`.
    pub fn neg(&self) -> Numeric {
        match self {
            Numeric::Finite { mant, exp, dscale } => Numeric::Finite { mant: -mant, exp: *exp, dscale: *dscale },
            Numeric::PosInf => Numeric::NegInf,
            Numeric::NegInf => Numeric::PosInf,
            Numeric::NaN => Numeric::NaN,
        }
    }

    /// `numeric_abs`.
    pub fn abs(&self) -> Numeric {
        match self.sign() {
            Some(-1) => self.neg(),
            _ => self.clone(),
        }
    }

    /// `sub_var`.
    pub fn sub(&self, other: &Numeric) -> R {
        self.add(&other.neg())
    }

    /// `mul_var` as `numeric_mul` calls it: exact, the display scales added.
    pub fn mul(&self, other: &Numeric) -> R {
        use Numeric::*;
        match (self, other) {
            (Finite { mant: m1, exp: e1, dscale: d1 }, Finite { mant: m2, exp: e2, dscale: d2 }) => {
                let p = m1.unsigned_abs().checked_mul(m2.unsigned_abs()).ok_or(NumericError::TooManyDigits)?;
                Numeric::make((*m1 < 0) != (*m2 < 0), p, e1 + e2, *d1 as i32 + *d2 as i32)
            }
            (NaN, _) | (_, NaN) => Ok(NaN),
            _ => match self.sign().unwrap_or(0) * other.sign().unwrap_or(0) {
                0 => Ok(NaN),
                s => Ok(Numeric::inf(s > 0)),
            },
        }
    }

    /// The weight and the value of the first nonzero base-10000 digit (NBASE), as
    /// `select_div_scale` reads them; (0, 0) for zero.
    fn nbase_lead(mant: i128, exp: i32) -> (i32, u128) {
        let m = mant.unsigned_abs();
        if m == 0 {
            return (0, 0);
        }
        // The decimal exponent of the leading digit, then the base-10000 group it is in.
        let lead = digits_of(m) as i32 - 1 - exp;
        let weight = lead.div_euclid(4);
        let shift = exp + 4 * weight; // divide m by 10^shift to keep that group and above
        let first = match pow10(shift.unsigned_abs()) {
            Some(p) if shift >= 0 => m / p,
            Some(p) => m * p,
            None => 0,
        };
        (weight, first)
    }

    /// `numeric_div`: NaN and Infinity as PostgreSQL 14+, division by a zero an
    /// error, else the quotient at [`select_div_scale`], rounded half away from zero.
    pub fn div(&self, other: &Numeric) -> R {
        use Numeric::*;
        match (self, other) {
            (NaN, _) | (_, NaN) => Ok(NaN),
            (Finite { mant: m1, exp: e1, dscale: d1 }, Finite { mant: m2, exp: e2, dscale: d2 }) => {
                if *m2 == 0 {
                    return Err(NumericError::DivisionByZero);
                }
                let rscale = select_div_scale((*m1, *e1, *d1), (*m2, *e2, *d2));
                div_round(*m1, *e1, *m2, *e2, rscale)
            }
            (PosInf | NegInf, Finite { .. }) => match other.sign() {
                Some(0) => Err(NumericError::DivisionByZero),
                s => Ok(Numeric::inf(self.sign() == s)),
            },
            (PosInf | NegInf, _) => Ok(NaN),
            (Finite { .. }, _) => Ok(Numeric::ZERO),
        }
    }

    /// `numeric_mod` (`mod_var`): `x - trunc(x/y)*y`, the sign of `x`, the larger scale.
    pub fn rem(&self, other: &Numeric) -> R {
        use Numeric::*;
        match (self, other) {
            (NaN, _) | (_, NaN) => Ok(NaN),
            (Finite { mant: m1, exp: e1, dscale: d1 }, Finite { mant: m2, exp: e2, dscale: d2 }) => {
                if *m2 == 0 {
                    return Err(NumericError::DivisionByZero);
                }
                let (a, b, e) = Numeric::align((*m1, *e1), (*m2, *e2))?;
                let r = a % b;
                Numeric::make(r < 0, r.unsigned_abs(), e, (*d1).max(*d2) as i32)
            }
            (PosInf | NegInf, _) if other.sign() == Some(0) => Err(NumericError::DivisionByZero),
            (PosInf | NegInf, _) => Ok(NaN),
            (Finite { .. }, _) => Ok(self.clone()),
        }
    }

    /// `numeric_round(x, scale)`: half away from zero at `scale` digits after the
    /// point (before it when negative); the display scale becomes `max(scale, 0)`.
    pub fn round(&self, scale: i32) -> R {
        self.to_scale(scale, true)
    }

    /// `numeric_trunc(x, scale)`: as [`Self::round`], towards zero.
    pub fn trunc(&self, scale: i32) -> R {
        self.to_scale(scale, false)
    }

    fn to_scale(&self, scale: i32, round: bool) -> R {
        let Numeric::Finite { mant, exp, .. } = self else { return Ok(self.clone()) };
        let scale = scale.clamp(-DSCALE_MAX, DSCALE_MAX);
        let m = mant.unsigned_abs();
        let (m, e) = if *exp > scale {
            let n = (*exp - scale) as u32;
            let q = if round { shift_right_round(m, n) } else { pow10(n).map_or(0, |p| m / p) };
            (q, scale)
        } else {
            (m, *exp)
        };
        Numeric::make(*mant < 0, m, e, scale)
    }

    /// `numericvar_to_int64`: rounded half away from zero; None past int8's range.
    /// NaN and Infinity are errors naming them.
    pub fn to_i64(&self) -> Result<Option<i64>, NumericError> {
        match self {
            Numeric::NaN => Err(NumericError::NotFinite("NaN")),
            Numeric::PosInf | Numeric::NegInf => Err(NumericError::NotFinite("infinity")),
            Numeric::Finite { mant, exp, .. } => {
                let m = mant.unsigned_abs();
                let m =
                    if *exp >= 0 { Some(shift_right_round(m, *exp as u32)) } else { scale_up(m, exp.unsigned_abs()) };
                // |i64::MIN| = 2^63 is an int8; anything larger is not.
                Ok(m.filter(|&m| m <= 1 << 63).and_then(|m| {
                    let v = if *mant < 0 { -(m as i128) } else { m as i128 };
                    i64::try_from(v).ok()
                }))
            }
        }
    }

    /// `numeric_float8`: the text form read as a float8 (correctly rounded).
    pub fn to_f64(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::PosInf => f64::INFINITY,
            Numeric::NegInf => f64::NEG_INFINITY,
            Numeric::Finite { mant, exp, .. } => {
                // An integer a double holds exactly converts without text.
                if *exp == 0 && mant.unsigned_abs() < 1 << 53 {
                    return *mant as i64 as f64;
                }
                self.to_string().parse().unwrap_or(f64::NAN)
            }
        }
    }

    /// `cmp_numerics`: -Infinity < finite values < Infinity < NaN, NaN equal to NaN.
    fn rank(&self) -> u8 {
        match self {
            Numeric::NegInf => 0,
            Numeric::Finite { .. } => 1,
            Numeric::PosInf => 2,
            Numeric::NaN => 3,
        }
    }
}

/// Compares two finite values without aligning past the digit limit: by sign, then by
/// the position of the leading digit, then digit by digit.
fn cmp_finite(m1: i128, e1: i32, m2: i128, e2: i32) -> Ordering {
    let (s1, s2) = (m1.signum(), m2.signum());
    if s1 != s2 || s1 == 0 {
        return s1.cmp(&s2);
    }
    let (a, b) = (m1.unsigned_abs(), m2.unsigned_abs());
    let lead = |m: u128, e: i32| digits_of(m) as i32 - e;
    let mag = lead(a, e1).cmp(&lead(b, e2)).then_with(|| {
        // Same leading position: shifting the one with fewer fraction digits up keeps
        // it within the digit count of the other, so no overflow.
        let e = e1.max(e2);
        let up = |m: u128, x: i32| pow10((e - x) as u32).map_or(u128::MAX, |p| m * p);
        up(a, e1).cmp(&up(b, e2))
    });
    if s1 < 0 {
        mag.reverse()
    } else {
        mag
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Numeric::Finite { mant: m1, exp: e1, .. }, Numeric::Finite { mant: m2, exp: e2, .. }) => {
                cmp_finite(*m1, *e1, *m2, *e2)
            }
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialEq for Numeric {
    /// By value, as `numeric_eq`: 1.10 equals 1.1 (the display scale is not compared).
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `select_div_scale`: enough scale for [`MIN_SIG_DIGITS`] significant digits in the
/// quotient (its weight estimated from the leading base-10000 digits, assuming the
/// dividend's is the smaller when they are equal), at least either input's display
/// scale, at most `NUMERIC_MAX_DISPLAY_SCALE`.
fn select_div_scale(a: (i128, i32, u16), b: (i128, i32, u16)) -> i32 {
    let (w1, f1) = Numeric::nbase_lead(a.0, a.1);
    let (w2, f2) = Numeric::nbase_lead(b.0, b.1);
    let qweight = w1 - w2 - (f1 <= f2) as i32;
    (MIN_SIG_DIGITS - qweight * 4).max(a.2 as i32).max(b.2 as i32).max(0).min(MAX_DISPLAY_SCALE)
}

/// One step of long division: `(10 * r) / b` and its remainder, for `r < b < 10^38`,
/// by ten additions when `10 * r` would not fit (every partial sum stays below `2b`).
fn next_digit(r: u128, b: u128) -> (u128, u128) {
    if r <= u128::MAX / 10 {
        let t = r * 10;
        return (t / b, t % b);
    }
    let (mut acc, mut d) = (0u128, 0u128);
    for _ in 0..10 {
        acc += r;
        if acc >= b {
            acc -= b;
            d += 1;
        }
    }
    (d, acc)
}

/// `div_var` with rounding: `(m1×10^-e1) / (m2×10^-e2)` at `rscale` digits after the
/// point, half away from zero, by long division over the magnitudes, so no
/// intermediate exceeds the digit limit. Digits known to be zero (the remainder is
/// zero) go into the exponent rather than the mantissa.
fn div_round(m1: i128, e1: i32, m2: i128, e2: i32, rscale: i32) -> R {
    let (a, b) = (m1.unsigned_abs(), m2.unsigned_abs());
    let neg = (m1 < 0) != (m2 < 0);
    // quotient × 10^rscale = (a / b) × 10^k
    let k = rscale + e2 - e1;
    let (mut q, mut r) = (a / b, a % b);
    let mut produced = 0;
    while produced < k.max(0) && r != 0 {
        let (d, rest) = next_digit(r, b);
        // q * 10 + d stays below 10^38 exactly when q is below 10^37.
        if q >= LIMIT / 10 {
            return Err(NumericError::TooManyDigits);
        }
        q = q * 10 + d;
        r = rest;
        produced += 1;
    }
    if k < 0 {
        // The quotient has more integer digits than the scale keeps: round them off
        // (the remainder only matters when the dropped digits are exactly half, and
        // then any remainder is above half, which the comparison already gives).
        let q = shift_right_round(q, (-k) as u32);
        return Numeric::make(neg, q, rscale, rscale);
    }
    // `r >= b - r` is the remainder at least half the divisor.
    let q = if produced == k && r != 0 && r >= b - r { q + 1 } else { q };
    Numeric::make(neg, q, rscale - (k - produced), rscale)
}

/// `numeric_out`: the sign, the integer digits (at least `0`), then `dscale` digits
/// after a point; `NaN`, `Infinity`, `-Infinity`.
impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mant, exp, dscale) = match self {
            Numeric::NaN => return f.write_str("NaN"),
            Numeric::PosInf => return f.write_str("Infinity"),
            Numeric::NegInf => return f.write_str("-Infinity"),
            Numeric::Finite { mant, exp, dscale } => (*mant, *exp, *dscale as i32),
        };
        // The digits from the highest position written (at least the units) down to
        // the last of the display scale: position p is the digit of 10^p.
        let m = mant.unsigned_abs();
        let low = -dscale;
        let high = (digits_of(m) as i32 - 1 - exp).max(0);
        let mut out = String::with_capacity((high - low + 3) as usize);
        if mant < 0 {
            out.push('-');
        }
        for p in (low..=high).rev() {
            if p == -1 {
                out.push('.');
            }
            // The digit of 10^p is digit (p + exp) of the mantissa.
            let d = match pow10((p + exp).max(0) as u32) {
                Some(q) if p + exp >= 0 => (m / q % 10) as u8,
                _ => 0,
            };
            out.push((b'0' + d) as char);
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).unwrap()
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn input_and_output_keep_the_display_scale() {
        for (input, out) in [
            ("1.50", "1.50"),
            ("1e3", "1000"),
            ("1.5e-3", "0.0015"),
            ("-0.00", "0.00"),
            (" 007.10 ", "7.10"),
            ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
            ("1e30", "1000000000000000000000000000000"),
            ("nan", "NaN"),
            ("-inf", "-Infinity"),
        ] {
            assert_eq!(n(input).to_string(), out, "{input}");
        }
        for bad in ["1.2.3", "1.2.", "1e", "e5", ".", "1x", "- 1", "1e1001"] {
            assert!(Numeric::parse(bad).is_err(), "{bad}");
        }
        assert!(Numeric::parse("-NaN").is_err());
        assert_eq!(Numeric::parse("123456789012345678901234567890123456789"), Err(NumericError::TooManyDigits));
        // numeric_in's weight limit: 131072 digits before the point, not one more.
        let digits = |n: usize| format!("1{}", "0".repeat(n - 1));
        assert!(Numeric::parse(&digits(131072)).is_ok());
        assert_eq!(Numeric::parse(&digits(131073)), Err(NumericError::Overflow));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn arithmetic_scales_follow_numeric_c() {
        let op = |a: &str, o: char, b: &str| {
            let (a, b) = (n(a), n(b));
            match o {
                '+' => a.add(&b),
                '-' => a.sub(&b),
                '*' => a.mul(&b),
                '/' => a.div(&b),
                _ => a.rem(&b),
            }
            .map(|v| v.to_string())
        };
        assert_eq!(op("1.5", '+', "2.25"), Ok("3.75".into()));
        assert_eq!(op("1.50", '-', "1.5"), Ok("0.00".into()));
        assert_eq!(op("1.5", '*', "2.0"), Ok("3.00".into()));
        assert_eq!(op("1", '/', "3"), Ok("0.33333333333333333333".into()));
        assert_eq!(op("2", '/', "3"), Ok("0.66666666666666666667".into()));
        assert_eq!(op("10", '/', "4"), Ok("2.5000000000000000".into()));
        assert_eq!(op("-7.5", '%', "2"), Ok("-1.5".into()));
        assert_eq!(op("1", '/', "0"), Err(NumericError::DivisionByZero));
        assert_eq!(op("inf", '-', "inf"), Ok("NaN".into()));
        assert_eq!(op("99999999999999999999", '*', "99999999999999999999"), Err(NumericError::TooManyDigits));
        assert_eq!(op("1e37", '*', "100"), Ok(format!("1{}", "0".repeat(39))));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn order_is_by_value() {
        assert_eq!(n("1.10").cmp(&n("1.1")), Ordering::Equal);
        assert!(n("-2") < n("-1.5") && n("1e30") > n("99.9") && n("NaN") > n("inf"));
        assert_eq!(n("2.5").to_i64(), Ok(Some(3)));
        assert_eq!(n("-2.5").to_i64(), Ok(Some(-3)));
        assert_eq!(n("0.1").to_f64(), 0.1);
    }
}
