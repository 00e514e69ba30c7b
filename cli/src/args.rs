//! A small `--flag value` parser: the CLI has a handful of flags, all of the same shape.

use std::collections::BTreeMap;

pub struct Args {
    values: BTreeMap<String, String>,
}

impl Args {
    /// Parses `--name value` pairs; `allowed` lists the accepted names.
    pub fn parse(args: &[String], allowed: &[&str]) -> Result<Args, String> {
        let mut values = BTreeMap::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let Some(name) = a.strip_prefix("--") else {
                return Err(format!("unexpected argument \"{a}\""));
            };
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
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
            values.insert(name, value);
        }
        Ok(Args { values })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn num<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| format!("--{name}: \"{v}\" is not a valid number")),
        }
    }

    pub fn choice<'a>(&'a self, name: &str, options: &[&'a str], default: &'a str) -> Result<&'a str, String> {
        let v = self.get(name).unwrap_or(default);
        if options.contains(&v) {
            Ok(v)
        } else {
            Err(format!("--{name}: \"{v}\" is not one of {}", options.join(", ")))
        }
    }
}
