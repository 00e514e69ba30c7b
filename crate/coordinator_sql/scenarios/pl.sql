-- Kyotaro Horiguchi's pl (seed 002, issue 18): an Append of four local Seq Scans, no
-- async child: what the async machinery costs when there is nothing to overlap.
-- The same tables and rows as the built-in scenario pl at its bench size (4 × 100,000).
-- @coordinator
create table t_part (a bigint, b bigint, c text) partition by range (b);
create table t_p1 partition of t_part for values from (0) to (100000);
create table t_p2 partition of t_part for values from (100000) to (200000);
create table t_p3 partition of t_part for values from (200000) to (300000);
create table t_p4 partition of t_part for values from (300000) to (400000);
insert into t_part select i % 100, i, to_char(i, 'FM00000') from generate_series(0, 99999) i;
insert into t_part select i % 100, i, i::text from generate_series(100000, 399999) i;
-- @query
select sum(a) from t_part;
