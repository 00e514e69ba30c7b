-- Kyotaro Horiguchi's pf0 (seed 002, issue 18): four foreign tables on one server, so one
-- shared connection: one query in flight at a time (postgres_fdw's pendingAreq).
-- The same tables and rows as the built-in scenario pf0 at its bench size.
-- @shard s1
create table t1 (a bigint, b bigint, c text);
insert into t1 select i % 100, i, to_char(i, 'FM00000') from generate_series(0, 99999) i;
create table t2 (a bigint, b bigint, c text);
insert into t2 select (100000 + i) % 100, 100000 + i, (100000 + i)::text from generate_series(0, 99999) i;
create table t3 (a bigint, b bigint, c text);
insert into t3 select (200000 + i) % 100, 200000 + i, (200000 + i)::text from generate_series(0, 99999) i;
create table t4 (a bigint, b bigint, c text);
insert into t4 select (300000 + i) % 100, 300000 + i, (300000 + i)::text from generate_series(0, 99999) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'pf0', async_capable 'true');
create user mapping for public server s1;
create foreign table pf1 (a bigint, b bigint, c text) server s1 options (table_name 't1');
create foreign table pf2 (a bigint, b bigint, c text) server s1 options (table_name 't2');
create foreign table pf3 (a bigint, b bigint, c text) server s1 options (table_name 't3');
create foreign table pf4 (a bigint, b bigint, c text) server s1 options (table_name 't4');
-- @query
select sum(a) from (select a from pf1 union all select a from pf2 union all select a from pf3 union all select a from pf4) s;
