//! Plans: the description of a query, from which executor state trees are built.
//!
//! A `Plan` is plain data (like PostgreSQL's `Plan` nodes); `executor::init_plan`
//! turns it into a tree of `PlanState`s. Expressions reference input columns by
//! position. Remote queries of foreign scans are kept as structured data and deparsed
//! to SQL text only when sent, like postgres_fdw's `deparse.c`.
//!
//! Invariants:
//! - An [`Expr`] is already analysed, as PostgreSQL's planner receives it: every
//!   column is a position in its input row, every type question (which `+`, which
//!   cast, how a value prints as text) was answered when it was built, so evaluating
//!   it ([`eval`], the one evaluator) looks at values only. The shards' SQL
//!   (`shard_sql`) and the coordinator's front end (`coordinator_sql::eval`) both
//!   build `Expr`s; the executor and the coordinator both evaluate them.
//! - `Expr::Func` holds what the coordinator's scripts call ([`Func`]: casts,
//!   `random()`, `||`, `to_char`, …); the shards' planner never builds one, so remote
//!   SQL and EXPLAIN of a query never show one.
//!
//! Departs from PostgreSQL: booleans are `Int` 0/1 (no boolean type); a value's type
//! is not stored with it (a `Datum` is Int, Float, Text or Null), so an `Expr` that
//! needs one (a cast from float8 rather than numeric) carries it in the node.

use crate::types::{ColType, Column, Datum};
use serde::Serialize;

pub mod costsize;
pub mod eval;
mod optimize;
pub mod selectivity;
pub mod stats;
pub use optimize::use_indexes;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
    Plus,
    Minus,
    Multiply,
    Divide,
    Modulo,
}

impl BinOp {
    /// `= <> < <= > >=`: the operators whose result is a boolean (Int 0/1).
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq)
    }
    pub fn sql(self) -> &'static str {
        match self {
            BinOp::Eq => "=",
            BinOp::NotEq => "<>",
            BinOp::Lt => "<",
            BinOp::LtEq => "<=",
            BinOp::Gt => ">",
            BinOp::GtEq => ">=",
            BinOp::And => "AND",
            BinOp::Or => "OR",
            BinOp::Plus => "+",
            BinOp::Minus => "-",
            BinOp::Multiply => "*",
            BinOp::Divide => "/",
            BinOp::Modulo => "%",
        }
    }
}

/// The SQL types the sandbox stores and casts between (a column's declared type).
/// Values of the three integer types are all `Datum::Int`, numeric is
/// `Datum::Numeric`, float8 `Datum::Float`: the type decides range checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SqlType {
    Int2,
    Int4,
    Int8,
    Numeric,
    Float8,
    Text,
}

impl SqlType {
    /// The name PostgreSQL's messages use (`format_type`).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Numeric => "numeric",
            SqlType::Float8 => "double precision",
            SqlType::Text => "text",
        }
    }
    pub fn col_type(self) -> ColType {
        match self {
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => ColType::Int,
            SqlType::Numeric => ColType::Numeric,
            SqlType::Float8 => ColType::Float,
            SqlType::Text => ColType::Text,
        }
    }
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    }
}

/// A function call the evaluator implements, resolved when the expression was
/// analysed (PostgreSQL's `FuncExpr` with its function's OID; an operator such as
/// `||` is its function, as `OpExpr` is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Func {
    /// A cast from `from` (None: an untyped literal or NULL) to `to`: assignment and
    /// explicit casts are the same here (`int4(float8)`, `float8out`, `int4in`, …).
    Cast {
        from: Option<SqlType>,
        to: SqlType,
    },
    /// Unary minus (`int8um`, `float8um`).
    Neg,
    /// `||` over two texts (`textcat`); the analyser casts each operand to text.
    TextCat,
    Random,
    SetSeed,
    /// `to_char(integer, text)`.
    ToChar,
    Abs,
    Length,
    Upper,
    Lower,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Cast { .. } => "cast",
            Func::Neg => "-",
            Func::TextCat => "||",
            Func::Random => "random",
            Func::SetSeed => "setseed",
            Func::ToChar => "to_char",
            Func::Abs => "abs",
            Func::Length => "length",
            Func::Upper => "upper",
            Func::Lower => "lower",
        }
    }

    /// SQL text of a call, its arguments already written (for EXPLAIN and deparse).
    pub fn sql(self, args: &[String]) -> String {
        match (self, args) {
            (Func::Cast { to, .. }, [x]) => format!("({x})::{}", to.name()),
            (Func::Neg, [x]) => format!("(- {x})"),
            (Func::TextCat, [a, b]) => format!("({a} || {b})"),
            _ => format!("{}({})", self.name(), args.join(", ")),
        }
    }

    /// Result type, given the first argument's (None for no argument).
    fn col_type(self, arg: Option<ColType>) -> ColType {
        match self {
            Func::Cast { to, .. } => to.col_type(),
            Func::Neg | Func::Abs => arg.unwrap_or(ColType::Int),
            Func::Random => ColType::Float,
            Func::Length => ColType::Int,
            Func::TextCat | Func::SetSeed | Func::ToChar | Func::Upper | Func::Lower => ColType::Text,
        }
    }
}

/// A scalar expression over the columns of one input row; [`eval`] evaluates it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Expr {
    Col(usize),
    Const(#[serde(skip)] Datum),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    Func(Func, Box<[Expr]>),
}

impl Expr {
    pub fn col(i: usize) -> Expr {
        Expr::Col(i)
    }
    pub fn int(v: i64) -> Expr {
        Expr::Const(Datum::Int(v))
    }
    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r))
    }
    pub fn func(f: Func, args: Vec<Expr>) -> Expr {
        Expr::Func(f, args.into_boxed_slice())
    }

    /// The same expression with every column `i` read as column `f(i)` (the planner
    /// moves expressions between inputs of different shapes).
    pub fn map_cols(&self, f: &impl Fn(usize) -> usize) -> Expr {
        match self {
            Expr::Col(i) => Expr::Col(f(*i)),
            Expr::Const(d) => Expr::Const(d.clone()),
            Expr::Bin(op, l, r) => Expr::bin(*op, l.map_cols(f), r.map_cols(f)),
            Expr::Not(x) => Expr::Not(Box::new(x.map_cols(f))),
            Expr::IsNull(x, neg) => Expr::IsNull(Box::new(x.map_cols(f)), *neg),
            Expr::Func(func, args) => Expr::Func(*func, args.iter().map(|a| a.map_cols(f)).collect()),
        }
    }

    /// Calls `f` with every column the expression reads.
    pub fn for_each_col(&self, f: &mut impl FnMut(usize)) {
        match self {
            Expr::Col(i) => f(*i),
            Expr::Const(_) => {}
            Expr::Bin(_, l, r) => {
                l.for_each_col(f);
                r.for_each_col(f);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.for_each_col(f),
            Expr::Func(_, args) => args.iter().for_each(|a| a.for_each_col(f)),
        }
    }

    /// Result type, given the input columns.
    pub fn col_type(&self, input: &[Column]) -> ColType {
        match self {
            Expr::Col(i) => input[*i].ty,
            Expr::Const(Datum::Text(_)) => ColType::Text,
            Expr::Const(Datum::Float(_)) => ColType::Float,
            Expr::Const(Datum::Numeric(_)) => ColType::Numeric,
            Expr::Const(_) => ColType::Int,
            Expr::Bin(BinOp::Divide, l, r)
            | Expr::Bin(BinOp::Plus, l, r)
            | Expr::Bin(BinOp::Minus, l, r)
            | Expr::Bin(BinOp::Multiply, l, r)
            | Expr::Bin(BinOp::Modulo, l, r) => {
                // An integer meets a numeric as a numeric, either meets a float8 as a
                // float8 (PostgreSQL's implicit casts).
                match (l.col_type(input), r.col_type(input)) {
                    (ColType::Float, _) | (_, ColType::Float) => ColType::Float,
                    (ColType::Numeric, _) | (_, ColType::Numeric) => ColType::Numeric,
                    _ => ColType::Int,
                }
            }
            Expr::Func(f, args) => f.col_type(args.first().map(|a| a.col_type(input))),
            _ => ColType::Int,
        }
    }

    /// SQL text of the expression with the given column names (for remote SQL and EXPLAIN).
    pub fn to_sql(&self, names: &[String]) -> String {
        match self {
            Expr::Col(i) => names.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
            Expr::Const(Datum::Text(s)) => format!("'{}'", s.replace('\'', "''")),
            Expr::Const(Datum::Numeric(n)) => numeric_const_sql(n, false),
            Expr::Const(d) => d.to_string(),
            Expr::Not(e) => format!("(NOT {})", e.to_sql(names)),
            Expr::IsNull(e, false) => format!("({} IS NULL)", e.to_sql(names)),
            Expr::IsNull(e, true) => format!("({} IS NOT NULL)", e.to_sql(names)),
            Expr::Bin(op, l, r) => {
                format!("({} {} {})", l.to_sql(names), op.sql(), r.to_sql(names))
            }
            Expr::Func(f, args) => f.sql(&args.iter().map(|a| a.to_sql(names)).collect::<Vec<_>>()),
        }
    }
}

/// A numeric constant as PostgreSQL writes it: postgres_fdw's `deparseConst` for
/// remote SQL (`remote`), ruleutils' `get_const_expr` for EXPLAIN. A value with a
/// point is written as it prints; both label an integral one `::numeric` (else it
/// would read back as an integer), `deparseConst` unquoted and a signed one in
/// parentheses (`12::numeric`, `(-1.5)`), `get_const_expr` quoting every value that
/// does not start with a digit or has no point (`'12'::numeric`, `'-1.5'::numeric`);
/// NaN and Infinity are quoted by both.
pub fn numeric_const_sql(n: &crate::numeric::Numeric, remote: bool) -> String {
    let s = n.to_string();
    let (point, neg) = (s.contains('.'), s.starts_with('-'));
    let finite = matches!(n, crate::numeric::Numeric::Finite { .. });
    if !finite || !remote && (neg || !point) {
        return format!("'{s}'::numeric");
    }
    let s = if neg { format!("({s})") } else { s };
    if point {
        s
    } else {
        s + "::numeric"
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
        }
    }
    /// PostgreSQL's result types: `avg` of an integer or numeric is numeric, of a
    /// float8 float8; `sum` keeps its argument's type here (an integer sum is an Int
    /// while it fits in int8, a numeric past it: `node_agg`).
    pub fn result_type(self, arg: ColType) -> ColType {
        match self {
            AggFunc::CountStar | AggFunc::Count => ColType::Int,
            AggFunc::Avg if arg == ColType::Float => ColType::Float,
            AggFunc::Avg => ColType::Numeric,
            _ => arg,
        }
    }
}

/// One aggregate call, e.g. `sum(a)`; `arg` is None only for `count(*)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
}

impl SortKey {
    pub fn asc(col: usize) -> SortKey {
        SortKey { expr: Expr::Col(col), desc: false }
    }
    pub fn desc(col: usize) -> SortKey {
        SortKey { expr: Expr::Col(col), desc: true }
    }
}

/// One output column of a remote query: a column of the remote table or an
/// aggregate over one (aggregate pushdown, as postgres_fdw does for partitionwise
/// aggregation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum RemoteTarget {
    Col(usize),
    Agg(AggFunc, Option<usize>),
}

/// The query a ForeignScan sends, before deparsing. Column numbers refer to
/// `table_columns`, the remote table's columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RemoteQuery {
    pub table: String,
    #[serde(skip)]
    pub table_columns: Vec<Column>,
    pub targets: Vec<RemoteTarget>,
    pub quals: Vec<Expr>,
    pub group_by: Vec<usize>,
    /// HAVING conjuncts of an aggregated query, over the target list (`Col(i)` is the
    /// i-th target), as postgres_fdw ships a pushed-down aggregate's HAVING.
    pub having: Vec<Expr>,
    /// ORDER BY over the table's columns; for an aggregated query ([`Self::aggregated`])
    /// over the target list, like `having`.
    pub order_by: Vec<SortKey>,
    pub limit: Option<u64>,
    /// OFFSET, sent with LIMIT when postgres_fdw pushes a query's LIMIT/OFFSET down
    /// (a plain foreign table; `add_foreign_final_paths`).
    pub offset: Option<u64>,
}

impl RemoteQuery {
    /// `SELECT <cols> FROM table`, no quals.
    pub fn scan(table: &str, table_columns: Vec<Column>, cols: &[usize]) -> RemoteQuery {
        RemoteQuery {
            table: table.to_string(),
            table_columns,
            targets: cols.iter().map(|&c| RemoteTarget::Col(c)).collect(),
            quals: vec![],
            group_by: vec![],
            having: vec![],
            order_by: vec![],
            limit: None,
            offset: None,
        }
    }
    /// Does the query aggregate (GROUP BY or an aggregate in the target list)?
    pub fn aggregated(&self) -> bool {
        !self.group_by.is_empty() || self.targets.iter().any(|t| matches!(t, RemoteTarget::Agg(..)))
    }
    /// Columns the foreign scan outputs.
    pub fn output_columns(&self) -> Vec<Column> {
        self.targets
            .iter()
            .map(|t| match t {
                RemoteTarget::Col(c) => self.table_columns[*c].clone(),
                RemoteTarget::Agg(f, arg) => {
                    let ty = arg.map(|c| self.table_columns[c].ty).unwrap_or(ColType::Int);
                    Column::new(f.name(), f.result_type(ty))
                }
            })
            .collect()
    }
}

/// A foreign table's scan: which server, and what it asks the server for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForeignScanPlan {
    /// Local name of the foreign table (what EXPLAIN prints after "on").
    pub relation: String,
    pub server: String,
    pub remote: RemoteQuery,
    /// How EXPLAIN names the scan, when it reads a partition (see [`ScanName`]).
    pub alias: Option<ScanName>,
}

/// The names PostgreSQL's EXPLAIN gives a partition's scan: its range-table alias
/// (`players_1`) and, when the plan refers to the partitioned parent (an Append over
/// its partitions), the parent's (`players`), which the Append's output carries.
/// Output columns are then qualified, as PostgreSQL does with several range-table
/// entries.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanName {
    pub alias: String,
    pub parent: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum AggStrategy {
    Plain,
    Hashed,
}

/// A plan tree. Every node's output columns are given by `Plan::output_columns`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Plan {
    SeqScan {
        table: String,
        #[serde(skip)]
        columns: Vec<Column>,
        /// How EXPLAIN names the scan of a partition.
        alias: Option<ScanName>,
    },
    /// Reads a table in the order of its index on `column` (backwards when `desc`).
    IndexScan {
        table: String,
        #[serde(skip)]
        columns: Vec<Column>,
        column: usize,
        desc: bool,
    },
    ForeignScan(ForeignScanPlan),
    Append {
        children: Vec<Plan>,
    },
    MergeAppend {
        children: Vec<Plan>,
        keys: Vec<SortKey>,
    },
    Sort {
        child: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Limit {
        child: Box<Plan>,
        offset: u64,
        count: Option<u64>,
    },
    Agg {
        child: Box<Plan>,
        strategy: AggStrategy,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    /// Projection and filter (PostgreSQL puts these on every node; we make them a node
    /// so the demo shows where rows are dropped). With no targets, the input passes through.
    Result {
        child: Box<Plan>,
        filter: Option<Expr>,
        targets: Option<Vec<(Expr, String)>>,
    },
    HashJoin {
        outer: Box<Plan>,
        inner: Box<Plan>,
        outer_key: Expr,
        inner_key: Expr,
    },
    /// Nested Loop with a Join Filter `outer_key = inner_key`; the inner side is
    /// rescanned for each outer row (`executor::node_nestloop`).
    NestLoop {
        outer: Box<Plan>,
        inner: Box<Plan>,
        outer_key: Expr,
        inner_key: Expr,
        /// The Join Filter names the inner side's key first: the join condition as
        /// the query has it, its first relation inner once the planner swapped the
        /// sides by cost (PostgreSQL keeps a Nested Loop's join clause as written;
        /// only a Hash Join's clauses are switched to put the outer side first).
        filter_inner_first: bool,
    },
    /// Materialize: keeps its child's rows; a rescan replays them
    /// (`executor::node_material`).
    Material {
        child: Box<Plan>,
    },
    /// No input at all: every partition was pruned. PostgreSQL plans a dummy relation
    /// as a Result node whose one-time filter is `false` (set_dummy_rel_pathlist), so it
    /// returns no row without reading anything.
    EmptyResult {
        #[serde(skip)]
        columns: Vec<Column>,
    },
}

impl Plan {
    pub fn output_columns(&self) -> Vec<Column> {
        match self {
            Plan::SeqScan { columns, .. } | Plan::IndexScan { columns, .. } | Plan::EmptyResult { columns } => {
                columns.clone()
            }
            Plan::ForeignScan(f) => f.remote.output_columns(),
            Plan::Append { children } | Plan::MergeAppend { children, .. } => {
                children.first().map(|c| c.output_columns()).unwrap_or_default()
            }
            Plan::Sort { child, .. } | Plan::Limit { child, .. } | Plan::Material { child } => child.output_columns(),
            Plan::Agg { child, group_by, aggs, .. } => {
                let input = child.output_columns();
                let mut out: Vec<Column> = group_by
                    .iter()
                    .map(|e| match e {
                        Expr::Col(i) => input[*i].clone(),
                        e => Column::new("?column?", e.col_type(&input)),
                    })
                    .collect();
                for a in aggs {
                    let ty = a.arg.as_ref().map(|e| e.col_type(&input)).unwrap_or(ColType::Int);
                    out.push(Column::new(a.func.name(), a.func.result_type(ty)));
                }
                out
            }
            Plan::Result { child, targets, .. } => {
                let input = child.output_columns();
                match targets {
                    None => input,
                    Some(t) => t.iter().map(|(e, n)| Column::new(n, e.col_type(&input))).collect(),
                }
            }
            Plan::HashJoin { outer, inner, .. } | Plan::NestLoop { outer, inner, .. } => {
                let mut c = outer.output_columns();
                c.extend(inner.output_columns());
                c
            }
        }
    }

    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::SeqScan { .. } | Plan::IndexScan { .. } | Plan::ForeignScan(_) | Plan::EmptyResult { .. } => vec![],
            Plan::Append { children } | Plan::MergeAppend { children, .. } => children.iter().collect(),
            Plan::Sort { child, .. }
            | Plan::Limit { child, .. }
            | Plan::Agg { child, .. }
            | Plan::Result { child, .. }
            | Plan::Material { child } => {
                vec![child]
            }
            Plan::HashJoin { outer, inner, .. } | Plan::NestLoop { outer, inner, .. } => vec![outer, inner],
        }
    }
}
