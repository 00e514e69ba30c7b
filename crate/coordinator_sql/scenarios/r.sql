-- Scenario R (issue 18; seed 000, Robert Haas): an Append over one Hash Join per shard,
-- each foreign table on its own server joined to a local table. PostgreSQL 15 runs the
-- joins one after another (no Async under a join, whatever async_capable says); with
-- the async_through_nodes knob the four remote waits overlap. The same tables and rows
-- as the built-in scenario R with its bench size (50,000 rows per shard).
-- @shard s1
create table t1 (a int, b int, c text);
insert into t1 select i % 100, i, to_char(i, 'FM00000') from generate_series(0, 49999) i;
-- @shard s2
create table t2 (a int, b int, c text);
insert into t2 select (50000 + i) % 100, 50000 + i, to_char(50000 + i, 'FM00000') from generate_series(0, 49999) i;
-- @shard s3
create table t3 (a int, b int, c text);
insert into t3 select (100000 + i) % 100, 100000 + i, (100000 + i)::text from generate_series(0, 49999) i;
-- @shard s4
create table t4 (a int, b int, c text);
insert into t4 select (150000 + i) % 100, 150000 + i, (150000 + i)::text from generate_series(0, 49999) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'r', async_capable 'true');
create user mapping for public server s1;
create server s2 foreign data wrapper postgres_fdw options (dbname 'r', async_capable 'true');
create user mapping for public server s2;
create server s3 foreign data wrapper postgres_fdw options (dbname 'r', async_capable 'true');
create user mapping for public server s3;
create server s4 foreign data wrapper postgres_fdw options (dbname 'r', async_capable 'true');
create user mapping for public server s4;
create foreign table ft1 (a int, b int, c text) server s1 options (table_name 't1');
create foreign table ft2 (a int, b int, c text) server s2 options (table_name 't2');
create foreign table ft3 (a int, b int, c text) server s3 options (table_name 't3');
create foreign table ft4 (a int, b int, c text) server s4 options (table_name 't4');
create table l1 (a int, c text);
insert into l1 select a, 'l1_' || a from generate_series(0, 49) a;
analyze l1;
create table l2 (a int, c text);
insert into l2 select a, 'l2_' || a from generate_series(0, 49) a;
analyze l2;
create table l3 (a int, c text);
insert into l3 select a, 'l3_' || a from generate_series(0, 49) a;
analyze l3;
create table l4 (a int, c text);
insert into l4 select a, 'l4_' || a from generate_series(0, 49) a;
analyze l4;
-- @query
select ft1.a, ft1.b, l1.a, l1.c from ft1 join l1 on ft1.a = l1.a union all select ft2.a, ft2.b, l2.a, l2.c from ft2 join l2 on ft2.a = l2.a union all select ft3.a, ft3.b, l3.a, l3.c from ft3 join l3 on ft3.a = l3.a union all select ft4.a, ft4.b, l4.a, l4.c from ft4 join l4 on ft4.a = l4.a;
