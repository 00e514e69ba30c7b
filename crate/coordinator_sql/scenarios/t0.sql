-- Kyotaro Horiguchi's t0 (seed 002, issue 18): one local table, a Seq Scan and sum()
-- (two parallel workers in his run; no parallel query here). No async child: the
-- synchronous path an async design must not slow down.
-- The same table and rows as the built-in scenario t0 at its bench size (4 × 100,000).
-- @coordinator
create table t_local (a bigint, b bigint, c text);
insert into t_local select i % 100, i, to_char(i, 'FM00000') from generate_series(0, 99999) i;
insert into t_local select i % 100, i, i::text from generate_series(100000, 399999) i;
-- @query
select sum(a) from t_local;
