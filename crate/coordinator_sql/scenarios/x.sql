-- Seed 004 (pgsql-hackers, "Re: Asynchronous Append on postgres_fdw nodes"), Fujita's
-- test as written. His server1 is a loopback server; here it is a shard of its own,
-- holding t1 (lines marked "(not in the thread)").
-- @shard server1
create table t1 (a int, b int, c text); -- (not in the thread: t1 of the loopback server)

-- @coordinator
create extension postgres_fdw; -- (not in the thread)
create server server1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true'); -- (not in the thread)
create user mapping for public server server1; -- (not in the thread)

create table t1 (a int, b int, c text);
create foreign table p1 (a int, b int, c text) server server1 options
(table_name 't1');
create table p2 (a int, b int, c text);

insert into p1 select 10 + i % 10, i, to_char(i, 'FM00000') from
generate_series(0, 99999) i;
insert into p2 select 20 + i % 10, i, to_char(i, 'FM00000') from
generate_series(0, 99999) i;

analyze p1;
vacuum analyze p2;

create table pt (a int, b int, c text) partition by range (a);
alter table pt attach partition p1 for values from (10) to (20);
alter table pt attach partition p2 for values from (20) to (30);

set enable_partitionwise_aggregate to on;

-- @query
select a, count(*) from pt group by a;
