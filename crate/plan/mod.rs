//! Plans: the description of a query, from which executor state trees are built.
//!
//! A `Plan` is plain data (like PostgreSQL's `Plan` nodes); `executor::init_plan`
//! turns it into a tree of `PlanState`s. Expressions reference input columns by
//! position. Remote queries of foreign scans are kept as structured data and deparsed
//! to SQL text only when sent, like postgres_fdw's `deparse.c`.

use crate::types::{ColType, Column, Datum};
use serde::Serialize;

mod optimize;
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

/// A scalar expression over the columns of one input row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Expr {
    Col(usize),
    Const(#[serde(skip)] Datum),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
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

    /// Evaluates the expression. Integer arithmetic and comparisons never allocate;
    /// booleans are Int 0/1 and NULL propagates as in SQL.
    pub fn eval(&self, row: &[Datum]) -> Datum {
        match self {
            Expr::Col(i) => row[*i].clone(),
            Expr::Const(d) => d.clone(),
            Expr::Not(e) => match e.eval(row) {
                Datum::Null => Datum::Null,
                d => Datum::Int(!d.is_true() as i64),
            },
            Expr::IsNull(e, negated) => Datum::Int((e.eval(row).is_null() != *negated) as i64),
            Expr::Bin(op, l, r) => eval_bin(*op, l.eval(row), || r.eval(row)),
        }
    }

    /// Result type, given the input columns.
    pub fn col_type(&self, input: &[Column]) -> ColType {
        match self {
            Expr::Col(i) => input[*i].ty,
            Expr::Const(Datum::Text(_)) => ColType::Text,
            Expr::Const(Datum::Float(_)) => ColType::Float,
            Expr::Const(_) => ColType::Int,
            Expr::Bin(BinOp::Divide, l, r)
            | Expr::Bin(BinOp::Plus, l, r)
            | Expr::Bin(BinOp::Minus, l, r)
            | Expr::Bin(BinOp::Multiply, l, r)
            | Expr::Bin(BinOp::Modulo, l, r) => {
                if l.col_type(input) == ColType::Float || r.col_type(input) == ColType::Float {
                    ColType::Float
                } else {
                    ColType::Int
                }
            }
            _ => ColType::Int,
        }
    }

    /// SQL text of the expression with the given column names (for remote SQL and EXPLAIN).
    pub fn to_sql(&self, names: &[String]) -> String {
        match self {
            Expr::Col(i) => names.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
            Expr::Const(Datum::Text(s)) => format!("'{}'", s.replace('\'', "''")),
            Expr::Const(d) => d.to_string(),
            Expr::Not(e) => format!("(NOT {})", e.to_sql(names)),
            Expr::IsNull(e, false) => format!("({} IS NULL)", e.to_sql(names)),
            Expr::IsNull(e, true) => format!("({} IS NOT NULL)", e.to_sql(names)),
            Expr::Bin(op, l, r) => {
                format!("({} {} {})", l.to_sql(names), op.sql(), r.to_sql(names))
            }
        }
    }
}

fn eval_bin(op: BinOp, l: Datum, r: impl FnOnce() -> Datum) -> Datum {
    use Datum::*;
    match op {
        BinOp::And => {
            if matches!(l, Int(0)) {
                return Int(0);
            }
            match (l, r()) {
                (_, Int(0)) => Int(0),
                (Null, _) | (_, Null) => Null,
                _ => Int(1),
            }
        }
        BinOp::Or => {
            if l.is_true() {
                return Int(1);
            }
            match (l, r()) {
                (_, b) if b.is_true() => Int(1),
                (Null, _) | (_, Null) => Null,
                _ => Int(0),
            }
        }
        _ => {
            let r = r();
            if l.is_null() || r.is_null() {
                return Null;
            }
            match op {
                BinOp::Eq => Int((l == r) as i64),
                BinOp::NotEq => Int((l != r) as i64),
                BinOp::Lt => Int((l < r) as i64),
                BinOp::LtEq => Int((l <= r) as i64),
                BinOp::Gt => Int((l > r) as i64),
                BinOp::GtEq => Int((l >= r) as i64),
                _ => arith(op, &l, &r),
            }
        }
    }
}

fn arith(op: BinOp, l: &Datum, r: &Datum) -> Datum {
    if let (Datum::Int(a), Datum::Int(b)) = (l, r) {
        return match op {
            BinOp::Plus => Datum::Int(a.wrapping_add(*b)),
            BinOp::Minus => Datum::Int(a.wrapping_sub(*b)),
            BinOp::Multiply => Datum::Int(a.wrapping_mul(*b)),
            // Division by zero yields NULL rather than aborting the sandbox.
            BinOp::Divide => a.checked_div(*b).map_or(Datum::Null, Datum::Int),
            BinOp::Modulo => a.checked_rem(*b).map_or(Datum::Null, Datum::Int),
            _ => Datum::Null,
        };
    }
    match (l.as_f64(), r.as_f64()) {
        (Some(a), Some(b)) => Datum::Float(match op {
            BinOp::Plus => a + b,
            BinOp::Minus => a - b,
            BinOp::Multiply => a * b,
            BinOp::Divide => a / b,
            BinOp::Modulo => a % b,
            _ => return Datum::Null,
        }),
        _ => Datum::Null,
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
    pub fn result_type(self, arg: ColType) -> ColType {
        match self {
            AggFunc::CountStar | AggFunc::Count => ColType::Int,
            AggFunc::Avg => ColType::Float,
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
            Plan::Sort { child, .. } | Plan::Limit { child, .. } => child.output_columns(),
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
            Plan::HashJoin { outer, inner, .. } => {
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
            | Plan::Result { child, .. } => {
                vec![child]
            }
            Plan::HashJoin { outer, inner, .. } => vec![outer, inner],
        }
    }
}
