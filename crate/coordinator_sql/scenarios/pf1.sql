-- Kyotaro Horiguchi's pf1 (seed 002, issue 18): four foreign tables, a server and so a
-- connection each: the remote waits overlap.
-- The same tables and rows as the built-in scenario pf1 at its bench size.
-- @shard s1
create table t1 (a bigint, b bigint, c text);
insert into t1 select i % 100, i, to_char(i, 'FM00000') from generate_series(0, 99999) i;
-- @shard s2
create table t2 (a bigint, b bigint, c text);
insert into t2 select (100000 + i) % 100, 100000 + i, (100000 + i)::text from generate_series(0, 99999) i;
-- @shard s3
create table t3 (a bigint, b bigint, c text);
insert into t3 select (200000 + i) % 100, 200000 + i, (200000 + i)::text from generate_series(0, 99999) i;
-- @shard s4
create table t4 (a bigint, b bigint, c text);
insert into t4 select (300000 + i) % 100, 300000 + i, (300000 + i)::text from generate_series(0, 99999) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'pf1', async_capable 'true');
create user mapping for public server s1;
create server s2 foreign data wrapper postgres_fdw options (dbname 'pf1', async_capable 'true');
create user mapping for public server s2;
create server s3 foreign data wrapper postgres_fdw options (dbname 'pf1', async_capable 'true');
create user mapping for public server s3;
create server s4 foreign data wrapper postgres_fdw options (dbname 'pf1', async_capable 'true');
create user mapping for public server s4;
create foreign table pf1 (a bigint, b bigint, c text) server s1 options (table_name 't1');
create foreign table pf2 (a bigint, b bigint, c text) server s2 options (table_name 't2');
create foreign table pf3 (a bigint, b bigint, c text) server s3 options (table_name 't3');
create foreign table pf4 (a bigint, b bigint, c text) server s4 options (table_name 't4');
-- @query
select sum(a) from (select a from pf1 union all select a from pf2 union all select a from pf3 union all select a from pf4) s;
