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

-- @shard s2
create table h2 (id int, grp int, amount numeric, name text, big bigint);
create table h3 (id int, grp int, amount numeric, name text, big bigint);
create index on h2 (grp);
create index on h3 (grp);
create table f_remote (id int, cat text, val bigint, score numeric);
create index on f_remote (id);
create table dim (cat text, title text, weight int);

-- @shard s3
create table r_hi (k int, v int, label text, amount numeric);
create index on r_hi (k);
create table l_ns (id int, region text, qty int, price numeric);

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

analyze h, h0, h1, h2, h3, r, r_lo, r_hi, l, l_ns, l_ew, l_def, f, dim, loc;

-- @corpus
-- Each query: comment lines right above it (the first may start with [tags], which the
-- test counts), then its SQL, ending with `;` at the end of a line (no `;` inside).
-- `set name = value;` lines just before a query are made for that query only, on both
-- sides. A comment followed by a blank line is a heading. Queries are numbered q001, …
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
-- known: plan — postgres_fdw pushes LIMIT only when its cost estimate says so (estimate_path_cost_size); the sandbox has no estimates and always pushes
select id, cat from f where id = 7 limit 3;

-- [foreign group having order limit numeric] HAVING, ORDER BY DESC, LIMIT on an aggregate
-- known: plan — as q026: LIMIT pushdown on an aggregated foreign scan is an estimate-based choice
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
-- known: plan — PostgreSQL reads the local index backwards (Index Only Scan Backward); the sandbox has no index-only scans
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
-- known: plan — PostgreSQL picks GroupAggregate over a Merge Append of sorted foreign scans by cost; the sandbox hashes
select name, count(*) from h group by name order by name limit 5;

-- [hash partitionwise group order limit] partitionwise aggregate on the key
set enable_partitionwise_aggregate = on;
-- known: plan — as q054 (GroupAggregate over Merge Append, a cost-based choice)
select id, count(*) from h group by id order by id limit 5;

-- [hash partitionwise pruned group] partitionwise aggregate over one partition
set enable_partitionwise_aggregate = on;
-- known: plan — GroupAggregate rather than HashAggregate: a cost-based choice the sandbox does not make
select id, count(*) from h where id = 77 group by id;

-- [hash partitionwise group filter numeric] partitionwise aggregate on the key, WHERE
set enable_partitionwise_aggregate = on;
select id, sum(amount) from h where id < 50 group by id;

-- [hash partitionwise group] partitionwise aggregate, the key not grouped
set enable_partitionwise_aggregate = on;
-- known: unsupported — enable_partitionwise_aggregate with GROUP BY lacking the partition key: PostgreSQL aggregates each partition partially (Partial/Finalize Aggregate), which the sandbox does not plan; refused by name
select grp, count(*) from h group by grp;

-- [hash partitionwise agg] partitionwise aggregate, no GROUP BY
set enable_partitionwise_aggregate = on;
-- known: unsupported — as q058: partial partitionwise aggregation (no GROUP BY), refused by name
select count(*) from h;

-- [hash order limit] ORDER BY the key, LIMIT
select id, amount from h order by id limit 10;

-- [hash order limit offset text] two keys, OFFSET
select id, name from h order by name, id limit 10 offset 40;

-- [hash order limit null] NULLs first in DESC
select id, big from h order by big desc, id limit 8;

-- [hash order filter] ORDER BY without LIMIT
-- known: plan — Merge Append without LIMIT, chosen by cost over Sort above Append
select id, grp from h where grp = 9 order by id;

-- [hash pruned order limit numeric] one partition, ORDER BY, LIMIT
-- known: plan — a local Sort instead of the remote ORDER BY on one pruned partition: a cost-based choice
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
-- known: plan — as q054 (GroupAggregate over sorted input, by cost)
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
-- known: plan — ordered Append over range partitions (children in key order, no async, local Index Scan): not implemented
select k, v from r order by k desc limit 5;

-- [range order limit offset] ORDER BY the key, OFFSET across the partition bound
-- known: plan — as q083: ordered Append for range partitions
select k, label from r order by k limit 5 offset 495;

-- [range order filter] ORDER BY the key, both partitions
-- known: plan — PostgreSQL uses a Bitmap Heap Scan on the local partition; the sandbox has none
select k from r where k > 480 and k < 520 order by k;

-- [range order limit text] ORDER BY a text column and the key
select label, k from r order by label, k limit 6;

-- [range partitionwise group text] partitionwise aggregate, the key not grouped
set enable_partitionwise_aggregate = on;
-- known: unsupported — as q058: partial partitionwise aggregation, refused by name
select label, count(*) from r group by label;

-- [range partitionwise group filter numeric] partitionwise aggregate on the key
set enable_partitionwise_aggregate = on;
-- known: plan — GroupAggregate rather than HashAggregate, by cost
select k, sum(amount) from r where k % 100 = 0 group by k;

-- [range order limit numeric filter] a numeric filter, ORDER BY the key
-- known: plan — Sort over Append rather than an ordered Append with the range partitions' indexes
select k, amount from r where amount >= 44.5 order by k limit 10;

-- [range agg pruned foreign] aggregates over the foreign partition only
select count(*), sum(v) from r where k >= 500;

-- [range agg pruned local numeric] aggregates over the local partition only
select max(v), min(amount) from r where k < 500;

-- [range agg pruned foreign group order limit numeric] GROUP BY over the foreign partition only
-- known: plan — GroupAggregate rather than HashAggregate, by cost
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
-- known: plan — async mode: a UNION ALL branch pruned to one partition runs a plain (not async) Foreign Scan in PostgreSQL (create_append_plan)
select id, name from h where id = 5 union all select id, cat from f where id = 5;

-- [union subquery group null] GROUP BY over a union
select cat, count(*) from (select cat from f union all select cat from loc) u group by cat;

-- [union agg text] three aggregate branches
-- known: plan — async mode: PostgreSQL runs the pushed-down count(*) branch as an Async Foreign Scan; the sandbox's differs
select 'f' as src, count(*) from f union all select 'loc', count(*) from loc union all select 'h', count(*) from h;

-- [union null] NULL branches
select cat from f where cat is null union all select cat from loc where cat is null;

-- [union order list] ORDER BY over a local table and a list partition
select id, qty from loc where id > 300 union all select id, qty from l where id > 600 order by id;

-- ===== Joins =====

-- [join foreign] two foreign tables on one server
-- known: plan — two foreign tables on one server: postgres_fdw pushes the join to the remote (one Foreign Scan); the sandbox hash-joins locally
select f.id, f.cat, d.title from f join dim d on f.cat = d.cat where f.id < 20;

-- [join foreign group] a join on one server, GROUP BY
-- known: plan — as q121, with the aggregate pushed too
select d.title, count(*) from f join dim d on f.cat = d.cat group by d.title;

-- [join local foreign] a local and a foreign table
-- known: plan — the join method is chosen by cost in PostgreSQL (here a Nested Loop over a Materialize); the sandbox hash-joins whenever enable_hashjoin is on (its join order is chosen by cost)
select l.id, l.cat, d.weight from loc l join dim d on l.cat = d.cat where l.id < 15;

-- [join local foreign] a local table and a foreign one on the key
select loc.id, f.val from loc join f on loc.id = f.id where loc.qty = 3;

-- [join hash local] a partitioned table and a local one
select h.id, h.name, loc.qty from h join loc on h.id = loc.id where loc.id < 30;

-- [join left null group] LEFT JOIN with unmatched rows, GROUP BY
-- known: unsupported — LEFT JOIN is not planned yet
select d.cat, d.title, count(f.id) from dim d left join f on f.cat = d.cat group by d.cat, d.title;

-- [join left null order] LEFT JOIN on an expression, ORDER BY
-- known: unsupported — LEFT JOIN is not planned yet
select loc.id, f.score from loc left join f on f.id = loc.id + 500 where loc.id <= 35 order by loc.id;

-- [join range local] a range-partitioned table and a local one
-- known: plan — PostgreSQL reads the range partition with a Bitmap Heap Scan, chosen by cost, where the sandbox seq-scans it (the join's method and order agree)
select r.k, r.v, loc.cat from r join loc on r.k = loc.id where r.k < 50;

-- [join hash foreign order limit] ORDER BY and LIMIT over a join
-- known: plan — as q123, a cost-based join method: PostgreSQL's Nested Loop reads f in ORDER BY order (the remote sorts) and stops at the LIMIT; the sandbox hash-joins, then sorts
select h.id, f.val from h join f on h.id = f.id order by f.val desc limit 5;

-- [join foreign local] three tables
-- known: unsupported — a join of three relations is not planned yet
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
-- known: unsupported — enable_hashjoin = off: PostgreSQL plans a Merge Join or a Nested Loop, which the sandbox does not have; refused by name
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
