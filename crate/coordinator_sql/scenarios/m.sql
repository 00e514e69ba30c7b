-- Seed 003 (pgsql-hackers, "Re: Asynchronous MergeAppend"): the setup and the pgbench
-- script as the thread gives them, instance by instance. Lines the thread leaves out
-- are marked "(not in the thread)": the extension, the partitioned parent, the user
-- mappings, and a seed for random() so that every run (and real PostgreSQL) holds the
-- same rows.
-- @coordinator
create extension postgres_fdw; -- (not in the thread)
create table players (id int, name text, score int) partition by hash (id); -- (not in the thread)
-- The first instance:
create server s2 foreign data wrapper postgres_fdw OPTIONS ( port 
'5433', dbname 'postgres', async_capable 'on');
create server s3 foreign data wrapper postgres_fdw OPTIONS ( port 
'5434', dbname 'postgres', async_capable 'on');

create user mapping for public server s2; -- (not in the thread)
create user mapping for public server s3; -- (not in the thread)

create foreign table players_p1 partition of players for values with 
(modulus 4, remainder 0) server s2;
create foreign table players_p2 partition of players for values with 
(modulus 4, remainder 1) server s2;
create foreign table players_p3 partition of players for values with 
(modulus 4, remainder 2) server s3;
create foreign table players_p4 partition of players for values with 
(modulus 4, remainder 3) server s3;

-- @shard s2
create table players_p1  (id int, name text, score int);
create table players_p2  (id int, name text, score int);
create index on players_p1(score);
create index on players_p2(score);

-- @shard s3
create table players_p3  (id int, name text, score int);
create table players_p4  (id int, name text, score int);
create index on players_p3(score);
create index on players_p4(score);

-- @coordinator
-- s1 instance:
select setseed(0.5); -- (not in the thread)
insert into players select i, 'player_' ||i, random()* 100 from 
generate_series(1,100000) i;

-- @query
-- pgbench script:
\set rnd_offset random(0,200)
\set rnd_limit  random(10,20)

select * from players order by score desc offset :rnd_offset limit 
:rnd_limit;
