-- A corpus of queries (issue 9): one schema, then queries that tests/sql_corpus.rs runs
-- in the sandbox (sync and async) and on real PostgreSQL 15 (enable_async_append off
-- and on), comparing the rows and the plan's shape.
--
-- The schema: three shards; the coordinator has
--   h    hash-partitioned on id, four foreign partitions on two servers (h0, h1 on s1;
--        h2, h3 on s2);
--   r    range-partitioned on k, a local partition r_lo [0, 500) and a foreign one
--        r_hi [500, 1000) on s3;
--   l    list-partitioned on region: l_ns ('north', 'south') foreign on s3, l_ew
--        ('east', 'west') local, l_def the local default partition;
--   f    a plain foreign table on s2 (remote name f_remote), dim a small one beside it;
--   loc  a plain local table.
-- Columns are int, bigint, numeric and text; each table has rows with NULLs.

-- @shard s1
create table h0 (id int, grp int, amount numeric, name text, big bigint);
create table h1 (id int, grp int, amount numeric, name text, big bigint);
create index on h0 (grp);
create index on h1 (grp);
-- DML targets (h17d): written by the DML queries at the end, each run rolled back.
create table ins_remote (id int, grp int, amount numeric, name text);
create table ins_p1 (id int, grp int, amount numeric, name text);
-- (h23n) the parameterized Nested Loop's foreign partitions (no index: the shard's
-- EXPLAIN of a parameterized query is a seq scan, as the sandbox's local estimate),
-- filled and analyzed here so that PostgreSQL's remote estimates are exact.
create table pnl_t1 (a int, b int, c text);
create table pnl_t3 (a int, b int, c text);
insert into pnl_t1 select b % 100, b, 'r' || b from generate_series(0, 249) b;
insert into pnl_t3 select b % 100, b, 'r' || b from generate_series(500, 749) b;
analyze pnl_t1;
analyze pnl_t3;

-- @shard s2
create table h2 (id int, grp int, amount numeric, name text, big bigint);
create table h3 (id int, grp int, amount numeric, name text, big bigint);
create index on h2 (grp);
create index on h3 (grp);
create table f_remote (id int, cat text, val bigint, score numeric);
create index on f_remote (id);
create table dim (cat text, title text, weight int);
create table ins_p2 (id int, grp int, amount numeric, name text);
-- (h23n)
create table pnl_t2 (a int, b int, c text);
insert into pnl_t2 select b % 100, b, 'r' || b from generate_series(250, 499) b;
analyze pnl_t2;

-- @shard s3
create table r_hi (k int, v int, label text, amount numeric);
create index on r_hi (k);
create table l_ns (id int, region text, qty int, price numeric);
-- (h23s) Incremental Sort: the foreign partition of incs_p.
create table incs_p_hi (a int, b int, c text);

-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s3 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;
create user mapping for public server s2;
create user mapping for public server s3;

create table h (id int, grp int, amount numeric, name text, big bigint) partition by hash (id);
create foreign table h0 partition of h for values with (modulus 4, remainder 0) server s1;
create foreign table h1 partition of h for values with (modulus 4, remainder 1) server s1;
create foreign table h2 partition of h for values with (modulus 4, remainder 2) server s2;
create foreign table h3 partition of h for values with (modulus 4, remainder 3) server s2;

create table r (k int, v int, label text, amount numeric) partition by range (k);
create table r_lo partition of r for values from (0) to (500);
create foreign table r_hi partition of r for values from (500) to (1000) server s3;
create index on r_lo (k);

create table l (id int, region text, qty int, price numeric) partition by list (region);
create foreign table l_ns partition of l for values in ('north', 'south') server s3;
create table l_ew partition of l for values in ('east', 'west');
create table l_def partition of l default;

create foreign table f (id int, cat text, val bigint, score numeric) server s2 options (table_name 'f_remote');
create foreign table dim (cat text, title text, weight int) server s2;

create table loc (id int, cat text, qty int);
create index on loc (id);

-- DML targets (h17d): a foreign table on s1 (and the same remote table with
-- batch_size 7), a local table, a table range-partitioned on id over a local
-- partition and foreign ones on s1 and s2.
create foreign table ins_f (id int, grp int, amount numeric, name text) server s1 options (table_name 'ins_remote');
create foreign table ins_fb (id int, grp int, amount numeric, name text) server s1
  options (table_name 'ins_remote', batch_size '7');
create table ins_loc (id int, grp int, amount numeric, name text);
create table ins_p (id int, grp int, amount numeric, name text) partition by range (id);
create table ins_p0 partition of ins_p for values from (minvalue) to (500);
create foreign table ins_p1 partition of ins_p for values from (500) to (1500) server s1;
create foreign table ins_p2 partition of ins_p for values from (1500) to (maxvalue) server s2;

-- h: 2000 rows, 60 with NULLs in grp, amount, name or big, one with a NULL id (it goes
-- to the partition of remainder 0).
insert into h select i, i % 10, (i % 200) * 0.5, 'n' || to_char(i % 50, 'FM00'), i * 1000003
from generate_series(1, 2000) i;
insert into h (id, grp) select i, i % 10 from generate_series(2001, 2030) i;
insert into h (id, name, big) select i, 'n' || to_char(i % 50, 'FM00'), i from generate_series(2031, 2060) i;
insert into h (grp, amount, name) values (7, 1.5, 'nullid');

-- r: k from 0 to 999 (both partitions), and 143 rows with v NULL.
insert into r select i, i % 37, 'lbl' || to_char(i % 20, 'FM00'), (i % 90) * 0.5
from generate_series(0, 999) i;
insert into r (k, label) select i * 7, 'none' from generate_series(0, 142) i;

-- l: each region in its own statement; 'central' and NULL regions go to the default.
insert into l select i, 'north', i % 13, (i % 40) * 0.5 from generate_series(1, 150) i;
insert into l select i, 'south', i % 11, (i % 30) * 0.5 from generate_series(151, 300) i;
insert into l select i, 'east', i % 7, (i % 20) * 0.5 from generate_series(301, 420) i;
insert into l select i, 'west', i % 5, (i % 10) * 0.5 from generate_series(421, 540) i;
insert into l select i, 'central', i % 3, i * 0.5 from generate_series(541, 600) i;
insert into l (id, qty) select i, i % 13 from generate_series(601, 610) i;

-- f: 500 rows, val negative at first; 20 rows without cat and score, 10 without val.
insert into f select i, 'c' || (i % 6), i * 3 - 700, (i % 80) * 0.5 from generate_series(1, 500) i;
insert into f (id, val) select i, i from generate_series(501, 520) i;
insert into f (id, cat) select i, 'c9' from generate_series(521, 530) i;

insert into dim values ('c0', 'zero', 10), ('c1', 'one', 20), ('c2', 'two', 30), ('c3', 'three', 40),
  ('c4', 'four', 50), ('c7', 'seven', null);

-- loc: 300 rows, 10 without cat.
insert into loc select i, 'c' || (i % 4), i % 9 from generate_series(1, 300) i;
insert into loc (id, qty) select i, i from generate_series(301, 310) i;

-- The DML targets' first rows.
insert into ins_f select i, i % 3, i * 0.5, 'r' || i from generate_series(1, 5) i;
insert into ins_loc values (1, 1, 0.5, 'one'), (2, 2, 1.0, 'two'), (3, null, null, null);
insert into ins_p select i * 250, i, i * 1.5, 'p' || i from generate_series(0, 8) i;

analyze h, h0, h1, h2, h3, r, r_lo, r_hi, l, l_ns, l_ew, l_def, f, dim, loc;

-- (h23n) pnl: range-partitioned on b over three foreign partitions with
-- use_remote_estimate (postgres_fdw builds parameterized paths only with it), pnl1
-- and pnl3 on s1, pnl2 on s2; pnl_l: a small local table, one b in each partition.
create table pnl (a int, b int, c text) partition by range (b);
create foreign table pnl1 partition of pnl for values from (0) to (250) server s1
  options (table_name 'pnl_t1', use_remote_estimate 'true');
create foreign table pnl2 partition of pnl for values from (250) to (500) server s2
  options (table_name 'pnl_t2', use_remote_estimate 'true');
create foreign table pnl3 partition of pnl for values from (500) to (750) server s1
  options (table_name 'pnl_t3', use_remote_estimate 'true');
create table pnl_l (id int, b int, c text);
insert into pnl_l values (1, 10, 'x'), (2, 260, 'y'), (3, 510, 'z');
analyze pnl, pnl1, pnl2, pnl3, pnl_l;
-- @shard s1
-- (h23w) partitionwise join: the remote tables of pw_fa's and pw_hb's foreign partitions.
create table pw_fa1 (id int, x int, t text);
create table pw_hb2 (id int, y int, w text);

-- @shard s2
-- (h23w)
create table pw_fa2 (id int, x int, t text);
create table pw_fb1 (id int, y int, u text);

-- @shard s3
-- (h23w)
create table pw_fb2 (id int, y int, u text);

-- @coordinator
-- (h23w) partitionwise join: pairs of tables partitioned alike (the same bounds).
-- pw_la, pw_lb: range on id, three local partitions each.
create table pw_la (id int, x int, t text) partition by range (id);
create table pw_la1 partition of pw_la for values from (0) to (300);
create table pw_la2 partition of pw_la for values from (300) to (600);
create table pw_la3 partition of pw_la for values from (600) to (900);
create table pw_lb (id int, y int, u text) partition by range (id);
create table pw_lb1 partition of pw_lb for values from (0) to (300);
create table pw_lb2 partition of pw_lb for values from (300) to (600);
create table pw_lb3 partition of pw_lb for values from (600) to (900);
-- pw_fa, pw_fb: the same bounds, each pair's partitions foreign on two servers (no
-- join pushdown), the third pair local.
create table pw_fa (id int, x int, t text) partition by range (id);
create foreign table pw_fa1 partition of pw_fa for values from (0) to (300) server s1;
create foreign table pw_fa2 partition of pw_fa for values from (300) to (600) server s2;
create table pw_fa3 partition of pw_fa for values from (600) to (900);
create table pw_fb (id int, y int, u text) partition by range (id);
create foreign table pw_fb1 partition of pw_fb for values from (0) to (300) server s2;
create foreign table pw_fb2 partition of pw_fb for values from (300) to (600) server s3;
create table pw_fb3 partition of pw_fb for values from (600) to (900);
-- pw_ha, pw_hb: hash on id, modulus 3; pw_hb's second partition foreign on s1.
create table pw_ha (id int, x int, t text) partition by hash (id);
create table pw_ha0 partition of pw_ha for values with (modulus 3, remainder 0);
create table pw_ha1 partition of pw_ha for values with (modulus 3, remainder 1);
create table pw_ha2 partition of pw_ha for values with (modulus 3, remainder 2);
create table pw_hb (id int, y int, w text) partition by hash (id);
create table pw_hb0 partition of pw_hb for values with (modulus 3, remainder 0);
create table pw_hb1 partition of pw_hb for values with (modulus 3, remainder 1);
create foreign table pw_hb2 partition of pw_hb for values with (modulus 3, remainder 2) server s1;
-- pw_da, pw_db: list on k with a default partition (NULL keys go there).
create table pw_da (k text, v int) partition by list (k);
create table pw_da1 partition of pw_da for values in ('a', 'b');
create table pw_da2 partition of pw_da for values in ('c');
create table pw_dadef partition of pw_da default;
create table pw_db (k text, w int) partition by list (k);
create table pw_db1 partition of pw_db for values in ('b', 'a');
create table pw_db2 partition of pw_db for values in ('c');
create table pw_dbdef partition of pw_db default;

insert into pw_la select i, i % 10, 'a' || i from generate_series(0, 899) i;
insert into pw_lb select i * 3, i * 3 % 7, 'b' || i * 3 from generate_series(0, 299) i;
insert into pw_fa select i * 2, i * 2 % 10, 'a' || i * 2 from generate_series(0, 449) i;
insert into pw_fb select i * 3, i * 3 % 7, 'b' || i * 3 from generate_series(0, 299) i;
insert into pw_ha select i, i % 10, 'h' || i from generate_series(1, 600) i;
insert into pw_hb select i * 4 + 1, (i * 4 + 1) % 5, 'w' || i * 4 + 1 from generate_series(0, 149) i;
insert into pw_da select 'a', i from generate_series(1, 40) i;
insert into pw_da select 'b', i from generate_series(41, 80) i;
insert into pw_da select 'c', i from generate_series(81, 150) i;
insert into pw_da select 'z', i from generate_series(151, 200) i;
insert into pw_da (v) select i from generate_series(201, 210) i;
insert into pw_db select 'a', i from generate_series(1, 10) i;
insert into pw_db select 'c', i from generate_series(11, 30) i;
insert into pw_db select 'y', i from generate_series(31, 50) i;
insert into pw_db (w) values (1000), (1001);
analyze pw_la, pw_la1, pw_la2, pw_la3, pw_lb, pw_lb1, pw_lb2, pw_lb3, pw_fa, pw_fa1, pw_fa2, pw_fa3, pw_fb,
  pw_fb1, pw_fb2, pw_fb3, pw_ha, pw_ha0, pw_ha1, pw_ha2, pw_hb, pw_hb0, pw_hb1, pw_hb2, pw_da, pw_da1, pw_da2,
  pw_dadef, pw_db, pw_db1, pw_db2, pw_dbdef;
-- (h23s) Incremental Sort: incs_t a local table, a = i / 10 (groups of 10 rows) with
-- an index on a; incs_p range-partitioned on a over a local partition [0, 30) with an
-- index on a and a foreign one [30, 60) on s3. (a, b) is unique in both, and each
-- index is one leaf page (PostgreSQL's B-tree deduplication changes no size).
create table incs_t (a int, b int, c text);
insert into incs_t select i / 10, (i * 7) % 100, 'c' || (i % 13) from generate_series(1, 300) i;
create index on incs_t (a);
create table incs_p (a int, b int, c text) partition by range (a);
create table incs_p_lo partition of incs_p for values from (0) to (30);
create foreign table incs_p_hi partition of incs_p for values from (30) to (60) server s3;
create index on incs_p_lo (a);
insert into incs_p select i / 10, (i * 7) % 100, 'p' || (i % 13) from generate_series(0, 599) i;
analyze incs_t, incs_p, incs_p_lo, incs_p_hi;
-- @shard s2
-- (h17o) The user-defined operator === and function uf_abs exist on s2 as on the
-- coordinator: s2 lists postgres_fdw in `extensions` (below), so the coordinator sends
-- them there once they are members of postgres_fdw.
create operator === (leftarg = int, rightarg = int, procedure = int4eq);
create function uf_abs(int) returns int language internal immutable strict as 'int4abs';

-- @coordinator
-- (h17o) User-defined functions and operators (issue 17 item 4): SQL functions that
-- PostgreSQL inlines (the inlined expression ships), LANGUAGE internal functions and
-- operators over built-in procedures (evaluated in the scan's local Filter unless a
-- member of an extension the server lists in `extensions`).
create operator === (leftarg = int, rightarg = int, procedure = int4eq);
create operator <<< (leftarg = text, rightarg = text, procedure = text_lt);
create function uf_abs(int) returns int language internal immutable strict as 'int4abs';
create function uf_abs_local(int) returns int language internal immutable strict as 'int4abs';
create function uf_plus1(int) returns int language sql immutable as 'select $1 + 1';
create function uf_twice(x int) returns int language sql immutable as 'select x + x';
create function uf_half(numeric) returns numeric language sql immutable as 'select $1 / 2';
create function uf_tag(text) returns text language sql immutable as $$ select upper($1) || '-' || lower($1) $$;
create function uf_is_even(int) returns boolean language sql immutable as 'select $1 % 2 = 0';
create function uf_grp_ok(int) returns boolean language sql stable as 'select $1 > 3';
create function uf_vplus(int) returns int language sql volatile as 'select $1 + 2';
create function uf_triple(int) returns int language sql immutable strict as 'select $1 * 3';
create function uf_big(int) returns bigint language sql immutable as 'select $1 * 1000';
alter extension postgres_fdw add operator === (int, int);
alter extension postgres_fdw add function uf_abs(int);
alter server s2 options (add extensions 'postgres_fdw');

-- @shard s1
-- (h17d) ON CONFLICT: oc_f's remote table (no unique index: the DO NOTHING
-- postgres_fdw ships stores every row).
create table oc_remote (id int, grp int, name text);
insert into oc_remote values (1, 1, 'r1'), (2, 2, 'r2');

-- @coordinator
-- (h17d) ON CONFLICT targets: oc_loc with a primary key, oc_u with a unique column,
-- oc_f a foreign table on s1.
create table oc_loc (id int primary key, grp int, name text);
insert into oc_loc select i, i % 5, 'o' || i from generate_series(1, 20) i;
create table oc_u (id int, code int unique, name text);
insert into oc_u select i, i * 10, 'u' || i from generate_series(1, 10) i;
create foreign table oc_f (id int, grp int, name text) server s1 options (table_name 'oc_remote');

-- @shard s1
-- (h23m) partitionwise join pushdown: pwj_a's, pwj_b's and pwj_c's first partitions' remote tables.
create table pwj_a1r (id int, x int, t text);
create table pwj_b1r (id int, y int, u text);
create table pwj_c1r (id int, z int, v text);

-- @shard s2
-- (h23m)
create table pwj_a2r (id int, x int, t text);
create table pwj_b2r (id int, y int, u text);
create table pwj_c2r (id int, z int, v text);

-- @coordinator
-- (h23m) partitionwise joins whose pairs are foreign tables on one server (the join
-- pushed to it), and of three relations: pwj_a, pwj_b, pwj_c range-partitioned alike
-- on id, the first partitions foreign on s1, the second on s2, the third local.
create table pwj_a (id int, x int, t text) partition by range (id);
create foreign table pwj_a1 partition of pwj_a for values from (0) to (300) server s1 options (table_name 'pwj_a1r');
create foreign table pwj_a2 partition of pwj_a for values from (300) to (600) server s2 options (table_name 'pwj_a2r');
create table pwj_a3 partition of pwj_a for values from (600) to (900);
create table pwj_b (id int, y int, u text) partition by range (id);
create foreign table pwj_b1 partition of pwj_b for values from (0) to (300) server s1 options (table_name 'pwj_b1r');
create foreign table pwj_b2 partition of pwj_b for values from (300) to (600) server s2 options (table_name 'pwj_b2r');
create table pwj_b3 partition of pwj_b for values from (600) to (900);
create table pwj_c (id int, z int, v text) partition by range (id);
create foreign table pwj_c1 partition of pwj_c for values from (0) to (300) server s1 options (table_name 'pwj_c1r');
create foreign table pwj_c2 partition of pwj_c for values from (300) to (600) server s2 options (table_name 'pwj_c2r');
create table pwj_c3 partition of pwj_c for values from (600) to (900);
insert into pwj_a select i * 2, i % 10, 'a' || i * 2 from generate_series(0, 449) i;
insert into pwj_b select i * 3, i % 7, 'b' || i * 3 from generate_series(0, 299) i;
insert into pwj_c select i * 5, i % 4, 'c' || i * 5 from generate_series(0, 179) i;
analyze pwj_a, pwj_a1, pwj_a2, pwj_a3, pwj_b, pwj_b1, pwj_b2, pwj_b3, pwj_c, pwj_c1, pwj_c2, pwj_c3;

-- (h17c) data-modifying CTEs: cte_log, a local table a WITH's INSERT fills from a
-- DELETE's RETURNING.
create table cte_log (id int, grp int, amount numeric, name text);
-- @shard s1
-- (h17p) ON CONFLICT routed to a foreign partition: ocp_f1's remote table (no unique
-- index: the DO NOTHING postgres_fdw ships stores every row).
create table ocp_f1r (id int, grp int, name text);
insert into ocp_f1r values (1, 1, 'r1'), (2, 2, 'r2');

-- @coordinator
-- (h17p) INSERT … ON CONFLICT into partitioned tables (issue 17 item 3): ocp range-
-- partitioned on id over local partitions (a default one among them) with a primary
-- key and a unique index on id (each partition its copies: ocp_lo_pkey, ocp_lo_id_idx,
-- …); ocp_l list-partitioned on a text key with a UNIQUE constraint; ocp_f with a
-- foreign partition on s1 beside a local one (no unique index possible).
create table ocp (id int primary key, grp int, name text) partition by range (id);
create table ocp_lo partition of ocp for values from (0) to (50);
create table ocp_hi partition of ocp for values from (50) to (100);
create unique index on ocp (id);
create table ocp_def partition of ocp default;
insert into ocp select i, i % 5, 'p' || i from generate_series(1, 80) i;
insert into ocp values (150, 1, 'd150');
create table ocp_l (region text unique, qty int) partition by list (region);
create table ocp_l_ns partition of ocp_l for values in ('north', 'south');
create table ocp_l_ew partition of ocp_l for values in ('east', 'west');
insert into ocp_l values ('north', 1), ('east', 2), ('west', 3);
create table ocp_f (id int, grp int, name text) partition by range (id);
create foreign table ocp_f1 partition of ocp_f for values from (0) to (50) server s1 options (table_name 'ocp_f1r');
create table ocp_f2 partition of ocp_f for values from (50) to (100);
insert into ocp_f2 values (60, 0, 'l60');
-- @shard s1
-- (h23j) joins of three foreign tables on one server pushed down as one Foreign Scan:
-- j3a's, j3b's and j3c's remote tables.
create table j3a_r (id int, x int, t text);
create table j3b_r (id int, y int, u text);
create table j3c_r (id int, z int, v text);

-- @shard s2
-- (h23j) j3d's remote table, beside f_remote and dim.
create table j3d_r (cat text, note text, n int);

-- @coordinator
-- (h23j) j3a, j3b, j3c: three foreign tables on s1 (NULL ids in j3a and j3c); j3d a
-- fourth foreign table on s2, joined with f and dim.
create foreign table j3a (id int, x int, t text) server s1 options (table_name 'j3a_r');
create foreign table j3b (id int, y int, u text) server s1 options (table_name 'j3b_r');
create foreign table j3c (id int, z int, v text) server s1 options (table_name 'j3c_r');
create foreign table j3d (cat text, note text, n int) server s2 options (table_name 'j3d_r');
insert into j3a select i, i % 10, 'a' || i from generate_series(1, 200) i;
insert into j3a (x, t) values (1, 'none');
insert into j3b select i * 2, i % 7, 'b' || i from generate_series(1, 120) i;
insert into j3c select i * 3, i % 5, 'c' || i from generate_series(1, 90) i;
insert into j3c (z) values (1);
insert into j3d select 'c' || i, 'n' || i, i * 10 from generate_series(0, 8) i;
analyze j3a, j3b, j3c, j3d;
-- (h23i) parameterized index probes (issue 23 item 5): pk_big a big local table
-- indexed on id and on grp; pk_small 13 rows whose big_id values are distinct and not
-- NULL, so that PostgreSQL's Memoize (worth it only where the outer keys repeat) is not
-- chosen over its probes; pk_dup 200 rows whose big_id repeats five values.
create table pk_big (id int, grp int, pad text);
create index on pk_big (id);
create index on pk_big (grp);
insert into pk_big select i, i % 50, 'p' || i from generate_series(1, 20000) i;
create table pk_small (id int, big_id int, tag text);
insert into pk_small select i, i * 1637 % 20000 + 1, 't' || i from generate_series(1, 12) i;
insert into pk_small values (14, 19990, 'last');
create table pk_dup (id int, big_id int);
insert into pk_dup select i, (i % 5) * 100 + 1 from generate_series(1, 200) i;
analyze pk_big, pk_small, pk_dup;

-- @shard s1
-- (h17b) booleans: bp's first foreign partition.
create table bp1_r (id int, flag boolean, grp int, name text);

-- @shard s2
-- (h17b) bp's second foreign partition.
create table bp2_r (id int, flag boolean, grp int, name text);

-- @coordinator
-- (h17b) booleans: bp range-partitioned on id over foreign partitions on s1 and s2 and
-- a local one, with a boolean column (a NULL flag in each partition); bl a local table
-- with one, filled by comparisons and by boolin's words.
create table bp (id int, flag boolean, grp int, name text) partition by range (id);
create foreign table bp1 partition of bp for values from (0) to (100) server s1 options (table_name 'bp1_r');
create foreign table bp2 partition of bp for values from (100) to (200) server s2 options (table_name 'bp2_r');
create table bp3 partition of bp for values from (200) to (300);
create table bl (id int, flag boolean, note text);
insert into bp select i, i % 3 = 0, i % 5, 'b' || i from generate_series(1, 299) i;
insert into bp (id, grp, name) values (0, 0, 'null0'), (100, 0, 'null100'), (200, 0, 'null200'), (99, 4, 'null99');
insert into bl select i, i % 2 = 0, 'l' || i from generate_series(1, 40) i;
insert into bl (id, note) values (41, 'none'), (42, 'none');
insert into bl values (43, 'yes', 'yes'), (44, 'off', 'off'), (45, ' TRUE ', 'spaces');
analyze bp, bp1, bp2, bp3, bl;

-- (h23j) joins of 8 to 11 relations (standard_join_search up to geqo_threshold): a
-- fact table js_f with ten dimensions js_d1..js_d10 (a star: each joins js_f only),
-- and a chain js_c1..js_c11 (each joins its neighbours), local and analyzed.
create table js_f (id int, d1 int, d2 int, d3 int, d4 int, d5 int, d6 int, d7 int, d8 int, d9 int, d10 int, v int);
insert into js_f select i, i % 11, i % 13, i % 17, i % 19, i % 23, i % 29, i % 31, i % 37, i % 41, i % 43, i from generate_series(1, 300) i;
create table js_d1 (k int, t text);
create table js_d2 (k int, t text);
create table js_d3 (k int, t text);
create table js_d4 (k int, t text);
create table js_d5 (k int, t text);
create table js_d6 (k int, t text);
create table js_d7 (k int, t text);
create table js_d8 (k int, t text);
create table js_d9 (k int, t text);
create table js_d10 (k int, t text);
insert into js_d1 select i, 'a' || i from generate_series(0, 10) i;
insert into js_d2 select i, 'b' || i from generate_series(0, 12) i;
insert into js_d3 select i, 'c' || i from generate_series(0, 16) i;
insert into js_d4 select i, 'd' || i from generate_series(0, 18) i;
insert into js_d5 select i, 'e' || i from generate_series(0, 22) i;
insert into js_d6 select i, 'f' || i from generate_series(0, 28) i;
insert into js_d7 select i, 'g' || i from generate_series(0, 30) i;
insert into js_d8 select i, 'h' || i from generate_series(0, 36) i;
insert into js_d9 select i, 'i' || i from generate_series(0, 40) i;
insert into js_d10 select i, 'j' || i from generate_series(0, 42) i;
create table js_c1 (k int, v int);
create table js_c2 (k int, v int);
create table js_c3 (k int, v int);
create table js_c4 (k int, v int);
create table js_c5 (k int, v int);
create table js_c6 (k int, v int);
create table js_c7 (k int, v int);
create table js_c8 (k int, v int);
create table js_c9 (k int, v int);
create table js_c10 (k int, v int);
create table js_c11 (k int, v int);
insert into js_c1 select i % 20, i from generate_series(1, 40) i;
insert into js_c2 select i % 25, i from generate_series(1, 50) i;
insert into js_c3 select i % 30, i from generate_series(1, 60) i;
insert into js_c4 select i % 35, i from generate_series(1, 70) i;
insert into js_c5 select i % 40, i from generate_series(1, 80) i;
insert into js_c6 select i % 45, i from generate_series(1, 90) i;
insert into js_c7 select i % 50, i from generate_series(1, 100) i;
insert into js_c8 select i % 55, i from generate_series(1, 110) i;
insert into js_c9 select i % 60, i from generate_series(1, 120) i;
insert into js_c10 select i % 65, i from generate_series(1, 130) i;
insert into js_c11 select i % 70, i from generate_series(1, 140) i;
analyze js_f, js_d1, js_d2, js_d3, js_d4, js_d5, js_d6, js_d7, js_d8, js_d9, js_d10;
analyze js_c1, js_c2, js_c3, js_c4, js_c5, js_c6, js_c7, js_c8, js_c9, js_c10, js_c11;

-- @shard s1
-- (h23p) partitionwise join of differing bounds: pwm_c's first partition's remote table.
create table pwm_c1r (id int, z int, v text);

-- @shard s2
-- (h23p) pwm_c's second partition's remote table.
create table pwm_c2r (id int, z int, v text);

-- @coordinator
-- (h23p) partitionwise joins of tables whose partition bounds differ (partition_bounds_merge):
-- pwm_l range on id with no partition for [300, 600); pwm_d narrower ranges matching
-- pw_la's one to one; pwm_e two ranges inside pw_la's first; pwm_c foreign on s1
-- [0, 300) and s2 [300, 450), none above (pwj_a's partners); pwm_ma, pwm_mb list
-- partitions sharing some values; pwm_h hash modulus 2 (pw_ha's is 3); pwm_s a small
-- local table.
create table pwm_l (id int, z int, v text) partition by range (id);
create table pwm_l1 partition of pwm_l for values from (0) to (300);
create table pwm_l2 partition of pwm_l for values from (600) to (900);
create table pwm_d (id int, z int, v text) partition by range (id);
create table pwm_d1 partition of pwm_d for values from (0) to (200);
create table pwm_d2 partition of pwm_d for values from (300) to (500);
create table pwm_d3 partition of pwm_d for values from (600) to (1000);
create table pwm_e (id int, z int) partition by range (id);
create table pwm_e1 partition of pwm_e for values from (0) to (150);
create table pwm_e2 partition of pwm_e for values from (150) to (300);
create table pwm_e3 partition of pwm_e for values from (600) to (900);
create table pwm_c (id int, z int, v text) partition by range (id);
create foreign table pwm_c1 partition of pwm_c for values from (0) to (300) server s1 options (table_name 'pwm_c1r');
create foreign table pwm_c2 partition of pwm_c for values from (300) to (450) server s2 options (table_name 'pwm_c2r');
create table pwm_ma (k text, v int) partition by list (k);
create table pwm_ma1 partition of pwm_ma for values in ('a', 'b');
create table pwm_ma2 partition of pwm_ma for values in ('c');
create table pwm_ma3 partition of pwm_ma for values in ('d');
create table pwm_mb (k text, w int) partition by list (k);
create table pwm_mb1 partition of pwm_mb for values in ('a');
create table pwm_mb2 partition of pwm_mb for values in ('e', 'c');
create table pwm_mb3 partition of pwm_mb for values in ('f');
create table pwm_h (id int, z int, v text) partition by hash (id);
create table pwm_h0 partition of pwm_h for values with (modulus 2, remainder 0);
create table pwm_h1 partition of pwm_h for values with (modulus 2, remainder 1);
create table pwm_s (id int, name text);
insert into pwm_l select i * 5, i % 4, 'l' || i * 5 from generate_series(0, 59) i;
insert into pwm_l select 600 + i * 5, i % 4, 'l' || 600 + i * 5 from generate_series(0, 59) i;
insert into pwm_d select i * 5, i % 4, 'd' || i * 5 from generate_series(0, 39) i;
insert into pwm_d select 300 + i * 5, i % 4, 'd' || 300 + i * 5 from generate_series(0, 39) i;
insert into pwm_d select 600 + i * 5, i % 4, 'd' || 600 + i * 5 from generate_series(0, 79) i;
insert into pwm_e select i * 7, i from generate_series(0, 42) i;
insert into pwm_e select i * 7, i from generate_series(86, 128) i;
insert into pwm_c select i * 4, i % 6, 'c' || i * 4 from generate_series(0, 112) i;
insert into pwm_ma select 'a', i from generate_series(1, 25) i;
insert into pwm_ma select 'b', i from generate_series(26, 50) i;
insert into pwm_ma select 'c', i from generate_series(51, 75) i;
insert into pwm_ma select 'd', i from generate_series(76, 100) i;
insert into pwm_mb select 'a', i from generate_series(1, 15) i;
insert into pwm_mb select 'c', i from generate_series(16, 30) i;
insert into pwm_mb select 'e', i from generate_series(31, 45) i;
insert into pwm_mb select 'f', i from generate_series(46, 60) i;
insert into pwm_h select i * 2, i % 4, 'h' || i from generate_series(1, 300) i;
insert into pwm_s select i, 'n' || i from generate_series(0, 9) i;
analyze pwm_l, pwm_l1, pwm_l2, pwm_d, pwm_d1, pwm_d2, pwm_d3, pwm_e, pwm_e1, pwm_e2, pwm_e3, pwm_c, pwm_c1, pwm_c2,
  pwm_ma, pwm_ma1, pwm_ma2, pwm_ma3, pwm_mb, pwm_mb1, pwm_mb2, pwm_mb3, pwm_h, pwm_h0, pwm_h1, pwm_s;

-- @corpus
-- Each query: comment lines right above it (the first may start with [tags], which the
-- test counts), then its SQL, ending with `;` at the end of a line (no `;` inside).
-- `set name = value;` lines just before a query are made for that query only, on both
-- sides; so are `prepare name(…) as …;` lines (DEALLOCATEd after the query) and `execute
-- name(…);` lines followed by another statement line (executions the plan cache counts
-- before the query; the query may be `execute name(…)`), and `alter server NAME options
-- (add KEY 'value');` or `alter foreign table NAME options (add KEY 'value');` lines
-- (the option dropped after the query on PostgreSQL). A comment followed by a blank
-- line is a heading. Queries are numbered q001, …
-- in file order. `-- known: plan|rows|unsupported — why` lines are the ledger of known
-- differences from PostgreSQL: the test fails on a difference the ledger does not
-- list, and on a listed one that no longer happens.

-- ===== f: one foreign table =====

-- [foreign] every row
select * from f;

-- [foreign filter] a range on a bigint column
select id, val from f where val > 500;

-- [foreign filter text] equality on text
select id, cat from f where cat = 'c3';

-- [foreign filter null] IS NULL on text
select id, val from f where cat is null;

-- [foreign filter null] IS NOT NULL and IS NULL together
select id from f where val is not null and score is null;

-- [foreign filter numeric] numeric comparison
select id, score from f where score >= 35.5 and id < 100;

-- [foreign filter] BETWEEN or IN
select id from f where id between 10 and 20 or id in (100, 200, 300);

-- [foreign filter text] text inequalities
select cat, id from f where cat <> 'c1' and cat < 'c4';

-- [foreign filter] NOT over a comparison
select id from f where not (val > 0) and id > 200;

-- [foreign filter numeric] numeric equality
select id, score from f where score = 12.5;

-- [foreign expr] expressions in the select list
select id, val * 2 + 1, score * 2 from f where id <= 30;

-- [foreign agg] count(*)
select count(*) from f;

-- [foreign agg null] counts skip NULLs, sum/min/max over numeric and bigint
select count(*), count(cat), count(val), sum(val), min(score), max(score) from f;

-- [foreign agg filter] aggregates over a filter
select sum(score), count(*) from f where val < 0;

-- [foreign agg numeric] avg of a bigint
select avg(val) from f;

-- [foreign group null] GROUP BY a text column with a NULL group
select cat, count(*), sum(val) from f group by cat;

-- [foreign group order] GROUP BY with ORDER BY the key
select cat, count(*) from f group by cat order by cat;

-- [foreign group having] HAVING on an aggregate
select cat, sum(val) from f group by cat having sum(val) > 10000;

-- [foreign group order limit] ORDER BY an aggregate, LIMIT
select cat, max(val) from f group by cat order by 2 desc limit 3;

-- [foreign order] ORDER BY without LIMIT
select id, val from f order by val desc;

-- [foreign order limit] ORDER BY … LIMIT
select id, val from f order by val desc limit 5;

-- [foreign order limit offset numeric] two keys, OFFSET
select id, score from f order by score, id limit 10 offset 20;

-- [foreign order limit null] NULLs first in DESC
select id, cat from f order by cat desc, id limit 15;

-- [foreign order offset null] NULLs last in ASC
select id, cat from f order by cat, id offset 500;

-- [foreign order limit filter] a filter, ORDER BY, LIMIT
select id from f where cat = 'c2' order by id limit 3;

-- [foreign limit filter] LIMIT without ORDER BY (one row qualifies)
select id, cat from f where id = 7 limit 3;

-- [foreign group having order limit numeric] HAVING, ORDER BY DESC, LIMIT on an aggregate
select cat, count(*), min(score) from f where val > 0 group by cat having count(*) >= 20 order by cat desc limit 2;

-- ===== loc: a local table =====

-- [local filter] every column, a filter
select * from loc where qty = 8;

-- [local filter null] IS NULL
select id, qty from loc where cat is null;

-- [local filter index] equality on the indexed column
select * from loc where id = 42;

-- [local agg null text] aggregates, text min/max
select count(*), count(cat), sum(qty), min(cat), max(cat) from loc;

-- [local group order null] GROUP BY, ORDER BY the key
select cat, count(*), sum(qty) from loc group by cat order by cat;

-- [local order limit] two keys
select id, qty from loc order by qty desc, id limit 7;

-- [local order limit offset index] ORDER BY the indexed column DESC
select id from loc order by id desc limit 5 offset 3;

-- [local group having] HAVING count(*)
select qty, count(*) from loc group by qty having count(*) > 33;

-- [local expr filter] arithmetic in the select list
select id, qty * 10 - id from loc where id < 10;

-- [local group text filter] text comparison, GROUP BY
select cat, min(id) from loc where cat >= 'c2' group by cat;

-- [local order limit text null] NOT NULL, two DESC keys
select cat, id from loc where cat is not null order by cat desc, id desc limit 4;

-- ===== h: hash-partitioned, four foreign partitions on two servers =====

-- [hash] every row of every partition
select * from h;

-- [hash filter] a filter on a non-key column: every partition
select id, grp from h where grp = 3;

-- [hash pruned] equality on the key: one partition
select * from h where id = 17;

-- [hash pruned text] equality on the key, a text column
select id, name from h where id = 1999;

-- [hash pruned null] equality OR IS NULL on the key
select id, grp from h where id = 8 or id is null;

-- [hash pruned] IN on the key
select id, amount from h where id in (5, 6);

-- [hash filter] a range on the key cannot prune hash partitions
select id from h where id > 1990;

-- [hash pruned null] IS NULL on the key
select id, grp, name from h where id is null;

-- [hash agg null] count of NULLs in a non-key column
select count(*) from h where grp is null;

-- [hash order null] NULL and NOT NULL, ordered
select id, big from h where amount is null and big is not null order by id;

-- [hash agg numeric text] aggregates over all partitions
select count(*), sum(amount), min(name), max(big) from h;

-- [hash agg pruned] aggregates over one partition
select count(*), sum(big) from h where id = 77;

-- [hash group null] GROUP BY a non-key column (a NULL group)
select grp, count(*) from h group by grp;

-- [hash group order numeric] GROUP BY, ORDER BY the key
select grp, count(*), sum(amount) from h group by grp order by grp;

-- [hash group having order] HAVING and ORDER BY
select grp, sum(amount) from h group by grp having sum(amount) > 9000 order by grp;

-- [hash group order limit text] GROUP BY text, ORDER BY, LIMIT
select name, count(*) from h group by name order by name limit 5;

-- [hash partitionwise group order limit] partitionwise aggregate on the key
set enable_partitionwise_aggregate = on;
select id, count(*) from h group by id order by id limit 5;

-- [hash partitionwise pruned group] partitionwise aggregate over one partition
set enable_partitionwise_aggregate = on;
select id, count(*) from h where id = 77 group by id;

-- [hash partitionwise group filter numeric] partitionwise aggregate on the key, WHERE
set enable_partitionwise_aggregate = on;
select id, sum(amount) from h where id < 50 group by id;

-- [hash partitionwise group] partitionwise aggregate, the key not grouped
set enable_partitionwise_aggregate = on;
select grp, count(*) from h group by grp;

-- [hash partitionwise agg] partitionwise aggregate, no GROUP BY
set enable_partitionwise_aggregate = on;
select count(*) from h;

-- [hash order limit] ORDER BY the key, LIMIT
select id, amount from h order by id limit 10;

-- [hash order limit offset text] two keys, OFFSET
select id, name from h order by name, id limit 10 offset 40;

-- [hash order limit null] NULLs first in DESC
select id, big from h order by big desc, id limit 8;

-- [hash order filter] ORDER BY without LIMIT
select id, grp from h where grp = 9 order by id;

-- [hash pruned order limit numeric] one partition, ORDER BY, LIMIT
select id, amount from h where id = 33 order by amount limit 1;

-- [hash filter numeric] a numeric range
select id, amount from h where amount > 99 and amount < 99.6;

-- [hash filter order limit] a bigint range, ORDER BY, LIMIT
select id, big from h where big >= 1995000000 order by big limit 5;

-- [hash expr order] expressions in the select list
select id, amount * 2, big - id from h where id < 20 order by id;

-- [hash filter text order] text equality and a key range
select id, name from h where name = 'n07' and id < 300 order by id;

-- [hash filter null order limit text] IS NULL on text
select id, name from h where name is null order by id limit 5;

-- [hash group order limit text] two grouping keys
select grp, name, count(*) from h where id < 200 group by grp, name order by grp, name limit 10;

-- ===== r: range-partitioned, a local and a foreign partition =====

-- [range] both partitions
select * from r;

-- [range pruned local] the local partition only
select * from r where k >= 100 and k < 400;

-- [range pruned foreign] the foreign partition only
select k, v from r where k >= 900;

-- [range pruned foreign text] equality on the key
select k, label from r where k = 777;

-- [range pruned local] BETWEEN on the key and another filter
select k, v from r where k between 100 and 300 and v = 5;

-- [range pruned order] OR of ranges on the key: both partitions
select k from r where k < 10 or k > 990 order by k;

-- [range filter] a filter on a non-key column
select k, v from r where v = 36;

-- [range pruned null] IS NULL on a non-key column, the foreign partition
select k, label from r where v is null and k > 950;

-- [range filter] OR across columns
select k, v from r where v = 1 or label = 'lbl05' and k > 900;

-- [range agg null numeric text] aggregates over both partitions
select count(*), count(v), sum(amount), min(label) from r;

-- [range group text] GROUP BY text
select label, count(*) from r group by label;

-- [range group order null] GROUP BY with a NULL group, ORDER BY
select v, count(*), max(k) from r group by v order by v;

-- [range order limit] ORDER BY the key DESC, LIMIT
select k, v from r order by k desc limit 5;

-- [range order limit offset] ORDER BY the key, OFFSET across the partition bound
select k, label from r order by k limit 5 offset 495;

-- [range order filter] ORDER BY the key, both partitions
select k from r where k > 480 and k < 520 order by k;

-- [range order limit text] ORDER BY a text column and the key
select label, k from r order by label, k limit 6;

-- [range partitionwise group text] partitionwise aggregate, the key not grouped
set enable_partitionwise_aggregate = on;
select label, count(*) from r group by label;

-- [range partitionwise group filter numeric] partitionwise aggregate on the key
set enable_partitionwise_aggregate = on;
select k, sum(amount) from r where k % 100 = 0 group by k;

-- [range order limit numeric filter] a numeric filter, ORDER BY the key
select k, amount from r where amount >= 44.5 order by k limit 10;

-- [range agg pruned foreign] aggregates over the foreign partition only
select count(*), sum(v) from r where k >= 500;

-- [range agg pruned local numeric] aggregates over the local partition only
select max(v), min(amount) from r where k < 500;

-- [range agg pruned foreign group order limit numeric] GROUP BY over the foreign partition only
select amount, count(*) from r where k >= 500 group by amount order by amount desc limit 3;

-- ===== l: list-partitioned, foreign, local and default partitions =====

-- [list] every partition
select * from l;

-- [list pruned] one foreign partition
select id, qty from l where region = 'north';

-- [list pruned numeric] one local partition and another filter
select id, price from l where region = 'east' and qty > 3;

-- [list pruned] a value no list holds: the default partition
select id, region from l where region = 'central';

-- [list pruned null] IS NULL on the key: the default partition
select id, qty from l where region is null;

-- [list pruned] IN on the key
select id from l where region in ('north', 'west');

-- [list pruned text order limit] a range of key values: partitions and the default
select id, region from l where region >= 'north' and region <= 'south' order by id limit 5;

-- [list pruned null agg] equality OR IS NULL on the key
select count(*), sum(qty) from l where region = 'west' or region is null;

-- [list pruned order limit] two local partitions only
select id, qty from l where region in ('east', 'central') order by qty, id limit 5;

-- [list group null] GROUP BY the key
select region, count(*) from l group by region;

-- [list group order numeric] GROUP BY the key, ORDER BY
select region, sum(price), max(qty) from l group by region order by region;

-- [list order limit numeric] ORDER BY numeric DESC and id
select id, price from l order by price desc, id limit 6;

-- [list partitionwise group] partitionwise aggregate on the key
set enable_partitionwise_aggregate = on;
select region, count(*), sum(qty) from l group by region;

-- [list partitionwise group having] partitionwise aggregate with HAVING
set enable_partitionwise_aggregate = on;
select region, count(*) from l group by region having count(*) > 100;

-- [list pruned text order limit] an inequality on the key
select id, region from l where region > 'south' order by id limit 5;

-- [list agg null] counts over NULL keys
select count(*), count(region), sum(qty) from l;

-- [list order filter null] ORDER BY the key and id
select id, region, qty from l where qty = 0 order by region, id;

-- [list filter numeric order limit] a numeric filter
select id, price from l where price > 14.5 order by price desc, id limit 4;

-- ===== UNION ALL =====

-- [union foreign local] a foreign and a local table
select id from f where id < 5 union all select id from loc where id < 5;

-- [union foreign local text] two columns, text filters
select id, cat from f where cat = 'c1' and id < 40 union all select id, cat from loc where cat = 'c1' and id < 40;

-- [union foreign hash bigint] a foreign table and a partitioned one
select val from f where id < 10 union all select big from h where id < 10;

-- [union order limit hash range] ORDER BY and LIMIT over the union
select id from h where id < 100 union all select k from r where k < 100 order by 1 limit 10;

-- [union subquery agg] count over a union in FROM
select count(*) from (select id from f union all select id from loc) s;

-- [union hash pruned foreign] two one-row branches
select id, name from h where id = 5 union all select id, cat from f where id = 5;

-- [union subquery group null] GROUP BY over a union
select cat, count(*) from (select cat from f union all select cat from loc) u group by cat;

-- [union agg text] three aggregate branches
select 'f' as src, count(*) from f union all select 'loc', count(*) from loc union all select 'h', count(*) from h;

-- [union null] NULL branches
select cat from f where cat is null union all select cat from loc where cat is null;

-- [union order list] ORDER BY over a local table and a list partition
select id, qty from loc where id > 300 union all select id, qty from l where id > 600 order by id;

-- ===== Joins =====

-- [join foreign] two foreign tables on one server
select f.id, f.cat, d.title from f join dim d on f.cat = d.cat where f.id < 20;

-- [join foreign group] a join on one server, GROUP BY
select d.title, count(*) from f join dim d on f.cat = d.cat group by d.title;

-- [join local foreign] a local and a foreign table
select l.id, l.cat, d.weight from loc l join dim d on l.cat = d.cat where l.id < 15;

-- [join local foreign] a local table and a foreign one on the key
select loc.id, f.val from loc join f on loc.id = f.id where loc.qty = 3;

-- [join hash local] a partitioned table and a local one
select h.id, h.name, loc.qty from h join loc on h.id = loc.id where loc.id < 30;

-- [join left null group] LEFT JOIN with unmatched rows, GROUP BY
select d.cat, d.title, count(f.id) from dim d left join f on f.cat = d.cat group by d.cat, d.title;

-- [join left null order] LEFT JOIN on an expression, ORDER BY
-- known: unsupported — a join key that is an expression (loc.id + 500): the sandbox joins on column = column only; refused by name
select loc.id, f.score from loc left join f on f.id = loc.id + 500 where loc.id <= 35 order by loc.id;

-- [join range local] a range-partitioned table and a local one
select r.k, r.v, loc.cat from r join loc on r.k = loc.id where r.k < 50;

-- [join hash foreign order limit] ORDER BY and LIMIT over a join
select h.id, f.val from h join f on h.id = f.id order by f.val desc limit 5;

-- [join foreign local] three tables
select f.id, d.title, loc.qty from f join dim d on f.cat = d.cat join loc on loc.id = f.id where f.id < 50;

-- [join hash list] two partitioned tables, a pruned one
select h.id, l.region from h join l on h.id = l.id where l.region = 'south' and h.grp = 3;

-- [join foreign local] a join written with a comma
select f.id, loc.id from f, loc where f.id = loc.id and f.val > 400;

-- ===== Subqueries in FROM =====

-- [subquery foreign group] a filter over an aggregated subquery
select s.cat, s.n from (select cat, count(*) as n from f group by cat) s where s.n > 80;

-- [subquery foreign order limit] ORDER BY over an ordered, limited subquery
select * from (select id, val from f order by val limit 10) t order by id;

-- ===== Every partition pruned (a dummy relation: Result, One-Time Filter: false) =====

-- [range pruned all order] contradictory bounds on the key: no partition left
select k, v from r where k >= 600 and k < 200 order by v;

-- [range pruned all agg] an aggregate over no partition at all
select count(*), sum(v) from r where k < 0;

-- [settings hash pruning] enable_partition_pruning off: every partition scanned
set enable_partition_pruning = off;
select id, name from h where id = 5;

-- [settings hash] enable_hashjoin off in a query without a join: nothing to change
set enable_hashjoin = off;
select id, amount from h where id < 10;

-- [settings join hash local] enable_hashjoin off in a join
set enable_hashjoin = off;
select h.id, h.name, loc.qty from h join loc on h.id = loc.id where loc.id < 30;

-- [settings join hash list] enable_partitionwise_join on, two tables partitioned differently: no partitionwise join
set enable_partitionwise_join = on;
select h.id, l.region from h join l on h.id = l.id where l.region = 'south' and h.grp = 3;

-- ===== Constant quals (eval_const_expressions: true dropped, false a dummy relation) =====

-- [const true foreign] a constant-true qual is neither sent nor a Filter
select id, val from f where 1 = 1 and id < 5;

-- [const false foreign agg] a constant-false qual: no scan, a dummy Result under the aggregate
select count(*) from f where 1 = 2;

-- [const false union member] a dummy UNION ALL member is left out; the lone member is not under an Append
select count(*) from (select id from f where 2 < 1 union all select id from loc) s;

-- [const null partitioned] NULL = 1 rejects every row: no partition scanned
select id, name from h where null = 1 order by id;

-- ===== Prepared statements: custom and generic plans, run-time partition pruning =====

-- [prepared custom hash] force_custom_plan: the value is a constant, pruned at plan time to one partition
set plan_cache_mode = force_custom_plan;
prepare ph_custom(int) as select id, name from h where id = $1;
execute ph_custom(5);

-- [prepared generic hash pruning] force_generic_plan: an Append over every partition, three removed at executor startup
set plan_cache_mode = force_generic_plan;
prepare ph_generic(int) as select id, name from h where id = $1;
execute ph_generic(5);

-- [prepared auto custom hash] auto: the first execution is custom
prepare ph_auto(int) as select id, name from h where id = $1;
execute ph_auto(7);

-- [prepared auto custom hash] auto after five executions: the generic Append over four scans costs more than the pruned custom plans
prepare ph_auto5(int) as select id, name from h where id = $1;
execute ph_auto5(1);
execute ph_auto5(2);
execute ph_auto5(3);
execute ph_auto5(4);
execute ph_auto5(5);
execute ph_auto5(6);

-- [prepared auto generic foreign] auto after five executions on a plain foreign table: the generic plan is no dearer, so it is used ($1 in the remote query)
prepare pf_auto5(int) as select id, val from f where id = $1;
execute pf_auto5(1);
execute pf_auto5(2);
execute pf_auto5(3);
execute pf_auto5(4);
execute pf_auto5(5);
execute pf_auto5(6);

-- [prepared generic range pruning local] a range key below the value: the foreign partition removed, the local one scanned
set plan_cache_mode = force_generic_plan;
prepare pr_lt(int) as select k, v from r where k < $1;
execute pr_lt(300);

-- [prepared generic range] a range key below a value in the upper partition: nothing removed
set plan_cache_mode = force_generic_plan;
prepare pr_lt2(int) as select k, v from r where k < $1;
execute pr_lt2(700);

-- [prepared generic range pruning foreign] the local partition removed: an async Append with one async child
set plan_cache_mode = force_generic_plan;
prepare pr_ge(int) as select k, label from r where k >= $1;
execute pr_ge(600);

-- [prepared generic range pruning] two parameters bound the key
set plan_cache_mode = force_generic_plan;
prepare pr_between(int, int) as select k, v from r where k >= $1 and k < $2;
execute pr_between(480, 520);

-- [prepared generic list pruning foreign] a list value of the foreign partition
set plan_cache_mode = force_generic_plan;
prepare pl_eq(text) as select id, region, qty from l where region = $1;
execute pl_eq('north');

-- [prepared generic list pruning local] a list value of the local partition
set plan_cache_mode = force_generic_plan;
prepare pl_eq2(text) as select id, region from l where region = $1;
execute pl_eq2('west');

-- [prepared generic list pruning default] a value no list holds: the default partition only
set plan_cache_mode = force_generic_plan;
prepare pl_eq3(text) as select id, region from l where region = $1;
execute pl_eq3('central');

-- [prepared generic hash pruning agg] an aggregate over the pruned Append
set plan_cache_mode = force_generic_plan;
prepare ph_count(int) as select count(*) from h where id = $1;
execute ph_count(42);

-- [prepared generic hash pruning] IN with two parameters: the partitions of either value
set plan_cache_mode = force_generic_plan;
prepare ph_in(int, int) as select id, grp from h where id in ($1, $2);
execute ph_in(1, 2);

-- [prepared generic hash] a parameter on a column that is not the key: no run-time pruning, $1 in every remote query
set plan_cache_mode = force_generic_plan;
prepare ph_grp(int) as select id, grp from h where grp = $1 and id < 40;
execute ph_grp(3);

-- [prepared generic range pruned all] a value no partition holds: every subplan removed
set plan_cache_mode = force_generic_plan;
prepare pr_none(int) as select k, v from r where k = $1;
execute pr_none(5000);

-- [prepared generic hash pruned all] a NULL value: the key compared with NULL holds for no row
set plan_cache_mode = force_generic_plan;
prepare ph_null(int) as select id, name from h where id = $1;
execute ph_null(null);

-- [prepared custom untyped foreign] parameter types inferred from the column ($1 text)
prepare pf_untyped as select id, cat from f where cat = $1 and id < $2;
execute pf_untyped('c3', 100);

-- [prepared generic untyped foreign] the same, generic: remote parameters numbered in the remote query's order
set plan_cache_mode = force_generic_plan;
prepare pf_untyped_g as select id, cat from f where id < $2 and cat = $1;
execute pf_untyped_g('c3', 100);

-- [prepared generic range pruning order limit] a Merge Append over both partitions, the local one removed at startup
set plan_cache_mode = force_generic_plan;
prepare pm_ge(int) as select k, label from r where k >= $1 order by k limit 5;
execute pm_ge(600);

-- [prepared generic hash pruning join] a join side's Append prunes at startup too
set plan_cache_mode = force_generic_plan;
prepare pj(int) as select h.id, f.val from h join f on h.id = f.id where h.id = $1;
execute pj(77);

-- [prepared generic union] UNION ALL of two partitioned tables, each pruned by its own parameter
set plan_cache_mode = force_generic_plan;
prepare pu2(int, text) as select id from h where id = $1 union all select id from l where region = $2;
execute pu2(9, 'east');

-- [prepared generic foreign untyped] a parameter in the select list (text) and one in the remote query, where it is $1
set plan_cache_mode = force_generic_plan;
prepare pf_out as select $1, id from f where id < $2;
execute pf_out('hello', 3);

-- [prepared generic hash partitionwise agg] per-partition aggregates pushed to the shards: that Append (an upper relation's) gets no run-time pruning, all four stay
set enable_partitionwise_aggregate = on;
set plan_cache_mode = force_generic_plan;
prepare pa(int, int) as select id, count(*), sum(grp) from h where id in ($1, $2) group by id;
execute pa(10, 11);

-- [prepared noparams hash] no parameters: the generic plan, which is the plan of the query
prepare pn as select id, name from h where id = 5;
execute pn;

-- ===== Set operations and text (issue 17) =====

-- [setop union foreign local] UNION without ALL: duplicates removed
select id from f where id < 10 union select id from loc where id < 10;

-- [setop union text null] UNION over text columns with NULLs
select cat from f union select cat from loc;

-- [setop union hash range] UNION of two partitioned tables
select grp from h union select v from r;

-- [setop union list local text] a list-partitioned table and a local one
select region from l union select cat from loc;

-- [setop union three] three branches, one UNION
select id from f where id < 5 union select id from loc where id < 5 union select id from h where id < 5;

-- [setop union all mixed] UNION ALL under UNION is folded into it
select id from f where id < 10 union all select id from loc where id < 10 union select id from h where id < 10;

-- [setop union order limit] ORDER BY and LIMIT over a UNION
select id from h where id < 50 union select id from loc where qty = 3 order by 1 limit 10;

-- [setop union order limit text null] ORDER BY text and LIMIT over a UNION
select cat from f union select cat from loc order by cat desc limit 3;

-- [setop union two columns] two columns
select id, cat from f where id < 30 union select id, cat from loc where id < 30;

-- [setop union subquery group] GROUP BY over a UNION in FROM
select cat, count(*) from (select cat from f union select cat from loc) s group by cat;

-- [setop intersect foreign local] INTERSECT
select id from f where id < 20 intersect select id from loc;

-- [setop intersect all] INTERSECT ALL keeps duplicates
select cat from f where id < 100 intersect all select cat from loc;

-- [setop intersect text] INTERSECT of two foreign tables
select cat from f intersect select cat from dim;

-- [setop intersect hash order] INTERSECT ordered
select id from h intersect select id from f where id < 100 order by id;

-- [setop except text null] EXCEPT over text
select cat from f except select cat from loc;

-- [setop except all] EXCEPT ALL subtracts counts
select cat from f except all select cat from loc;

-- [setop except hash range] EXCEPT of a partitioned table and another
select id from h where id < 100 except select k from r;

-- [setop except two columns] two columns
select id, name from h where id < 30 except select id, cat from f;

-- [setop except order limit] EXCEPT, ORDER BY and LIMIT
select qty from loc except select qty from l order by qty desc limit 4;

-- [setop branch order limit] UNION ALL of ordered, limited branches
(select id from f order by id limit 5) union all (select id from loc order by qty desc, id limit 5);

-- [setop branch order limit union] UNION of ordered, limited branches
(select id from f order by val desc limit 3) union (select id from loc order by qty, id limit 3);

-- [setop branch order limit intersect] INTERSECT of limited branches
(select id from h order by id limit 20) intersect (select id from loc order by qty, id limit 10);

-- [setop nested] EXCEPT of a UNION
(select id from f where id < 10 union select id from loc where id < 20) except select id from h where id < 5;

-- [text concat foreign] || in WHERE: textcat is immutable, shipped
select id from f where cat || 'x' = 'c1x' and id < 30;

-- [text concat select] || in the select list
select id, cat || '/' || cat from f where id < 6;

-- [text concat int local] text || int is anytextcat (stable): not shipped
select id from f where cat || id = 'c11';

-- [text length foreign] length() in WHERE, shipped to every partition
select id, length(name) from h where length(name) > 3;

-- [text upper lower] upper and lower
select id, upper(cat) from f where lower(cat) = 'c3' and id < 30;

-- [text like foreign] LIKE shipped
select id from f where cat like 'c1%' and id < 40;

-- [text not like hash] NOT LIKE over partitions
select id, name from h where name not like 'n1%' and id < 20;

-- [text ilike local] ILIKE on a local table
select id from loc where cat ilike 'C2' and id < 30;

-- [text like list] LIKE over foreign and local partitions
select id, region from l where region like '%th' and id % 20 = 0;

-- [text substr foreign] substr in the select list and WHERE
select id, substr(cat, 2) from f where substr(cat, 1, 1) = 'c' and id < 8;

-- [text like dim] LIKE on a small foreign table
select cat, title from dim where title like '%e%';

-- [text user foreign] CURRENT_USER in the select list: stable, evaluated locally
select id, current_user, session_user from f where id < 3;

-- [gating foreign] a pseudoconstant qual gates the scan
select id from f where current_user = session_user and id < 5;

-- [gating hash] a pseudoconstant qual over a partitioned table
select id from h where current_user = session_user and id < 10;

-- [gating union] a pseudoconstant qual in each UNION ALL branch
select id from f where current_user = session_user and id < 5 union all select id from h where current_user = session_user and id < 5;

-- [gating local] a pseudoconstant qual over a local table
select id from loc where current_user <> session_user;

-- [gating range] a pseudoconstant qual over local and foreign partitions
select count(*) from r where session_user = current_user;

-- [series] generate_series with a step
select * from generate_series(1, 10, 3);

-- [series] a descending generate_series
select g from generate_series(10, 1, -2) g;

-- [setop union settings] enable_hashagg off: UNION sorts, then Unique
set enable_hashagg = off;
select id from f where id < 10 union select id from loc where id < 10;

-- [setop except settings] enable_hashagg off: EXCEPT by a sorted SetOp
set enable_hashagg = off;
select cat from f except select cat from loc;

-- [setop intersect all settings] enable_hashagg off: INTERSECT ALL sorted
set enable_hashagg = off;
select qty from loc where id < 40 intersect all select qty from l where id < 40;

-- [setop union all gating] a pseudoconstant qual in one branch only, async Append
select id from f where id < 4 union all select id from loc where id < 4 and session_user = current_user;

-- [setop union settings hash range list] work_mem too small for the hash table: UNION sorts
set work_mem = '64kB';
select id, name from h union select k, label from r union select id, region from l union select id, cat from f;

-- ===== Join paths: the method by cost, enable_* settings, outer joins =====

-- [join method local foreign] a local table and a foreign one, the method by cost
select loc.id, f.val from loc join f on loc.id = f.id where f.val > 0;

-- [join method settings local foreign index] enable_hashjoin off: merge or nested loop by cost
set enable_hashjoin = off;
select loc.id, f.val from loc join f on loc.id = f.id where f.val > 0;

-- [join method settings list foreign] a list-partitioned table and a foreign one, enable_mergejoin off
set enable_mergejoin = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] enable_nestloop off
set enable_nestloop = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] hash and merge joins off: a Nested Loop
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] hash joins and nested loops off: a Merge Join
set enable_hashjoin = off;
set enable_nestloop = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] merge joins and nested loops off: a Hash Join
set enable_mergejoin = off;
set enable_nestloop = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] every method off: the cheapest disabled one
set enable_hashjoin = off;
set enable_mergejoin = off;
set enable_nestloop = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] hash and merge off, enable_material off: the inner side rescanned
set enable_hashjoin = off;
set enable_mergejoin = off;
set enable_material = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method settings list foreign] enable_hashjoin and enable_material off
set enable_hashjoin = off;
set enable_material = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- [join method hash foreign] a partitioned table and a foreign one
select f.id, h.name from f join h on f.id = h.id where f.cat = 'c1';

-- [join method settings hash foreign] enable_hashjoin off
set enable_hashjoin = off;
select f.id, h.name from f join h on f.id = h.id where f.cat = 'c1';

-- [join method settings hash foreign] hash and merge joins off
set enable_hashjoin = off;
set enable_mergejoin = off;
select f.id, h.name from f join h on f.id = h.id where f.cat = 'c1';

-- [join method settings hash foreign] hash joins and nested loops off
set enable_hashjoin = off;
set enable_nestloop = off;
select f.id, h.name from f join h on f.id = h.id where f.cat = 'c1';

-- [join method settings hash foreign] merge joins off
set enable_mergejoin = off;
select f.id, h.name from f join h on f.id = h.id where f.cat = 'c1';

-- [join method range list] a range- and a list-partitioned table
select r.k, l.qty from r join l on r.k = l.id where l.qty < 3;

-- [join method settings range list] enable_hashjoin off
set enable_hashjoin = off;
select r.k, l.qty from r join l on r.k = l.id where l.qty < 3;

-- [join method settings range list] hash and merge joins off
set enable_hashjoin = off;
set enable_mergejoin = off;
select r.k, l.qty from r join l on r.k = l.id where l.qty < 3;

-- [join method settings range list] hash joins and nested loops off
set enable_hashjoin = off;
set enable_nestloop = off;
select r.k, l.qty from r join l on r.k = l.id where l.qty < 3;

-- [join method list local] a list-partitioned table and a local one
select l.id, l.region, loc.cat from l join loc on l.id = loc.id where loc.qty > 5;

-- [join method settings list local] enable_hashjoin off
set enable_hashjoin = off;
select l.id, l.region, loc.cat from l join loc on l.id = loc.id where loc.qty > 5;

-- [join method settings list local index] hash and merge joins off
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, l.region, loc.cat from l join loc on l.id = loc.id where loc.qty > 5;

-- [join method hash local] a partitioned table and a local one on a duplicated column
select count(*) from h join loc on h.grp = loc.qty where loc.id < 40;

-- [join method settings hash local] the same, enable_hashjoin off: equal keys merged again
set enable_hashjoin = off;
select count(*) from h join loc on h.grp = loc.qty where loc.id < 40;

-- [join method settings hash local] the same, hash and merge joins off
set enable_hashjoin = off;
set enable_mergejoin = off;
select count(*) from h join loc on h.grp = loc.qty where loc.id < 40;

-- [join method text foreign local] a join on text keys
select loc.id, d.title from loc join dim d on loc.cat = d.cat where loc.qty = 4;

-- [join method settings text foreign local] on text keys, enable_hashjoin off
set enable_hashjoin = off;
select loc.id, d.title from loc join dim d on loc.cat = d.cat where loc.qty = 4;

-- [join method settings text foreign local] on text keys, hash joins and nested loops off
set enable_hashjoin = off;
set enable_nestloop = off;
select loc.id, d.title from loc join dim d on loc.cat = d.cat where loc.qty = 4;

-- [join method filter list foreign] a condition over both sides besides the key: a Join Filter
select l.id, f.val, l.qty from l join f on l.id = f.id and f.val > l.qty * 100;

-- [join method settings filter list foreign] the Join Filter under a Merge Join
set enable_hashjoin = off;
set enable_nestloop = off;
select l.id, f.val, l.qty from l join f on l.id = f.id and f.val > l.qty * 100;

-- [join method settings filter list foreign] the Join Filter beside a Nested Loop's own
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, f.val, l.qty from l join f on l.id = f.id and f.val > l.qty * 100;

-- [join method group list foreign] an aggregate over a join
select l.region, count(*), sum(f.val) from l join f on l.id = f.id group by l.region;

-- [join method settings group list foreign] an aggregate over a Merge Join
set enable_hashjoin = off;
select l.region, count(*), sum(f.val) from l join f on l.id = f.id group by l.region;

-- [join method order list foreign] ORDER BY the join key
select l.id, f.score from l join f on l.id = f.id where f.score > 30 order by l.id;

-- [join method settings order list foreign] ORDER BY the join key over a Merge Join: no Sort above
set enable_hashjoin = off;
set enable_nestloop = off;
select l.id, f.score from l join f on l.id = f.id where f.score > 30 order by f.id;

-- [join method order limit hash foreign] ORDER BY another column and LIMIT over a join
select f.id, h.amount from f join h on f.id = h.id where h.grp = 2 order by h.amount desc, f.id limit 7;

-- [join method settings order limit hash foreign] the same, enable_hashjoin off
set enable_hashjoin = off;
select f.id, h.amount from f join h on f.id = h.id where h.grp = 2 order by h.amount desc, f.id limit 7;

-- [join method limit list foreign] LIMIT without ORDER BY over a join
select l.id, f.cat from l join f on l.id = f.id limit 4;

-- [join method range foreign] a range partition pruned to its foreign one and a foreign table
select r.k, f.cat from r join f on r.k = f.id where r.k >= 500 and f.val > 0;

-- [join method settings range foreign] the same, enable_hashjoin off
set enable_hashjoin = off;
select r.k, f.cat from r join f on r.k = f.id where r.k >= 500 and f.val > 0;

-- [join method null foreign local] keys with NULLs never match
select f.id, loc.qty from f join loc on f.val = loc.qty where f.id > 495;

-- [join method settings null foreign local] keys with NULLs, merged
set enable_hashjoin = off;
set enable_nestloop = off;
select f.id, loc.qty from f join loc on f.val = loc.qty where f.id > 495;

-- [join method numeric foreign] numeric keys between a partitioned and a foreign table
select count(*) from h join f on h.amount = f.score where h.id < 100;

-- [join method settings numeric foreign] numeric keys, enable_hashjoin off
set enable_hashjoin = off;
select count(*) from h join f on h.amount = f.score where h.id < 100;

-- [join left null foreign local] LEFT JOIN: every loc row, f's columns NULL where no f row matches
select loc.id, loc.qty, f.val from loc left join f on loc.qty = f.id where loc.id > 290;

-- [join left null settings foreign local] LEFT JOIN, hash joins off
set enable_hashjoin = off;
select loc.id, loc.qty, f.val from loc left join f on loc.qty = f.id where loc.id > 290;

-- [join left null settings foreign local] LEFT JOIN, hash and merge joins off: Nested Loop Left Join
set enable_hashjoin = off;
set enable_mergejoin = off;
select loc.id, loc.qty, f.val from loc left join f on loc.qty = f.id where loc.id > 290;

-- [join left hash foreign] LEFT JOIN of a small foreign table to a partitioned one: the small side preserved
select d.cat, d.title, h.id from dim d left join h on h.grp = d.weight;

-- [join left settings hash foreign] the same LEFT JOIN merged
set enable_hashjoin = off;
set enable_nestloop = off;
select d.cat, d.title, h.id from dim d left join h on h.grp = d.weight;

-- [join right null list foreign] RIGHT JOIN
select l.id, l.region, f.cat from l right join f on l.id = f.id where f.id > 480;

-- [join right null settings list foreign] RIGHT JOIN, merged
set enable_hashjoin = off;
select l.id, l.region, f.cat from l right join f on l.id = f.id where f.id > 480;

-- [join full null list foreign] FULL JOIN: unmatched rows of both sides
select l.id, f.id from l full join f on l.id = f.id where l.id is null or f.id is null;

-- [join full null local foreign] FULL JOIN on a duplicated key
select loc.qty, d.weight from loc full join dim d on loc.qty = d.weight;

-- [join full null settings local foreign] FULL JOIN with hash joins off: merged
set enable_hashjoin = off;
select loc.qty, d.weight from loc full join dim d on loc.qty = d.weight;

-- [join full null settings local foreign] FULL JOIN with merge joins off: hashed
set enable_mergejoin = off;
select loc.qty, d.weight from loc full join dim d on loc.qty = d.weight;

-- [join left null filter foreign local] LEFT JOIN with an ON condition on the nullable side and IS NULL in WHERE
select loc.id, f.val from loc left join f on loc.id = f.id and f.val > 0 where f.val is null and loc.id < 250;

-- [join left reduced foreign local] a strict WHERE condition on the nullable side: an inner join
select loc.id, f.val from loc left join f on loc.id = f.id where f.val > 200;

-- [join left null order limit foreign local] LEFT JOIN, ORDER BY the preserved key, LIMIT
select f.id, loc.cat from f left join loc on f.id = loc.id order by f.id limit 12;

-- [join method keys hash local] two equalities between the sides: both in the Hash Cond
select h.id, h.grp, loc.qty from h join loc on h.grp = loc.qty and h.id = loc.id where loc.id < 100;

-- [join method keys settings hash local] two equalities, hash joins off
set enable_hashjoin = off;
set enable_nestloop = off;
select h.id, h.grp, loc.qty from h join loc on h.grp = loc.qty and h.id = loc.id where loc.id < 100;

-- [join method keys settings list foreign] two equalities under a Nested Loop: one Join Filter
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, f.val from l join f on l.id = f.id and l.qty = f.val;

-- [join method order limit list foreign] ORDER BY the join key and LIMIT: the ordered sides merged, stopped at the LIMIT
select l.id, l.region, f.cat from l join f on l.id = f.id order by l.id limit 6;

-- [join left order limit hash foreign] LEFT JOIN, ORDER BY a preserved column, LIMIT
select d.title, h.id from dim d left join h on h.grp = d.weight order by d.title desc limit 3;

-- [join method order limit settings hash list] hash joins off, ORDER BY a column of one side with LIMIT
set enable_hashjoin = off;
select h.id, l.qty from h join l on h.id = l.id where l.qty = 4 order by h.name limit 5;

-- [join method settings list foreign] enable_sort and enable_hashjoin off: a Merge Join's Sorts cost disable_cost, so a Nested Loop
set enable_sort = off;
set enable_hashjoin = off;
select l.id, f.val from l join f on l.id = f.id where f.val > 0;

-- ===== Subqueries: InitPlans (issue 17; subselect.c, nodeSubplan.c) =====

-- [subquery initplan foreign partitioned async] a scalar subquery over the same foreign partitions: an InitPlan whose value goes to the shards as $1
select id, name from h where amount > (select avg(amount) from h) order by id;

-- [subquery initplan foreign partitioned agg] the count above the Append, the InitPlan's value in every partition's remote WHERE
select count(*) from h where amount > (select avg(amount) from h);

-- [subquery initplan foreign partitioned] an InitPlan value and a constant in the remote WHERE
select id, name from h where amount > (select avg(amount) from h) and grp = 3 order by id;

-- [subquery initplan foreign plain] a plain foreign table against its own average
select id, val from f where val > (select avg(val) from f) order by id;

-- [subquery initplan foreign plain agg pushdown] the aggregate pushed down with the InitPlan's value in its WHERE
select count(*) from f where score < (select avg(score) from f);

-- [subquery initplan foreign other table] the InitPlan reads another server's table
select id from h where amount > (select avg(score) from f) order by id limit 10;

-- [subquery initplan foreign null] a subquery with no row is NULL: no row passes
select count(*) from f where val > (select val from f where id = -1);

-- [subquery initplan foreign text] a text value from one partition compared in the others
select id, name from h where name = (select name from h where id = 7) order by id;

-- [subquery initplan local] a local table against its own average
select id, qty from loc where qty > (select avg(qty) from loc) order by id;

-- [subquery initplan local and] an InitPlan with another condition
select count(*) from loc where qty > (select avg(qty) from loc where qty is not null) and cat is not null;

-- [subquery initplan range mixed] a partitioned table with a local and a foreign partition, on a non-key column
select count(*), sum(v) from r where v > (select avg(v) from r);

-- [subquery initplan list group] a list-partitioned table, grouped
select region, count(*) from l where qty > (select avg(qty) from l) group by region order by region;

-- [subquery initplan select list foreign] a subquery's value in the select list over a local table
select id, (select count(*) from f) as n from loc where qty < 5 order by id;

-- [subquery initplan select list local] a local subquery's value in the select list
select id, (select sum(qty) from loc) from loc where qty < 3 order by id;

-- [subquery initplan select list arithmetic] the value in an expression of the select list
select id, val - (select count(*) from dim) as d from f where id < 10 order by id;

-- [subquery initplan select list agg] beside a pushed-down aggregate
select count(*), (select count(*) from dim) from f;

-- [subquery initplan having partitioned] HAVING against a subquery's value, over the partitions' Append
select grp, count(*) from h group by grp having count(*) > (select count(*) / 20 from h) order by grp;

-- [subquery initplan having foreign pushdown] HAVING with the value pushed to the remote with the aggregate
select cat, count(*) from f group by cat having count(*) > (select count(*) from dim) order by cat;

-- [subquery initplan two] two InitPlans: the select list's first, then WHERE's
select id, (select count(*) from dim) as d from f where val > (select avg(val) from f) order by id limit 5;

-- [subquery initplan never executed] no row reaches the select list: its InitPlan never runs
select id, (select count(*) from dim) from loc where qty < 0;

-- [subquery semi join] x IN (SELECT …): PostgreSQL pulls it up into a semi join
select id from loc where id in (select id from f) order by id;

-- [subquery hashed subplan] NOT IN (SELECT …): a hashed SubPlan
select id from loc where id not in (select id from f where id is not null) order by id;

-- [subquery exists correlated] EXISTS with a reference to the outer query: a semi join
select id from loc where exists (select 1 from f where f.id = loc.id) order by id;

-- [subquery not exists correlated] NOT EXISTS: an anti join
select id from loc where not exists (select 1 from f where f.id = loc.id) order by id;

-- [subquery exists uncorrelated] EXISTS without a reference to the outer query: an InitPlan under a One-Time Filter
select count(*) from loc where exists (select 1 from f where val > 100);

-- [subquery correlated scalar] a correlated scalar subquery: a SubPlan per outer row
select id, (select count(*) from f where f.id = loc.id) from loc where qty < 5 order by id;

-- [subquery any] = ANY (SELECT …): a semi join
select id from loc where id = any (select id from f) order by id;

-- [subquery pruning] the partition key against an InitPlan's value: run-time pruning
select id, name from h where id = (select count(*) from dim);

-- [subquery exists uncorrelated foreign partitioned async] EXISTS over the foreign partitions gating a scan of the same partitions: the InitPlan stops at its first row
select id, name from h where exists (select 1 from h where amount > 90) and grp = 4 order by id;

-- [subquery not exists uncorrelated] NOT EXISTS: the One-Time Filter is false, nothing is scanned
select count(*) from h where not exists (select 1 from dim where weight > 0);

-- [subquery exists uncorrelated order] a gating Result under the Sort, with the scan's own filter
select id from loc where exists (select 1 from dim where weight > 1) and qty > 4 order by id;

-- [subquery one-time filter] a scalar subquery compared with a constant: a One-Time Filter
select id from loc where (select count(*) from dim) > 2 and qty = 1 order by id;

-- [subquery one-time filter false] the One-Time Filter fails: the scan never runs
select id from f where (select count(*) from dim) > 1000000;

-- [subquery hashed subplan or] IN (SELECT …) under OR is not pulled up: a hashed SubPlan, read once
select count(*) from loc where id in (select id from f where val > 5000) or qty = 3;

-- [subquery hashed subplan nulls] NOT IN over a subquery with NULLs: no row is certainly not in it
select count(*) from loc where qty not in (select weight from dim);

-- [subquery hashed subplan not null] NOT IN over the values without NULLs
select id, qty from loc where qty not in (select weight from dim where weight is not null) order by id;

-- [subquery hashed subplan foreign] NOT IN over a foreign table: the SubPlan is not shippable, a local filter of the foreign scan
select count(*) from f where id not in (select id from loc where id is not null);

-- [subquery initplan select list partitioned] a subquery's value in the select list over a partitioned table
select id, (select count(*) from dim) from h where grp = 1 order by id;

-- ===== numeric: PostgreSQL's exact decimal (issue 17, part 5) =====

-- [numeric agg foreign] avg and sum of numeric and bigint over the hash partitions: exact, avg at numeric_div's scale
select avg(amount), sum(amount), avg(big), sum(big), avg(grp) from h;

-- [numeric agg foreign group order] numeric arithmetic inside aggregates, per group
select grp, avg(amount), sum(amount * 2), min(amount / 3), max(amount % 7) from h group by grp order by grp;

-- [numeric agg foreign filter] avg over a filtered plain foreign table
select avg(score), avg(val), sum(score), count(*) from f where cat = 'c1';

-- [numeric expr foreign] numeric arithmetic in the select list: scales of * / % and a bigint with a decimal
select id, score * 1.5, score / 7, score % 4, val / 3.0, val * 0.25 from f where id <= 12;

-- [numeric expr local order] arithmetic over the local range partition (pruned to r_lo)
select k, amount * 3 - 0.25, amount / 9, amount + k from r where k < 500 and v < 3 order by k;

-- [numeric agg local] avg and sum over the local list partitions
select avg(price), sum(price), avg(qty), sum(price * qty) from l where region in ('east', 'west');

-- [numeric agg mixed group order] a foreign and local partitions grouped, numeric avg per region
select region, avg(price), sum(price * qty), avg(qty) from l group by region order by region;

-- [numeric agg mixed] avg over a local and a foreign range partition
select avg(amount), sum(amount), avg(v) from r;

-- [numeric filter foreign] numeric constants shipped in the remote WHERE
select id, amount from h where amount > 99.25 and amount < 99.75 order by id;

-- [numeric filter foreign expr] a numeric expression in a shipped qual
select id, score from f where score * 2 > 70.5 and id < 200 order by id;

-- [numeric filter foreign integral] an integral numeric constant (12::numeric) in the remote WHERE
select id, score from f where score = 12::numeric;

-- [numeric agg local group order] avg of an int column and a sum divided by a decimal over the local table
select cat, avg(qty), sum(qty) / 7.0, avg(id) from loc group by cat order by cat;

-- [numeric agg foreign pruned] a pruned range scan, avg of an int and a numeric sum
select avg(v), sum(v * 0.5), avg(amount) from r where k >= 500;

-- [numeric agg having] HAVING on a numeric avg
select cat, avg(score) from f group by cat having avg(score) > 19.5 order by cat;

-- [numeric partitionwise agg] avg pushed to each foreign partition with the partition key grouped
set enable_partitionwise_aggregate = on;
select id, avg(amount), sum(amount), avg(big) from h where id < 50 group by id;

-- [numeric cast foreign] a bigint cast to numeric, in the select list and in a shipped qual
select id, val::numeric / 7, score::bigint from f where val::numeric / 7 > 150.5;

-- ===== h23n: joins of three to five relations (standard_join_search) =====

-- [join three local foreign] a local table between a partitioned and a foreign one
select h.id, loc.qty, f.val from h join loc on h.id = loc.id join f on f.id = loc.id where loc.qty = 2;

-- [join three list local] the list table, the local table and the range table on one key
select l.id, loc.cat, r.v from l join loc on l.id = loc.id join r on r.k = l.id where l.qty < 3;

-- [join three hash range] hash and range tables joined through the local one
select h.name, r.label, loc.qty from h join loc on h.id = loc.id join r on r.k = loc.id where r.v > 30;

-- [join three group order] a count per region over three tables, ordered
select l.region, count(*) from l join loc on l.id = loc.id join f on f.id = l.id group by l.region order by l.region;

-- [join three comma] three tables written with commas
select h.id, f.cat, loc.qty from h, f, loc where h.id = f.id and f.id = loc.id and h.grp = 4;

-- [join three equivalence] a chain of equalities makes one class: h and r may join directly
select h.id, r.v from h, loc, r where h.id = loc.id and loc.id = r.k and loc.qty < 4;

-- [join three text] joined on text and on int
select loc.id, f.val, l.region from loc join f on f.cat = loc.cat join l on l.id = f.id where loc.id < 8;

-- [join three filter] a join filter over two relations besides the key
select h.id, f.val, loc.qty from h join f on h.id = f.id join loc on loc.id = f.id and loc.qty < h.grp;

-- [join three agg] an aggregate without GROUP BY over three tables
select count(*), sum(f.val), max(r.v) from f join r on r.k = f.id join loc on loc.id = r.k;

-- [join three distinct keys] two different keys: h.grp = loc.qty, loc.id = f.id
select h.id, loc.id, f.val from h join loc on h.grp = loc.qty join f on f.id = loc.id where h.id < 40 and f.val > 0;

-- [join four chain] a chain of different keys
select loc.id, f.val, h.name, r.v from loc join f on f.id = loc.id join h on h.grp = loc.qty join r on r.k = h.id where loc.id < 20 and h.id < 300;

-- [join five] five relations on one key
select h.id, f.val, loc.qty, l.region, r.v from h join f on h.id = f.id join loc on loc.id = h.id join l on l.id = loc.id join r on r.k = l.id;

-- [join five comma filter] five relations with commas and filters on each
select h.id from h, f, loc, l, r where h.id = f.id and f.id = loc.id and loc.id = l.id and l.id = r.k and h.grp < 5 and f.val > 0 and loc.qty > 1 and l.qty > 1 and r.v > 1;

-- [join left three] LEFT JOIN after an inner join
select loc.id, f.val, d.title from loc join f on f.id = loc.id left join dim d on d.cat = loc.cat where loc.id < 40;

-- [join left three] an inner join after a LEFT JOIN
select l.id, f.val, loc.qty from l left join f on f.id = l.id join loc on loc.id = l.id where l.qty = 4;

-- [join left three chain] two LEFT JOINs in a chain (identity 3: the second may join first)
select loc.id, h.grp, f.val from loc left join h on h.id = loc.id left join f on f.id = h.id where loc.qty = 5;

-- [join left three star] two LEFT JOINs from one table
select loc.id, h.name, f.val from loc left join h on h.id = loc.id left join f on f.id = loc.id where loc.qty = 6;

-- [join left three null] unmatched rows of a LEFT JOIN, kept through an inner join
select f.id, f.cat, l.region, loc.qty from f left join l on l.id = f.id join loc on loc.cat = f.cat where f.id > 515;

-- [join left reduced three] a strict WHERE on the nullable side makes the LEFT JOIN inner
select loc.id, h.amount, f.cat from loc left join h on h.id = loc.id join f on f.id = loc.id where h.grp = 3;

-- [join left three group] LEFT JOINs, GROUP BY the preserved side
select loc.cat, count(h.id), count(f.id) from loc left join h on h.id = loc.id left join f on f.id = loc.id group by loc.cat;

-- [join left four] three LEFT JOINs from one table
select loc.id, h.grp, f.val, l.region from loc left join h on h.id = loc.id left join f on f.id = loc.id left join l on l.id = loc.id where loc.qty = 7;

-- [join left four mixed] inner and LEFT joins mixed
select h.id, f.val, loc.cat, r.v from h join f on f.id = h.id left join loc on loc.id = h.id left join r on r.k = h.id where h.grp = 6;

-- [join right three] a RIGHT JOIN after an inner join
select loc.id, f.val, l.qty from loc join f on f.id = loc.id right join l on l.id = loc.id where l.qty = 9;

-- [join full three] a FULL JOIN with a third table joined on the preserved side
select loc.id, f.id, h.grp from loc full join f on f.id = loc.id join h on h.id = f.id where h.grp = 2;

-- [join full three] a FULL JOIN then a LEFT JOIN
select l.id, loc.id, r.v from l full join loc on loc.id = l.id left join r on r.k = l.id where l.qty = 12;

-- [settings join three hash] enable_hashjoin off: three tables by other methods
set enable_hashjoin = off;
select h.id, loc.qty, f.val from h join loc on h.id = loc.id join f on f.id = loc.id where loc.qty = 2;

-- [settings join three merge] enable_mergejoin off
set enable_mergejoin = off;
select l.id, loc.cat, r.v from l join loc on l.id = loc.id join r on r.k = l.id where l.qty < 3;

-- [settings join three nestloop] enable_nestloop off
set enable_nestloop = off;
select h.name, r.label, loc.qty from h join loc on h.id = loc.id join r on r.k = loc.id where r.v > 30;

-- [settings join three hash material] hash joins and Materialize off
set enable_hashjoin = off;
set enable_material = off;
select loc.id, f.val, l.region from loc join f on f.cat = loc.cat join l on l.id = f.id where loc.id < 8;

-- [settings join left three merge] enable_mergejoin off with a LEFT JOIN
set enable_mergejoin = off;
select loc.id, f.val, d.title from loc join f on f.id = loc.id left join dim d on d.cat = loc.cat where loc.id < 40;

-- [join three pruned] pruned partitions on both partitioned sides
select h.id, r.v, loc.cat from h join r on r.k = h.id join loc on loc.id = r.k where h.id < 100 and r.k < 100;

-- [join three list pruned] a list partition pruned to its local member
select l.id, l.region, loc.qty, h.name from l join loc on loc.id = l.id join h on h.id = l.id where l.region = 'east';

-- [join three null keys] NULL keys never match
select h.id, h.grp, loc.qty, f.cat from h join loc on loc.qty = h.grp join f on f.id = h.id where h.id > 2000;

-- [join three text group] a text join key, GROUP BY a text column
select d.title, count(*) from loc join dim d on d.cat = loc.cat join h on h.id = loc.id group by d.title;

-- [join three having] HAVING over a three-way join
select loc.cat, count(*) from loc join h on h.id = loc.id join r on r.k = loc.id group by loc.cat having count(*) > 60;

-- [join four text] text and int keys over four tables
select loc.id, d.weight, f.val, h.grp from loc join dim d on d.cat = loc.cat join f on f.id = loc.id join h on h.id = f.id where d.weight > 20;

-- [join left three is null] WHERE IS NULL on a LEFT JOIN's nullable side: a Filter above the join
select loc.id, r.k from loc left join r on r.k = loc.id join f on f.id = loc.id where r.v is null;

-- [join three local foreign filter] filters on every relation of a three-way join
select l.id, h.amount, f.score from l join h on h.id = l.id join f on f.id = h.id where l.qty > 5 and h.grp < 8 and f.score > 10;

-- [join three list hash] the list table's partitions with the hash table's, then the local one
select l.region, h.name, loc.cat from l join h on h.id = l.id join loc on loc.id = h.id where h.grp = 1;

-- [join three foreign text] a text key between a local table and a foreign one, an int key to a third
select loc.id, f.id, h.grp from loc join f on f.cat = loc.cat join h on h.id = f.id where loc.id < 5;

-- [join three range list] the range and list tables through the local one
select r.k, l.region, loc.qty from r join loc on loc.id = r.k join l on l.id = loc.id where loc.qty > 6;

-- [join three dim] the small foreign table joined on text to a local table, a partitioned one on int
select d.title, loc.id, h.amount from dim d join loc on loc.cat = d.cat join h on h.id = loc.id where h.amount > 50;

-- [join four dim] four tables with the small foreign table
select loc.id, d.title, r.v, l.qty from loc join dim d on d.cat = loc.cat join r on r.k = loc.id join l on l.id = loc.id where r.v < 10;

-- [join four mixed keys] int and text keys over four tables
select h.id, loc.cat, d.weight, l.region from h join loc on loc.id = h.id join dim d on d.cat = loc.cat join l on l.id = h.id where h.grp = 9;

-- [join four comma] four tables with commas
select r.k, h.name, loc.qty, l.price from r, h, loc, l where r.k = h.id and h.id = loc.id and loc.id = l.id and l.price > 5;

-- [join five text] five relations, text and int keys
select loc.id, d.title, f.val, h.grp, l.region from loc join dim d on d.cat = loc.cat join f on f.id = loc.id join h on h.id = f.id join l on l.id = h.id where loc.qty < 3;

-- [join left four chain] a chain of LEFT JOINs
select loc.id, h.grp, r.v, l.region from loc left join h on h.id = loc.id left join r on r.k = h.id left join l on l.id = r.k where loc.qty = 8;

-- [join left three dim] a LEFT JOIN to the small foreign table after an inner join
select h.id, loc.cat, d.title from h join loc on loc.id = h.id left join dim d on d.cat = loc.cat where h.grp = 7;

-- [join left three on filter] an ON condition on the nullable side goes into its scan
select loc.id, f.val, h.grp from loc left join f on f.id = loc.id and f.val > 0 join h on h.id = loc.id where loc.qty = 4;

-- [join full three] a FULL JOIN, then an inner join on its preserved side
select loc.id, dim.cat, h.id from loc full join dim on dim.cat = loc.cat join h on h.id = loc.id where h.grp = 0;

-- [join right three] a RIGHT JOIN to a partitioned table
select loc.id, f.val, h.grp from loc join f on f.id = loc.id right join h on h.id = loc.id where h.grp = 5;

-- [settings join three nestloop] nested loops off, three tables with text keys
set enable_nestloop = off;
select loc.id, f.id, h.grp from loc join f on f.cat = loc.cat join h on h.id = f.id where loc.id < 5;

-- [settings join four merge] merge joins off, four tables
set enable_mergejoin = off;
select loc.id, d.title, r.v, l.qty from loc join dim d on d.cat = loc.cat join r on r.k = loc.id join l on l.id = loc.id where r.v < 10;

-- [settings join four nestloop] nested loops off, four tables
set enable_nestloop = off;
select h.id, loc.cat, d.weight, l.region from h join loc on loc.id = h.id join dim d on d.cat = loc.cat join l on l.id = h.id where h.grp = 9;

-- [settings join left three nestloop] nested loops off with two LEFT JOINs
set enable_nestloop = off;
select loc.id, h.name, f.val from loc left join h on h.id = loc.id left join f on f.id = loc.id where loc.qty = 6;

-- [settings join left four merge] merge joins off, a chain of LEFT JOINs
set enable_mergejoin = off;
select loc.id, h.grp, r.v, l.region from loc left join h on h.id = loc.id left join r on r.k = h.id left join l on l.id = r.k where loc.qty = 8;

-- [settings join full three merge] merge joins off with a FULL JOIN
set enable_mergejoin = off;
select l.id, loc.id, r.v from l full join loc on loc.id = l.id left join r on r.k = l.id where l.qty = 12;

-- [join three group text] GROUP BY a text column of the nullable side
select d.title, count(loc.id) from loc left join dim d on d.cat = loc.cat join h on h.id = loc.id group by d.title;

-- [join three count] count(*) over three tables with a filter on each
select count(*) from h join r on r.k = h.id join l on l.id = r.k where h.grp > 2 and r.v > 3 and l.qty > 4;

-- [join full three first] a FULL JOIN of two relations, then an inner join on the nullable side's key
select loc.id, d.cat, r.v from loc full join dim d on d.cat = loc.cat left join r on r.k = loc.id where loc.qty = 3;

-- [join left five] four LEFT JOINs from one table
select loc.id, h.grp, f.val, l.region, r.v from loc left join h on h.id = loc.id left join f on f.id = loc.id left join l on l.id = loc.id left join r on r.k = loc.id where loc.qty = 2;

-- [join three comma join] a comma list mixed with a JOIN
select h.id, f.val, loc.qty from h join f on f.id = h.id, loc where loc.id = h.id and loc.qty = 1;


-- [join three order limit] ORDER BY and LIMIT: a Nested Loop over the foreign table sorted remotely keeps its order
select h.id, f.val, loc.cat from h join f on h.id = f.id join loc on loc.id = h.id order by f.val desc limit 7;

-- [join three order limit text] ORDER BY a text column of the partitioned table, LIMIT
select h.id, h.name, r.v, loc.cat from h join r on r.k = h.id join loc on loc.qty = h.grp where h.id < 300 order by h.name limit 4;

-- [join three order limit range] ORDER BY the range table's text column, LIMIT
select r.k, r.label, h.grp, loc.qty from r join h on h.id = r.k join loc on loc.qty = r.v order by r.label limit 6;

-- [join three order limit numeric] ORDER BY a numeric column of the foreign table, two keys, LIMIT
select f.id, f.score, l.region, loc.qty from f join l on l.id = f.id join loc on loc.cat = f.cat order by f.score desc, f.id limit 5;

-- [join four order] ORDER BY over four tables without LIMIT
select h.id, f.val, loc.qty, l.region from h join f on h.id = f.id join loc on loc.qty = h.grp join l on l.id = f.id where f.val > 800 order by f.val;

-- [settings join three hash] enable_hashjoin off: three tables by other methods
set enable_hashjoin = off;
select h.id, loc.qty, f.val from h join loc on h.id = loc.id join f on f.id = loc.id where loc.qty = 2;

-- [settings join left three hash] enable_hashjoin off with LEFT JOINs
set enable_hashjoin = off;
select loc.id, h.grp, f.val from loc left join h on h.id = loc.id left join f on f.id = h.id where loc.qty = 5;

-- [join three select star] every column of three tables
select * from loc join dim d on d.cat = loc.cat join r on r.k = loc.id where loc.id < 12;

-- ===== h23i: index paths (Index Scan, Index Only Scan, Bitmap Heap Scan) on the local indexes =====

-- [index local] equality on the indexed column: an Index Scan
select * from loc where id = 17;

-- [index local] only the indexed column, a range: Index Only Scan or Bitmap Heap Scan by cost
select id from loc where id < 20;

-- [index local order] a range ordered by the key: presorted or sorted, by cost
select id from loc where id between 100 and 120 order by id;

-- [index local order] a range on the key, ordered by it descending, with another column
select id, cat from loc where id > 290 order by id desc;

-- [index local order limit] the first rows by the key: Index Only Scan under the LIMIT
select id from loc order by id limit 3;

-- [index local] another column of the row found by the key
select cat from loc where id = 42;

-- [index local null] the rows with NULLs, found by the key's range
select * from loc where id >= 300;

-- [index local filter] an Index Cond and a Filter on another column
select id, qty from loc where id < 50 and qty = 3;

-- [index local agg] count over a range of the key
select count(*) from loc where id < 100;

-- [index local order limit] the key on the right of the comparison (commuted into the Index Cond)
select id from loc where 250 < id order by id limit 4;

-- [index local order limit offset] Index Only Scan Backward with an Index Cond, LIMIT and OFFSET
select id from loc where id > 5 order by id desc limit 2 offset 1;

-- [index local] a key that is not there: no row
select id, cat from loc where id = 500;

-- [index range pruned order] the range table pruned to its local partition, ordered by the key
select k, v from r where k < 10 order by k;

-- [index range pruned] equality on the local partition's key
select k from r where k = 77;

-- [index range pruned text] a short range on the local partition with a text column
select k, label from r where k between 200 and 210;

-- [index range pruned order limit] the local partition's last keys
select k from r where k < 500 order by k desc limit 3;

-- [index range pruned agg] most of the local partition: a Seq Scan by cost
select count(*) from r where k < 300;

-- [index range settings] enable_bitmapscan off: the index read in order instead
set enable_bitmapscan = off;
select k from r where k > 480 and k < 520 order by k;

-- [index local settings] enable_indexscan off: a Bitmap Heap Scan finds the row
set enable_indexscan = off;
select * from loc where id = 17;

-- [index local settings order limit] enable_indexonlyscan off: an Index Scan Backward
set enable_indexonlyscan = off;
select id from loc order by id desc limit 5;

-- [index local settings] enable_seqscan off on a column without an index: the Seq Scan stays, disabled
set enable_seqscan = off;
select id, cat from loc where qty = 2;

-- [index local settings] enable_seqscan off with an Index Cond
set enable_seqscan = off;
select id, qty from loc where id < 200;

-- [index prepared generic local] a generic plan's parameter in the Index Cond
set plan_cache_mode = force_generic_plan;
prepare pix(int) as select cat from loc where id = $1;
execute pix(10);

-- [index join local list] a join whose local side is read through its index
select l.id, loc.cat from loc join l on l.id = loc.id where loc.id < 10;

-- [index join local foreign] a foreign table joined to a range of the local table
select f.id, f.val, loc.qty from f join loc on f.id = loc.id where loc.id < 8;

-- [index local settings] enable_seqscan off, only the key read: a full Index Only Scan
set enable_seqscan = off;
select id from loc;

-- [index local settings agg] enable_seqscan off, no column read: count(*) over a full Index Only Scan
set enable_seqscan = off;
select count(*) from loc;

-- [index join settings local foreign] hash and merge joins off: a parameterized Index Scan per foreign row
set enable_hashjoin = off;
set enable_mergejoin = off;
select f.id, loc.cat from f join loc on f.id = loc.id where f.id < 40;

-- [index join settings left list local] a LEFT JOIN whose nullable side is looked up by its index
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, loc.qty from l left join loc on l.id = loc.id where l.id < 20;

-- [index join settings list local] the parameter and a range of the key together in the Index Cond
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, l.qty, loc.cat from l join loc on l.id = loc.id where loc.id < 100;

-- [index join settings list local] only the key of the inner side: a parameterized Index Only Scan
set enable_hashjoin = off;
set enable_mergejoin = off;
select l.id, l.region from l join loc on l.id = loc.id;

-- [index join settings hash local] hash joins off: a Merge Join reading the local table in index order
set enable_hashjoin = off;
select loc.id, h.name from loc join h on loc.id = h.id where loc.id < 20;

-- [index join settings range local] a Merge Join of the range table's local partition and the local table
set enable_hashjoin = off;
set enable_nestloop = off;
select r.k, loc.cat from r join loc on r.k = loc.id where r.k < 40;

-- [index join order limit local foreign] ORDER BY the local key with LIMIT over a join
select loc.id, f.val from loc join f on loc.id = f.id order by loc.id limit 5;

-- [index join settings hash local filter] a Merge Join whose local side is read in index order with a Filter
set enable_hashjoin = off;
set enable_nestloop = off;
select h.id, loc.cat from h join loc on h.id = loc.id where loc.qty = 3;

-- [index join settings left foreign local] a LEFT JOIN merged with the nullable local side in index order
set enable_hashjoin = off;
set enable_nestloop = off;
select f.id, loc.qty from f left join loc on f.id = loc.id where f.id < 30;

-- ===== h17c: semi and anti joins (issue 17 item 1, issue 23 item 5; pull_up_sublinks, reduce_outer_joins) =====

-- [subquery semi join foreign local] IN over a local table, the foreign table outside
select id, cat from f where id in (select id from loc where qty = 3) order by id;

-- [subquery semi join local foreign] IN over a filtered foreign table, counted
select count(*) from loc where id in (select id from f where val > 500);

-- [subquery anti join local foreign] NOT EXISTS with a condition on the foreign side
select count(*) from loc where not exists (select 1 from f where f.id = loc.id and f.val > 0);

-- [subquery semi join partitioned foreign] IN over a small foreign table, the hash partitions outside
select count(*) from h where grp in (select weight from dim);

-- [subquery exists correlated list local] EXISTS over the local table, the list partitions outside
select id from l where exists (select 1 from loc where loc.id = l.id and loc.qty = 2) order by id;

-- [subquery anti join range local] NOT EXISTS over the local table, the range partitions outside
select count(*) from r where not exists (select 1 from loc where loc.id = r.k);

-- [subquery semi join range foreign] IN over a foreign table with a text condition, the range partitions outside
select count(*), sum(v) from r where k in (select id from f where cat = 'c1');

-- [subquery semi join settings list foreign] hash joins off
set enable_hashjoin = off;
select count(*) from l where id in (select id from f where val > 500);

-- [subquery anti join settings list foreign] hash joins off
set enable_hashjoin = off;
select count(*) from l where not exists (select 1 from f where f.id = l.id and f.val > 0);

-- [subquery semi join settings partitioned foreign] hash and merge joins off: a Nested Loop Semi Join
set enable_hashjoin = off;
set enable_mergejoin = off;
select count(*) from h where grp in (select weight from dim);

-- [subquery anti join list foreign] NOT EXISTS over a foreign table, the list partitions outside
select count(*) from l where not exists (select 1 from f where f.id = l.id);

-- [subquery exists correlated local foreign] EXISTS with a condition on each side
select id from loc where exists (select 1 from f where f.id = loc.id and f.cat = 'c2') and qty > 3 order by id;

-- [subquery semi join any foreign partitioned] = ANY over the hash partitions
select count(*) from f where val = any (select big from h where id < 10);

-- [subquery semi join agg local foreign] a semi join under GROUP BY
select cat, count(*) from loc where id in (select id from f where score > 20) group by cat order by cat;

-- [subquery anti join limit foreign] an anti join under ORDER BY and LIMIT, NULL keys kept
select id, cat from f where not exists (select 1 from dim where dim.cat = f.cat) order by id limit 5;

-- [subquery semi join text foreign] IN on a text column between two foreign tables of one server
select title from dim where cat in (select cat from f where val > 0) order by title;

-- [subquery anti join text foreign] NOT EXISTS on a text column
select cat from dim where not exists (select 1 from f where f.cat = dim.cat) order by cat;

-- [join left anti local foreign] LEFT JOIN with the nullable key IS NULL: an anti join
select loc.id from loc left join f on loc.id = f.id where f.id is null;

-- [join left anti foreign local] LEFT JOIN with the nullable side's key IS NULL, foreign outside
select d.cat from dim d left join loc on loc.cat = d.cat where loc.cat is null order by d.cat;

-- [subquery exists correlated partitioned local] EXISTS over the local table, the hash partitions outside
select count(*) from h where exists (select 1 from loc where loc.id = h.id);

-- [subquery anti join local partitioned] NOT EXISTS over the hash partitions
select count(*) from loc where not exists (select 1 from h where h.id = loc.id);

-- [subquery semi join list partitioned] IN over the hash partitions with a condition
select id from l where id in (select id from h where grp = 3) order by id;

-- [subquery semi join settings local partitioned] merge joins off
set enable_mergejoin = off;
select id from loc where id in (select id from h where grp = 3) order by id;

-- [subquery semi join null foreign] IN with NULLs on the outer side: they never match
select count(*) from f where cat in (select cat from dim);

-- [subquery anti join null foreign] NOT EXISTS with NULLs on the outer side: they always pass
select count(*) from f where not exists (select 1 from dim where dim.cat = f.cat);

-- [subquery semi join star foreign local] SELECT * over a semi join
select * from dim where cat in (select cat from loc) order by cat;

-- [subquery exists star local foreign] EXISTS (SELECT * …)
select count(*) from loc where exists (select * from dim where dim.weight = loc.qty);

-- [subquery exists settings list foreign] hash joins and nested loops off: a Merge Semi Join
set enable_hashjoin = off;
set enable_nestloop = off;
select count(*) from l where exists (select 1 from f where f.id = l.id);

-- [subquery correlated scalar local foreign] a correlated count per row of a local scan: SubPlan 1's aggregate pushed down with $1
select id, (select count(*) from f where f.id = loc.id) as n from loc where qty = 3;

-- [subquery correlated scalar foreign text] a foreign outer scan, the SubPlan's foreign aggregate on the same server with a text $1
select cat, title, (select sum(val) from f where f.cat = dim.cat) as total from dim;

-- [subquery correlated scalar local range] a local subquery per row of the pruned range partition: its Filter reads $0
select k, (select count(*) from loc where loc.qty = r.v) as c from r where k > 990;

-- [subquery correlated scalar null expr] a value that is NULL where no row matches, the outer column in an expression
select id, (select title from dim where dim.weight = loc.qty * 10) as t from loc where id < 20;

-- [subquery correlated scalar where local foreign] a correlated subquery in WHERE: SubPlan 1 in the scan's Filter, run per row
select id from loc where qty > (select count(*) from f where f.id = loc.id);

-- [subquery correlated scalar where foreign local] in a foreign scan's local Filter (a SubPlan is not shippable), over a local table with $0
select id, score from f where id < 12 and score < (select count(*) from loc where loc.qty = f.id);

-- [subquery pruning partitioned foreign async] the hash key against an InitPlan's value: exec pruning leaves one partition to run
select id, name from h where id = (select count(*) from loc);

-- [subquery pruning list mixed] the list key against an InitPlan's text value: only the default partition can hold it
select count(*) from l where region = (select title from dim where weight = 20);

-- [subquery correlated scalar partitioned async] a SubPlan over the hash partitions: its Append rescanned per outer row, every cursor declared again with $1
select id, (select count(*) from h where h.grp = loc.qty) as n from loc where id < 4;

-- ===== h23a: upper-planning choices by cost (GroupAggregate or HashAggregate, Merge Append or Sort, remote ORDER BY and LIMIT) =====

-- [groupagg hash order limit] GROUP BY the hash table's grp, ORDER BY it, LIMIT: sorted or hashed, by cost
select grp, count(*) from h group by grp order by grp limit 3;

-- [groupagg hash order] GROUP BY text, ORDER BY it, no LIMIT
select name, max(amount) from h group by name order by name;

-- [groupagg hash order desc limit] ORDER BY the group key DESC: the group key sorts descending
select name, count(*) from h group by name order by name desc limit 4;

-- [groupagg hash order limit reordered] GROUP BY b, a ORDER BY a, b: one sort serves both (preprocess_groupclause)
select grp, name, count(*) from h where id < 300 group by name, grp order by grp, name limit 5;

-- [groupagg list order limit] GROUP BY the list key, ORDER BY it: foreign and local partitions
select region, sum(qty) from l group by region order by region limit 2;

-- [groupagg range pruned foreign order limit] GROUP BY over one foreign range partition
select k, count(*) from r where k > 900 group by k order by k limit 5;

-- [groupagg local order] GROUP BY on a local table, ORDER BY the key
select qty, count(*) from loc group by qty order by qty;

-- [groupagg hash having order limit] HAVING, ORDER BY the key, LIMIT
select name, count(*) from h group by name having count(*) > 40 order by name limit 3;

-- [groupagg hash order agg limit] ORDER BY an aggregate: the sort is above the aggregate either way
select grp, sum(amount) from h group by grp order by 2 desc, grp limit 3;

-- [groupagg settings hashagg] enable_hashagg off: GroupAggregate by cost
set enable_hashagg = off;
select grp, count(*) from h group by grp;

-- [groupagg settings hashagg local] enable_hashagg off on a local table
set enable_hashagg = off;
select cat, sum(qty) from loc group by cat;

-- [groupagg partitionwise range local] partitionwise, the key grouped: the local partition's aggregate by cost
set enable_partitionwise_aggregate = on;
select k, count(*) from r where k % 50 = 0 group by k;

-- [mergeappend hash order] ORDER BY a text column, no LIMIT: Merge Append or Sort over Append
select id, name from h where grp = 2 order by name;

-- [mergeappend hash order numeric] two keys, no LIMIT
select id, amount from h where amount > 95 order by amount, id;

-- [mergeappend list order] ORDER BY over a local and a foreign partition, no LIMIT
select id, qty from l where qty > 10 order by id;

-- [mergeappend hash order offset] OFFSET without LIMIT
select id from h where grp = 1 order by id offset 190;

-- [mergeappend hash order limit] a large LIMIT
select id, grp from h order by grp, id limit 1500;

-- [mergeappend settings sort] enable_sort off: a Merge Append of remotely sorted partitions
set enable_sort = off;
select id, big from h where grp = 5 order by big;

-- [remotesort foreign order] a plain foreign table ORDER BY, no LIMIT
select id, val from f where val > 800 order by val;

-- [remotesort foreign order limit] a plain foreign table, two keys, LIMIT
select id, score from f where cat = 'c1' order by score desc, id limit 3;

-- [remotesort hash pruned order] one partition left, ORDER BY text
select id, name from h where id = 12 order by name;

-- [remotesort range pruned foreign order limit] one foreign range partition, ORDER BY a non-key column
select k, v from r where k >= 950 order by v, k limit 4;

-- [limitpush foreign limit] LIMIT below the row estimate: pushed to the remote by cost
select id from f limit 5;

-- [limitpush foreign limit offset] LIMIT and OFFSET on a filtered foreign table
select id, cat from f where cat = 'c2' limit 2 offset 3;

-- [limitpush foreign limit] LIMIT above the row estimate: not pushed
select id from f where val is null limit 100;

-- [limitpush foreign group order limit] an aggregate pushed down, ORDER BY the key, LIMIT
select cat, count(*) from f group by cat order by cat limit 3;

-- [limitpush foreign order limit] ORDER BY and LIMIT on a plain foreign table
select id, val from f order by val desc limit 7;

-- [groupagg constant key] the group key equated to a constant: no sort needed for a GroupAggregate
select grp, count(*), sum(amount) from h where grp = 3 group by grp;

-- [groupagg constant key local] the same on a local table
select cat, count(*) from loc where cat = 'c1' group by cat;

-- [orderedappend range order limit] ORDER BY the range key: the partitions in bound order, the local one by its index
select k, v from r order by k limit 3;

-- [orderedappend range order desc limit filter] DESC with a filter: the partitions backwards, the local index read backwards
select k, label from r where v = 5 order by k desc limit 4;

-- [orderedappend range order filter] ORDER BY the key without LIMIT over both partitions
select k, v from r where v = 7 order by k;

-- [orderedappend range order limit filter text] a text filter, ORDER BY the key, LIMIT
select k, label from r where label = 'lbl03' order by k limit 6;

-- [orderedappend range order desc] DESC without LIMIT, both partitions
select k, v from r where k < 600 and v > 30 order by k desc;

-- [partitionwise mergeappend group order] partitionwise on the key, ORDER BY it without LIMIT
set enable_partitionwise_aggregate = on;
select id, sum(amount) from h where id < 100 group by id order by id;

-- [partitionwise mergeappend group order limit list] partitionwise on the list key with local partitions, ORDER BY, LIMIT
set enable_partitionwise_aggregate = on;
select region, count(*) from l group by region order by region limit 2;

-- [partitionwise mergeappend group having order desc limit] HAVING in each partition, ORDER BY the key DESC, LIMIT
set enable_partitionwise_aggregate = on;
select id, count(*) from h group by id having count(*) > 0 order by id desc limit 3;

-- [partial partitionwise group] partial aggregation per partition, finalized above
set enable_partitionwise_aggregate = on;
select grp, sum(amount), max(name) from h group by grp;

-- [partial partitionwise group order limit list] the list table grouped by a non-key column, ORDER BY, LIMIT
set enable_partitionwise_aggregate = on;
select qty, count(*) from l group by qty order by qty limit 3;

-- [partial partitionwise agg range] no GROUP BY over a local and a foreign range partition
set enable_partitionwise_aggregate = on;
select min(k), max(k), count(v) from r;

-- [partial partitionwise group having range] a filter, GROUP BY a non-key column, HAVING
set enable_partitionwise_aggregate = on;
select label, count(*) from r where k > 300 group by label having count(*) > 30;

-- [partial partitionwise group order] partial aggregation per partition, ORDER BY the key: Finalize GroupAggregate or HashAggregate and a Sort, by cost
set enable_partitionwise_aggregate = on;
select grp, sum(amount), max(name) from h group by grp order by grp;

-- [groupagg orderedappend range group order limit] GROUP BY the range key, ORDER BY it, LIMIT: the grouped input in bound order
select k, max(label) from r group by k order by k limit 3;

-- [partial partitionwise settings hashagg] partial aggregation with enable_hashagg off: GroupAggregates both halves
set enable_partitionwise_aggregate = on;
set enable_hashagg = off;
select grp, count(*) from h group by grp;

-- [groupagg list pruned group order desc] two list partitions, GROUP BY the key, ORDER BY it DESC
select region, count(*) from l where region in ('north', 'east') group by region order by region desc;

-- [orderedappend settings indexscan] enable_indexscan off: the local partition's index path is disabled, and with it the ordered Append
set enable_indexscan = off;
select k, v from r order by k limit 3;

-- ===== h17d: INSERT (ModifyTable, postgres_fdw's foreign modify, tuple routing) =====
-- Each runs from the loaded state (the sandbox) or in a transaction rolled back
-- (PostgreSQL); the target's rows afterwards are compared too.

-- [dml insert local async] a local table fed by an async Append over four foreign partitions
insert into ins_loc select id, grp, amount, name from h where id < 20;

-- [dml insert foreign async] a foreign table on s1 fed by the partitions on s1 and s2 (one connection shared by scan and insert)
insert into ins_f select id, grp, amount, name from h where id <= 30;

-- [dml insert foreign batch] batch_size 7: batches of seven rows, the last one smaller and prepared anew
insert into ins_fb select id, grp, amount, name from h where id <= 30;

-- [dml insert partitioned routing] rows routed to a local and two foreign partitions
insert into ins_p select id, grp, amount, name from h where id % 100 = 7;

-- [dml insert foreign null] a column list: the columns not named are NULL
insert into ins_f (id, name) select id, cat from f where val > 1000;

-- [dml insert local] a column list in another order than the table's
insert into ins_loc (name, id) select cat, id from f where id < 15;

-- [dml insert foreign pruned] one foreign list partition as the source
insert into ins_f select id, qty, price, region from l where region = 'north' and id < 20;

-- [dml insert local mixed] a local default partition and the foreign one, into a local table
insert into ins_loc select id, qty, price, region from l where id > 590;

-- [dml insert partitioned routing] ids across the local and the s1 partition
insert into ins_p select id + 480, grp, amount, name from h where id < 40;

-- [dml insert foreign local] a local table's rows into a foreign table
insert into ins_f select id, qty, qty * 1.5, cat from loc where id <= 12;

-- [dml insert foreign batch filter] batches of seven from a filtered Append
insert into ins_fb select id, grp, amount, name from h where grp = 3 and id < 300;

-- [dml insert partitioned local] every row into the local partition
insert into ins_p select id, grp, amount, name from h where id < 10;

-- [dml insert partitioned foreign async] every row into the partition on s1, the server two of the scans share
insert into ins_p select id + 1000, grp, amount, name from h where id < 10;

-- [dml insert foreign] an IN list in the shipped WHERE
insert into ins_f select id, grp, amount, name from h where id in (1, 2, 3);

-- [dml insert local agg] an aggregate's groups into a local table
insert into ins_loc (id, grp) select grp, count(*) from h group by grp;

-- [dml insert foreign order limit] ORDER BY … LIMIT as the source
insert into ins_f select id, grp, amount, name from h order by id limit 5;

-- [dml insert foreign batch series] generate_series as the source, in batches of seven
insert into ins_fb select i, i % 4, i * 0.25, 'g' from generate_series(1, 20) i;

-- [dml insert partitioned series] a series routed across the local and the s1 partition
insert into ins_p select i, i, i, 'x' from generate_series(495, 505) i;

-- [dml insert local self] a table into itself: the scan reads the rows as they were
insert into ins_loc select * from ins_loc;

-- [dml insert foreign self] a foreign table into itself, scan and insert on one connection
insert into ins_f select * from ins_f where id < 3;

-- [dml insert foreign empty] no row: nothing prepared, nothing sent
insert into ins_f select id, grp, amount, name from h where id < 0;

-- [dml insert foreign batch null] a column list with batches, numeric values
insert into ins_fb (id, amount) select id, score from f where score > 39;

-- [dml insert partitioned foreign] rows around the boundary of the two foreign partitions
insert into ins_p (id, name) select id, name from h where id between 1495 and 1505;

-- [dml insert local foreign] the foreign range partition on s3 into a local table
insert into ins_loc select k, v, amount, label from r where k >= 990;

-- [dml insert foreign local] a local list partition into the foreign table
insert into ins_f select id, qty, price, region from l where qty = 0 and region = 'east';

-- [dml insert foreign batch null] rows with NULLs sent as NULL parameters, in batches of seven
insert into ins_fb select id, grp, amount, name from h where id > 2040;

-- ===== h17d: UPDATE and DELETE (postgres_fdw's direct modify) =====

-- [dml update foreign direct] UPDATE of a foreign table run on its server: Foreign Update
update ins_f set grp = grp + 10 where id < 3;

-- [dml delete foreign direct] DELETE of one row of a foreign table: Foreign Delete
delete from ins_f where id = 4;

-- [dml update foreign direct text] every row, a text constant
update ins_f set name = 'renamed';

-- [dml delete foreign direct] every row
delete from ins_f;

-- [dml update partitioned direct] an Append of four Foreign Updates, one per partition
update h set amount = amount * 2 where id < 20;

-- [dml delete partitioned direct] an Append of four Foreign Deletes, a filter on a column that is not the key
delete from h where grp = 3;

-- [dml update partitioned direct pruned] the partition key: one Foreign Update
update h set name = 'x' where id = 7;

-- [dml delete partitioned direct] an IN list on the key
delete from h where id in (1, 2, 3);

-- [dml update foreign direct] a foreign table with another remote name
update f set val = val + 1 where cat = 'c1';

-- [dml delete foreign direct null] IS NULL shipped in the DELETE's WHERE
delete from f where score is null;

-- [dml update partitioned direct pruned] the foreign partitions of a table with a local one, pruned to them
update ins_p set grp = 0 where id >= 500;

-- [dml delete partitioned direct pruned] one foreign partition left by pruning
delete from ins_p where id >= 1500;

-- [dml update partitioned direct list] the foreign list partition
update l set qty = qty + 1 where region = 'north';

-- [dml delete partitioned direct range] the foreign range partition
delete from r where k >= 990;

-- [dml update partitioned direct null] two columns, one set to NULL
update h set big = big - 1, grp = null where id between 100 and 110;

-- [dml update foreign direct returning] RETURNING * from the remote UPDATE
update ins_f set grp = grp + 10 where id < 3 returning *;

-- [dml delete partitioned direct returning] the deleted rows from four partitions
delete from h where grp = 3 and id < 100 returning id, name;

-- [dml update partitioned direct returning] an expression over the returned columns
update h set amount = amount + 1 where id < 10 returning id, amount * 2;

-- [dml delete partitioned direct pruned returning] the foreign partitions of a table with a local one
delete from ins_p where id >= 500 returning name, id;

-- ===== h17d: UPDATE and DELETE of local tables =====

-- [dml update local] UPDATE of a local table: ModifyTable over its Seq Scan
update ins_loc set grp = grp * 2 where amount > 0.5;

-- [dml delete local null] DELETE of the rows with a NULL
delete from ins_loc where name is null;

-- [dml update local returning] RETURNING the new values
update loc set qty = qty + 100 where cat = 'c1' returning id, qty;

-- [dml delete local returning] RETURNING * of the deleted rows
delete from loc where qty = 0 returning *;

-- [dml update local text] a function of the old value, every row
update ins_loc set name = upper(name);

-- ===== h17d: INSERT … VALUES =====

-- [dml insert foreign values] one row: a Result without input
insert into ins_f values (100, 1, 2.5, 'v');

-- [dml insert foreign batch values] three rows: a Values Scan, one batch of three
insert into ins_fb values (101, 1, 1.5, 'a'), (102, 2, 2.5, 'b'), (103, null, null, 'c');

-- [dml insert partitioned values routing] rows to the local and both foreign partitions
insert into ins_p (id, name) values (10, 'lo'), (700, 'mid'), (2000, 'hi');

-- [dml insert local values] one row into a local table
insert into ins_loc values (9, 9, 9.5, 'nine');

-- ===== h17d: INSERT … RETURNING =====

-- [dml insert foreign returning] the remote INSERT returns the columns RETURNING uses, one row a statement
insert into ins_f select id, grp, amount, name from h where id < 6 returning id, name;

-- [dml insert local values returning] RETURNING * of a local row
insert into ins_loc values (11, 1, 2.5, 'x') returning *;

-- [dml insert partitioned routing returning] rows routed to the local and the s1 partition, returned
insert into ins_p select id + 480, grp, amount, name from h where id < 30 returning id, amount;

-- [dml insert foreign batch returning] batch_size 7 is 1 with RETURNING
insert into ins_fb (id, name) select id, cat from f where id < 4 returning name;

-- ===== h23e: equivalence classes carry constants and parameters across joins =====

-- [join equivalence constant foreign local] loc.id = 12 reaches f's remote WHERE; the join keeps the other class's clause
select loc.id, loc.cat, f.val from loc join f on loc.id = f.id and loc.cat = f.cat where loc.id = 12;

-- [join equivalence constant foreign local] the constant on the foreign side reaches the local table's index
select loc.id, loc.qty, f.val from loc join f on loc.id = f.id and loc.cat = f.cat where f.id = 24;

-- [join equivalence constant where] the join written in WHERE: the same classes
select loc.id, f.score from loc, f where loc.id = f.id and loc.cat = f.cat and f.id = 36;

-- [join equivalence constant written first] the constant named before the column
select loc.id, f.cat from loc join f on loc.id = f.id and loc.cat = f.cat where 48 = loc.id;

-- [join equivalence constant hash pruning] the derived h.id = 90 prunes h to one partition
select h.id, h.name, loc.qty from h join loc on h.id = loc.id and h.grp = loc.qty where loc.id = 90;

-- [join equivalence constant range pruning] the derived r.k = 5 prunes r to its local partition
select r.k, r.label, loc.cat from r join loc on r.k = loc.id and r.v = loc.qty where loc.id = 5;

-- [join equivalence constant range hash pruning] both partitioned sides pruned to one foreign partition each
select r.k, r.v, h.name from r join h on r.k = h.id and r.v = h.grp where h.id = 745;

-- [join equivalence constant list] a constant on l's id reaches the local table's index
select l.id, l.region, loc.cat from l join loc on l.id = loc.id and l.qty = loc.qty where l.id = 120;

-- [join equivalence constant list pruning text] the derived l.region = 'east' prunes l to one partition
select l.id, dim.title from l join dim on l.region = dim.cat and l.qty = dim.weight where dim.cat = 'east';

-- [join equivalence constant agg] an aggregate over the restricted join
select count(*), sum(f.val) from loc join f on loc.id = f.id and loc.cat = f.cat where loc.id = 12;

-- [join equivalence constant order] ORDER BY a column outside the pinned class
select f.id, f.val, loc.qty from f join loc on f.cat = loc.cat and f.id = loc.id where f.id = 60 order by f.val;

-- [join equivalence constant settings] hash joins off
set enable_hashjoin = off;
select loc.id, loc.cat, f.val from loc join f on loc.id = f.id and loc.cat = f.cat where loc.id = 12;

-- [join equivalence constant settings] nested loops off
set enable_nestloop = off;
select h.id, h.name, loc.qty from h join loc on h.id = loc.id and h.grp = loc.qty where loc.id = 90;

-- [join three equivalence constant hash] a constant through one class, to all three; the other classes join them
select loc.id, f.cat, h.name from loc join f on loc.id = f.id and loc.cat = f.cat join h on h.id = loc.id and h.grp = loc.qty where f.id = 180;

-- [join four equivalence constant hash range] four relations, the constant reaches all four; h and r pruned
select loc.id, f.val, h.name, r.label from loc join f on loc.id = f.id and loc.cat = f.cat, h join r on r.k = h.id and r.v = h.grp where h.id = loc.id and h.grp = loc.qty and loc.id = 180;

-- [join five equivalence constant hash list] five relations, h pruned by the derived constant; another class joins four
select loc.id, h.name, l.region from loc join h on h.grp = loc.qty join r on r.v = h.grp join l on l.qty = loc.qty join f on f.id = l.id where loc.id = 180 and h.id = loc.id;

-- [prepared generic join equivalence foreign] the parameter reaches f's remote WHERE as $1
set plan_cache_mode = force_generic_plan;
prepare pe1(int) as select loc.id, f.val from loc join f on loc.id = f.id and loc.cat = f.cat where loc.id = $1;
execute pe1(12);

-- [prepared generic join equivalence hash pruning] the derived h.id = $1 prunes h at startup
set plan_cache_mode = force_generic_plan;
prepare pe2(int) as select h.id, loc.cat from h join loc on h.id = loc.id and h.grp = loc.qty where loc.id = $1;
execute pe2(90);

-- [prepared custom join equivalence hash pruning] a custom plan: the constant prunes at plan time
prepare pe3(int) as select h.id, loc.cat from h join loc on h.id = loc.id and h.grp = loc.qty where loc.id = $1;
execute pe3(90);

-- [prepared generic join three equivalence hash] three relations, the parameter through one class
set plan_cache_mode = force_generic_plan;
prepare pe4(int) as select loc.id, f.cat, h.name from loc join f on loc.id = f.id and loc.cat = f.cat join h on h.id = loc.id and h.grp = loc.qty where f.id = $1;
execute pe4(180);

-- [join equivalence constant both sides] two equal constants are one member: one class pinned, the cat clause joins
select loc.id, f.val from loc join f on loc.cat = f.cat where f.id = 24 and f.val < 0 and loc.id = 24;

-- [join equivalence constant remote order] the derived restriction follows f's own condition in the remote WHERE
select f.id, f.cat, loc.qty from f join loc on f.id = loc.id and f.cat = loc.cat where f.score > 1 and loc.id = 36;

-- [join equivalence constant clauseless hash] the only join clause is redundant: a Nested Loop without a join clause
select h.id, h.name, f.val from h join f on h.id = f.id where h.id = 77;

-- [join equivalence constant clauseless foreign local] the constant on the foreign side reaches the local table's index; no join clause
select loc.id, loc.qty, f.cat from loc join f on loc.id = f.id where f.id = 30;

-- [join equivalence constant clauseless range list] r pruned to its local partition by the derived r.k = 130
select r.k, r.label, l.region from r join l on r.k = l.id where l.id = 130;

-- [join equivalence constant clauseless agg where] written in WHERE, under an aggregate
select count(*), sum(f.val) from f, loc where f.id = loc.id and loc.id = 42;

-- [join three equivalence constant clauseless hash] one pinned class joins all three: Nested Loops without a join clause
select h.id, f.val, loc.qty from h join f on h.id = f.id join loc on loc.id = f.id where h.id = 77;

-- [join three equivalence constant clauseless] loc and f joined without a clause, h by its own class
select loc.id, f.cat, h.name from loc join f on loc.id = f.id join h on h.grp = loc.qty where f.id = 30;

-- [join four equivalence constant clauseless range list] four relations pinned by one constant; r and l pruned
select loc.id, f.val, r.label, l.region from loc join f on loc.id = f.id join r on r.k = loc.id join l on l.id = r.k where loc.id = 130;

-- [prepared generic join three equivalence clauseless hash] the parameter pins all three; h pruned at startup
set plan_cache_mode = force_generic_plan;
prepare pe5(int) as select h.id, f.val, loc.qty from h join f on h.id = f.id join loc on loc.id = f.id where h.id = $1;
execute pe5(77);

-- [join equivalence constant clauseless settings] nested loops off: still the only way to join without a clause
set enable_nestloop = off;
select h.id, h.name, f.val from h join f on h.id = f.id where h.id = 77;

-- [join equivalence constant clauseless filter] no join clause but an inequality between the sides: its Join Filter
select loc.id, loc.qty, f.val from loc join f on loc.id = f.id and f.val > loc.qty where loc.id = 250;

-- [join three equivalence constant clauseless settings] Materialize off, three relations pinned by one constant
set enable_material = off;
select h.id, f.val, loc.qty from h join f on h.id = f.id join loc on loc.id = f.id where h.id = 77;

-- (h23n) the parameterized Nested Loop over an async Append (issue 23 item 5)

-- [join param nestloop range] one outer row: an Append of Foreign Scans with $1, pruned at run time to one partition
select * from pnl_l join pnl on pnl.b = pnl_l.b where pnl_l.id = 1;

-- [join param nestloop range settings] every outer row rescans the Append with a new $1; each loop runs one partition
set enable_hashjoin = off;
set enable_mergejoin = off;
set enable_material = off;
select * from pnl_l join pnl on pnl.b = pnl_l.b;

-- [join param nestloop range where] the inner relation's own condition first in its Remote SQL, the join clause after it
select pnl_l.id, pnl.a from pnl_l join pnl on pnl.b = pnl_l.b where pnl_l.id = 2 and pnl.a < 90;

-- [join param nestloop range left] a LEFT join's clause as written: b = $1
select * from pnl_l left join pnl on pnl.b = pnl_l.b where pnl_l.id = 3;

-- [join param nestloop range agg] under an aggregate: the scans return b alone
select count(*) from pnl_l join pnl on pnl.b = pnl_l.b where pnl_l.id = 1;

-- ===== (h23w) partitionwise join (enable_partitionwise_join, issue 23 item 5) =====

-- [partitionwise join local] three local pairs, one Hash Join each under the Append
set enable_partitionwise_join = on;
select a.id, a.t, b.u from pw_la a join pw_lb b on a.id = b.id;

-- [partitionwise join foreign filter] foreign pairs on two servers (no join pushdown) and a local pair; the condition goes into a_k's remote query
set enable_partitionwise_join = on;
select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where a.x = 4;

-- [partitionwise join foreign] every column of both sides
set enable_partitionwise_join = on;
select * from pw_fa a join pw_fb b on a.id = b.id;

-- [partitionwise join where] the join written in WHERE
set enable_partitionwise_join = on;
select a.t, b.u from pw_la a, pw_lb b where a.id = b.id and b.y = 5;

-- [partitionwise join filter] another condition over both sides: each pair's Join Filter
set enable_partitionwise_join = on;
select a.id, b.y from pw_la a join pw_lb b on a.id = b.id and a.x < b.y;

-- [partitionwise join expr] the select list computed in each pair (apply_scanjoin_target_to_paths)
set enable_partitionwise_join = on;
select a.id * 2, b.u from pw_fa a join pw_fb b on a.id = b.id where b.y = 1;

-- [partitionwise join reorder] the select list in another order than FROM
set enable_partitionwise_join = on;
select b.u, a.t from pw_fa a join pw_fb b on b.id = a.id where a.x = 0 and b.y = 0;

-- [partitionwise join settings merge] hash joins off: a Merge Join per pair
set enable_partitionwise_join = on;
set enable_hashjoin = off;
select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where b.y < 3;

-- [partitionwise join settings nestloop] hash and merge joins off: a Nested Loop per pair
set enable_partitionwise_join = on;
set enable_hashjoin = off;
set enable_mergejoin = off;
select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where b.y < 3;

-- [partitionwise join hash] hash partitions, one of pw_hb's foreign
set enable_partitionwise_join = on;
select a.id, a.t, b.w from pw_ha a join pw_hb b on a.id = b.id;

-- [partitionwise join hash agg] an aggregate above the Append of pairs
set enable_partitionwise_join = on;
select a.x, count(*), sum(b.y) from pw_ha a join pw_hb b on a.id = b.id group by a.x;

-- [partitionwise join agg foreign] count(*) over foreign pairs
set enable_partitionwise_join = on;
select count(*) from pw_fa a join pw_fb b on a.id = b.id;

-- [partitionwise join agg having] GROUP BY and HAVING above the Append
set enable_partitionwise_join = on;
select a.x, sum(b.y) from pw_la a join pw_lb b on a.id = b.id group by a.x having sum(b.y) > 100;

-- [partitionwise join agg] min and max of text over the pairs
set enable_partitionwise_join = on;
select max(a.t), min(b.u) from pw_la a join pw_lb b on a.id = b.id where a.x = 3;

-- [partitionwise join list left] list partitions with defaults, LEFT JOIN pair by pair
set enable_partitionwise_join = on;
select a.k, a.v, b.w from pw_da a left join pw_db b on a.k = b.k;

-- [partitionwise join list full] FULL JOIN pair by pair
set enable_partitionwise_join = on;
select a.k, a.v, b.w from pw_da a full join pw_db b on a.k = b.k;

-- [partitionwise join right hash] RIGHT JOIN, a condition on the preserved side
set enable_partitionwise_join = on;
select a.id, b.w from pw_ha a right join pw_hb b on a.id = b.id where b.y = 1;

-- [partitionwise join pruning] a pruned to one partition: one pair, no Append, the parents' aliases
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a join pw_lb b on a.id = b.id where a.id < 200;

-- [partitionwise join pruning foreign] each side pruned by its own condition: the pairs both keep
set enable_partitionwise_join = on;
select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where a.id >= 300 and b.id < 900;

-- [partitionwise join pruning empty] no pair keeps both partitions: the dummy join relation
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a join pw_lb b on a.id = b.id where a.id < 100 and b.id > 700;

-- [partitionwise join left pruning] the nullable side loses a partition its partner keeps: not partitionwise (try_partitionwise_join gives up)
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a left join pw_lb b on a.id = b.id and b.id < 200 where a.x = 3;

-- [partitionwise join limit] LIMIT above the Append
set enable_partitionwise_join = on;
select * from pw_la a join pw_lb b on a.id = b.id where b.y = 2 limit 5;

-- [partitionwise join off key] joined on other columns than the key: no effect
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a join pw_lb b on a.x = b.y where a.id = 7;

-- [partitionwise join hash pruning foreign] an IN list prunes both hash sides
set enable_partitionwise_join = on;
select a.id, b.w from pw_ha a join pw_hb b on a.id = b.id where a.id in (2, 5);

-- [partitionwise join order] local pairs ordered by other columns than the key: a Sort above the Append
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a join pw_lb b on a.id = b.id where b.y = 3 order by b.u;

-- [partitionwise join order limit] ORDER BY a column outside the select list, LIMIT
set enable_partitionwise_join = on;
select a.t from pw_la a join pw_lb b on a.id = b.id where a.x = 3 order by b.u desc limit 4;

-- [partitionwise join list order] list pairs with defaults, LEFT JOIN, ORDER BY the preserved side's value
set enable_partitionwise_join = on;
select a.k, a.v, b.w from pw_da a left join pw_db b on a.k = b.k order by a.v;

-- [partitionwise join agg order] an aggregate over the pairs, ordered by its count
set enable_partitionwise_join = on;
select a.x, count(*) from pw_la a join pw_lb b on a.id = b.id group by a.x order by 2 desc, 1;
-- ===== (h17q) set operations over differing types, numeric(p,s), correlated subqueries in HAVING and EXISTS under OR/NOT (issue 17 items 1 and 5) =====

-- [setop types foreign bigint] UNION of an int and a bigint column: the int branch cast in a Subquery Scan (select_common_type), which keeps its foreign scan synchronous
select id from f where id < 3 union select val from f where id < 3;

-- [setop types local numeric] UNION of an int and a numeric column
select id from loc where id < 3 union select score from f where id < 3;

-- [setop types union all numeric] UNION ALL of an int and a numeric column: the cast branch under a Subquery Scan, the other async
select id from f where id < 3 union all select score from f where id < 3;

-- [setop types intersect bigint] INTERSECT of an explicit bigint and a bigint column: no coercion
select id::bigint from loc where id < 3 intersect select val from f;

-- [setop types except numeric] EXCEPT of a numeric and an int column: the right branch cast
select score from f where id < 3 except select id from loc where id < 2;

-- [setop types unknown literal text] an untyped literal resolved to text in place: no Subquery Scan
select id, 'x' from loc where id < 3 union select id, cat from f where id < 3;

-- [setop types hash bigint] int and bigint columns of the same partitioned table
select grp from h where id < 20 union select big from h where id < 5;

-- [setop types union all hash range] numeric partitions and an int range partition
select amount from h where id < 10 union all select k from r where k < 5;

-- [setop types null literal] NULL coerced in place to the other branch's bigint
select cat, null from loc where id < 3 union select cat, val from f where id < 3;

-- [setop types three] three branches: bigint, int and int, the two ints cast
select val from f where id < 5 union select qty from l where id < 3 union select k from r where k < 3;

-- [setop types intersect all numeric list] numeric against the list partitions' numeric
select score from f where id < 10 intersect all select price from l where id < 10;

-- [numeric typmod hash order] numeric(5,1) of the partitions' amounts
select id, amount::numeric(5,1) from h where id < 8 order by id;

-- [numeric typmod foreign expr] numeric(4,2) then arithmetic
select id, score::numeric(4,2) * 2 from f where id < 6;

-- [numeric typmod foreign filter] numeric(4,1) in a qual shipped to every partition, Merge Append under LIMIT
select amount from h where amount::numeric(4,1) > 99.2 order by 1 limit 3;

-- [numeric typmod agg] an average rounded to numeric(6,2)
select avg(amount)::numeric(6,2) from h;

-- [numeric typmod range order] numeric(3,0) over the local range partition
select k, amount::numeric(3,0) from r where k < 6 order by k;

-- [subquery correlated having foreign] HAVING with a correlated subquery over a pushed-down aggregate: the foreign scan's local Filter, the sort local
select cat, count(*) from f group by cat having count(*) > (select count(*) from loc where loc.cat = f.cat) order by cat;

-- [subquery correlated having hash async] HAVING with a correlated subquery over the async Append's aggregate
select grp, count(*) from h group by grp having count(*) > (select count(*) from loc where loc.qty = h.grp) order by grp;

-- [subquery correlated having foreign numeric] a bigint sum against a correlated subquery's value
select cat, sum(val) from f group by cat having sum(val) > (select sum(qty) * 100 from loc where loc.cat = f.cat) order by cat;

-- [subquery correlated having list] HAVING over the list partitions, the group's text key as the parameter
select region, count(*) from l group by region having count(*) > (select count(*) from loc where loc.cat = l.region) order by region;

-- [subquery exists or foreign] a correlated EXISTS under OR: hashed SubPlan 2 in the foreign scan's local Filter
select id from f where id < 20 and (val > 0 or exists (select 1 from loc where loc.id = f.id and loc.qty = 3)) order by id;

-- [subquery exists or local] a correlated EXISTS under OR over a foreign subquery
select count(*) from loc where qty = 1 or exists (select 1 from f where f.id = loc.id and f.val > 0);

-- [subquery not exists or local] NOT EXISTS under OR: NOT (hashed SubPlan 2)
select count(*) from loc where not exists (select 1 from f where f.id = loc.id) or qty = 2;

-- [subquery not exists or nulls] NOT EXISTS under OR, the subquery's column with a NULL (unknownEqFalse: no NULL result)
select count(*) from loc where qty = 1 or not exists (select 1 from dim where dim.weight = loc.qty * 10);

-- [subquery not exists or text foreign] NOT EXISTS on a text key under OR, a foreign outer and subquery
select id, cat from f where id < 30 and (cat = 'c1' or not exists (select 1 from dim where dim.cat = f.cat)) order by id;

-- [subquery correlated or] a correlated scalar subquery under OR: SubPlan 1 per row
select count(*) from loc where qty > 7 or qty = (select count(*) from dim where dim.weight = loc.id);

-- [partitionwise join semi] IN pulled up into a semi join: one per pair
set enable_partitionwise_join = on;
select a.id, a.t from pw_la a where a.id in (select b.id from pw_lb b where b.y = 2);

-- [partitionwise join semi foreign] EXISTS over foreign pairs
set enable_partitionwise_join = on;
select a.id, a.x from pw_fa a where exists (select 1 from pw_fb b where b.id = a.id and b.y < 3);

-- [partitionwise join anti pruning] NOT EXISTS: an anti join per pair, the outer side pruned
set enable_partitionwise_join = on;
select a.id from pw_fa a where not exists (select 1 from pw_fb b where b.id = a.id) and a.id < 400;

-- [partitionwise join anti pruning fallback] the subquery's side pruned where the outer is not: not partitionwise
set enable_partitionwise_join = on;
select a.id from pw_la a where not exists (select 1 from pw_lb b where b.id = a.id and b.id < 300) and a.x = 2;
-- (h23j) ===== Joins pushed to the remote server (postgres_fdw's join pushdown) =====

-- [join foreign pushdown] conditions on both sides go into the remote ON
select f.id, d.title from f join dim d on f.cat = d.cat where f.val > 0 and d.weight < 40;

-- [join foreign pushdown left] a LEFT JOIN with a condition on its nullable side in ON
select d.cat, f.id from dim d left join f on f.cat = d.cat and f.id < 30;

-- [join foreign pushdown right] a RIGHT JOIN: the remote query is a LEFT JOIN the other way round
select f.id, d.title from f right join dim d on d.cat = f.cat where d.weight >= 20;

-- [join foreign pushdown full] a FULL JOIN
select f.id, d.cat from f full join dim d on f.cat = d.cat;

-- [join foreign pushdown comma] a join written with a comma
select f.id, d.weight from f, dim d where f.cat = d.cat and f.id between 100 and 110;

-- [join foreign pushdown star] every column of both
select * from dim d join f on d.cat = f.cat where f.id < 8;

-- [join foreign pushdown text] LIKE on the inner side ships as ~~
select f.id, d.title from f join dim d on f.cat = d.cat where d.title like 't%';

-- [join foreign pushdown filter] an inequality between the sides in ON
select f.id, d.title from f join dim d on f.cat = d.cat and f.val < d.weight * 10;

-- [join foreign pushdown agg] the aggregate pushed with the join
select d.title, count(*), sum(f.val) from f join dim d on f.cat = d.cat group by d.title;

-- [join foreign pushdown agg left] over a LEFT JOIN with a condition in ON
select d.title, count(f.id) from dim d left join f on f.cat = d.cat and f.val > 100 group by d.title;

-- [join foreign pushdown agg having] HAVING pushed too
select d.cat, max(f.val) from f join dim d on f.cat = d.cat group by d.cat having max(f.val) > 500;

-- [join foreign pushdown agg] no GROUP BY, a condition on the inner side
select count(*), min(f.score) from f join dim d on f.cat = d.cat where d.weight > 15;

-- [join foreign pushdown settings] the join methods' settings do not touch the pushed join
set enable_hashjoin = off;
select f.id, d.title from f join dim d on f.cat = d.cat where f.id < 20;

-- [join foreign pushdown anti] LEFT JOIN … IS NULL is an anti join, which PostgreSQL 15 does not push
select f.id from f left join dim d on f.cat = d.cat where d.title is null and f.id < 50;

-- [join foreign pushdown semi] nor a semi join (EXISTS)
select f.id from f where exists (select 1 from dim d where d.cat = f.cat) and f.id < 12;

-- [join foreign pushdown servers] two servers: joined locally
select f.id, h0.name from f join h0 on f.id = h0.id where f.id < 30;

-- [join foreign pushdown partitions] two foreign partitions of one server named directly
select h2.id, h3.name from h2 join h3 on h2.grp = h3.grp where h2.id < 20 and h3.id < 10;

-- [join foreign pushdown s3] a list partition and a range partition on s3
select l.id, r.label from l_ns l join r_hi r on l.qty = r.v where l.id < 20 and r.k < 520;

-- [join foreign pushdown union async] two pushed joins on two servers under an Append (async)
select f.id, d.title from f join dim d on f.cat = d.cat where f.id < 10 union all select l.id, r.label from l_ns l join r_hi r on l.qty = r.v where l.id < 3 and r.k < 510;

-- [join foreign pushdown local] a pushed join's rows joined with a local table
select f.id, d.title, loc.qty from f join dim d on f.cat = d.cat join loc on loc.id = f.id where f.id < 30 and loc.qty > 2;
-- ===== h23s: Incremental Sort (create_ordered_paths, cost_incremental_sort, nodeIncrementalSort.c) =====

-- [local order limit incremental] the index on a, an Incremental Sort by (a, b) under LIMIT
select a, b from incs_t order by a, b limit 10;

-- [local order incremental] without LIMIT a Sort over the Seq Scan costs less
select a, b from incs_t order by a, b;

-- [local order limit incremental desc] DESC on the presorted key: the index read backwards
select a, b from incs_t order by a desc, b limit 12;

-- [local order limit incremental desc] both keys DESC
select a, b from incs_t order by a desc, b desc limit 7;

-- [local order limit offset incremental] OFFSET: the bound is offset + count
select a, b, c from incs_t order by a, b limit 10 offset 40;

-- [local order limit filter incremental] a filter on the index scan
select a, b from incs_t where b > 30 order by a, b limit 8;

-- [local order limit incremental settings] enable_incremental_sort off: the Sort
set enable_incremental_sort = off;
select a, b from incs_t order by a, b limit 10;

-- [local order incremental settings] enable_sort off: the Sort costs disable_cost, an Incremental Sort does not
set enable_sort = off;
select a, b from incs_t order by a, b;

-- [local order limit incremental] three keys, one presorted
select a, b, c from incs_t order by a, c, b limit 10;

-- [local order limit incremental] a large LIMIT: several full-sort groups
select a, b from incs_t order by a, b limit 95;

-- [partition order limit incremental] an ordered Append by a (index, remote ORDER BY a, b) under an Incremental Sort
select a, b from incs_p order by a, b limit 10;

-- [partition order limit incremental desc] the partitions in reverse, the index Backward
select a, b from incs_p order by a desc, b limit 10;

-- [partition order limit offset incremental] far enough for the foreign partition to run
select a, b from incs_p order by a, b limit 5 offset 302;

-- [partition order incremental] without LIMIT: an ordered Append by (a, b), a Sort on the local partition
select a, b from incs_p order by a, b;

-- [partition order limit incremental settings] enable_incremental_sort off
set enable_incremental_sort = off;
select a, b from incs_p order by a, b limit 10;

-- [partition order limit filter incremental] a filter in both partitions
select a, b from incs_p where b < 50 order by a, b limit 10;

-- [partition order limit incremental] three keys
select a, b, c from incs_p order by a, b, c limit 10;

-- [partition order limit incremental] only the foreign partition's rows
select a, b from incs_p where a >= 30 order by a, b limit 10;

-- [local order limit incremental index] loc: ids unique, one row per group
select id, qty from loc order by id, qty limit 5;

-- [range order limit incremental] r: its local partition's index on k, the remote one sorted by k, v
select k, v from r order by k, v limit 10;

-- [range order limit incremental desc] r in reverse
select k, v from r order by k desc, v limit 10;
-- [subquery all materialize] <> ALL (an operator that does not hash): SubPlan 1 over a Materialize of the foreign scan
select count(*) from loc where qty <> all (select weight / 10 from dim where weight is not null);

-- [subquery all nulls] < ALL over a column with a NULL: no row is certainly below all
select count(*) from loc where qty < all (select weight from dim);

-- [subquery any or] > ANY under OR: a SubPlan, not a semi join
select count(*) from loc where qty = 3 or qty > any (select weight / 10 from dim);

-- [subquery all foreign outer] >= ALL in a foreign scan's local Filter, over a local subquery
select count(*) from f where val >= all (select qty * 100 from loc where id < 5);

-- [subquery any hashed or] = ANY under OR: a hashed SubPlan, as IN
select count(*) from loc where qty = 1 or qty = any (select weight / 10 from dim);

-- [subquery any not] NOT over < ANY: a SubPlan whose NULLs stay NULL under NOT
select count(*) from loc where not (qty < any (select weight / 10 from dim where weight > 30));
-- ===== h17o: user-defined functions and operators, and what postgres_fdw ships (issue 17 item 4) =====

-- [routine inline hash] an inlined SQL function: its expression ships to every partition
select id, name from h where uf_plus1(id) = 51;

-- [routine inline named foreign] a parameter by name, used twice, given a column
select id, val from f where uf_twice(id) = 40;

-- [routine inline numeric range] the argument coerced to numeric; r_lo is local, r_hi foreign
select k, label from r where uf_half(k) = 300;

-- [routine inline text foreign] a text body inlined: upper, ||, lower ship
select id, cat from f where uf_tag(cat) = 'C1-c1' and id < 30;

-- [routine inline boolean] a boolean SQL function as the whole condition
select id from f where uf_is_even(id) and id < 12;

-- [routine inline stable hash] a STABLE function whose body is immutable: inlined and shipped
select count(*) from h where uf_grp_ok(grp);

-- [routine inline volatile] a VOLATILE function whose body is immutable: inlined and shipped
select id from f where uf_vplus(id) = 10;

-- [routine inline strict list] STRICT with a strict body that reads its parameter: inlined
select id, region from l where uf_triple(qty) = 30;

-- [routine inline bigint] a body of int for a bigint result
select id from h where uf_big(id) = 42000;

-- [routine inline select list] in the select list: computed on the coordinator
select id, uf_plus1(id), uf_tag(cat) from f where id < 5;

-- [routine operator hash extension] === on s1 (no extensions): a local Filter on the async scans; on s2, a member of a listed extension: shipped
select id, name from h where id === 42;

-- [routine operator text foreign] <<< is no extension's member: a local Filter
select id, cat from f where cat <<< 'c2' and id < 20;

-- [routine operator list] a local Filter on the foreign partition, the local partitions' Filter
select id, region from l where qty === 3;

-- [routine internal hash extension] uf_abs ships to s2 only
select id from h where uf_abs(grp - 5) = 4 and id < 50;

-- [routine internal foreign local] uf_abs_local is no member: a local Filter on s2 too
select id from f where uf_abs_local(id - 300) < 10;

-- [routine operator aggregate pushed] a shipped condition lets postgres_fdw push the count
select count(*) from f where id === 7;

-- [routine operator aggregate local] a local Filter keeps the aggregate on the coordinator
select count(*) from f where cat <<< 'c1';

-- [routine operator inline mixed] an inlined function under a user operator
select id from h where uf_plus1(id) === 43;
-- ===== (h17m) postgres_fdw's foreign modify (UPDATE/DELETE … WHERE ctid = $1), and the DML still refused =====

-- [dml update foreign modify text] a SET that is not shippable (text || int): SELECT … FOR UPDATE, then UPDATE … WHERE ctid = $1 a row
update ins_f set name = name || id where id < 3;

-- [dml delete foreign modify filter] a WHERE that stays local: the scan's Filter, then DELETE … WHERE ctid = $1 a row
delete from ins_f where grp = 1 and name || grp <> 'zz';

-- [dml update foreign modify returning] two SET columns, RETURNING from the remote UPDATE projected locally
update ins_f set grp = grp + 1, name = 'n' || grp where id <= 5 returning id, grp * 2;

-- [dml delete foreign modify returning] RETURNING * from the remote DELETE
delete from ins_f where name || id <> 'r11' returning *;

-- [dml update foreign modify filter] a local Filter, a shippable SET, a table with another remote name
update f set val = val + 1 where cat || id = 'c315';

-- [dml delete foreign modify filter numeric returning] a Filter over two columns, RETURNING a numeric
delete from f where id < 40 and cat || val <> 'x' returning id, score;

-- [dml update foreign modify empty] no row: the scan's FOR UPDATE only, nothing prepared
update ins_f set name = name || id where id > 100;

-- [dml update foreign modify batch empty] a table with batch_size (an UPDATE is a row at a time all the same), no rows
update ins_fb set name = name || grp where id < 20;

-- [dml delete foreign direct returning] DELETE … RETURNING * without WHERE: one Foreign Delete
delete from ins_f returning *;

-- [dml insert on conflict] ON CONFLICT DO NOTHING (ins_loc has no unique index: every row inserted)
insert into ins_loc values (1, 1, 0.5, 'one') on conflict do nothing;

-- [dml update partitioned local] foreign partitions beside a local one: Foreign Updates and a local Update in one ModifyTable
update ins_p set grp = grp + 1 where id < 1000;

-- [dml update partitioned foreign modify] a SET that is not shippable on foreign partitions: a foreign modify per partition
update h set name = name || grp where id < 5;

-- [join param nestloop range settings] the parameter on a column that is not the key: every partition in each loop, each cursor declared again
set enable_hashjoin = off;
set enable_mergejoin = off;
set enable_material = off;
select pnl_l.id, pnl.a, pnl.b from pnl_l join pnl on pnl.a = pnl_l.id;

-- [join param nestloop range settings semi] EXISTS as a Nested Loop Semi Join: the Append rescanned at the first match, its requests in flight
set enable_hashjoin = off;
set enable_mergejoin = off;
set enable_material = off;
set enable_hashagg = off;
set enable_sort = off;
select pnl_l.id, pnl_l.b, pnl_l.c from pnl_l where exists (select 1 from pnl where pnl.a = pnl_l.id);
-- ===== (h23p) postgres_fdw's use_remote_estimate: Foreign Scans priced by the shards' EXPLAIN =====

-- [remote_estimate hash order] s1's partitions priced by s1's EXPLAIN (an index on grp there), s2's locally; Merge Append or Sort by cost
alter server s1 options (add use_remote_estimate 'true');
select id, name from h where grp = 3 order by id;

-- [remote_estimate hash] every partition remote-estimated, the rows the shards' estimates
alter server s1 options (add use_remote_estimate 'true');
alter server s2 options (add use_remote_estimate 'true');
select id, amount from h where amount > 90;

-- [remote_estimate hash agg] an aggregate over the Append of remote-estimated partitions (not pushed down)
alter server s2 options (add use_remote_estimate 'true');
select count(*) from h where big > 1000000000;

-- [remote_estimate foreign] a table's own option
alter foreign table f options (add use_remote_estimate 'true');
select id, val from f where cat = 'c1';

-- [remote_estimate foreign order] a remote ORDER BY priced by the shard's Sort
alter foreign table f options (add use_remote_estimate 'true');
select id, cat, val from f where val > 0 order by val desc;

-- [remote_estimate foreign] the table's option overrides its server's
alter server s2 options (add use_remote_estimate 'true');
alter foreign table f options (add use_remote_estimate 'false');
select id, score from f where id < 40;

-- [remote_estimate range order] pruned to the foreign partition: one Foreign Scan with its ORDER BY, s3's index on k
alter server s3 options (add use_remote_estimate 'true');
select k, v from r where k > 900 order by k;

-- [remote_estimate list order] a list partition on s3 beside local ones
alter server s3 options (add use_remote_estimate 'true');
select id, region, qty from l where qty > 8 order by id;

-- (h17d) ===== INSERT … ON CONFLICT (issue 17 item 3) =====

-- [dml on conflict local nothing] DO NOTHING without a target: every unique index checked, none named
insert into oc_loc values (1, 9, 'x'), (25, 9, 'y') on conflict do nothing;

-- [dml on conflict local nothing async] the rows of an async Append, those already there skipped (arbiter oc_loc_pkey)
insert into oc_loc select id, grp, name from h where id between 15 and 30 on conflict (id) do nothing;

-- [dml on conflict local update async] DO UPDATE over the existing row and excluded
insert into oc_loc select id, grp + 100, name from h where id between 15 and 30 on conflict (id) do update set grp = excluded.grp, name = excluded.name;

-- [dml on conflict local update where] the Conflict Filter removes some updates
insert into oc_loc select id, grp + 100, name from h where id < 12 on conflict (id) do update set grp = excluded.grp + oc_loc.grp where oc_loc.grp < 3;

-- [dml on conflict local update returning] RETURNING the updated and the inserted rows
insert into oc_loc values (3, 50, 'z'), (33, 5, 'n') on conflict (id) do update set grp = excluded.grp + oc_loc.grp returning *;

-- [dml on conflict on constraint] the arbiter named
insert into oc_loc values (4, 7, 'w') on conflict on constraint oc_loc_pkey do update set name = excluded.name;

-- [dml on conflict unique column] a UNIQUE column's index (oc_u_code_key) as the arbiter
insert into oc_u values (99, 30, 'n'), (98, 31, 'm') on conflict (code) do update set name = excluded.name, id = excluded.id;

-- [dml on conflict unique nothing] DO NOTHING without a target on the UNIQUE column
insert into oc_u values (99, 30, 'n'), (100, 1000, 'm') on conflict do nothing;

-- [dml on conflict unique async] no row conflicts: all inserted
insert into oc_u select id + 100, id * 1000, name from h where id < 5 on conflict (code) do nothing;

-- [dml on conflict foreign nothing async] postgres_fdw ships ON CONFLICT DO NOTHING; the insert shares s1's connection with the scans
insert into oc_f select id, grp, name from h where id < 10 on conflict do nothing;

-- [dml on conflict foreign nothing values] one row, returned by the remote INSERT
insert into oc_f values (1, 1, 'r1') on conflict do nothing returning *;

-- [dml on conflict foreign nothing batch] a column list; the rows of a foreign table
insert into oc_f (id, name) select id, cat from f where id < 6 on conflict do nothing;

-- [dml insert unique local] a plain INSERT into a table with a primary key (no conflict)
insert into oc_loc select id + 100, grp, name from h where id < 8;

-- [dml on conflict local nothing values one] one row, a Result, conflicting
insert into oc_loc values (2, 0, 'q') on conflict (id) do nothing;

-- ===== (h17n) correlated IN / ANY / ALL: SubPlans with parameters (issue 17 item 1; subselect.c) =====

-- [subquery correlated in subplan] x IN over a subquery that reads the outer row: convert_ANY_sublink_to_join leaves it, a SubPlan per row over the hash partitions' Append
select id from loc where qty in (select grp from h where h.id = loc.id);

-- [subquery correlated not in subplan] NOT IN, correlated: NOT (SubPlan 1), never hashed (it has parameters)
select id from loc where qty not in (select grp from h where h.id = loc.id);

-- [subquery correlated any subplan] op ANY in WHERE's top-level AND, correlated: a SubPlan, not a semi join
select id from loc where qty < any (select grp from h where h.id = loc.id);

-- [subquery correlated all subplan] op ALL, correlated: no Materialize (build_subplan materializes only without parameters)
select id, qty from loc where qty <> all (select grp from h where h.id = loc.id);

-- [subquery correlated all subplan range] > ALL over the range partitions, a local and a foreign one
select id, qty from loc where qty > all (select k from r where r.v = loc.id);

-- [subquery correlated in subplan foreign] the outer relation foreign: the SubPlan is the foreign scan's local Filter
select id, cat from f where val in (select big from h where h.id = f.id);

-- [subquery correlated in subplan list] = ANY over the list partitions with a condition of the subquery's own
select id from loc where qty = any (select qty from l where l.id = loc.id and l.region <> 'east');

-- [subquery correlated in subplan or] IN under OR
select id from loc where cat = 'c1' or qty in (select grp from h where h.id = loc.id);

-- [subquery correlated in subplan two] a correlated scalar subquery in the select list and a correlated IN in WHERE: SubPlan 1 printed first
select id, (select max(val) from f where f.id = loc.id) from loc where qty in (select grp from h where h.id = loc.id);

-- [subquery correlated in subplan agg] counted over the SubPlan's filter
select count(*) from loc where qty in (select grp from h where h.id = loc.id and h.amount > 50);

-- ===== (h17n) subqueries inside subqueries: InitPlans numbered before the subplan that holds them (subquery_planner one level down) =====

-- [subquery nested initplan] an InitPlan inside an InitPlan: InitPlan 1 ($0) in the hash partitions' remote WHERE, under InitPlan 2 ($1)
select id from loc where qty > (select avg(grp) from h where h.amount > (select avg(score) from f));

-- [subquery nested initplan correlated] an InitPlan inside a correlated SubPlan: planned once, its value beside the SubPlan's parameter in the remote WHERE
select id, (select max(val) from f where f.id = loc.id and f.score > (select avg(amount) from h)) from loc;

-- [subquery nested initplan correlated in] a correlated IN whose subquery holds an InitPlan
select id from loc where qty in (select grp from h where h.id = loc.id and h.amount > (select avg(score) from f));

-- [subquery nested initplan same table] the hash partitions inside and out, the nested InitPlan over them a second time
select count(*) from h where amount > (select avg(score) from f where f.val > (select avg(big) from h where grp = 2));

-- [subquery nested initplan list] the list partitions against a nested InitPlan's InitPlan
select id, region from l where qty > (select avg(grp) from h where h.amount > (select avg(score) from f));

-- [subquery nested initplan having] HAVING against an InitPlan that holds one
select cat, sum(val) from f group by cat having sum(val) > (select sum(amount) from h where h.grp > (select avg(weight) from dim));

-- [subquery nested initplan correlated filter] a correlated SubPlan over the hash partitions with a nested InitPlan's value in each remote WHERE
select id, (select count(*) from h where h.id = loc.id and h.amount < (select avg(score) from f where f.cat = 'c1')) from loc where qty = 3;

-- [subquery nested initplan group] a nested InitPlan over a local table, the outer one grouped
select cat, count(*) from f where val > (select avg(qty) from loc where loc.qty < (select avg(weight) from dim)) group by cat;

-- ===== (h23m) partitionwise join: pairs of foreign partitions on one server pushed down (issue 23 item 5) =====

-- [partitionwise join pushdown] each foreign pair one Foreign Scan of its join (r<n>: the partitions' range-table entries), the local pair a Hash Join
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id;

-- [partitionwise join pushdown left] a LEFT join per pair, WHERE on the preserved side in the remote WHERE
set enable_partitionwise_join = on;
select * from pwj_a a left join pwj_b b on a.id = b.id where a.x < 3;

-- [partitionwise join pushdown right] a RIGHT join pushed as the LEFT join of the sides swapped
set enable_partitionwise_join = on;
select a.t, b.u from pwj_a a right join pwj_b b on a.id = b.id where b.y = 2;

-- [partitionwise join pushdown full] a FULL join per pair
set enable_partitionwise_join = on;
select a.id, b.y from pwj_a a full join pwj_b b on a.id = b.id;

-- [partitionwise join pushdown comma pruned] FROM a, b (no join entry): a's first partition pruned, the range-table entries renumbered
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a, pwj_b b where a.id = b.id and a.id > 320;

-- [partitionwise join pushdown range] both sides pruned to two pairs
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id where a.id between 100 and 400;

-- [partitionwise join pushdown group] an aggregate above the Append, named by the parents
set enable_partitionwise_join = on;
select a.x, count(*) from pwj_a a join pwj_b b on a.id = b.id group by a.x;

-- [partitionwise join pushdown filter] another condition over both sides in each pushed join's ON
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id and a.x < b.y;

-- [partitionwise join pushdown limit] a LIMIT above the Append, conditions on both sides
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id and b.y < 3 where a.x > 1 limit 7;

-- [partitionwise join pushdown lone] one pair left: the Foreign Scan alone, the parents' aliases
set enable_partitionwise_join = on;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id where a.id < 300;

-- [partitionwise join pushdown settings] hash and merge joins off: the pushed-down pairs stay, the local pair a Nested Loop
set enable_partitionwise_join = on;
set enable_hashjoin = off;
set enable_mergejoin = off;
select a.id, b.u from pwj_a a join pwj_b b on a.id = b.id where b.y = 1;

-- ===== (h17u) UPDATE and DELETE of a partitioned table whose partitions are foreign and local =====

-- [dml update partitioned mixed direct local] ins_p's two foreign partitions (s1, s2) as Foreign Updates, its local one changed by ModifyTable
update ins_p set grp = grp + 1 where id > 0;

-- [dml update partitioned mixed direct local returning] RETURNING from the remote UPDATEs and the local partition's rows
update ins_p set name = 'u' where grp < 5 returning id, name;

-- [dml delete partitioned mixed direct local] a Foreign Delete per foreign partition, the local partition's rows deleted
delete from ins_p where grp = 4;

-- [dml delete partitioned mixed direct local returning] RETURNING * across the local partition and s1's
delete from ins_p where id < 1000 returning *;

-- [dml update partitioned mixed foreign modify] a local Filter: each foreign partition a foreign modify (SELECT … FOR UPDATE, UPDATE … WHERE ctid = $1)
update ins_p set amount = amount * 2 where name || id <> 'zz' returning id, amount;

-- [dml delete partitioned mixed foreign modify] a local Filter: DELETE … WHERE ctid = $1 on both servers
delete from ins_p where name || grp <> 'x';

-- [dml update partitioned mixed pruned local] pruned to the local partition: one result relation
update ins_p set grp = 0 where id < 100;

-- [dml update partitioned mixed range returning] r's local partition and s3's, RETURNING an expression
update r set v = v + 1 where v < 3 returning k, v * 2;

-- [dml delete partitioned mixed range] the key range across both partitions
delete from r where k between 480 and 520;

-- [dml update partitioned mixed list] l's foreign partition, its local one and its local default
update l set qty = qty * 2 where price > 5;

-- [dml delete partitioned mixed list returning] every partition of l, RETURNING two columns
delete from l where qty < 2 returning id, region;

-- [dml update partitioned mixed text] a shippable function of the old value on every partition
update ins_p set name = upper(name);

-- ===== (h23r) use_remote_estimate in joins: the shards' EXPLAIN of each relation's base, join-key-ordered and parameterized scans =====

-- [remote_estimate join param] one outer row: the Nested Loop over the Append of parameterized scans, priced by the shards' EXPLAIN of `((SELECT null::integer)::integer) = b`
select pnl_l.id, pnl.a, pnl.c from pnl_l join pnl on pnl.b = pnl_l.b where pnl_l.id = 2;

-- [remote_estimate join nonkey] the join clause not on the partition key: every partition's parameterized variant asked
select pnl_l.id, pnl.b from pnl_l join pnl on pnl.a = pnl_l.id;

-- [remote_estimate join left] a LEFT join: only the nullable side is parameterized (b = placeholder, as written)
select pnl_l.id, pnl.c from pnl_l left join pnl on pnl.b = pnl_l.b where pnl_l.id < 3;

-- [remote_estimate join const] the equivalence class's constant: no join clause left, the base query only
select pnl_l.c, pnl.a from pnl_l join pnl on pnl.b = pnl_l.b where pnl_l.b = 260;

-- [remote_estimate join foreign] a plain foreign table with its own option, joined with a local table
alter foreign table f options (add use_remote_estimate 'true');
select loc.id, f.val from loc join f on f.id = loc.id where loc.qty = 3;

-- [remote_estimate join hash partitions] h's partitions on s1 remote-estimated, s2's priced locally
alter server s1 options (add use_remote_estimate 'true');
select loc.id, h.amount from loc join h on h.id = loc.id where loc.qty = 5;

-- [remote_estimate join settings] no Hash Join: a Merge Join over the remote estimates
set enable_hashjoin = off;
select loc.cat, pnl.c from loc join pnl on pnl.b = loc.id;

-- [remote_estimate join settings nestloop] neither Hash nor Merge Join: a Nested Loop, parameterized or with a Join Filter by cost
alter foreign table f options (add use_remote_estimate 'true');
set enable_hashjoin = off;
set enable_mergejoin = off;
select loc.cat, f.cat from loc join f on f.id = loc.id where loc.id < 20;

-- ===== (h17e) evaluation errors: PostgreSQL's ERROR ends the statement (both sides fail with the same message), and what evaluation order avoids one =====

-- [error local filter] division by zero in a local table's Filter (qty is 0 on every ninth row)
select id from loc where 100 / qty > 10;

-- [error local target] division by zero in a target list, after the first rows came
select id, 100 / qty from loc;

-- [error remote filter] division by zero in a qual pushed to every partition of h (grp is 0 on a tenth of the rows): the shard's ERROR, reported by postgres_fdw
select id from h where 100 / grp > 20;

-- [error remote filter one partition] only r's foreign partition meets the zero (k = 700); the local partition's rows are fine
select k from r where 100 / (k - 700) >= 0;

-- [error bigint overflow local] bigint multiplication past its range in a target list
select id, big * big * 3 from h where id < 100;

-- [error int4 overflow] an int4 product past int4's range
select id * 1000000000 from loc where id = 10;

-- [error int4 overflow cast] a numeric past int4's range cast to int4
select id, (amount * 100000000)::int from h where id < 100;

-- [error numeric typmod local] numeric(2,1) cannot hold amounts from 10 up: numeric field overflow in a target list
select id, amount::numeric(2,1) from h where id < 100;

-- [error numeric typmod remote] the same length coercion in a qual pushed to the shards
select id from h where amount::numeric(2,1) > 5;

-- [error cast text local] a text that is not an integer ('n05'), cast in a target list (one row: the message names the value)
select id, name::int from h where id = 5;

-- [error cast text remote] the same cast in a qual pushed to the shard, after the cheaper `id = 5` (both sides order quals by cost)
select id from h where name::int > 3 and id = 5;

-- [error aggregate local] division by zero in an aggregate's argument over a local table
select sum(100 / qty) from loc;

-- [error aggregate remote] division by zero in an aggregate pushed to the shards (GROUP BY grp, grp = 0)
select grp, sum(100 / grp) from h group by grp;

-- [error initplan] division by zero in an uncorrelated subquery (an InitPlan)
select id from loc where id > (select max(100 / qty) from loc l2);

-- [error subplan correlated] division by zero in a correlated SubPlan's qual, for loc's row with qty 0
select id, (select count(*) from loc l2 where l2.id = 100 / loc.qty) from loc where id < 30;

-- [error dml insert select foreign] a local division by zero while rows go to a foreign table: the statement fails, the target unchanged
insert into ins_f select id, 100 / grp, amount, name from h where id < 40;

-- [error dml insert select foreign remote] the remote scan fails while rows go to a foreign table on another server
insert into ins_f select id, grp, amount, name from h where 100 / grp > 30 and id < 40;

-- [error dml update local] an UPDATE of a local table whose SET divides by zero
update ins_loc set grp = 10 / (grp - 2);

-- [error guarded and] AND stops at its left side: the division never meets a zero
select id from loc where qty <> 0 and 100 / qty > 30;

-- [error guarded or] OR stops at its left side too: a row with qty 0 is kept without dividing
select id from loc where qty = 0 or 100 / qty < 30;

-- [error guarded remote] the guard in a qual pushed to the shards
select id from h where grp <> 0 and 100 / grp > 30;

-- [error guarded null] a NULL divisor is no error (100 / NULL is NULL): h's rows past 2030 have no grp
select count(*) from h where id > 2030 and 100 / grp > 1;

-- [error qual order] the guard written second: PostgreSQL orders a scan's quals by cost (order_qual_clauses), the cheaper `qty <> 0` first, so no row divides by zero
select id from loc where 100 / qty > 30 and qty <> 0;

-- [error constant folded] a constant division by zero over no rows: raised while planning (eval_const_expressions)
select id, 1 / 0 from loc where id < 0;
-- ===== (h17c) data-modifying CTEs and CTE Scan (issue 17 item 3; nodeCtescan.c, ExecPostprocessPlan) =====

-- [dml cte update local returning] UPDATE … RETURNING in WITH, read by a CTE Scan (h17c)
with t as (update ins_loc set grp = grp + 10 where id < 3 returning *) select * from t;

-- [dml cte delete local into log] DELETE … RETURNING feeding an INSERT: two targets (h17c)
with d as (delete from ins_loc where id >= 2 returning *) insert into cte_log select * from d;

-- [dml cte insert foreign count] INSERT into a foreign table in WITH, its rows counted (h17c)
with i as (insert into ins_f values (10, 1, 1.5, 'a'), (11, 2, 2.5, 'b') returning *) select count(*) from i;

-- [dml cte insert foreign from async append] the CTE's foreign INSERT into ins_f (s1) fed by h's async Append on s1 and s2 (h17c)
with i as (insert into ins_f select id, grp, amount, name from h where id between 100 and 104 returning id) select count(*) from i;

-- [dml cte update foreign returning] UPDATE of a foreign table in WITH, its rows ordered by the main query (h17c)
with t as (update ins_f set amount = amount + 1 where id < 3 returning id, amount) select * from t order by id;

-- [dml cte delete foreign joined async] DELETE … RETURNING of ins_f read by the main query joined with h's async Append (h17c)
with d as (delete from ins_f where id > 3 returning id, grp) select d.id, h.name from d join h on h.id = d.id;

-- [dml cte update partitioned returning] UPDATE of ins_p (a local and two foreign partitions) in WITH (h17c)
with t as (update ins_p set grp = grp + 1 where id < 1000 returning id, grp) select * from t order by id;

-- [dml cte delete partitioned aggregate] DELETE of ins_p in WITH, its rows aggregated (h17c)
with d as (delete from ins_p where grp > 5 returning *) select count(*), sum(amount) from d;

-- [dml cte not read] a DELETE in WITH the query does not read: run to its end after the query (h17c)
with d as (delete from ins_loc where id = 3 returning *) select count(*) from h where id < 10;

-- [dml cte not read no returning] an UPDATE of a foreign table in WITH without RETURNING, not read (h17c)
with u as (update ins_f set name = 'zz' where id = 1) select count(*) from f where id < 50;

-- [dml cte two] two data-modifying CTEs, one read (h17c)
with d as (delete from ins_loc where id = 1 returning id, name), u as (update ins_f set grp = 0 where id = 2 returning id) select * from d;

-- [cte materialized] a MATERIALIZED CTE over h's async Append, filtered by its CTE Scan (h17c)
with m as materialized (select id, grp from h where id < 20) select * from m where grp > 3;

-- [cte twice] a CTE read twice: two CTE Scans of one tuplestore (h17c)
with m as (select id, grp from h where id < 30) select a.id, b.id from m a join m b on a.grp = b.grp and a.id < b.id;

-- [cte inlined] a CTE read once and not MATERIALIZED: inlined as a subquery (h17c)
with m as (select id, name from h where id < 10) select * from m order by id;
-- ===== (h17s) several IN/EXISTS/NOT EXISTS sublinks pulled up into one join, and a sublink nested in an EXISTS reading the outer query (issue 17 item 1; pull_up_sublinks, join_is_legal's semi-join rules) =====

-- [subquery semi semi foreign local] IN and EXISTS in one WHERE: two semi joins, the foreign table outside (h17s)
select id, cat from f where id in (select id from loc where qty = 3) and exists (select 1 from dim where dim.cat = f.cat) order by id;

-- [subquery anti anti local foreign] two NOT EXISTS: two anti joins (h17s)
select count(*) from loc where not exists (select 1 from f where f.id = loc.id and f.val > 0) and not exists (select 1 from dim where dim.cat = loc.cat and dim.weight > 20);

-- [subquery semi anti partitioned async] IN over the local table and NOT EXISTS over a foreign one, the hash partitions' async Append outside (h17s)
select count(*) from h where id in (select id from loc where qty = 2) and not exists (select 1 from f where f.id = h.id and f.val > 0);

-- [subquery semi semi eclass partitioned] two IN on one column: one equivalence class, the lower semi join passes the partitions' key up (h17s)
select loc.cat, count(*) from loc where id in (select id from f) and id in (select id from h where grp = 3) group by cat order by cat;

-- [subquery semi anti range] IN over a foreign table, NOT EXISTS over the local one, the range partitions outside (h17s)
select count(*), sum(v) from r where k in (select id from f where cat = 'c1') and not exists (select 1 from loc where loc.id = r.k);

-- [subquery exists exists list] two EXISTS over the list partitions, on two columns (h17s)
select id from l where exists (select 1 from loc where loc.id = l.id and loc.qty = 2) and exists (select 1 from f where f.id = l.qty) order by id;

-- [subquery semi semi anti four relations] three sublinks: a join of four relations (h17s)
select count(*) from loc where id in (select id from f where val > 0) and cat in (select cat from dim where weight > 20) and not exists (select 1 from h where h.id = loc.id and h.grp = 1);

-- [subquery exists nested two levels] an EXISTS inside an EXISTS that reads the outer query: both semi joins (h17s)
select count(*) from loc where exists (select 1 from f where f.id = loc.id and exists (select 1 from dim where dim.cat = loc.cat));

-- [subquery exists nested not exists] a NOT EXISTS inside an EXISTS that reads the outer query: an anti join beside the semi join (h17s)
select count(*) from loc where exists (select 1 from f where f.id = loc.id and not exists (select 1 from dim where dim.cat = loc.cat and dim.weight > 20));

-- [subquery exists nested in] an IN inside an EXISTS on the outer query's column (h17s)
select id from loc where exists (select 1 from f where f.id = loc.id and f.val > 200 and loc.cat in (select cat from dim where weight < 30)) order by id;

-- [subquery semi semi partitioned small] IN over a small foreign table and EXISTS over the local one, the hash partitions outside (h17s)
select count(*) from h where id in (select weight from dim) and exists (select 1 from loc where loc.id = h.id);

-- [subquery semi semi settings merge] hash joins off (h17s)
set enable_hashjoin = off;
select count(*) from loc where id in (select id from f where val > 0) and exists (select 1 from dim where dim.cat = loc.cat);

-- [subquery anti anti settings nestloop] hash and merge joins off: Nested Loop Anti Joins over the list partitions (h17s)
set enable_hashjoin = off;
set enable_mergejoin = off;
select count(*) from l where not exists (select 1 from f where f.id = l.id) and not exists (select 1 from loc where loc.id = l.qty);

-- [subquery semi anti partitioned subqueries] IN over the range partitions and NOT EXISTS over the hash partitions, the local table outside (h17s)
select count(*) from loc where id in (select k from r where v > 10) and not exists (select 1 from h where h.id = loc.id and h.grp = 1);

-- [subquery semi anti limit] IN and NOT EXISTS under ORDER BY and LIMIT (h17s)
select id, qty from loc where id in (select id from f where val > 0) and not exists (select 1 from dim where dim.cat = loc.cat and dim.weight > 20) order by id limit 5;

-- [subquery exists nested star] SELECT * over a semi join with a nested EXISTS, conditions on each side (h17s)
select * from dim where exists (select 1 from f where f.cat = dim.cat and f.val > 600 and exists (select 1 from r where r.v = dim.weight)) order by cat;

-- [subquery semi semi foreign partitioned] IN over the hash partitions and IN over a foreign table, a foreign table outside (h17s)
select count(*) from f where id in (select id from h where grp = 2) and cat in (select cat from dim where weight >= 30);

-- [subquery exists not exists limit partitioned] EXISTS and NOT EXISTS under ORDER BY and LIMIT, the hash partitions outside (h17s)
select h.id, h.name from h where exists (select 1 from f where f.id = h.id and f.cat = 'c2') and not exists (select 1 from l where l.id = h.grp) order by h.id limit 5;

-- [subquery semi semi anti range four relations] two IN and a NOT EXISTS over the range partitions (h17s)
select count(*) from r where k in (select id from h where grp = 5) and v in (select weight from dim) and not exists (select 1 from f where f.id = r.k and f.val < 0);
-- (h17p) ===== INSERT … ON CONFLICT into partitioned tables (issue 17 item 3) =====

-- [dml on conflict partitioned nothing] DO NOTHING without a target: each row routed, its partition's unique indexes checked (one conflicts, two new, one into the default partition)
insert into ocp values (1, 9, 'x'), (95, 9, 'y'), (200, 1, 'd'), (150, 2, 'e') on conflict do nothing;

-- [dml on conflict partitioned nothing async] the rows of an async Append routed over two partitions; arbiters ocp_pkey and ocp_id_idx
insert into ocp select id, grp, name from h where id between 40 and 90 on conflict (id) do nothing;

-- [dml on conflict partitioned update async] DO UPDATE in the row's partition, over the existing row and excluded
insert into ocp select id, grp + 100, name from h where id between 70 and 85 on conflict (id) do update set grp = excluded.grp, name = excluded.name;

-- [dml on conflict partitioned update where] the Conflict Filter removes some updates
insert into ocp select id, grp + 100, name from h where id < 12 on conflict (id) do update set grp = excluded.grp + ocp.grp where ocp.grp < 3;

-- [dml on conflict partitioned update returning] RETURNING the updated and the inserted rows, across partitions
insert into ocp values (3, 50, 'z'), (133, 5, 'n'), (60, 1, 'h') on conflict (id) do update set grp = excluded.grp + ocp.grp returning *;

-- [dml on conflict partitioned on constraint] the arbiter named; the partitions' copies of it checked
insert into ocp values (4, 7, 'w'), (55, 8, 'v'), (99, 0, 'n') on conflict on constraint ocp_pkey do update set name = excluded.name;

-- [dml on conflict partitioned list text] a list-partitioned table's UNIQUE text key
insert into ocp_l values ('north', 5), ('south', 6), ('east', 1) on conflict (region) do update set qty = ocp_l.qty + excluded.qty;

-- [dml on conflict partitioned foreign nothing async] DO NOTHING routed to a foreign partition (postgres_fdw ships ON CONFLICT DO NOTHING) and a local one
insert into ocp_f select id, grp, name from h where id between 40 and 70 on conflict do nothing;

-- [dml on conflict partitioned foreign nothing returning] RETURNING from the foreign partition's remote INSERT and the local one
insert into ocp_f values (1, 1, 'r1'), (60, 0, 'l60'), (61, 1, 'n') on conflict do nothing returning *;

-- [dml insert partitioned unique] a plain INSERT routed to partitions with unique indexes (no conflict)
insert into ocp select id + 200, grp, name from h where id < 8;

-- [dml on conflict partition direct] into a partition itself: its own copies of the parent's indexes as arbiters
insert into ocp_lo values (2, 7, 'q'), (49, 1, 'r') on conflict (id) do update set name = excluded.name;
-- ===== (h23x) use_remote_estimate for a join pushed down to one server: the shard's EXPLAIN of the joined query =====

-- [remote_estimate join pushdown] pnl1 and pnl3 on s1, both with use_remote_estimate: the join's own EXPLAIN prices the pushed-down Foreign Scan
select pnl1.a, pnl1.b, pnl3.c from pnl1 join pnl3 on pnl3.a = pnl1.a where pnl1.b < 20;

-- [remote_estimate join pushdown left] a LEFT join pushed down, the outer side's condition in the remote WHERE
select pnl1.b, pnl3.b from pnl1 left join pnl3 on pnl3.a = pnl1.a where pnl1.b < 10;

-- [remote_estimate join pushdown order] the query's ORDER BY sent with the join: its ordered EXPLAIN prices it against a local Sort
select pnl1.b, pnl3.c from pnl1 join pnl3 on pnl3.a = pnl1.a where pnl3.b < 520 order by pnl3.c;

-- [remote_estimate join pushdown left order] ORDER BY the outer side's key
select pnl1.a, pnl3.b from pnl1 left join pnl3 on pnl3.a = pnl1.a where pnl1.b > 200 order by pnl1.a;

-- [remote_estimate join pushdown foreign] f's own option: its join with dim (both on s2) asks the joined query
alter foreign table f options (add use_remote_estimate 'true');
select f.id, dim.title from f join dim on dim.cat = f.cat where f.id < 100;

-- [remote_estimate join pushdown foreign order] s2's option: a LEFT join ordered remotely or sorted locally, by cost
alter server s2 options (add use_remote_estimate 'true');
select f.val, dim.weight from f left join dim on dim.cat = f.cat where f.id < 50 order by f.val;

-- [remote_estimate join pushdown settings] no Hash Join: the pushed-down join against a Merge Join or a Nested Loop
set enable_hashjoin = off;
select pnl1.c, pnl3.c from pnl1 join pnl3 on pnl3.a = pnl1.a where pnl3.b > 700;
-- ===== (h23j) joins of three and more foreign tables on one server pushed down as one Foreign Scan, and partitionwise joins of three relations (issue 23 item 5) =====

-- [join foreign pushdown three] three foreign tables on s1: one Foreign Scan of the nested join
select a.id, b.u, c.v from j3a a join j3b b on a.id = b.id join j3c c on c.id = b.id;

-- [join foreign pushdown three conditions] each table's condition in the ON of the join that brings it in
select a.id, b.u, c.v from j3a a join j3b b on a.id = b.id join j3c c on c.id = a.id where a.x < 5 and c.z > 1;

-- [join foreign pushdown three left] two LEFT joins nested in the remote query, WHERE on the preserved side
select a.id, b.y, c.z from j3a a left join j3b b on a.id = b.id left join j3c c on c.id = a.id where a.id < 50;

-- [join foreign pushdown three inner left] an inner join inside a LEFT join, a condition on the nullable side in its ON
select a.id, b.u, c.v from j3a a join j3b b on a.id = b.id left join j3c c on c.id = b.id and c.z < 3;

-- [join foreign pushdown three right] a RIGHT join then an inner join
select a.t, b.u, c.v from j3a a right join j3b b on a.id = b.id join j3c c on c.id = b.id;

-- [join foreign pushdown three full] two FULL joins
select a.id, b.id, c.id from j3a a full join j3b b on a.id = b.id full join j3c c on c.id = a.id;

-- [join foreign pushdown three group] an aggregate over the join of three
select c.z, count(*), sum(a.x) from j3a a join j3b b on a.id = b.id join j3c c on c.id = a.id group by c.z;

-- [join foreign pushdown three order limit] ORDER BY and LIMIT over the join of three
select a.id, b.u, c.v from j3a a join j3b b on a.id = b.id join j3c c on c.id = a.id order by a.id desc limit 5;

-- [join foreign pushdown four] four foreign tables on s2 (f, dim, j3d twice over the class of cat)
select f.id, d.title, e.note from f join dim d on f.cat = d.cat join j3d e on e.cat = d.cat where f.id < 40;

-- [join foreign pushdown three local] the pushed join of three, then a local table
select a.id, b.u, c.v, loc.qty from j3a a join j3b b on a.id = b.id join j3c c on c.id = a.id join loc on loc.id = a.id;

-- [join foreign pushdown two servers] j3a and j3b on s1 pushed together, f on s2 joined locally
select a.id, b.u, f.cat from j3a a join j3b b on a.id = b.id join f on f.id = a.id;

-- [partitionwise join three pushdown] three tables partitioned alike: each child join of three foreign partitions one Foreign Scan
set enable_partitionwise_join = on;
select a.id, b.u, c.v from pwj_a a join pwj_b b on a.id = b.id join pwj_c c on c.id = a.id;

-- [partitionwise join three pushdown group] an aggregate above the Append of the children
set enable_partitionwise_join = on;
select a.x, count(*) from pwj_a a join pwj_b b on a.id = b.id join pwj_c c on c.id = b.id group by a.x;

-- [partitionwise join three pushdown left] two LEFT joins per child, WHERE on the preserved side
set enable_partitionwise_join = on;
select a.id, b.y, c.z from pwj_a a left join pwj_b b on a.id = b.id left join pwj_c c on c.id = a.id where a.x < 3;

-- [partitionwise join three pushdown full] FULL joins per child
set enable_partitionwise_join = on;
select a.id, b.id, c.id from pwj_a a full join pwj_b b on a.id = b.id full join pwj_c c on c.id = a.id;

-- [partitionwise join three pushdown conditions] a condition on each side, in each pushed child's ON
set enable_partitionwise_join = on;
select a.id, b.u, c.v from pwj_a a join pwj_b b on a.id = b.id join pwj_c c on c.id = b.id where b.y < 4 and c.z > 0;

-- [partitionwise join three pushdown pruned] pruned to the first partitions: one child, the parents' aliases
set enable_partitionwise_join = on;
select a.id, b.u, c.v from pwj_a a join pwj_b b on a.id = b.id join pwj_c c on c.id = a.id where a.id < 300;

-- [partitionwise join three local] three local tables partitioned alike: a join per child
set enable_partitionwise_join = on;
select a.id, b.u, c.t from pw_la a join pw_lb b on a.id = b.id join pw_la c on c.id = b.id where a.x = 3;

-- [subquery exists nested inner] an EXISTS inside an EXISTS reading the subquery's relation: a semi join inside the other's right side (h17s)
select count(*) from loc where exists (select 1 from f where f.id = loc.id and exists (select 1 from dim where dim.cat = f.cat));

-- [subquery not exists nested inner partitioned] an EXISTS inside a NOT EXISTS reading the subquery's relation, the hash partitions outside (h17s)
select count(*) from h where not exists (select 1 from f where f.id = h.id and exists (select 1 from dim where dim.cat = f.cat and dim.weight > 20));

-- [subquery in nested inner] an EXISTS inside an IN subquery reading its relation (h17s)
select id from loc where id in (select id from f where exists (select 1 from dim where dim.cat = f.cat and dim.weight < 30)) order by id;

-- [join index merge semi filtered] IN over a filtered foreign table under ORDER BY: loc read by its index for a Merge Semi Join (h23o)
select id from loc where id in (select id from f where val > 0) order by id;

-- [join search index merge] three relations, hash joins off: loc by its index as a Merge Join's presorted side (h23o)
set enable_hashjoin = off;
select loc.id, f.val, dim.weight from loc join f on f.id = loc.id join dim on dim.cat = loc.cat order by loc.id;

-- [join search index order limit] three relations under ORDER BY and LIMIT: an ordered index path of loc keeps the query's order (h23o)
select loc.id, f.val from loc join f on f.id = loc.id join dim on dim.cat = f.cat order by loc.id limit 5;

-- (h23i) ===== Parameterized index probes in the join search (issue 23 item 5) =====

-- [join search param index] three local tables: pk_big probed by its index for each row of the Merge Join below (h23i)
select s.tag, b.grp, loc.qty from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id;

-- [join search param index left] a LEFT JOIN's nullable side probed by an Index Only Scan (h23i)
select count(*) from pk_small s left join pk_big b on b.id = s.big_id join loc on loc.id = s.id;

-- [join search param index filter] the probed side's own condition as its Filter (h23i)
select s.tag, b.pad from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id where b.grp < 10;

-- [join search param index hash outer] the probes under a Hash Join's rows (h23i)
select s.tag, b.pad, d.id from pk_small s join pk_big b on b.id = s.big_id join pk_dup d on d.id = s.id;

-- [join search param index semi] EXISTS as a Nested Loop Semi Join probing pk_big, IN as a Hash Semi Join (h23i)
select s.id from pk_small s where exists (select 1 from pk_big b where b.id = s.big_id) and s.id in (select id from loc) order by s.id;

-- [join search param index order] ORDER BY kept by the Nested Loop over the Merge Join's order: no Sort (h23i)
select s.id, b.pad, loc.cat from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id order by s.id;

-- [join search param index settings nestloop] enable_nestloop off: no probes, hash joins (h23i)
set enable_nestloop = off;
select s.tag, b.grp, loc.qty from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id;

-- [join search param index settings hash merge] hash and merge joins off: a Materialize for the unindexed join, probes for the indexed one (h23i)
set enable_hashjoin = off;
set enable_mergejoin = off;
select s.tag, d.id, b.grp from pk_small s join pk_dup d on d.id = s.id join pk_big b on b.id = s.big_id;

-- [join search param index settings index off] index and bitmap scans off: hash joins over Seq Scans (h23i)
set enable_indexscan = off;
set enable_bitmapscan = off;
select s.tag, b.grp, loc.qty from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id;

-- [join search param index settings index only off] enable_indexonlyscan off: the probes are Index Scans (h23i)
set enable_indexonlyscan = off;
select count(*) from pk_small s left join pk_big b on b.id = s.big_id join loc on loc.id = s.id;

-- [join search param index outer filter] a filtered outer side read by its index (h23i)
select b.id, b.pad from pk_small s join loc on loc.id = s.id join pk_big b on b.id = s.big_id where loc.qty > 2;

-- [join search param index four] four relations: a Hash Join over a Merge Join, the probes on top (h23i)
select s.tag, b.pad, loc.cat, d.big_id from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = s.id join pk_dup d on d.id = s.id;

-- [join search param index conditions both] conditions on the outer side and on the probed side (h23i)
select s.tag, b.pad from pk_small s join pk_big b on b.id = s.big_id join pk_dup d on d.id = s.id where s.id > 3 and b.pad <> 'p1';

-- [join search param index foreign] a foreign table in the join: pk_big probed for each joined row (h23i)
select s.tag, f.val, b.grp from pk_small s join f on f.id = s.id join pk_big b on b.id = s.big_id;

-- [join search memoize] pk_dup's big_id repeats, so a Memoize of pk_big's probes is priced too; both choose the Merge Join over pk_big's Index Only Scan (h23i)
select count(*) from pk_dup d join pk_big b on b.id = d.big_id join pk_small s on s.id = d.id;

-- [join search memoize settings off] enable_memoize off: the same Merge Join (h23i)
set enable_memoize = off;
select count(*) from pk_dup d join pk_big b on b.id = d.big_id join pk_small s on s.id = d.id;

-- [join memoize two relations settings] two relations, hash and merge joins off: a Nested Loop over a Memoize of the probes (h23i)
set enable_hashjoin = off;
set enable_mergejoin = off;
select d.id, b.pad from pk_dup d join pk_big b on b.id = d.big_id where d.id < 100;
-- ===== h23o: ordered Append of range partitions as a join's side, partitions named directly =====

-- [orderedappend join merge range local settings] hash joins off: r through an ordered Append (r_lo by its index, r_hi sorted locally) under a Materialize, the Merge Join's inner side (h23o)
set enable_hashjoin = off;
select r.k, loc.cat from r join loc on loc.id = r.k;

-- [orderedappend join order limit range list] ORDER BY the join key, LIMIT: a Nested Loop over r's ordered Append (r_hi sorted remotely for the query's order) (h23o)
select r.k, r.v, l.qty from r join l on r.k = l.id order by r.k limit 5;

-- [orderedappend join order desc limit range list] ORDER BY the join key DESC, LIMIT: the ordered Append backwards, r_lo's index read backwards (h23o)
select r.k, r.v, l.qty from r join l on r.k = l.id order by r.k desc limit 5;

-- [orderedappend join search three range local foreign settings] three relations, hash joins off: r's ordered Append as a base relation's path in the join search (h23o)
set enable_hashjoin = off;
select r.v, loc.cat, f.val from r join loc on loc.id = r.k join f on f.id = r.k;

-- [orderedappend join merge range remote_estimate settings] hash joins off: two ordered Appends merged, r's with r_hi sorted locally, pnl's sorted remotely by the shards' estimates (h23o)
set enable_hashjoin = off;
select r.k, pnl.c from r join pnl on pnl.b = r.k;

-- [orderedappend join left range local settings] LEFT JOIN, hash joins off: r's ordered Append the preserved outer side (h23o)
set enable_hashjoin = off;
select r.k, loc.qty from r left join loc on loc.id = r.k;

-- [orderedappend join right filter range local settings] RIGHT JOIN with a filter on the preserved side, hash joins off (h23o)
set enable_hashjoin = off;
select r.k, loc.qty from loc right join r on loc.id = r.k where r.v < 50;

-- [orderedappend join order limit range local] ORDER BY the join key, LIMIT: r's ordered Append under a Merge Join with loc's index (h23o)
select r.k, r.label from r join loc on loc.id = r.k order by r.k limit 7;

-- [orderedappend join order pruned range list] pruned to r_lo: its index orders the join, no Append (h23o)
select r.k, l.qty from r join l on r.k = l.id where r.k < 400 order by r.k;

-- [orderedappend join nestloop order limit range foreign settings] hash and merge joins off: a Nested Loop over r's ordered Append keeps ORDER BY's order (h23o)
set enable_hashjoin = off;
set enable_mergejoin = off;
select r.k, f.val from r join f on f.id = r.k order by r.k limit 10;

-- [orderedappend join order limit range hash] ORDER BY the range key over a join with the hash-partitioned table, LIMIT (h23o)
select r.k, h.grp from r join h on h.id = r.k order by r.k limit 4;

-- [orderedappend join merge range hash settings] hash joins off, a filter on h: Merge Join over r's ordered Append (h23o)
set enable_hashjoin = off;
select r.k, h.grp from r join h on h.id = r.k where h.grp < 5;

-- [join direct partition local] two partitions named directly under aliases: each with its own statistics (a.id's 300 distinct values), not its parent's (h23o)
select a.id, b.u from pw_la1 a join pw_lb1 b on a.id = b.id where a.x = 3;

-- [join search direct partition three local] three partitions named directly: b and a joined first, as PostgreSQL's costs order them (h23o)
select a.id, b.u, c.t from pw_la1 a join pw_lb1 b on a.id = b.id join pw_la1 c on c.id = b.id where a.x = 3;

-- [prepared generic range pruning order desc limit orderedappend] a generic plan's ordered Append backwards: run-time pruning reads each member's bound in the members' order (r_hi removed at startup) (h23o)
set plan_cache_mode = force_generic_plan;
prepare pd_lt(int) as select k, label from r where k < $1 order by k desc limit 3;
execute pd_lt(300);

-- (h23s) ===== Joins of six and seven relations (one join search each; issue 23 item 5) =====

-- [join search six star local foreign] six relations around loc: two foreign tables, two partitioned tables, pk_big (h23s)
select loc.id, f.val, h.grp, r.v, l.region, b.pad from loc join f on f.id = loc.id join h on h.id = loc.id join r on r.k = loc.id join l on l.id = loc.id join pk_big b on b.id = loc.id where loc.qty = 3;

-- [join search six comma] six relations as a FROM list with WHERE equalities (h23s)
select a.id, c.z, d.id, loc.qty from j3a a, j3b b, j3c c, loc, pk_dup d, dim where a.id = b.id and b.id = c.id and c.id = loc.id and loc.id = d.id and dim.cat = loc.cat;

-- [join search six settings hash] six relations, hash joins off (h23s)
set enable_hashjoin = off;
select loc.id, f.val, h.grp, r.v, l.region, b.pad from loc join f on f.id = loc.id join h on h.id = loc.id join r on r.k = loc.id join l on l.id = loc.id join pk_big b on b.id = loc.id where loc.qty = 3;

-- [join search six settings merge nestloop] six relations, merge joins and nested loops off: hash joins only (h23s)
set enable_mergejoin = off;
set enable_nestloop = off;
select s.tag, b.grp, loc.cat, d.title, j.note, f.val from pk_small s join pk_big b on b.id = s.big_id join loc on loc.id = b.grp join dim d on d.cat = loc.cat join j3d j on j.cat = d.cat join f on f.cat = j.cat where f.id < 100;

-- [join search seven settings hash merge] seven relations, hash and merge joins off: nested loops (h23s)
set enable_hashjoin = off;
set enable_mergejoin = off;
select a.t, b.u, c.v, loc.qty, r.label, l.price, s.tag from j3a a join j3b b on b.id = a.id join j3c c on c.id = a.id join loc on loc.id = a.id join r on r.k = loc.id join l on l.id = r.k join pk_small s on s.id = loc.qty;

-- [join search six partitioned] six relations over the partitioned tables pw_la, pw_lb, h, r, l (h23s)
select a.id, b.u, h.grp, r.v, l.region, loc.qty from pw_la a join pw_lb b on b.id = a.id join h on h.id = a.id join r on r.k = a.id join l on l.id = a.id join loc on loc.id = a.id where a.x = 3;

-- (merge35) ===== IN lists and = ANY as Index Cond (match_saopclause_to_indexcol, num_sa_scans; issue 23 item 5) =====

-- [index any inlist] an IN list on an indexed column: an Index Scan descending once per element (merge35)
select * from pk_big where id in (5, 17, 300);

-- [index any inlist order desc] the same list read backwards for ORDER BY … DESC (merge35)
select id, grp from pk_big where id in (5, 17, 300, 17) order by id desc;

-- [index any inlist bitmap] an IN list on a column with many rows per value: a Bitmap Heap Scan (merge35)
select count(*), min(id) from pk_big where grp in (3, 7);

-- [index any array hashed] ten elements (a hashed ScalarArrayOpExpr as a Filter, a plain array in the index) (merge35)
select id, pad from pk_big where id = any (array[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

-- [index any inlist filter] an IN list as Index Cond, a second conjunct as Filter (merge35)
select id, grp from pk_big where id in (5, 55, 105) and grp = 5;

-- [index any notin] NOT IN is <> ALL, never an Index Cond: the range is (merge35)
select id from pk_big where id not in (5, 7) and id < 10;

-- [index any inlist null] a NULL element matches nothing (merge35)
select id, grp from pk_big where id in (5, null, 19999);

-- [index any lt] < ANY over an ARRAY: the B-tree takes the array (merge35)
select id from pk_big where id < any (array[3, 6]);

-- [index any join] an IN list on the inner side of a join with pk_small (merge35)
select s.tag, b.pad from pk_small s join pk_big b on b.id = s.big_id where b.id in (1638, 19990, 5);

-- [index any partitioned range] an IN list over r: the local partition's index, the foreign one's Remote SQL (merge35)
select k, v from r where k in (10, 20, 700) order by k;

-- [index any prepared generic] a generic plan's IN list of parameters: ARRAY[$1, $2] as Index Cond (merge35)
set plan_cache_mode = force_generic_plan;
prepare pa_in(int, int) as select id, grp from pk_big where id in ($1, $2);
execute pa_in(5, 6000);

-- [index any loc] an IN list on loc's index (merge35)
select * from loc where id in (1, 2, 3);
-- (h17s) ===== Small EXPLAIN differences: sorts past work_mem, a FROM subquery's qualified columns =====

-- [setop union settings sort external] work_mem too small for the sort of a UNION: tuplesort writes its runs to tapes and merges them in one pass (external merge, Disk: the tape set's blocks) (h17s)
set work_mem = '64kB';
select id, name from h union select k, label from r;

-- [setop union settings sort external passes] more runs than the six tapes of 64 kB: balanced merge passes over reused blocks before the final merge (h17s)
set work_mem = '64kB';
select id, name from h union select k, label from r union select id, region from l union select id, cat from f union select id, cat from loc union select grp, name from h;

-- [subquery local order limit] ORDER BY over an ordered, limited subquery of a local table: the subquery is a range-table entry, so Output is qualified (h17s)
select * from (select id, qty from loc order by qty, id limit 5) t order by id;

-- [subquery local group order] a grouped subquery of a local table, ordered outside (h17s)
select t.cat, t.n from (select cat, count(*) as n from loc group by cat) t order by t.cat;
-- (h17o) ===== Foreign scans sorted remotely by the query's pathkeys (postgres_fdw's add_paths_with_pathkeys_for_rel) =====

-- [remotesort merge foreign settings] a Merge Join of two foreign tables on two servers, each sorted remotely by the ORDER BY's equivalence class (h17o)
set enable_hashjoin = off;
set enable_nestloop = off;
select f.id, r_hi.v from f join r_hi on f.id = r_hi.k order by f.id;

-- [remotesort group foreign] GROUP BY over a small foreign table: a GroupAggregate over its remotely sorted scan costs what the pushed aggregate costs (within 1%) and keeps its order, so it wins (h17o)
select cat, count(*) from dim group by cat;

-- [remotesort group foreign settings] GROUP BY over a foreign table with a condition that does not ship: a GroupAggregate over a Sort, hash aggregation off (h17o)
set enable_hashagg = off;
select cat, sum(val) from f where id < 100 and uf_abs_local(id) > 3 group by cat;

-- [remotesort join pushed order] ORDER BY over a join pushed to its server: the ORDER BY in the remote query (h17o)
select f.id, d.title from f join dim d on d.cat = f.cat order by d.title;

-- [remotesort join pushed order desc] the same, descending: DESC NULLS FIRST in the remote query (h17o)
select f.id, d.title from f join dim d on d.cat = f.cat order by f.id desc;

-- [remotesort hash foreign group] a Hash Join whose small foreign side is sorted remotely by the GROUP BY key, which nothing above uses (h17o)
select d.title, count(*) from dim d join loc on loc.cat = d.cat group by d.title;
-- ===== (h17i) integer types and constant errors as PostgreSQL 15 has them (int.c, int8.c; eval_const_expressions) =====

-- [int overflow local target] int4 * int4 past int4's range in a local table's target list: int4mul's "integer out of range" (h17i)
select id, qty * 1000000000 from loc where id < 20;

-- [int overflow local filter] the same check in a local Filter (h17i)
select id from loc where qty * 500000000 > 0;

-- [int overflow remote filter] an int4 product in a qual pushed to every partition of h: the shard's ERROR, relayed by postgres_fdw (h17i)
select id from h where id * 2000000 > 5;

-- [int overflow remote target] an int4 product in the target list over foreign partitions (h17i)
select id, grp * 1000000000 from h where id < 50;

-- [int overflow remote aggregate] an int4 product in an aggregate pushed to the shards (h17i)
select grp, max(id * 2000000) from h group by grp;

-- [int overflow mixed int48] int4 times bigint is int48mul, an int8: no error (h17i)
select id, id * big from h where id < 5 order by id;

-- [int overflow cast to bigint] the cast makes the product int8's (int48, then int8mul): no error (h17i)
select id, id::bigint * 1000000000 from loc where id > 305;

-- [int overflow bigint cast to int] a bigint product past int4's range cast to int (int84) (h17i)
select id, (big * 2)::int from h where id between 1000 and 1100;

-- [int overflow division] the smallest int4 divided by -1 (int4div) (h17i)
select id, (-2147483647 - id) / -1 from loc where id = 1;

-- [int overflow modulo] the smallest int4 modulo -1 is 0 (int4mod) (h17i)
select id, (-2147483647 - id) % -1 from loc where id = 1;

-- [int overflow unary minus] minus the smallest int4 (int4um) (h17i)
select id, -(id - 2147483647 - 2) from loc where id = 1;

-- [int overflow smallint] int2 * int2 is int2mul: "smallint out of range" (h17i)
select id, id::smallint * id::smallint from loc where id > 300;

-- [int overflow sum] sum of int4 is a bigint (int4_sum): no overflow past int4 (h17i)
select sum(id * 1000000) from loc;

-- [int overflow bigint] int8 past its range: "bigint out of range" over a foreign table (h17i)
select id, val * 9000000000000000000 from f where id between 300 and 305;

-- [int overflow text cast] a text past int4's range cast to int (int4in) (h17i)
select id, (id || '0000000000')::int from loc where id = 5;

-- [error constant where false] a constant division by zero in the target list over no rows: raised while planning (h17i)
select id, 1 / 0 from loc where false;

-- [error constant int4] int4pl of two constants past int4's range, folded while planning, in a qual over foreign partitions (h17i)
select id from h where id = 2147483647 + 1;

-- [error constant int4 bigint column] the constants are int4s whatever they are compared with (h17i)
select id from h where big = 2147483647 + 1;

-- [error constant int8] a bigint constant: int8 arithmetic, no error (h17i)
select id from h where big > 3000000000 * 2;

-- [error constant cast] a constant text past int4's range cast to int: raised while planning (h17i)
select id, '3000000000'::int from loc where id < 0;

-- [error constant and false] AND stops at a constant false: what follows is not folded, no error (h17i)
select id from loc where false and 1 / 0 = 1;

-- [error constant or true] OR stops at a constant true (h17i)
select count(*) from loc where true or 1 / 0 = 1;

-- [error constant explain] EXPLAIN of a constant division by zero raises too: folding is planning (h17i)
select id from f where id = 1 / 0;
-- (h17b) ===== Booleans: a type of their own (t/f in rows, true/false in EXPLAIN and Remote SQL) =====

-- [boolean foreign partitioned] a boolean column of each partition, NULLs among them (h17b)
select id, flag from bp where id < 4 or id between 99 and 103 or id between 199 and 203;

-- [boolean local expr] comparisons and IS NULL in the select list: t and f (h17b)
select id, id % 2 = 0, flag is null, flag from bl where id > 38;

-- [boolean foreign partitioned filter] a boolean column as a qual: WHERE (flag) on the shards, a Filter locally (h17b)
select id from bp where flag and grp = 2;

-- [boolean foreign partitioned filter not] NOT of a boolean column (h17b)
select id, name from bp where not flag and id % 20 = 1;

-- [boolean foreign partitioned filter] flag = false is NOT flag (simplify_boolean_equality) (h17b)
select id, name from bp where flag = false and grp = 1 and id % 7 = 0;

-- [boolean foreign partitioned filter untyped] flag <> 'yes': the literal read by boolin, then simplified (h17b)
select id from bp where flag <> 'yes' and id % 50 = 3;

-- [boolean local group] GROUP BY a boolean column: false, true, NULL (h17b)
select flag, count(*), count(flag) from bl group by flag;

-- [boolean local group order] GROUP BY and ORDER BY a boolean, descending (h17b)
select flag, count(*) from bl where id < 44 group by flag order by flag desc;

-- [boolean foreign group pushdown] a foreign partition's aggregate pushed down, grouped by its boolean (h17b)
select flag, count(*) from bp2 group by flag;

-- [boolean local order] ORDER BY a boolean: false before true, NULLs last (h17b)
select id, flag from bl order by flag, id;

-- [boolean join foreign partitioned local] a join on boolean columns of a local table and the partitioned one (h17b)
select bl.id, bp.id from bl join bp on bl.flag = bp.flag where bl.id < 3 and bp.id in (3, 4, 103, 104, 203, 204);

-- [boolean local in] IN (true, false): '{t,f}'::boolean[] (h17b)
select id, flag from bl where flag in (true, false) and id > 36;

-- [boolean local cast] a boolean cast to integer and to text (true/false, not t/f) (h17b)
select id, flag::int, flag::text from bl where id > 40;

-- [boolean foreign const] constants in a foreign scan's target list: true, false, typed NULLs (h17b)
select id, true, false, null::boolean, null::int from bp1 where id < 4;

-- [boolean semi exists foreign partitioned] EXISTS over the partitioned table filtered on its boolean (h17b)
select id from bl where exists (select 1 from bp where bp.flag and bp.id = bl.id);

-- [boolean foreign partitioned like] LIKE in the select list: a boolean per row (h17b)
select id, name like 'b1%' from bp where id in (10, 11, 110, 210);

-- [boolean foreign order limit] ORDER BY a boolean pushed to the shard: DESC NULLS FIRST (h17b)
select id, flag from bp1 order by flag desc, id limit 5;

-- (merge35) ===== Conditions must be boolean (coerce_to_boolean) =====

-- [error boolean where] an integer column as WHERE (merge35)
select id from loc where qty;

-- [error boolean where foreign] a bigint column of a foreign table as WHERE (merge35)
select id from f where val;

-- [error boolean having] count(*) as HAVING (merge35)
select qty, count(*) from loc group by qty having count(*);

-- [error boolean not] NOT over an integer (merge35)
select id from loc where not qty;

-- [boolean literal where] an untyped literal read as a boolean in an AND (merge35)
select id from loc where 't' and id < 3;

-- (merge35) ===== Assignments PostgreSQL has no cast for (transformAssignedExpr, COERCION_ASSIGNMENT) =====

-- [error dml insert boolean integer] an integer into a boolean column (merge35)
insert into bl values (100, 1, 'x');

-- [error dml insert select boolean integer] an integer column into a boolean column (merge35)
insert into bl select id, id, note from bl;

-- [error dml update boolean integer] SET a boolean column to an integer (merge35)
update bl set flag = 1;

-- [error dml insert integer boolean] a boolean into an integer column (merge35)
insert into bl values (true, true, 'x');

-- [dml insert boolean literal] untyped literals and NULL become the column's type (merge35)
insert into bl values (101, 'yes', 'y'), (102, null, 'z');

-- [union async projection foreign] a computed select list is the Foreign Scan's own projection: async under the Append (h17q)
select id + 1 from f where id < 3 union all select id from loc where id < 3;

-- [union async filter projection foreign] a local Filter and a computed select list, both the scan's: async (h17q)
select id, val * 2 from f where id < 3 and cat <<< 'c2' union all select id, qty from loc where id < 3;

-- [union async pruned subquery] a UNION ALL in FROM: the partition pruning left alone is no async member (h17q)
select * from (select id, name from h where id = 5 union all select id, cat from f where id = 5) s;

-- [union async pruned twice] two lone partitions of one table: both plain Foreign Scans, named h and h_1 (h17q)
select id from h where id = 5 union all select id from h where id = 6;

-- (h17e) ===== Unary minus, BooleanTest, unknown select items, EXISTS as a value =====

-- [expr unary minus foreign] -x of int, bigint and numeric columns: (- x), shipped as such (h17e)
select -id, -val, -score from f where -id < -500;

-- [expr unary minus local] -x in a local scan's Output and Filter (h17e)
select -id, -qty from loc where -qty < -5 and id < 20;

-- [expr unary minus nested partitioned] -(x + 1) over hash partitions, in the remote WHERE (h17e)
select id, -(grp + 1) from h where -(grp + 1) = -3 and id < 40;

-- [error expr unary minus overflow] int4um: -x of the smallest int4 is no int4 (h17e)
select -(id - 2147483647 - 2) from loc where id = 1;

-- [error expr unary minus text] no prefix - for a text (h17e)
select -cat from loc;

-- [null select list local] a NULL select item is a text: NULL::text (resolveTargetListUnknowns) (h17e)
select id, null from loc where id < 4;

-- [null select list foreign] a NULL beside a foreign table's column: not fetched, NULL::text locally (h17e)
select id, null as n from f where id < 4;

-- [null select list partitioned] only a NULL from hash partitions: SELECT NULL remotely (h17e)
select null from h where id < 6;

-- [error dml insert select boolean text] a text column into a boolean column: no assignment cast (h17e)
insert into bl (id, flag) select id, cat from loc where id < 3;

-- [dml insert select boolean literal] an untyped literal of a SELECT becomes the column's type (h17e)
insert into bl (id, flag) select id, 'yes' from loc where qty > 305;

-- [boolean test local] IS TRUE, IS NOT UNKNOWN in Output, IS NOT TRUE as a Filter (booltestsel) (h17e)
select id, flag is true, flag is not unknown from bl where flag is not true;

-- [boolean test local unknown] IS UNKNOWN and IS NOT FALSE over a boolean column (h17e)
select id from bl where flag is unknown or (flag is not false and id > 40);

-- [boolean test foreign] a BooleanTest does not ship: a local Filter, the column fetched (h17e)
select id from bp1 where flag is false and id < 20;

-- [boolean test foreign partitioned] IS NOT TRUE locally on each foreign partition, id < 110 remotely (h17e)
select id, flag is true from bp where flag is not true and id < 110;

-- [boolean test simplified] (flag IS TRUE) = false is NOT (flag IS TRUE), negated to IS NOT TRUE (h17e)
select id from bp1 where (flag is true) = false;

-- [boolean test expr] a BooleanTest over a comparison, of a foreign table (h17e)
select id, (val > 0) is not true from f where (val > 0) is unknown;

-- [boolean test const] over constants: folded (h17e)
select 'true' is true, null is unknown, id from loc where id = 1;

-- [error boolean test integer] IS TRUE takes a boolean (h17e)
select id from loc where qty is true;

-- [subquery exists select list uncorrelated] EXISTS as a value: an InitPlan's $0 (h17e)
select id, exists (select 1 from f where id > 5) from loc where id < 3;

-- [subquery exists select list correlated] a correlated EXISTS as a value: hashed SubPlan 2 (h17e)
select id, exists (select 1 from f where f.id = loc.id) from loc where id > 300;

-- [subquery exists or uncorrelated] an uncorrelated EXISTS under OR: an InitPlan, $0 in the Filter (h17e)
select id from loc where id < 3 or exists (select 1 from f where val > 100000);

-- [subquery exists or foreign] an uncorrelated EXISTS under OR over a foreign table: $1::boolean shipped, the InitPlan's scan without Output (h17e)
select id from f where id < 3 or exists (select 1 from loc where qty > 100);

-- [subquery from pulled up filter] WHERE on a subquery's computed column: the expression in the scan's Filter (pull_up_simple_subquery) (h17e)
select * from (select id, id + 1 as n from loc) s where n > 300;

-- [subquery from pulled up constant] a subquery's constant column: Output 7 (h17e)
select n from (select id, 7 as n from loc) s where id < 3;

-- [subquery from pulled up null] a subquery's NULL column tested IS NULL: folded away (h17e)
select * from (select id, null as n from loc) s where n is null and id < 3;

-- [subquery from pulled up foreign] WHERE on a foreign subquery's expression: shipped (h17e)
select * from (select id, val * 2 as v from f) s where v > 1000 and id < 400;

-- [subquery from grouped pushed] WHERE over a grouped subquery: a key condition into its WHERE, an aggregate's into HAVING, both remote (subquery_push_qual) (h17e)
select * from (select cat, count(*) as n from f group by cat) s where cat < 'c3' and n > 80;

-- [group having order local] HAVING over a HashAggregate under a Sort: the aggregate computed, not referenced (h17e)
select cat, count(*) from loc group by cat having count(*) > 5 order by cat;

-- [group having order partitioned] the same over hash partitions (h17e)
select grp, sum(amount) as total from h group by grp having sum(amount) > 100 order by grp;

-- [series negative] a negative argument: '-3'::integer in the Function Call (h17e)
select g from generate_series(-3, 5, 2) g;

-- [const agg partitioned filter] count(*) over partitions with a Filter: the local scans output nothing (h17e)
select count(*) from l where qty > 5;

-- (h23j) ===== Join searches of 8 to 11 relations (standard_join_search, below geqo_threshold) =====

-- [join star 8] a star of 8 relations: one search (join_collapse_limit 8) (h23j)
select count(*), max(js_d7.t) from js_f, js_d1, js_d2, js_d3, js_d4, js_d5, js_d6, js_d7 where js_f.d1 = js_d1.k and js_f.d2 = js_d2.k and js_f.d3 = js_d3.k and js_f.d4 = js_d4.k and js_f.d5 = js_d5.k and js_f.d6 = js_d6.k and js_f.d7 = js_d7.k;

-- [join star 10 collapse] a star of 10 relations searched whole (collapse limits 12, below geqo_threshold) (h23j)
set join_collapse_limit = 12;
set from_collapse_limit = 12;
select count(*), max(js_d9.t) from js_f, js_d1, js_d2, js_d3, js_d4, js_d5, js_d6, js_d7, js_d8, js_d9 where js_f.d1 = js_d1.k and js_f.d2 = js_d2.k and js_f.d3 = js_d3.k and js_f.d4 = js_d4.k and js_f.d5 = js_d5.k and js_f.d6 = js_d6.k and js_f.d7 = js_d7.k and js_f.d8 = js_d8.k and js_f.d9 = js_d9.k;

-- [join star 11 collapse] a star of 11 relations searched whole: the widest exhaustive search by default (h23j)
set join_collapse_limit = 12;
set from_collapse_limit = 12;
select count(*), max(js_d10.t) from js_f, js_d1, js_d2, js_d3, js_d4, js_d5, js_d6, js_d7, js_d8, js_d9, js_d10 where js_f.d1 = js_d1.k and js_f.d2 = js_d2.k and js_f.d3 = js_d3.k and js_f.d4 = js_d4.k and js_f.d5 = js_d5.k and js_f.d6 = js_d6.k and js_f.d7 = js_d7.k and js_f.d8 = js_d8.k and js_f.d9 = js_d9.k and js_f.d10 = js_d10.k;

-- [join chain 8] a chain of 8 relations (h23j)
select count(*), sum(js_c8.v) from js_c1, js_c2, js_c3, js_c4, js_c5, js_c6, js_c7, js_c8 where js_c2.k = js_c1.v and js_c3.k = js_c2.v and js_c4.k = js_c3.v and js_c5.k = js_c4.v and js_c6.k = js_c5.v and js_c7.k = js_c6.v and js_c8.k = js_c7.v;

-- [join chain 9 collapse] a chain of 9 relations searched whole (collapse limits 12) (h23j)
set join_collapse_limit = 12;
set from_collapse_limit = 12;
select count(*), sum(js_c9.v) from js_c1, js_c2, js_c3, js_c4, js_c5, js_c6, js_c7, js_c8, js_c9 where js_c2.k = js_c1.v and js_c3.k = js_c2.v and js_c4.k = js_c3.v and js_c5.k = js_c4.v and js_c6.k = js_c5.v and js_c7.k = js_c6.v and js_c8.k = js_c7.v and js_c9.k = js_c8.v;

-- [join chain 11 collapse] a chain of 11 relations searched whole (collapse limits 12) (h23j)
set join_collapse_limit = 12;
set from_collapse_limit = 12;
select count(*), sum(js_c11.v) from js_c1, js_c2, js_c3, js_c4, js_c5, js_c6, js_c7, js_c8, js_c9, js_c10, js_c11 where js_c2.k = js_c1.v and js_c3.k = js_c2.v and js_c4.k = js_c3.v and js_c5.k = js_c4.v and js_c6.k = js_c5.v and js_c7.k = js_c6.v and js_c8.k = js_c7.v and js_c9.k = js_c8.v and js_c10.k = js_c9.v and js_c11.k = js_c10.v;

-- (h17c) ===== CASE, COALESCE, NULLIF, GREATEST/LEAST, abs, round =====

-- [expr case foreign partitioned] a searched CASE in the select list of the async Append's scans (h17c)
select id, case when grp > 5 then 'big' else 'small' end from h where id < 12;

-- [expr case foreign partitioned ship] a searched CASE compared with a constant: shipped, in parentheses (h17c)
select id, grp from h where case when grp > 5 then 1 else 0 end = 1 and id < 40;

-- [expr case simple foreign partitioned] a simple CASE without ELSE: ELSE NULL::text (h17c)
select id, case grp when 1 then 'one' when 2 then 'two' end from h where id < 10;

-- [expr case simple foreign partitioned ship] a simple CASE as a boolean qual: shipped (h17c)
select id, grp from h where case grp when 3 then true else false end and id < 60;

-- [expr case foreign partitioned collation] a CASE of a text column compared with a text: shipped (the column gives the collation) (h17c)
select id, name from h where case when grp > 5 then name else 'small' end = 'n07';

-- [expr case coalesce aggregate foreign partitioned] CASE and COALESCE inside aggregates over the async Append (h17c)
select grp, count(*), sum(case when amount > 50 then 1 else 0 end), max(coalesce(name, '?')) from h group by grp order by grp;

-- [expr coalesce foreign partitioned] COALESCE of text, integer and numeric columns over their NULLs (h17c)
select id, coalesce(name, 'none'), coalesce(grp, -1), coalesce(amount, 0) from h where id > 2000 and id < 2040;

-- [expr coalesce foreign partitioned filter] COALESCE in WHERE: a local Filter on each async scan (h17c)
select id, grp, coalesce(grp, 0) from h where coalesce(grp, 0) > 8;

-- [expr nullif greatest least foreign partitioned] NULLIF, GREATEST, LEAST computed locally (h17c)
select id, grp, nullif(grp, 3), greatest(grp, 5), least(grp, 5, id) from h where id < 12;

-- [expr abs round foreign] abs, round(numeric, int), round(numeric), round(bigint) (a float8) (h17c)
select id, abs(val), round(score, 1), round(score), round(val) from f where id < 8 or id > 515;

-- [expr abs round foreign ship] abs and round in WHERE: shipped, round(x) as round(x, 0) (h17c)
select id, val from f where abs(val) < 10 and round(score) > 2;

-- [expr case coalesce range] CASE with IS NULL and COALESCE over the range-partitioned table (h17c)
select k, case when v is null then 'none' when v < 10 then 'low' else 'high' end, coalesce(v, 0) + 1 from r where k % 100 = 7;

-- [expr round abs aggregate foreign partitioned] aggregates of round and abs over the async Append (h17c)
select sum(round(amount)), avg(round(amount, 1)), max(abs(grp - 5)) from h where id < 500;

-- [expr case foreign partitioned boolean] a CASE without ELSE as a qual: ELSE NULL::boolean, shipped (h17c)
select id from h where case when id < 3 then true end;

-- [error expr coalesce types] COALESCE of an integer and a text (h17c)
select coalesce(grp, name) from h;

-- [error expr case when boolean] a CASE/WHEN condition that is not boolean (h17c)
select id from h where case when grp then 1 end = 1;

-- (h17c) ===== SELECT DISTINCT and DISTINCT aggregates =====

-- [distinct foreign partitioned order] DISTINCT over the async Append: HashAggregate then Sort, chosen by cost (h17c)
select distinct grp from h order by grp;

-- [distinct foreign] DISTINCT over a plain foreign table: not pushed (postgres_fdw 15 has no UPPERREL_DISTINCT) (h17c)
select distinct grp from h0;

-- [distinct foreign partitioned where] DISTINCT with a WHERE shipped to every partition (h17c)
select distinct grp from h where id < 100;

-- [distinct foreign partitioned two columns] DISTINCT on two columns, ORDER BY both (h17c)
select distinct grp, name from h where id < 300 order by grp, name;

-- [distinct foreign partitioned limit] DISTINCT with ORDER BY DESC and LIMIT (h17c)
select distinct name from h where grp = 3 order by name desc limit 5;

-- [distinct foreign text] DISTINCT of a text column of a foreign table, its NULLs one row (h17c)
select distinct cat from f order by cat;

-- [distinct local] DISTINCT over a local table, ordered (h17c)
select distinct qty from loc order by qty;

-- [distinct local unordered] DISTINCT over a local table: HashAggregate (h17c)
select distinct cat from loc;

-- [distinct list partitioned] DISTINCT over the list-partitioned table (local and foreign partitions) (h17c)
select distinct region from l;

-- [distinct list partitioned two columns] two columns with a WHERE, ordered (h17c)
select distinct region, qty from l where qty > 8 order by region, qty;

-- [distinct boolean foreign partitioned] DISTINCT of a boolean over foreign and local partitions (h17c)
select distinct flag from bp order by flag;

-- [error distinct order by] ORDER BY a column the DISTINCT list lacks (h17c)
select distinct grp from h order by id;

-- [aggregate distinct foreign partitioned] count(DISTINCT) over the async Append: a plain Aggregate (h17c)
select count(distinct grp) from h;

-- [aggregate distinct foreign partitioned group] DISTINCT aggregates per group: GroupAggregate (no HashAggregate for them) (h17c)
select grp, count(distinct name), sum(distinct amount) from h group by grp;

-- [aggregate distinct foreign partitioned avg] count(DISTINCT) and avg(DISTINCT) with a WHERE (h17c)
select count(distinct name), avg(distinct grp) from h where id < 100;

-- [aggregate distinct local] count(DISTINCT) beside count(*) over a local table (h17c)
select count(distinct cat), count(*) from loc;

-- [aggregate distinct foreign pushdown] count(DISTINCT) pushed to the remote server with the aggregate (h17c)
select count(distinct grp), count(*) from h0;

-- [aggregate distinct foreign pushdown group] count(DISTINCT) per group, pushed (h17c)
select grp, count(distinct name) from h0 group by grp;

-- [aggregate distinct foreign pushdown where] count(DISTINCT) with a shipped WHERE (h17c)
select count(distinct cat) from f where id < 300;

-- [error aggregate distinct star] count(DISTINCT *) (h17c)
select count(distinct *) from h;

-- ===== EXPLAIN's last differences: unique-ified sides, dummy relations, resjunk keys, aliases, typed constants (h17x) =====

-- [subquery semi join unique inner hash] IN over a local table planned as an inner join with its side made unique: create_unique_plan passes its parent's CP_SMALL_TLIST to the scan (h17x)
select * from dim where cat in (select cat from loc where qty > 2) order by cat;

-- [const false local order] a constant-false WHERE over a plain table: the dummy relation's Result, the Sort Key qualified under VERBOSE (h17x)
select id, cat from loc where false order by cat;

-- [const false partitioned alias order] every partition pruned under an alias: Sort Key x.grp (h17x)
select id, grp from h x where 1 = 0 order by grp desc;

-- [mergeappend resjunk sort key] ORDER BY a column the select list leaves out over the async partitions: the Merge Append's key is the resjunk column (h17x)
select id from h order by grp limit 3;

-- [mergeappend resjunk sort key two] two keys, one of them selected (h17x)
select name from h where id < 50 order by grp, name limit 4;

-- [foreign alias] a plain foreign table under an alias: Foreign Scan on public.f x (h17x)
select x.id, x.cat from f x where x.id < 5;

-- [foreign alias order] under an alias, sorted remotely (h17x)
select x.id, x.val from f x where x.val > 700 order by x.val;

-- [const bigint coalesce] COALESCE over a bigint column: the 0 coerced to an int8 Const, '0'::bigint (h17x)
select id, coalesce(big, 0) from h where id < 4 or id > 2055 order by id;

-- [const bigint cast] constants cast to bigint, smallint and integer (get_const_expr labels all but int4) (h17x)
select id, 7::bigint, 5::smallint, -3, id + 2::bigint from loc where id < 3;

-- [const bigint coalesce sum] COALESCE of sum(int4), a bigint, and 0 (h17x)
select grp, coalesce(sum(id), 0) from h where grp < 3 group by grp order by grp;

-- [sum bigint numeric foreign] sum(bigint) is numeric (numeric_poly_sum), sum(int) bigint: their divisions differ (h17a)
select sum(val) / 7, sum(id) / 7 from f where id < 100;

-- [sum bigint numeric local] sum of a bigint cast over a local table: numeric, beside sum(int) (h17a)
select cat, sum(qty::bigint) / 7, sum(qty) / 7 from loc group by cat order by cat;

-- [sum bigint numeric having partitioned] HAVING compares sum(bigint) with a numeric constant, per partition (h17a)
select grp, sum(big) from h group by grp having sum(big) > 100000000000 order by grp;

-- [remote target order] a pushed-down grouping ships the select list in its order: GROUP BY 2 (h17a)
select count(*), cat from f group by cat;

-- [remote target order const] a constant of the select list is shipped with the aggregate (h17a)
select 'f' as src, count(*) from f;

-- [remote target order key absent] a grouping key the select list lacks comes last (h17a)
select count(*) from f group by cat;

-- [union count no columns] count(*) over a UNION ALL in FROM: the members fetch no column (h17a)
select count(*) from (select cat from f union all select cat from loc) s;

-- [foreign group no aggregate] GROUP BY without an aggregate, pushed down: an upper relation (h17a)
select cat from f group by cat;

-- [foreign group no aggregate order] GROUP BY without an aggregate, ORDER BY the key (h17a)
select cat from f group by cat order by cat;

-- [group expression estimate] GROUP BY an expression: its column's distinct values (estimate_num_groups) (h17a)
select qty % 3, count(*) from loc group by qty % 3;

-- [group expression estimate text] DISTINCT on a text expression (h17a)
select distinct cat || 'x' from loc;

-- [group expression estimate two] GROUP BY an expression and a column (h17a)
select id % 7, cat, count(*) from loc group by id % 7, cat;

-- [subquery initplan select list partitioned async] an InitPlan's $0 in the select list over the async Append: the target list with $0 in each partition's scan, the InitPlan attached to the Append, run at the first row a member returns (dim on s2, beside h2 and h3) (h17i)
select id, (select count(*) from dim) from h where grp = 1;

-- [subquery initplan select list partitioned expression] the value in an expression with the row's column, the InitPlan's relation on s2 (h17i)
select id, grp, (select sum(val) from f) - id as d from h where id < 30;

-- [subquery initplan select list partitioned other server] the InitPlan's relation on s3, where no partition of h is (h17i)
select id, (select count(*) from r_hi where k > 900) as n from h where grp = 2 and id < 200;

-- [subquery initplan select list partitioned local] the InitPlan over a local table (h17i)
select id, (select count(*) from loc) as n from h where id < 20;

-- [subquery initplan select list partitioned initplan append] the InitPlan itself over the partitioned table: an async Append inside it, on the main Append's connections (h17i)
select id, (select count(*) from h where grp = 2) as n from h where grp = 1 and id < 300;

-- [subquery initplan select list partitioned mixed] over local and foreign partitions (r_lo local, r_hi on s3), the InitPlan on s2 (h17i)
select k, v, (select count(*) from f where cat = 'c3') as m from r where v = 5;

-- [subquery initplan select list partitioned list] over l's foreign and local partitions, the InitPlan over l itself (h17i)
select id, region, (select sum(qty) from l where region = 'north') as s from l where qty = 2;

-- [subquery initplan select list partitioned limit] under a LIMIT above the Append (every row within it) (h17i)
select id, (select count(*) from dim) as n from h where grp = 1 and id < 12 limit 10;

-- [subquery initplan select list partitioned two] two InitPlans in the select list, numbered in order (h17i)
select id, (select count(*) from dim) as a, (select sum(id) from f) as b from h where grp = 3 and id < 100;

-- ===== JOIN … USING, NATURAL JOIN and SELECT without FROM: the SQL a new user types first (h17s) =====

-- [join using foreign] USING over two foreign tables on one server: the join pushed down, ON the left side's column = the right's (h17s)
select id, cat, title from f join dim using (cat) where id < 20;

-- [join using foreign group] grouped by a column of the right side (h17s)
select title, count(*) from f join dim using (cat) group by title;

-- [join using local foreign] a local table USING a foreign one, aliased; the merged column is the left side's (h17s)
select id, cat, weight from loc l join dim d using (cat) where id < 15;

-- [join using hash local] the hash-partitioned table USING a local table: the merged id is h's (h17s)
select id, name, qty from h join loc using (id) where id < 30;

-- [join using left null group] LEFT JOIN … USING grouped by the merged column (h17s)
select cat, title, count(f.id) from dim d left join f using (cat) group by cat, title;

-- [join using right null list foreign] RIGHT JOIN … USING: the merged column is the right side's (h17s)
select id, region, f.cat from l right join f using (id) where id > 480;

-- [join using three] two USING joins in a chain, the second on a column of the first join's left side (h17s)
select id, title, qty from f join dim d using (cat) join loc using (id) where id < 50;

-- [join using star] SELECT * over USING: the merged column once and first, then each side's others (h17s)
select * from l join f using (id) where id > 495;

-- [join using list local] USING over the list-partitioned table and a local table, a column both have qualified (h17s)
select id, region, loc.cat from l join loc using (id) where loc.qty > 5;

-- [join using two columns] USING two columns (h17s)
select * from ins_loc join h using (id, grp);

-- [join natural foreign] NATURAL JOIN: USING the columns both sides have (h17s)
select * from f natural join dim where id < 10;

-- [join natural left local foreign group] NATURAL LEFT JOIN grouped by the merged column (h17s)
select cat, count(*), max(weight) from loc natural left join dim group by cat;

-- [error join using missing right] a USING column the right side lacks: PostgreSQL's error (h17s)
select * from f join dim using (id);

-- [error join using missing left] a USING column the left side lacks (h17s)
select * from dim join f using (id);

-- [const select no from] SELECT without FROM: a Result without input (h17s)
select 1;

-- [const select no from expr] constant expressions folded, named by their aliases (h17s)
select 1 + 2 as three, 'a' || 'b' as ab, 2.5 * 2 as five;

-- [const select no from text] a text literal and a boolean (h17s)
select 'hello', true, 10 / 3;

-- [join three sized once order limit] a join relation is sized once, from the first pair that makes it (set_joinrel_size_estimates): every path of {h, f, loc} has those rows (h23s)
select h.id, f.val, loc.cat from h join f on h.id = f.id join loc on loc.id = h.id order by f.val limit 3;

-- [join three sized once count] the three-way equivalence class: the first pair ({h, f} with loc) sizes the relation (h23s)
select count(*) from h join f on h.id = f.id join loc on loc.id = f.id where loc.qty = 2;

-- [join three sized once list order limit] a list-partitioned table between a foreign and a local one, ORDER BY the key, LIMIT (h23s)
select f.id, l.region, loc.qty from f join l on l.id = f.id join loc on loc.id = l.id order by f.id limit 4;

-- [join four sized once] four relations on one key, a filter on the last: each level's relations sized by their first pair (h23s)
select h.grp, r.v, loc.cat from h join r on r.k = h.id join loc on loc.id = r.k join f on f.id = loc.id where f.val > 900;

-- [join three sized once left order limit] a LEFT JOIN under an inner one, ORDER BY the foreign table's column, LIMIT (h23s)
select loc.id, h.grp, f.val from loc left join h on h.id = loc.id join f on f.id = loc.id order by f.val desc limit 5;

-- ===== (h23p) partitionwise join: joins not on the keys, and partition bounds that differ (partition_bounds_merge) (issue 23 item 5) =====

-- [partitionwise join three off key] two tables partitioned alike joined on other columns than the key, and a small table: no join relation partitioned, planned as usual
set enable_partitionwise_join = on;
select a.id, b.u, s.name from pw_la a join pw_lb b on a.x = b.y join pwm_s s on s.id = a.x where a.id < 20;

-- [partitionwise join three all off key] three tables partitioned alike, none joined on its key: planned as usual
set enable_partitionwise_join = on;
select a.id, b.u, c.t from pw_la a join pw_lb b on a.x = b.y join pw_fa c on c.x = b.y where a.id < 5 and c.id < 40;

-- [partitionwise join merge range] bounds that differ: pw_la's partition without a partner is left out of the inner join
set enable_partitionwise_join = on;
select a.id, l.v from pw_la a join pwm_l l on a.id = l.id;

-- [partitionwise join merge range left fallback] the preserved side's partition has no partner: not partitionwise
set enable_partitionwise_join = on;
select a.id, l.v from pw_la a left join pwm_l l on a.id = l.id where a.x = 3;

-- [partitionwise join merge range left] the nullable side's partition without a partner is left out
set enable_partitionwise_join = on;
select l.id, a.t from pwm_l l left join pw_la a on a.id = l.id where l.z = 1;

-- [partitionwise join merge range full fallback] FULL JOIN with a partition on one side only: not partitionwise
set enable_partitionwise_join = on;
select a.id, l.v from pw_la a full join pwm_l l on a.id = l.id where a.x = 1 or l.z = 1;

-- [partitionwise join merge range overlap] narrower ranges that overlap pw_la's one to one: three pairs
set enable_partitionwise_join = on;
select a.id, d.v from pw_la a join pwm_d d on a.id = d.id where d.z = 2;

-- [partitionwise join merge range many] a partition overlapping two of the other side: the bounds do not merge, planned as usual
set enable_partitionwise_join = on;
select a.id, e.z from pw_la a join pwm_e e on a.id = e.id;

-- [partitionwise join merge range many pruned] that partition pruned: the rest merge, one pair left
set enable_partitionwise_join = on;
select a.id, e.z from pw_la a join pwm_e e on a.id = e.id where a.id >= 300;

-- [partitionwise join merge list] list partitions matched by the values they share
set enable_partitionwise_join = on;
select a.k, a.v, b.w from pwm_ma a join pwm_mb b on a.k = b.k;

-- [partitionwise join merge list left fallback] the preserved side's list partition without a partner: not partitionwise
set enable_partitionwise_join = on;
select a.k, b.w from pwm_mb b left join pwm_ma a on a.k = b.k;

-- [partitionwise join merge hash] hash partitions of different moduli never merge: planned as usual
set enable_partitionwise_join = on;
select a.id, h.v from pw_ha a join pwm_h h on a.id = h.id;

-- [partitionwise join merge pushdown] merged foreign pairs on one server: each pair one Async Foreign Scan of its join
set enable_partitionwise_join = on;
select a.id, c.v from pwj_a a join pwm_c c on a.id = c.id;

-- [partitionwise join merge pushdown left] LEFT JOIN of the side with fewer partitions, pushed per pair, WHERE in the remote query
set enable_partitionwise_join = on;
select c.id, a.t from pwm_c c left join pwj_a a on a.id = c.id where c.z = 1;

-- [partitionwise join merge pushdown group] an aggregate above the Append of the pushed pairs
set enable_partitionwise_join = on;
select c.z, count(*) from pwj_a a join pwm_c c on a.id = c.id group by c.z;

-- [partitionwise join merge pushdown filter] a condition on one side in each pushed join's ON
set enable_partitionwise_join = on;
select a.id, b.v from pw_fa a join pwm_c b on a.id = b.id where a.x = 4;

-- [partitionwise join merge foreign servers] merged pairs of foreign partitions on two servers: a Hash Join per pair
set enable_partitionwise_join = on;
select b.id, c.v from pw_fb b join pwm_c c on b.id = c.id where b.y = 2;

-- [partitionwise join merge semi] EXISTS: a semi join per merged pair
set enable_partitionwise_join = on;
select a.id, a.t from pwj_a a where exists (select 1 from pwm_c c where c.id = a.id) and a.x = 2;

-- [partitionwise join merge anti fallback] NOT EXISTS: the outer side's partition without a partner, not partitionwise
set enable_partitionwise_join = on;
select a.id from pwj_a a where not exists (select 1 from pwm_c c where c.id = a.id) and a.x = 2;

-- [partitionwise join pruning empty order] no pair left, ordered: the dummy join relation's Vars, qualified (several range-table entries) (h17x)
set enable_partitionwise_join = on;
select a.id, b.u from pw_la a join pw_lb b on a.id = b.id where a.id < 100 and b.id > 700 order by b.u;

-- [subquery initplan select list partitioned sort desc] a Sort over the async Append (PostgreSQL prefers it to a Merge Append for these rows): the first row it reads runs the InitPlan, $0 in each scan and in the Sort's Output (h17i)
select id, (select count(*) from f where id < 50) as n from h where grp = 4 and id < 500 order by id desc;

-- [const union all no from] UNION ALL of SELECTs without FROM: flattened, each Result a member with no subquery scan costed (h17s)
select 1 union all select 2;

-- [const union no from] UNION of SELECTs without FROM: each leaf a subquery under the Append, duplicates removed above (h17s)
select 1 union select 2;

-- [const union all no from order] three leaves and an ORDER BY, two columns (h17s)
select 1 as a, 'x' as b union all select 2, 'y' union all select 3, 'z' order by 1;

-- [const bigint false] a comparison of typed constants folds to false: the dummy relation (h17x)
select id from loc where 0::bigint = 1 order by id;

-- [group key resjunk local] a GROUP BY key the select list lacks is a resjunk output: Output: count(*), cat, its width counted (h17b)
select count(*) from loc group by cat;

-- [group key resjunk having] the same under a HAVING's filter (h17b)
select count(*) from loc group by cat having count(*) > 5;

-- [group key resjunk sort] the same under a Sort by the aggregate (h17b)
select count(*) from loc group by cat order by count(*), cat;

-- [group key resjunk foreign having] a pushed-down grouping's key the select list lacks, with a HAVING (h17b)
select count(*) from f group by cat having count(*) > 5;

-- (h17w) ===== window functions =====

-- [window foreign partitioned row_number] row_number() per partition: WindowAgg over a Sort over the async Append (h17w)
select id, grp, row_number() over (partition by grp order by id) from h where id < 60;

-- [window foreign partitioned rank] rank() over ORDER BY a column with ties: peers share the rank (h17w)
select id, rank() over (order by grp) from h where id < 50;

-- [window foreign partitioned dense_rank] dense_rank() beside rank() over one window (h17w)
select grp, dense_rank() over (order by grp), rank() over (order by grp) from h where id < 30;

-- [window foreign partitioned count whole partition] count(*) over PARTITION BY without ORDER BY: the whole partition's count (h17w)
select id, grp, count(*) over (partition by grp) from h where id < 40;

-- [window foreign partitioned running sum] sum(numeric) with the default frame: a running sum, peers sharing it (h17w)
select id, sum(amount) over (partition by grp order by grp) from h where id < 60;

-- [window foreign partitioned avg] avg(int) over a partition: numeric (h17w)
select id, avg(id) over (partition by grp) from h where id < 40;

-- [window foreign min max] min and max over one ORDER BY window (h17w)
select id, min(amount) over (order by grp), max(name) over (order by grp) from h where id < 30;

-- [window foreign plain over empty] count(*) OVER () over a plain foreign table: no Sort (h17w)
select id, count(*) over () from f;

-- [window foreign desc] row_number() over ORDER BY … DESC (h17w)
select id, row_number() over (order by id desc) from f where id < 20;

-- [window local running sum] sum(int) over a local table: bigint (h17w)
select qty, sum(qty) over (order by qty) from loc;

-- [window foreign partitioned lag] lag() over the whole table: the first row's NULL (h17w; runs since h17m)
select id, lag(id) over (order by id) from h;

-- [window foreign partitioned named] a named window (WINDOW w AS, OVER w) (h17w; runs since h17m)
select id, row_number() over w from h window w as (order by id);

-- [window foreign partitioned frame rows] an explicit ROWS frame (h17w; runs since h17m)
select id, sum(id) over (order by id rows between 1 preceding and current row) from h;

-- [window foreign partitioned two windows] two different windows: two WindowAggs stacked, a Sort between, the first over a Merge Append (h17w; runs since h17m)
select id, row_number() over (order by id), rank() over (order by grp) from h;

-- [window foreign partitioned order by] ORDER BY the window's own order: the WindowAgg's Sort gives it, no Sort above (h17w)
select id, grp, row_number() over (partition by grp order by id) from h where id < 60 order by grp, id;

-- [window foreign partitioned order by other] an ORDER BY the window's Sort does not give: a Sort above the WindowAgg (h17w; runs since h17m)
select id, rank() over (order by grp) from h where id < 50 order by id;

-- [window foreign partitioned order by limit mergeappend] a LIMIT over the WindowAgg: its input presorted from a Merge Append of remotely sorted scans, the cheaper start for the LIMIT's fraction (h17w; h17m)
select id, grp, row_number() over (partition by grp order by id) from h where id < 60 order by grp, id limit 5;

-- [window local limit offset] LIMIT and OFFSET over a window over a local table (h17w)
select qty, rank() over (order by qty) from loc limit 4 offset 2;

-- ===== (h17d) UPDATE … FROM, DELETE … USING, a target's alias, SET (a, b) = (…) (issue 17 item 3) =====

-- [dml update from local partitioned async] the join under ModifyTable; h's scans read the whole row and ctid (its row mark) (h17d)
update ins_loc set grp = h.grp + 100 from h where h.id = ins_loc.id;

-- [dml update from local foreign] a foreign table's whole row read for its row mark (h17d)
update loc set qty = f.val from f where f.id = loc.id and f.cat = 'c1';

-- [dml delete using local partitioned async] DELETE … USING an async Append (h17d)
delete from loc using h where h.id = loc.id and h.grp = 3;

-- [dml update from local pruned] the other relation pruned to one partition (h17d)
update ins_loc set grp = h.grp from h where h.id = ins_loc.id and h.id = 2;

-- [dml update from local many returning] each target row joins to many rows of h: changed once, returned once (h17d)
update ins_loc set grp = h.grp + 10 from h where h.grp = ins_loc.grp returning ins_loc.id, ins_loc.grp;

-- [dml update from local alias returning] the target's alias in SET, WHERE and RETURNING (h17d)
update loc x set qty = x.qty + d.weight from dim d where d.cat = x.cat and x.qty = 3 returning x.id, x.qty;

-- [dml delete using local returning] RETURNING the target's row (h17d)
delete from ins_loc using f where f.id = ins_loc.id returning ins_loc.*;

-- [dml update from local list] a list-partitioned relation with local and foreign partitions (h17d)
update ins_loc set name = l.region from l where l.id = ins_loc.id;

-- [dml update from local three returning] two other relations, FROM a, b (h17d)
update ins_loc set grp = f.val + h.grp from f, h where f.id = ins_loc.id and h.id = ins_loc.id returning ins_loc.id, ins_loc.grp;

-- [dml update semi local] a plain UPDATE whose IN is a semi join: h's scans read their whole row as for FROM (h17d)
update loc set qty = 1 where id in (select id from h where grp = 3);

-- [dml update row local] SET (a, b) = (…) (h17d)
update loc set (qty, cat) = (qty + 1, 'z') where cat = 'c3' and qty = 1;

-- [dml update row foreign direct] SET (a, b) = (…) shipped in the remote UPDATE (h17d)
update ins_f set (grp, name) = (grp * 2, 'm') where id < 4;

-- [dml update alias local returning] UPDATE t AS x (h17d)
update loc as x set qty = 0 where x.qty = 8 and x.cat = 'c0' returning x.id, qty;

-- [dml delete alias local returning] DELETE FROM t x … RETURNING x.* (h17d)
delete from loc x where x.qty = 0 returning x.*;

-- [dml update alias foreign direct returning] a foreign table's alias: Foreign Update on public.ins_f t (h17d)
update ins_f as t set grp = t.grp + 1 where t.id < 3 returning t.id, t.grp;

-- [dml delete alias partitioned pruned] one foreign partition left, named p_1 (h17d)
delete from ins_p as p where p.id >= 1500;

-- [dml update alias partitioned direct returning] four Foreign Updates under the alias (h17d)
update h t set name = 'x' where t.id < 5 returning t.id, t.name;

-- [dml update alias foreign modify] a SET that is not shippable under an alias (h17d)
update ins_f as t set name = t.name || t.id where t.id < 3;

-- [dml insert select distinct local async] INSERT … SELECT DISTINCT (h17d)
insert into ins_loc select distinct grp, grp, 0.5, 'd' from h where grp is not null;

-- [dml insert select join local] INSERT … SELECT over a join (h17d)
insert into ins_loc select f.id, dim.weight, f.score, dim.title from f join dim on dim.cat = f.cat where f.id < 30;

-- [dml update from foreign modify] a foreign target joined to a local table: its scan FOR UPDATE, then UPDATE … WHERE ctid = $1 a row (h17d)
update ins_f set grp = loc.qty from loc where loc.id = ins_f.id;

-- [dml delete using foreign modify returning] DELETE … USING of a foreign target, RETURNING from the remote DELETE (h17d)
delete from ins_f using loc where loc.id = ins_f.id and loc.qty > 2 returning ins_f.id, name;

-- [dml update from foreign modify alias partitioned async returning] a foreign target under an alias joined to an async Append (h17d)
update f x set val = h.big from h where h.id = x.id and h.id < 20 returning x.id, x.val;

-- [dml delete using partitioned refused] a partitioned target joined to another relation (h17d)
-- known: unsupported — DELETE … USING of a partitioned table refused by name (h17d)
delete from ins_p using loc where loc.id = ins_p.id;

-- [dml delete using pushed join refused] a join of the other relations pushed down to s2 (PostgreSQL's EPQ recheck plan) (h17d)
-- known: unsupported — a pushed-down join of the other relations of UPDATE/DELETE refused by name (h17d)
delete from loc using f join dim on dim.cat = f.cat where f.id = loc.id and dim.weight > 20;

-- (h17m) ===== window functions beyond the first subset: stacked windows, the value and
-- distribution functions, named windows, frames, expressions, GROUP BY, ORDER BY =====

-- [window stacked two windows sort between] two windows: the one whose clause has the higher sort group reference at the bottom, a Sort between (select_active_windows) (h17m)
select id, grp, row_number() over (order by id), rank() over (order by grp) from h where id < 80;

-- [window stacked prefix no sort] three windows, two sharing their sort: one Sort, three WindowAggs, the prefix window on top (common_prefix_cmp) (h17m)
select id, row_number() over (partition by grp order by id), rank() over (partition by grp), sum(id) over (order by grp, id) from h where id < 50;

-- [window stacked incremental sort] a second window sorted on a prefix of the first's: an Incremental Sort between (create_one_window_path) (h17m)
select id, grp, row_number() over (order by grp, id), count(*) over (order by grp, name) from h where id < 60;

-- [window stacked incremental sort desc] ORDER BY … DESC in one window, another order in the second (h17m)
select grp, id, row_number() over (partition by grp order by id desc), rank() over (partition by grp order by name) from h where id < 45;

-- [window stacked foreign desc] a DESC window and an ASC one over a plain foreign table (h17m)
-- known: plan — PostgreSQL compares whole window paths (add_path's fuzzy costs over the stack: the remotely sorted input's later Sort starts dearer), the sandbox picks the input's order first (the remotely sorted scan, fuzzily as cheap and quicker to start) and stacks the rest over it (h17m)
select id, rank() over (order by id desc), row_number() over (order by id) from f where id < 40;

-- [window stacked count over empty] count(*) OVER () beside an ordered window (h17m)
select id, count(*) over (), row_number() over (order by id) from f where id < 15;

-- [window lag lead default] lag and lead with offsets and defaults (a numeric default printed '0'::numeric) over a named window (h17m)
select id, lag(id) over w, lag(id, 2, 0) over w, lead(amount, 1, 0) over w from h where id < 30 window w as (order by id);

-- [window lag lead text bigint] lag with a text default, lead of a bigint three rows ahead, per partition (h17m)
select id, lag(name, 1, 'none') over (partition by grp order by id), lead(big, 3) over (partition by grp order by id) from h where id < 40;

-- [window first last nth] first_value, last_value (the default frame ends at the last peer) and nth_value over a named window (h17m)
select id, grp, first_value(name) over w, last_value(id) over w, nth_value(id, 2) over w from h where id < 50 window w as (partition by grp order by id);

-- [window ntile percent_rank cume_dist] the distribution functions: the whole partition read first (h17m)
select id, ntile(4) over (partition by grp order by id), percent_rank() over (partition by grp order by id), cume_dist() over (order by grp) from h where id < 60;

-- [window named copied] OVER (w ORDER BY …) copies w's PARTITION BY: two windows, one Sort (h17m)
select id, grp, sum(id) over (w order by id), count(*) over w from h where id < 40 window w as (partition by grp);

-- [window frame rows moving] ROWS frames: a moving sum and a trailing average, two windows with one sort (h17m)
select id, sum(id) over (order by id rows between 1 preceding and 1 following), avg(amount) over (order by id rows between 2 preceding and current row) from h where id < 30;

-- [window frame rows following] a frame wholly after the current row: NULL at the end (h17m)
select id, sum(id) over (order by id rows between 1 following and 3 following) from f where id < 20;

-- [window frame range offset] RANGE with offsets over a numeric column (h17m)
select id, amount, sum(amount) over (order by amount range between 5 preceding and 5 following) from h where id < 40;

-- [window frame range offset desc] RANGE with a numeric offset over a descending order (h17m)
select id, amount, count(*) over (order by amount desc range between 1.5 preceding and current row) from h where id < 40;

-- [window frame range offset null] RANGE offsets over a bigint column with NULLs: a NULL's frame is the NULLs (h17m)
select id, val, count(*) over (order by val range between 10 preceding and current row) from f where id < 30 or id > 515;

-- [window frame unbounded following] frames to the partition's end, ROWS and RANGE (h17m)
select id, grp, last_value(id) over (partition by grp order by id rows between current row and unbounded following), max(id) over (partition by grp order by id range between current row and unbounded following) from h where id < 50;

-- [window frame range unbounded offsets] RANGE from the start to 10 following, and from 10 preceding to the end (h17m)
select id, min(amount) over (order by id range between unbounded preceding and 10 following), max(amount) over (order by id range between 10 preceding and unbounded following) from h where id < 30;

-- [window frame whole partition text] first_value over the whole partition, ordered by text descending (h17m)
select id, name, first_value(name) over (order by name desc rows between unbounded preceding and unbounded following) from h where id < 25;

-- [window expression] a window function inside an expression, and a second window differing only in its frame (h17m)
select id, row_number() over w * 2, sum(id) over (w rows 2 preceding) from h where id < 20 window w as (partition by grp order by id);

-- [window expression arithmetic] numeric, float8 and integer arithmetic over window results (h17m)
select id, sum(amount) over (order by id) * 2 as dbl, percent_rank() over (order by id) * 100, id - lag(id) over (order by id) from h where id < 30;

-- [window group by hashagg] a window over GROUP BY: WindowAgg over a Sort over the HashAggregate (h17m)
select grp, sum(amount), rank() over (order by sum(amount) desc) from h group by grp;

-- [window group by order by] a window aggregate of an aggregate, ORDER BY the window's result: a Sort above (h17m)
select grp, count(*), sum(count(*)) over (order by grp) from h where id < 500 group by grp order by 3 desc;

-- [window group by having local] GROUP BY … HAVING over a local table, a window above (h17m)
select cat, count(*), row_number() over (order by cat) from loc group by cat having count(*) > 10;

-- [window order by alias] ORDER BY a window's alias: a Sort above the WindowAgg (h17m)
select id, amount, row_number() over (partition by grp order by id) rn from h where id < 40 order by rn, id;

-- [window lead limit mergeappend] lead() under a LIMIT: the input presorted from a Merge Append (h17m)
select id, grp, lead(id) over (partition by grp order by id) from h order by grp, id limit 5;

-- [window local index presorted] the input read in order from an index (no Sort) (h17m)
select id, row_number() over (order by id) from loc;

-- [window range partitioned rows] a ROWS frame over a table range-partitioned over a local and a foreign partition (h17m)
select k, sum(v) over (order by k rows between 2 preceding and 2 following) from r where k between 490 and 520;

-- [window list partitioned dense_rank] dense_rank per region over a list-partitioned table (h17m)
select region, id, dense_rank() over (partition by region order by qty) from l where id % 10 = 0;

-- [window refused groups] GROUPS frames are refused by name (h17m)
-- known: unsupported — GROUPS frames refused by name (h17m)
select id, sum(id) over (order by grp groups between 1 preceding and current row) from h where id < 20;

-- [window expression flattened] arithmetic over columns beside a window: computed over the WindowAgg from the columns it reads (make_window_input_target's pull_var_clause) (h17m)
select id * 2, row_number() over (order by id), name from h where id < 10;

-- [window resjunk order] a window's ORDER BY is transformed before its PARTITION BY: the resjunk entries id, then grp (h17m)
select id + grp as s, rank() over (partition by grp order by id) from h where id < 30;

-- [window stacked order before partition] sort group references: the ORDER BY's first, so the window ordered by grp has the higher one and goes first (h17m)
select row_number() over (partition by id order by grp), rank() over (order by id) from h where id < 5;

-- [window lag negative rows] lag with a negative offset reads ahead, in a ROWS frame that reads nothing else (h17m)
select id, lag(id, -1) over (order by id rows between current row and current row) from f where id < 5;

-- [join nonequi local foreign] a join without an equality: a Nested Loop, the condition its Join Filter, a Materialize over the inner side (h23n)
select f.id, loc.id, loc.qty from f join loc on f.id < loc.qty where f.id < 5;

-- [join nonequi partitioned count] the async Append of h as the Nested Loop's outer side, loc materialized (h23n)
select count(*) from h join loc on h.grp > loc.qty;

-- [join cross partitioned] CROSS JOIN: a Nested Loop without a join clause (h23n)
select count(*) from h cross join dim;

-- [join comma no clause] FROM a, b with no join clause, a condition on one side (h23n)
select f.id, dim.cat from f, dim where f.id < 3 order by f.id, dim.cat;

-- [join cross pushed] two foreign tables on one server: postgres_fdw ships the cross join (ON (TRUE)) (h23n)
select count(*) from f cross join dim;

-- [join nonequi pushed] a non-equality join of two foreign tables on one server, pushed down (h23n)
select f.id, dim.weight from f join dim on f.id < dim.weight where f.id < 30;

-- [join nonequi or] an OR of equalities is no hash or merge clause: a Nested Loop's Join Filter (h23n)
select count(*) from f join loc on f.id = loc.id or f.val = loc.qty;

-- [join nonequi three] three relations, one joined by an inequality above the equi-join (h23n)
select count(*) from h join f on h.id = f.id join loc on loc.qty > h.grp;

-- [join cross three] a cross join above an equi-join (h23n)
select count(*) from h join f on h.id = f.id cross join dim;

-- [join comma three clauseless] FROM a, b, c, one relation with no join clause: make_rels_by_clauseless_joins (h23n)
select count(*) from f, loc, dim where f.id = loc.id and loc.id < 20;

-- [join nonequi material off] enable_material off: the inner side rescanned for each outer row (h23n)
set enable_material = off;
select f.id, loc.qty from f join loc on f.id > loc.qty where f.id < 5 and loc.cat = 'c1';

-- [join nonequi pushed conditions] a non-equality join pushed down with each side's conditions in its ON (h23n)
select f.id, dim.weight from f join dim on f.id > dim.weight where f.id < 25 and dim.cat <> 'c3';

-- [join nonequi material off partitioned] enable_material off, the partitioned side inner: its async Append rescanned per outer row (h23n)
set enable_material = off;
select l.id, h.id from l join h on h.id < l.id where l.id < 3 and h.grp = 1 and h.id < 40;

-- [join parenthesized left] a parenthesized join on the left: the same join tree as without (h23n)
select count(*) from (h join f on h.id = f.id) join dim on dim.cat = f.cat;

-- [join parenthesized right] an inner join parenthesized on the right of another: its relations in place, its range-table numbering (h23n)
select h.id, f.cat, dim.title from h join (f join dim on dim.cat = f.cat) on h.id = f.id where h.id < 20 order by h.id;

-- [join parenthesized right pushed] a parenthesized join of foreign tables on one server, pushed down with its range-table indexes (h23n)
select f.id, dim.title, h.name from h join (f join dim on dim.cat = f.cat) on h.id = f.id where f.id < 10 order by f.id;

-- [join parenthesized only] a whole FROM parenthesized (h23n)
select count(*) from (f join dim on f.cat = dim.cat);

-- [join nonequi between] BETWEEN over both sides: two inequalities in the Join Filter (h23n)
select count(*) from h join loc on h.id between loc.qty and loc.qty + 3;

-- [join cross group] GROUP BY over a cross join of the partitioned table and a foreign one (h23n)
-- known: plan — under GROUP BY PostgreSQL's query_pathkeys are the grouping keys, so its Nested Loop over dim's remotely sorted path (outer) keeps that order and a GroupAggregate needs no Sort (within add_path's 1% fuzz of Sort over HashAggregate, sooner to start); the join search takes ORDER BY's pathkeys only without an aggregate, so it prunes that ordered path and hashes (h23n)
select dim.cat, count(*) from h cross join dim group by dim.cat order by dim.cat;

-- [join cross order limit] ORDER BY and LIMIT over a cross join pushed down (h23n)
select f.id, dim.cat from f cross join dim where f.id < 4 order by f.id, dim.cat limit 5;

-- [join comma or] an OR over both sides with no equality beside it: the Nested Loop's Join Filter (h23n)
select count(*) from f, loc where f.id = loc.id or loc.qty = 1;

-- [join nonequi three foreign] an equi-join pushed down and an inequality to the partitioned table (h23n)
select count(*) from f join dim on f.cat = dim.cat join h on h.id < f.id where f.id < 10 and h.id < 20;

-- ===== subqueries and WITH queries as joined relations; DISTINCT over a join (h23q) =====

-- [subquery join pullup] a simple subquery over a hash-partitioned table joined to a local one: pulled up, its WHERE on the scans (h23q)
select s.id, loc.qty from (select id, grp from h where grp = 3) s join loc on s.id = loc.id;

-- [cte join pullup] a WITH query read once: inlined, then pulled up into the join (h23q)
with c as (select id, amount from h where id < 100) select c.id, loc.cat from c join loc on c.id = loc.id;

-- [subquery join pullup expression] a subquery output that is an expression, tested in the outer WHERE (h23q)
select s.x, loc.id from (select id, val + 1 as x from f) s join loc on s.id = loc.id where s.x > 10;

-- [subquery join pullup left nullable] a subquery on a LEFT JOIN's nullable side: its WHERE decides matches (h23q)
select loc.id, s.cat from loc left join (select id, cat from f where val > 0) s on s.id = loc.id;

-- [subquery join pullup left preserved] a subquery on a LEFT JOIN's preserved side: its WHERE filters it (h23q)
select s.id, loc.qty from (select id from f where cat = 'c1') s left join loc on s.id = loc.id;

-- [subquery join pullup three] a subquery in a join of three relations (h23q)
select count(*) from (select id from h where grp < 5) s join loc on s.id = loc.id join dim on dim.cat = loc.cat;

-- [subquery join pullup foreign join] two subqueries over foreign tables of one server (h23q)
select a.id, b.title from (select id, cat from f where id < 200) a join (select cat, title from dim where weight > 10) b on a.cat = b.cat;

-- [cte join pullup range limit] an inlined WITH query over range partitions, ORDER BY and LIMIT over the join (h23q)
-- known: plan — the join of r and loc written without the WITH plans the same: under the LIMIT PostgreSQL takes a Nested Loop over a Materialize of r's Append, the sandbox a Merge Join over r's ordered Append (r_lo's index, r_hi's remote ORDER BY) (h23q)
with lo as (select k, v from r where k < 600) select lo.k, loc.qty from lo join loc on lo.k = loc.id order by lo.k limit 5;

-- [cte join materialized] a MATERIALIZED WITH query joined: a CTE Scan (h23q)
with c as materialized (select id from f where id < 10) select * from c join loc on c.id = loc.id;

-- [subquery join pullup group] GROUP BY a pulled-up subquery's column (h23q)
select s.grp, count(*) from (select id, grp from h) s join loc on s.id = loc.id group by s.grp order by s.grp;

-- [subquery join pullup column aliases] a subquery's columns renamed by its alias (h23q)
select s.a, loc.qty from (select id, grp from h) s(a, b) join loc on s.a = loc.id where s.b = 1;

-- [subquery join pullup star] SELECT * over a subquery and a table (h23q)
select * from (select id, cat from f where id between 10 and 14) s join loc on s.id = loc.id;

-- [subquery join grouped refused] a grouped subquery as a joined relation: a Subquery Scan in the join search (h23q)
-- known: unsupported — a subquery that cannot be pulled up (GROUP BY) as a join's member: Subquery Scan not planned in a join yet (h23q)
select * from (select grp, count(*) c from h group by grp) s join loc on s.grp = loc.id;

-- [distinct join hash] SELECT DISTINCT over a join of a hash-partitioned table and a local one (h23q)
select distinct h.grp from h join loc on h.id = loc.id;

-- [distinct join order by] SELECT DISTINCT with ORDER BY over a join (h23q)
select distinct loc.cat, f.cat from f join loc on f.id = loc.id order by 1, 2;

-- [distinct join pullup order by] SELECT DISTINCT over a pulled-up subquery's join, ORDER BY its key (h23q)
select distinct s.grp from (select id, grp from h where id < 500) s join loc on s.id = loc.id order by s.grp;

-- [distinct join three] SELECT DISTINCT over a join of three relations (h23q)
select distinct dim.title from f join dim on f.cat = dim.cat join loc on loc.id = f.id;

-- [distinct join foreign] SELECT DISTINCT over a join of two foreign tables of one server (h23q)
select distinct f.cat, dim.weight from f join dim on f.cat = dim.cat;

-- [subquery join pullup over join foreign] a subquery over a join of two foreign tables of one server, joined to a local table: its join pushed down, numbered as in PostgreSQL's range table (h23q)
select s.title, loc.qty from (select f.id, dim.title from f join dim on f.cat = dim.cat where dim.weight > 20) s join loc on s.id = loc.id;

-- [cte join pullup over join] a WITH query over a join, inlined and pulled up into a join of three relations (h23q)
with j as (select h.id, h.grp, loc.cat from h join loc on h.id = loc.id) select j.grp, dim.title from j join dim on j.cat = dim.cat where j.id < 100;

-- ===== (h17g) GROUP BY an expression computed by the scan below the Aggregate (make_group_input_target), a lone pruned partition as its appendrel (issue 17) =====

-- [group expression filtered scan] GROUP BY an expression over a filtered local scan: the scan computes it (h17g)
select qty % 3, count(*) from loc where id < 200 group by qty % 3;

-- [group expression sorted] GROUP BY an expression and ORDER BY it (h17g)
select qty % 4, sum(id) from loc group by qty % 4 order by qty % 4;

-- [group expression aggregate argument expression] an aggregate's argument stays in the Aggregate: the scan returns its column (h17g)
select id % 5, max(qty + 1) from loc group by id % 5;

-- [group expression distinct sorted] DISTINCT on an expression, ordered (h17g)
select distinct id % 4 from loc order by 1;

-- [group expression key not selected] an expression key the select list leaves out (h17g)
select count(*) from loc group by qty % 3;

-- [remote having aggregate not selected] an aggregate only the shipped HAVING reads is no remote target: foreign_grouping_ok lists the grouping target, a remote condition's aggregates stay in it (h17g)
select cat from f group by cat having count(*) > 5;

-- [remote having aggregate not selected beside one] beside a selected aggregate, ORDER BY shipped too (h17g)
select cat, max(val) from f group by cat having sum(id) > 0 order by cat;

-- ===== (merge38) a window over a subquery pulled up into a join =====

-- [window pulled subquery] the OVER's keys name the subquery's columns: they become the partitioned table's after the pull-up (pullup_replace_vars over the window clause) (merge38)
select s.id, loc.cat, lag(loc.qty) over (partition by s.grp order by s.id) from (select id, grp from h where id < 40) s join loc on s.id = loc.id;

-- [window pulled subquery named] a named window's keys likewise (merge38)
select s.id, rank() over w from (select id, grp from h where id < 40) s join loc on s.id = loc.id window w as (order by s.grp, s.id);
