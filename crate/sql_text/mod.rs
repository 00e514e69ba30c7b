//! Every piece of SQL text the sandbox writes for a PostgreSQL server to run, in one
//! place, with PostgreSQL's quoting rules written once:
//!
//! * [`deparse`]: the remote queries of foreign scans (postgres_fdw's `deparse.c`);
//! * [`coordinator`]: the query and the foreign-table DDL a real PostgreSQL coordinator
//!   runs for a built-in scenario ("PostgreSQL says", the live benchmark);
//! * [`load`]: a simulated shard's tables as a script psql loads into a real server.
//!
//! Invariants: a name from a scenario file (a stranger's text) reaches SQL only through
//! [`quote_identifier`], a string value only through [`quote_literal`] or as a COPY data
//! line with its escapes, so no name or value can end a statement. Parsing SQL is not
//! here: the shards' SQL is `shard_sql`, the coordinator's `coordinator_sql`.

pub mod coordinator;
pub mod deparse;
pub mod deparse_join;
pub mod load;

/// Keywords PostgreSQL's `quote_identifier` quotes (every category but unreserved:
/// reserved, column-name and type/function-name keywords of PostgreSQL 15).
const QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// An identifier as PostgreSQL's `quote_identifier` writes it: bare when it is lower
/// case letters, digits and underscores not starting with a digit, and not a keyword
/// that needs quoting; otherwise in double quotes, inner quotes doubled.
pub fn quote_identifier(name: &str) -> String {
    let safe = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !QUOTED_KEYWORDS.contains(&name);
    if safe {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A string literal as PostgreSQL's `quote_literal` writes it: quotes doubled, and
/// `E'…'` with backslashes doubled when there are any.
pub fn quote_literal(value: &str) -> String {
    let body = value.replace('\'', "''");
    if value.contains('\\') {
        format!("E'{}'", body.replace('\\', "\\\\"))
    } else {
        format!("'{body}'")
    }
}
