//! Kubernetes resource quantities ("100m", "1.5Gi", "2e3") parsed exactly.
//!
//! A quantity is held as an integer number of nano-units, which represents
//! every suffix Kubernetes accepts without rounding; conversions to
//! kube-scheduler's integer units round up, as `Quantity.MilliValue()` and
//! `Quantity.Value()` do.

use std::fmt;

const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// An exact resource quantity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity {
    nanos: i128,
}

/// Why a string is not a quantity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantityError {
    pub input: String,
    pub why: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity {:?}: {}", self.input, self.why)
    }
}

impl std::error::Error for QuantityError {}

impl Quantity {
    pub const ZERO: Quantity = Quantity { nanos: 0 };

    /// A whole number of units (cores, bytes, pods...).
    pub const fn from_units(units: i64) -> Quantity {
        Quantity {
            nanos: units as i128 * NANOS_PER_UNIT,
        }
    }

    /// Thousandths of a unit (millicores).
    pub const fn from_milli(milli: i64) -> Quantity {
        Quantity {
            nanos: milli as i128 * 1_000_000,
        }
    }

    /// Parses Kubernetes' quantity syntax: a signed decimal number, then a
    /// binary suffix (Ki..Ei), a decimal suffix (n, u, m, k, M..E) or an
    /// exponent (e3, E-2).
    pub fn parse(input: &str) -> Result<Quantity, QuantityError> {
        let err = |why| QuantityError {
            input: input.to_string(),
            why,
        };
        let s = input.trim();
        if s.is_empty() {
            return Err(err("empty"));
        }
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = match number.split_once('.') {
            Some((w, f)) => (w, f),
            None => (number, ""),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(err("no digits"));
        }
        if fraction.contains('.') {
            return Err(err("more than one decimal point"));
        }
        // mantissa = digits without the point; value = mantissa * 10^-fraction.len()
        let mut mantissa: i128 = 0;
        for c in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(c - b'0')))
                .ok_or_else(|| err("too many digits"))?;
        }
        let mut exp10: i32 = -(fraction.len() as i32) + 9; // to nanos
        let mut binary_shift: u32 = 0;
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => binary_shift = 10,
            "Mi" => binary_shift = 20,
            "Gi" => binary_shift = 30,
            "Ti" => binary_shift = 40,
            "Pi" => binary_shift = 50,
            "Ei" => binary_shift = 60,
            _ if suffix.starts_with(['e', 'E']) => {
                let e: i32 = suffix[1..]
                    .parse()
                    .map_err(|_| err("bad exponent or unknown suffix"))?;
                if !(-40..=40).contains(&e) {
                    return Err(err("exponent out of range"));
                }
                exp10 += e;
            }
            _ => return Err(err("unknown suffix")),
        }
        let too_large = || err("too large");
        let mut nanos = mantissa
            .checked_mul(1i128 << binary_shift)
            .ok_or_else(too_large)?;
        if exp10 >= 0 {
            nanos = nanos
                .checked_mul(10i128.checked_pow(exp10 as u32).ok_or_else(too_large)?)
                .ok_or_else(too_large)?;
        } else {
            // Precision below a nano-unit rounds up, as Kubernetes does.
            let divisor = 10i128.checked_pow((-exp10) as u32);
            nanos = match divisor {
                Some(d) => ceil_div(nanos, d),
                None => i128::from(nanos > 0),
            };
        }
        Ok(Quantity {
            nanos: if negative { -nanos } else { nanos },
        })
    }

    /// Value in thousandths, rounded up (kube-scheduler's MilliCPU).
    pub fn milli_value(self) -> i64 {
        saturate(ceil_div(self.nanos, 1_000_000))
    }

    /// Value in whole units, rounded up (bytes, pods, extended resources).
    pub fn value(self) -> i64 {
        saturate(ceil_div(self.nanos, NANOS_PER_UNIT))
    }

    pub fn is_zero(self) -> bool {
        self.nanos == 0
    }

    pub fn saturating_add(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_add(other.nanos),
        }
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

fn saturate(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn cpu_forms() {
        assert_eq!(q("100m").milli_value(), 100);
        assert_eq!(q("1").milli_value(), 1000);
        assert_eq!(q("1.5").milli_value(), 1500);
        assert_eq!(q(".5").milli_value(), 500);
        assert_eq!(q("2.").milli_value(), 2000);
        assert_eq!(q("+3").milli_value(), 3000);
        // Sub-milli precision rounds up, like MilliValue().
        assert_eq!(q("0.0001").milli_value(), 1);
        assert_eq!(q("1u").milli_value(), 1);
        assert_eq!(q("500000n").milli_value(), 1);
    }

    #[test]
    fn memory_forms() {
        assert_eq!(q("1Ki").value(), 1024);
        assert_eq!(q("1.5Gi").value(), 1_610_612_736);
        assert_eq!(q("128974848").value(), 128_974_848);
        assert_eq!(q("129e6").value(), 129_000_000);
        assert_eq!(q("129M").value(), 129_000_000);
        assert_eq!(q("123Mi").value(), 128_974_848);
        assert_eq!(q("1E").value(), 1_000_000_000_000_000_000);
        assert_eq!(q("1e-3").milli_value(), 1);
        assert_eq!(q("0.5").value(), 1, "Value() rounds up");
    }

    #[test]
    fn negative_rounds_toward_positive_infinity() {
        assert_eq!(q("-1.5").value(), -1);
        assert_eq!(q("-100m").milli_value(), -100);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1Qi", "1.2.3", "--1", "1e", "1ee3", ".", "1 Gi"] {
            assert!(Quantity::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn ordering_is_exact() {
        assert!(q("1Gi") > q("1G"));
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("1k"), q("1000"));
    }
}
