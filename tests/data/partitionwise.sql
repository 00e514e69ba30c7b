-- Partitionwise join (issue 23, item 5): tables partitioned alike, for
-- tests/pg15_fidelity_partitionwise.rs (the same tables as tests/data/corpus.sql's
-- (h23w) block). Three shards; each pair of foreign partitions is on two servers,
-- so postgres_fdw has no join to push down.

-- @shard s1
-- @shard s2
-- @shard s3
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s3 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;
create user mapping for public server s2;
create user mapping for public server s3;

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
