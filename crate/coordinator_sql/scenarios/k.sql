-- Scenario K (issue 18; seed 000, Kyotaro Horiguchi): a Nested Loop over two Appends of
-- foreign tables, here partitioned tables with foreign partitions (the sandbox's SQL
-- front end joins two relations, not two UNION ALL subqueries). The outer side, o1
-- and o2 (ten keys each), on s1 and s2; the inner side, t3 and t4, on s3 and s4. With hash and merge joins off PostgreSQL 15 plans a
-- Nested Loop with a Materialize over the inner Append, and starts the inner side only
-- after the first outer row; with the async_through_nodes knob the Nested Loop starts
-- it while the outer side waits. The same tables and rows as the built-in scenario K
-- with its bench size (3,000 rows per inner shard).
-- @shard s1
create table o1 (a int, b int);
insert into o1 select a, a * 1000 from generate_series(0, 9) a;
-- @shard s2
create table o2 (a int, b int);
insert into o2 select a, a * 1000 from generate_series(10, 19) a;
-- @shard s3
create table t3 (a int, b int, c text);
insert into t3 select (6000 + i) % 100, 6000 + i, to_char(6000 + i, 'FM00000') from generate_series(0, 2999) i;
-- @shard s4
create table t4 (a int, b int, c text);
insert into t4 select (9000 + i) % 100, 9000 + i, to_char(9000 + i, 'FM00000') from generate_series(0, 2999) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'k', async_capable 'true');
create user mapping for public server s1;
create server s2 foreign data wrapper postgres_fdw options (dbname 'k', async_capable 'true');
create user mapping for public server s2;
create server s3 foreign data wrapper postgres_fdw options (dbname 'k', async_capable 'true');
create user mapping for public server s3;
create server s4 foreign data wrapper postgres_fdw options (dbname 'k', async_capable 'true');
create user mapping for public server s4;
create table po (a int, b int) partition by range (a);
create foreign table fo1 partition of po for values from (0) to (10) server s1 options (table_name 'o1');
create foreign table fo2 partition of po for values from (10) to (20) server s2 options (table_name 'o2');
create table pt (a int, b int, c text) partition by range (b);
create foreign table ft3 partition of pt for values from (6000) to (9000) server s3 options (table_name 't3');
create foreign table ft4 partition of pt for values from (9000) to (12000) server s4 options (table_name 't4');
set enable_hashjoin to off;
set enable_mergejoin to off;
-- @query
select po.a, po.b, pt.a, pt.b from po join pt on po.a = pt.a;
