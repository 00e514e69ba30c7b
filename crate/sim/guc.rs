//! Session settings (PostgreSQL's GUCs) of a simulated shard: the parameters a
//! coordinator sets (postgres_fdw's `search_path`, `timezone`, `datestyle`,
//! `intervalstyle`, `extra_float_digits`) and the ones PostgreSQL 15 reports to the
//! client in ParameterStatus messages, with PostgreSQL's names, defaults, value checks
//! and error messages. `SET name = value` and `SET name TO value` are parsed from the
//! statement's tokens (the SQL front end only says "a SET").
//!
//! Values are checked as PostgreSQL checks them and stored in its canonical form
//! (`SET datestyle = ISO` shows as `ISO, MDY`), but they change nothing else: the
//! shard's executor formats values one way. Names with a dot are custom placeholder
//! settings, accepted with any value, as in PostgreSQL. Departures: `SET LOCAL` acts
//! like `SET`; time zones are checked for plausible characters only; the only client
//! encoding is UTF8. PostgreSQL's counterpart is `src/backend/utils/misc/guc.c`
//! (`set_config_option`; `ReportChangedGUCOptions` for the reports).
//!
//! Invariants:
//! - A stored value is always valid and canonical: `apply` checks the new value
//!   before it assigns it, so a refused SET leaves the old value (and the error is
//!   PostgreSQL's: 22023, 42704, 55P02).
//! - `PARAMS` is sorted by name ignoring case, the order PostgreSQL reports them in at
//!   startup; exactly thirteen are reported (`GUC_REPORT` in PostgreSQL 15).
//! - `Reporter` sends a reported parameter only when its value differs from the last
//!   one sent, and nothing before startup has finished; so `SET datestyle = ISO` on a
//!   session already `ISO, MDY` sends no ParameterStatus, as in PostgreSQL.
//! - `Settings` is a plain value: the server clones it at a transaction's start and
//!   restores the clone on rollback (no undo log to get wrong). Its values are shared
//!   between clones until one is written (`Rc::make_mut`), so a clone costs no copy:
//!   the page's recording copies every session's settings at each checkpoint.

use super::wire::PgError;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;
use std::rc::Rc;

/// What values a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Text,
    /// A list of identifiers (`search_path`), quoted as needed.
    IdentList,
    Int {
        min: i64,
        max: i64,
    },
    /// Milliseconds, with PostgreSQL's time units allowed.
    Millis,
    Bool,
    Enum(&'static [&'static str]),
    DateStyle,
    TimeZone,
    Encoding,
    /// Set by the server only (`server_version`, `is_superuser`, ...).
    Internal,
}

#[derive(Clone)]
struct Param {
    name: &'static str,
    kind: Kind,
    default: &'static str,
    /// Reported in ParameterStatus (PostgreSQL's GUC_REPORT), at startup and on change.
    report: bool,
}

const fn p(name: &'static str, kind: Kind, default: &'static str, report: bool) -> Param {
    Param { name, kind, default, report }
}

const LEVELS: &[&str] = &["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"];
const ISOLATION: &[&str] = &["serializable", "repeatable read", "read committed", "read uncommitted"];
const INTERVAL_STYLES: &[&str] = &["postgres", "postgres_verbose", "sql_standard", "iso_8601"];

/// Sorted by name, ignoring case, as PostgreSQL keeps them (and reports them at startup).
static PARAMS: &[Param] = &[
    p("application_name", Kind::Text, "", true),
    p("client_encoding", Kind::Encoding, "UTF8", true),
    p("client_min_messages", Kind::Enum(LEVELS), "notice", false),
    p("DateStyle", Kind::DateStyle, "ISO, MDY", true),
    p("default_transaction_isolation", Kind::Enum(ISOLATION), "read committed", false),
    p("default_transaction_read_only", Kind::Bool, "off", true),
    p("extra_float_digits", Kind::Int { min: -15, max: 3 }, "1", false),
    p("idle_in_transaction_session_timeout", Kind::Millis, "0", false),
    p("in_hot_standby", Kind::Internal, "off", true),
    p("integer_datetimes", Kind::Internal, "on", true),
    p("IntervalStyle", Kind::Enum(INTERVAL_STYLES), "postgres", true),
    p("is_superuser", Kind::Internal, "on", true),
    p("lock_timeout", Kind::Millis, "0", false),
    p("search_path", Kind::IdentList, "\"$user\", public", false),
    p("server_encoding", Kind::Internal, "UTF8", true),
    p("server_version", Kind::Internal, "15.0 (pgasync simulated shard)", true),
    p("session_authorization", Kind::Internal, "", true),
    p("standard_conforming_strings", Kind::Bool, "on", true),
    p("statement_timeout", Kind::Millis, "0", false),
    p("TimeZone", Kind::TimeZone, "UTC", true),
];

fn find(name: &str) -> Option<usize> {
    PARAMS.iter().position(|p| p.name.eq_ignore_ascii_case(name))
}

/// The values of one session. Cloned to be restored when a transaction rolls back.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// By `PARAMS` index; shared by clones until one of them is written.
    values: Rc<Vec<String>>,
    /// Custom placeholder settings (`myext.knob`), by lower-case name.
    custom: Vec<(String, String)>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { values: Rc::new(PARAMS.iter().map(|p| p.default.to_string()).collect()), custom: Vec::new() }
    }
}

/// A parsed `SET` statement.
#[derive(Clone, Debug, PartialEq)]
pub enum SetCommand {
    /// `SET [SESSION | LOCAL] name {= | TO} value [, ...]`, `SET TIME ZONE value`;
    /// `values` None means DEFAULT.
    Assign { name: String, values: Option<Vec<String>> },
    /// `SET TRANSACTION ...`, `SET SESSION CHARACTERISTICS ...`: no session setting.
    Transaction,
}

impl Settings {
    /// The current value of a parameter (any case), None if there is no such parameter.
    pub fn get(&self, name: &str) -> Option<&str> {
        match find(name) {
            Some(i) => Some(&self.values[i]),
            None => self.custom.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()),
        }
    }

    /// Sets a parameter the server owns (`session_authorization` at startup).
    pub fn set_internal(&mut self, name: &str, value: &str) {
        if let Some(i) = find(name) {
            Rc::make_mut(&mut self.values)[i] = value.to_string();
        }
    }

    /// Runs a SET statement: the new value is checked, then stored in canonical form.
    pub fn apply(&mut self, cmd: &SetCommand) -> Result<(), PgError> {
        let SetCommand::Assign { name, values } = cmd else { return Ok(()) };
        let Some(i) = find(name) else {
            return self.set_custom(name, values);
        };
        let param = &PARAMS[i];
        let value = match values {
            None if param.kind == Kind::Internal => return Err(cannot_change(name)),
            None => param.default.to_string(),
            Some(values) => canonical(param, name, values, &self.values[i])?,
        };
        Rc::make_mut(&mut self.values)[i] = value;
        Ok(())
    }

    /// A startup packet option `name=value`: like SET, except that values are not split.
    pub fn apply_startup(&mut self, name: &str, value: &str) -> Result<(), PgError> {
        let cmd = SetCommand::Assign { name: name.to_string(), values: Some(vec![value.to_string()]) };
        self.apply(&cmd)
    }

    fn set_custom(&mut self, name: &str, values: &Option<Vec<String>>) -> Result<(), PgError> {
        if !name.contains('.') {
            return Err(PgError::error("42704", format!("unrecognized configuration parameter \"{name}\"")));
        }
        let value = values.as_ref().map(|v| v.join(", ")).unwrap_or_default();
        match self.custom.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some(slot) => slot.1 = value,
            None => self.custom.push((name.to_lowercase(), value)),
        }
        Ok(())
    }
}

fn cannot_change(name: &str) -> PgError {
    PgError::error("55P02", format!("parameter \"{name}\" cannot be changed"))
}

fn invalid_value(name: &str, value: &str) -> PgError {
    PgError::error("22023", format!("invalid value for parameter \"{name}\": \"{value}\""))
}

/// Checks `values` for `param` (spelt `name` by the user) and returns the canonical value.
fn canonical(param: &Param, name: &str, values: &[String], current: &str) -> Result<String, PgError> {
    if param.kind == Kind::IdentList {
        return Ok(values.iter().map(|v| crate::sql_text::quote_identifier(v)).collect::<Vec<_>>().join(", "));
    }
    if param.kind == Kind::DateStyle {
        return date_style(name, &values.join(","), current);
    }
    let [value] = values else {
        return Err(PgError::error("22023", format!("SET {name} takes only one argument")));
    };
    match param.kind {
        Kind::Text => Ok(value.clone()),
        Kind::Int { min, max } => int_value(name, value, min, max),
        Kind::Millis => millis(name, value),
        Kind::Bool => bool_value(name, value),
        Kind::Enum(allowed) => enum_value(name, value, allowed),
        Kind::TimeZone => time_zone(name, value),
        Kind::Encoding => encoding(name, value),
        Kind::Internal => Err(cannot_change(name)),
        Kind::IdentList | Kind::DateStyle => Ok(value.clone()), // handled above
    }
}

fn int_value(name: &str, value: &str, min: i64, max: i64) -> Result<String, PgError> {
    let v: i64 = value.trim().parse().map_err(|_| invalid_value(name, value))?;
    if v < min || v > max {
        let msg = format!("{v} is outside the valid range for parameter \"{name}\" ({min} .. {max})");
        return Err(PgError::error("22023", msg));
    }
    Ok(v.to_string())
}

/// An integer of milliseconds, with an optional unit (`5s`, `'1 min'`).
fn millis(name: &str, value: &str) -> Result<String, PgError> {
    let t = value.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '-' && c != '+').unwrap_or(t.len());
    let number: i64 = t[..digits].parse().map_err(|_| invalid_value(name, value))?;
    let unit = t[digits..].trim();
    if !["", "us", "ms", "s", "min", "h", "d"].contains(&unit) {
        return Err(invalid_value(name, value)
            .with_hint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."));
    }
    if number < 0 {
        let msg = format!("{number} ms is outside the valid range for parameter \"{name}\" (0 .. 2147483647)");
        return Err(PgError::error("22023", msg));
    }
    Ok(if unit.is_empty() { number.to_string() } else { format!("{number}{unit}") })
}

fn bool_value(name: &str, value: &str) -> Result<String, PgError> {
    let v = value.trim().to_lowercase();
    // PostgreSQL's parse_bool: a unique prefix of true/false/yes/no, on/off, 1/0.
    let is = |word: &str, min: usize| v.len() >= min && word.starts_with(v.as_str());
    if is("true", 1) || is("yes", 1) || is("on", 2) || v == "1" {
        Ok("on".into())
    } else if is("false", 1) || is("no", 1) || is("off", 2) || v == "0" {
        Ok("off".into())
    } else {
        Err(PgError::error("22023", format!("parameter \"{name}\" requires a Boolean value")))
    }
}

fn enum_value(name: &str, value: &str, allowed: &[&str]) -> Result<String, PgError> {
    match allowed.iter().find(|a| a.eq_ignore_ascii_case(value.trim())) {
        Some(a) => Ok(a.to_string()),
        None => Err(invalid_value(name, value).with_hint(format!("Available values: {}.", allowed.join(", ")))),
    }
}

/// `check_datestyle`: a list of an output style and/or a field order.
fn date_style(name: &str, value: &str, current: &str) -> Result<String, PgError> {
    let (mut style, mut order) = current.split_once(", ").unwrap_or(("ISO", "MDY"));
    let (mut have_style, mut have_order) = (false, false);
    for word in value.split(',').map(str::trim) {
        let (is_style, new) = match word.to_uppercase().as_str() {
            "ISO" => (true, "ISO"),
            "SQL" => (true, "SQL"),
            "POSTGRES" => (true, "Postgres"),
            "GERMAN" => (true, "German"),
            "YMD" => (false, "YMD"),
            "DMY" | "EURO" | "EUROPEAN" => (false, "DMY"),
            "MDY" | "US" | "NONEURO" | "NONEUROPEAN" => (false, "MDY"),
            "DEFAULT" => (true, "ISO"),
            _ => {
                return Err(invalid_value(name, value).with_detail(format!("Unrecognized key word: \"{word}\".")));
            }
        };
        let (slot, have) = if is_style { (&mut style, &mut have_style) } else { (&mut order, &mut have_order) };
        if *have {
            return Err(invalid_value(name, value).with_detail("Conflicting \"datestyle\" specifications."));
        }
        (*slot, *have) = (new, true);
    }
    if style == "German" && !have_order {
        order = "DMY";
    }
    Ok(format!("{style}, {order}"))
}

fn time_zone(name: &str, value: &str) -> Result<String, PgError> {
    let plausible = |c: char| c.is_ascii_alphanumeric() || "/_+-:.".contains(c);
    if value.is_empty() || !value.chars().all(plausible) {
        return Err(invalid_value(name, value));
    }
    let upper = value.to_uppercase();
    Ok(if ["UTC", "GMT", "Z"].contains(&upper.as_str()) { upper } else { value.to_string() })
}

fn encoding(name: &str, value: &str) -> Result<String, PgError> {
    let v = value.trim().to_uppercase().replace(['-', '_'], "");
    if v == "UTF8" || v == "UNICODE" {
        Ok("UTF8".into())
    } else {
        Err(invalid_value(name, value))
    }
}

/// Tracks what the client was last told, to send ParameterStatus for reported
/// parameters whose value changed (PostgreSQL 14+ sends them before ReadyForQuery).
#[derive(Clone, Debug, Default)]
pub struct Reporter {
    /// The values as of the last report (shared with the settings they were then);
    /// None until startup has finished.
    sent: Option<Rc<Vec<String>>>,
}

impl Reporter {
    /// Every reported parameter (at the end of startup), in PostgreSQL's order.
    pub fn report_all(&mut self, settings: &Settings) -> Vec<(&'static str, String)> {
        self.sent = Some(settings.values.clone());
        PARAMS.iter().zip(settings.values.iter()).filter(|(p, _)| p.report).map(|(p, v)| (p.name, v.clone())).collect()
    }

    /// The reported parameters whose value differs from the last one sent.
    pub fn changes(&mut self, settings: &Settings) -> Vec<(&'static str, String)> {
        let Some(sent) = &self.sent else {
            return Vec::new(); // startup not finished: nothing reported yet
        };
        if Rc::ptr_eq(sent, &settings.values) {
            return Vec::new(); // no SET since the last report
        }
        let out: Vec<_> = PARAMS
            .iter()
            .zip(sent.iter().zip(settings.values.iter()))
            .filter(|(p, (was, is))| p.report && was != is)
            .map(|(p, (_, is))| (p.name, is.clone()))
            .collect();
        self.sent = Some(settings.values.clone());
        out
    }
}

/// Parses the tokens (whitespace and comments left out) of a statement starting with
/// SET. None for a form this module does not know (the caller reports it).
pub fn parse_set(tokens: &[Token]) -> Option<SetCommand> {
    let mut rest = tokens.get(1..)?; // after SET
    if let [Token::Word(w), tail @ ..] = rest {
        if matches!(w.keyword, Keyword::SESSION | Keyword::LOCAL) && !is_word(tail.first(), "characteristics") {
            rest = tail;
        }
    }
    match rest {
        [Token::Word(a), Token::Word(b), value @ ..] if a.keyword == Keyword::TIME && b.keyword == Keyword::ZONE => {
            assign("TimeZone", value)
        }
        [Token::Word(w), ..] if matches!(w.keyword, Keyword::TRANSACTION | Keyword::SESSION) => {
            Some(SetCommand::Transaction)
        }
        _ => {
            let (name, after) = dotted_name(rest)?;
            match after {
                [Token::Eq, value @ ..] => assign(&name, value),
                [Token::Word(w), value @ ..] if w.keyword == Keyword::TO => assign(&name, value),
                value if name == "timezone" => assign(&name, value),
                _ => None,
            }
        }
    }
}

fn is_word(t: Option<&Token>, word: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// `name` or `a.b` (unquoted parts folded to lower case); the tokens after it.
fn dotted_name(tokens: &[Token]) -> Option<(String, &[Token])> {
    let mut name = String::new();
    let mut rest = tokens;
    loop {
        let [Token::Word(w), tail @ ..] = rest else { return None };
        name.push_str(&fold(w));
        rest = tail;
        match rest {
            [Token::Period, tail @ ..] => {
                name.push('.');
                rest = tail;
            }
            _ => return Some((name, rest)),
        }
    }
}

fn fold(w: &sqlparser::tokenizer::Word) -> String {
    match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    }
}

fn assign(name: &str, value: &[Token]) -> Option<SetCommand> {
    let values = match value {
        [Token::Word(w)] if w.keyword == Keyword::DEFAULT && w.quote_style.is_none() => None,
        [Token::Word(w)] if w.keyword == Keyword::LOCAL && name == "TimeZone" => None,
        _ => Some(value_list(value)?),
    };
    Some(SetCommand::Assign { name: name.to_string(), values })
}

/// `v [, v ...]`, each a word, a string or a signed number.
fn value_list(mut tokens: &[Token]) -> Option<Vec<String>> {
    let mut values = Vec::new();
    loop {
        let (v, rest) = match tokens {
            [Token::Minus, Token::Number(n, _), rest @ ..] => (format!("-{n}"), rest),
            [Token::Plus, Token::Number(n, _), rest @ ..] => (n.clone(), rest),
            [Token::Number(n, _), rest @ ..] => (n.clone(), rest),
            [Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s), rest @ ..] => (s.clone(), rest),
            [Token::DollarQuotedString(s), rest @ ..] => (s.value.clone(), rest),
            [Token::Word(w), rest @ ..] => (fold(w), rest),
            _ => return None,
        };
        values.push(v);
        match rest {
            [] => return Some(values),
            [Token::Comma, more @ ..] => tokens = more,
            _ => return None,
        }
    }
}
