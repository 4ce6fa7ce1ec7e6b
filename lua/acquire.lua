-- acquire.lua: picks the least-loaded candidate host and adds the request's cost to it, atomically
-- (no read-then-increment race between gateways).
-- KEYS: 1 load, 2 leases, 3 lease, 4 cand:<fp>, 5 seen[, Higress counter hash when compat = 1].
-- ARGV: 1 lease_id, 2 cost, 3 lease_ttl_ms, 4 cand_ttl_ms, 5 limit (0 = none), 6 rnd,
--       7 host_stale_ms (0 = never drop), 8 n, 9..8+n candidate hosts,
--       then optional deadline_ms (Redis TIME, 0 = none) and compat (0 | 1).
-- Returns {"OK", host, load_before} | {"SHED", host, load} | {"NEED_CANDIDATES"} | {"NO_CANDIDATE"}
-- | {"LATE", now} | {"RELEASED"}; an error reply for malformed arguments (nothing written).
-- Full contract: lua/README.md.

local a = read_acquire_args('acquire', 8)
local now = now_ms()
local early = acquire_prologue(a, now)
if early then return early end

local host, load = pick_least_loaded(a.k, a.rnd)
if not host then return no_candidate_reply(a) end

if a.limit > 0 and load + a.cost > a.limit then return shed_reply(a, host, load) end

local existing = take_lease(a, host, now)
if existing then return existing end
return { 'OK', host, num_str(load) }
