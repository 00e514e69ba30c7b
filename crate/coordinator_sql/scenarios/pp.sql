-- A prepared statement's generic plan (issue 23): pt is range-partitioned on b over
-- four foreign partitions, one per shard (t1…t4, 2,500 rows each, as the fidelity tests'
-- tables: b = shard × 2,500 + i, a = b % 100). With plan_cache_mode = force_generic_plan
-- the plan keeps the Append over every partition with `b < $1` unresolved; at executor
-- startup the value 3000 prunes ft3 and ft4 (EXPLAIN: Subplans Removed: 2), and the
-- remote queries carry `$1::integer`, its value sent in the DECLARE's Bind.
-- tests/pg15_fidelity_prepared.rs checks the statements against PostgreSQL 15.
-- @shard s1
create table t1 (a int, b int, c text);
insert into t1 select b % 100, b, to_char(b, 'FM00000') from generate_series(0, 2499) b;
-- @shard s2
create table t2 (a int, b int, c text);
insert into t2 select b % 100, b, to_char(b, 'FM00000') from generate_series(2500, 4999) b;
-- @shard s3
create table t3 (a int, b int, c text);
insert into t3 select b % 100, b, to_char(b, 'FM00000') from generate_series(5000, 7499) b;
-- @shard s4
create table t4 (a int, b int, c text);
insert into t4 select b % 100, b, to_char(b, 'FM00000') from generate_series(7500, 9999) b;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '100');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '100');
create server s3 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '100');
create server s4 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '100');
create user mapping for public server s1;
create user mapping for public server s2;
create user mapping for public server s3;
create user mapping for public server s4;
create table pt (a int, b int, c text) partition by range (b);
create foreign table ft1 partition of pt for values from (0) to (2500) server s1 options (table_name 't1');
create foreign table ft2 partition of pt for values from (2500) to (5000) server s2 options (table_name 't2');
create foreign table ft3 partition of pt for values from (5000) to (7500) server s3 options (table_name 't3');
create foreign table ft4 partition of pt for values from (7500) to (10000) server s4 options (table_name 't4');
set plan_cache_mode = force_generic_plan;
prepare q(int) as select a, b from pt where b < $1;
-- @query
execute q(3000);
