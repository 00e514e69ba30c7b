//! `numeric(p, s)`: the type modifier of PostgreSQL 15's numeric (numeric.c's
//! `numerictypmodin`, `apply_typmod`, `apply_typmod_special`, and the length
//! coercion function `numeric(numeric, int4)` a cast such as `x::numeric(5,2)` calls).
//!
//! Protocol: [`NumericTypmod::new`] checks a declared precision and scale as
//! `numerictypmodin` does (its errors word for word); [`NumericTypmod::apply`] rounds a
//! value to the scale (half away from zero, `round_var`) and then checks that the
//! digits before the point fit in `precision - scale`, else PostgreSQL's "numeric field
//! overflow" with its DETAIL line.
//!
//! Invariants:
//! - `1 <= precision <= 1000`, `-1000 <= scale <= 1000` (PostgreSQL 15 allows a
//!   negative scale, and a scale above the precision);
//! - the check is made after rounding (rounding may add a digit: 99.95 is 100.0 at
//!   scale 1), on the value's true first digit, and zero always fits;
//! - NaN passes through; an infinity is refused ("cannot hold an infinite value");
//! - a negative scale rounds before the point and displays no decimals (`dscale` 0).

use std::fmt;

use crate::numeric::Numeric;

/// `NUMERIC_MAX_PRECISION`.
const MAX_PRECISION: i64 = 1000;
/// `NUMERIC_MIN_SCALE`, `NUMERIC_MAX_SCALE`.
const MIN_SCALE: i64 = -1000;
const MAX_SCALE: i64 = 1000;

/// A numeric type modifier: `numeric(precision, scale)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NumericTypmod {
    pub precision: i16,
    pub scale: i16,
}

/// A value that does not fit its type modifier (`ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldOverflow {
    pub typmod: NumericTypmod,
    /// An infinity, which no typmod holds (`apply_typmod_special`).
    pub infinite: bool,
}

impl fmt::Display for FieldOverflow {
    /// PostgreSQL's message and, as psql prints it, its DETAIL line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let NumericTypmod { precision, scale } = self.typmod;
        write!(f, "numeric field overflow\nDETAIL:  A field with precision {precision}, scale {scale} ")?;
        if self.infinite {
            return f.write_str("cannot hold an infinite value.");
        }
        // `maxdigits ? "10^" : ""`: 10^0 is written as 1.
        match precision - scale {
            0 => f.write_str("must round to an absolute value less than 1."),
            d => write!(f, "must round to an absolute value less than 10^{d}."),
        }
    }
}

impl NumericTypmod {
    /// `numerictypmodin`: `numeric(p)` is scale 0; out-of-range values are refused
    /// with PostgreSQL's messages.
    pub fn new(precision: i64, scale: Option<i64>) -> Result<NumericTypmod, String> {
        if !(1..=MAX_PRECISION).contains(&precision) {
            return Err(format!("NUMERIC precision {precision} must be between 1 and {MAX_PRECISION}"));
        }
        let scale = scale.unwrap_or(0);
        if !(MIN_SCALE..=MAX_SCALE).contains(&scale) {
            return Err(format!("NUMERIC scale {scale} must be between {MIN_SCALE} and {MAX_SCALE}"));
        }
        Ok(NumericTypmod { precision: precision as i16, scale: scale as i16 })
    }

    /// The type modifier a type name declares: `numeric(p[, s])` (also `decimal`,
    /// `dec`), None for any other type. sqlparser reads no negative scale, which
    /// PostgreSQL 15 allows: `numeric(3,-1)` is a syntax error here.
    pub fn of_data_type(t: &sqlparser::ast::DataType) -> Result<Option<NumericTypmod>, String> {
        use sqlparser::ast::DataType::{Dec, Decimal, Numeric as Num};
        use sqlparser::ast::ExactNumberInfo::{Precision, PrecisionAndScale};
        let (p, s) = match t {
            Num(Precision(p)) | Decimal(Precision(p)) | Dec(Precision(p)) => (*p, None),
            Num(PrecisionAndScale(p, s)) | Decimal(PrecisionAndScale(p, s)) | Dec(PrecisionAndScale(p, s)) => {
                (*p, Some(*s))
            }
            _ => return Ok(None),
        };
        let signed = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        NumericTypmod::new(signed(p), s.map(signed)).map(Some)
    }

    /// `apply_typmod`: the value rounded to the scale, if its digits fit.
    pub fn apply(self, v: &Numeric) -> Result<Numeric, FieldOverflow> {
        let overflow = |infinite| FieldOverflow { typmod: self, infinite };
        let rounded = match v {
            Numeric::NaN => return Ok(Numeric::NaN),
            Numeric::PosInf | Numeric::NegInf => return Err(overflow(true)),
            // Rounding only removes digits: it cannot fail on a finite value.
            Numeric::Finite { .. } => v.round(self.scale as i32).map_err(|_| overflow(false))?,
        };
        let Numeric::Finite { mant, exp, .. } = &rounded else { return Ok(rounded) };
        if *mant == 0 {
            return Ok(rounded);
        }
        // The value is mant × 10^-exp: its first digit is at position digits - exp
        // (1 for a value in [1, 10), 0 for [0.1, 1), …), PostgreSQL's `ddigits`.
        let first_digit = decimal_digits(mant.unsigned_abs()) as i32 - exp;
        if first_digit > (self.precision - self.scale) as i32 {
            return Err(overflow(false));
        }
        Ok(rounded)
    }

    /// The type's name as `format_type` writes it: `numeric(5,2)`.
    pub fn type_name(self) -> String {
        format!("numeric({},{})", self.precision, self.scale)
    }
}

/// Decimal digits of a nonzero magnitude.
fn decimal_digits(mut m: u128) -> u32 {
    let mut n = 0;
    while m > 0 {
        m /= 10;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(v: &str, p: i64, s: i64) -> Result<String, String> {
        let t = NumericTypmod::new(p, Some(s))?;
        t.apply(&Numeric::parse(v).unwrap()).map(|n| n.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn rounds_to_the_scale_and_keeps_it_as_display_scale() {
        assert_eq!(apply("123.456", 5, 2).unwrap(), "123.46");
        assert_eq!(apply("1.5", 3, 1).unwrap(), "1.5");
        assert_eq!(apply("2", 5, 2).unwrap(), "2.00");
        assert_eq!(apply("1.5", 3, 0).unwrap(), "2");
        assert_eq!(apply("-0.05", 2, 1).unwrap(), "-0.1");
        assert_eq!(apply("0.001", 3, 3).unwrap(), "0.001");
        assert_eq!(apply("0", 1, 0).unwrap(), "0");
        assert_eq!(apply("0.01", 5, 6).unwrap(), "0.010000");
        assert_eq!(apply("1234", 3, -1).unwrap(), "1230");
        assert_eq!(apply("0.5", 2, 2).unwrap(), "0.50");
    }

    #[test]
    fn digits_before_the_point_are_checked_after_rounding_with_postgres_detail() {
        let e = apply("1234.5", 4, 1).unwrap_err();
        assert_eq!(
            e,
            "numeric field overflow\nDETAIL:  A field with precision 4, scale 1 must round to an absolute value less \
             than 10^3."
        );
        // 99.95 rounds to 100.0: three digits where two fit.
        assert!(apply("99.95", 3, 1).unwrap_err().ends_with("less than 10^2."));
        assert!(apply("99.94", 3, 1).is_ok());
        assert!(apply("12345", 3, -1).unwrap_err().ends_with("less than 10^4."));
        assert!(apply("1", 5, 6).unwrap_err().ends_with("less than 10^-1."));
        assert!(apply("0.1", 5, 6).is_err());
        assert!(apply("1.5", 2, 2).unwrap_err().ends_with("less than 1."));
        assert!(apply("12344", 3, -1).unwrap_err().ends_with("less than 10^4."));
    }

    #[test]
    fn special_values_and_declarations() {
        let t = NumericTypmod::new(3, Some(1)).unwrap();
        assert!(t.apply(&Numeric::NaN).unwrap().is_nan());
        assert!(t.apply(&Numeric::PosInf).unwrap_err().to_string().ends_with("cannot hold an infinite value."));
        assert_eq!(NumericTypmod::new(1001, Some(0)).unwrap_err(), "NUMERIC precision 1001 must be between 1 and 1000");
        assert_eq!(NumericTypmod::new(0, None).unwrap_err(), "NUMERIC precision 0 must be between 1 and 1000");
        assert_eq!(
            NumericTypmod::new(5, Some(-1001)).unwrap_err(),
            "NUMERIC scale -1001 must be between -1000 and 1000"
        );
        assert_eq!(NumericTypmod::new(3, None).unwrap().type_name(), "numeric(3,0)");
    }
}
