-- Incremental Sort (issue 23, item 5): the schema tests/pg15_fidelity_incsort.rs runs
-- its queries on, in the sandbox and on real PostgreSQL 15.
--
--   incs   a local table, a = i / 10 (groups of 10 rows), an index on a;
--   incs2  the same with groups of 100 rows (past the 64-row full sort: the
--          presorted prefix mode);
--   incp   range-partitioned on a: a local partition incp_lo [0, 30) with an index
--          on a, a foreign one incp_hi [30, 60) on s1;
--   incl   range-partitioned on a over two local partitions, each with the index.
-- (a, b) is unique in each table, so ORDER BY a, b fixes the rows' order. Each table
-- has 300 rows, so each index is one leaf page: PostgreSQL's B-tree deduplication of
-- equal keys (which the sandbox's index size model leaves out) does not change its
-- size, and the index costs are PostgreSQL's to the cent.

-- @shard s1
create table incp_hi (a int, b int, c text);
create index on incp_hi (a);

-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;

create table incs (a int, b int, c text);
insert into incs select i / 10, (i * 7) % 100, 'c' || (i % 13) from generate_series(1, 300) i;
create index on incs (a);

create table incs2 (a int, b int);
insert into incs2 select i / 100, (i * 7) % 1000 from generate_series(1, 300) i;
create index on incs2 (a);

create table incp (a int, b int, c text) partition by range (a);
create table incp_lo partition of incp for values from (0) to (30);
create foreign table incp_hi partition of incp for values from (30) to (60) server s1;
create index on incp_lo (a);
insert into incp select i / 10, (i * 7) % 100, 'p' || (i % 13) from generate_series(0, 599) i;

-- incl: range-partitioned on a over two local partitions, the index on a in each.
create table incl (a int, b int, c text) partition by range (a);
create table incl_1 partition of incl for values from (0) to (15);
create table incl_2 partition of incl for values from (15) to (30);
insert into incl select i / 10, (i * 7) % 100, 'l' || (i % 13) from generate_series(0, 299) i;
create index on incl (a);

analyze incs, incs2, incp, incp_lo, incp_hi, incl, incl_1, incl_2;
