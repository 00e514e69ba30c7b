//! A small `--flag value` parser: the CLI's flags are all of the same shape, except
//! the behaviour knobs, which are switches: `--fetch-ahead` alone means on, and
//! `--fetch-ahead=off` is explicit. Knob values are checked by `pgasync::knobs`.

use pgasync::knobs::{self, Kind, Source};
use std::collections::BTreeMap;

/// Whether `--name` is a switch (a behaviour knob), which needs no value.
fn is_switch(name: &str) -> bool {
    knobs::spec(Source::Cli, name).is_some_and(|s| s.kind == Kind::Switch)
}

pub struct Args {
    values: BTreeMap<String, String>,
}

impl Args {
    /// Parses `--name value` and `--name=value` pairs, and switches (`--fetch-ahead`,
    /// `--fetch-ahead=off`); `allowed` lists the accepted names. A flag given twice is
    /// an error.
    pub fn parse(args: &[String], allowed: &[&str]) -> Result<Args, String> {
        let mut values = BTreeMap::new();
        let mut it = args.iter();
        let mut last_switch: Option<&str> = None;
        while let Some(a) = it.next() {
            let Some(name) = a.strip_prefix("--") else {
                return Err(match last_switch {
                    Some(sw) => format!("unexpected argument \"{a}\" (a switch takes its value after =: --{sw}={a})"),
                    None => format!("unexpected argument \"{a}\""),
                });
            };
            last_switch = (!name.contains('=') && is_switch(name)).then_some(name);
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None if is_switch(name) => (name.to_string(), "on".to_string()),
                None => {
                    let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                    (name.to_string(), v.clone())
                }
            };
            if !allowed.contains(&name.as_str()) {
                return Err(format!(
                    "unknown option --{name} (accepted: {})",
                    allowed.iter().map(|a| format!("--{a}")).collect::<Vec<_>>().join(", ")
                ));
            }
            if values.contains_key(&name) {
                return Err(format!("--{name} is given twice"));
            }
            values.insert(name, value);
        }
        Ok(Args { values })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// A plain decimal integer (no sign, `0x`, exponent or spaces).
    pub fn num<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => knobs::parse_int(v)
                .ok()
                .and_then(|_| v.parse().ok())
                .map(Some)
                .ok_or_else(|| format!("--{name} {v}: not a decimal integer in range")),
        }
    }

    /// A plain decimal integer from `lo` to `hi`.
    pub fn int(&self, name: &str, lo: u64, hi: u64) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match knobs::parse_int(v) {
                Err(why) => Err(format!("--{name} {v}: {why}")),
                Ok(n) if n < lo || n > hi => Err(format!("--{name} {v}: out of range ({lo} to {hi})")),
                Ok(n) => Ok(Some(n)),
            },
        }
    }

    pub fn choice<'a>(&'a self, name: &str, options: &[&'a str], default: &'a str) -> Result<&'a str, String> {
        let v = self.get(name).unwrap_or(default);
        if options.contains(&v) {
            Ok(v)
        } else {
            Err(format!("--{name} {v}: not one of {}", options.join(", ")))
        }
    }
}
