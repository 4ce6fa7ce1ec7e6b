-- acquire.lua: picks the least-loaded candidate host and adds the request's cost to it, atomically
-- (no read-then-increment race between gateways).
-- KEYS: 1 load, 2 leases, 3 lease, 4 cand:<fp>, 5 seen.
-- ARGV: 1 lease_id, 2 cost, 3 lease_ttl_ms, 4 cand_ttl_ms, 5 limit (0 = none), 6 rnd,
--       7 host_stale_ms (0 = never drop), 8 n, 9..8+n candidate hosts.
-- Returns {"OK", host, load_before} | {"SHED", host, load} | {"NEED_CANDIDATES"} | {"NO_CANDIDATE"};
-- an error reply for malformed arguments (nothing written). Full contract: lua/README.md.

local k_load, k_leases, k_lease, k_cand, k_seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if not k_seen then fail('acquire needs 5 keys: load, leases, lease, cand, seen') end

local lease_id = ARGV[1]
if lease_id == nil or lease_id == '' then fail('lease_id must not be empty') end
local cost = int_arg(ARGV[2], 'cost', 1)
local lease_ttl_ms = int_arg(ARGV[3], 'lease_ttl_ms', 1)
local cand_ttl_ms = int_arg(ARGV[4], 'cand_ttl_ms', 1)
local limit = int_arg(ARGV[5], 'limit', 0)
local rnd = int_arg(ARGV[6], 'rnd', 0)
local host_stale_ms = int_arg(ARGV[7], 'host_stale_ms', 0)
local n = int_arg(ARGV[8], 'n', 0)
if #ARGV ~= 8 + n then fail('n = ' .. n .. ' but ' .. (#ARGV - 8) .. ' hosts follow') end

local now = now_ms()
local pool_keys = { k_load, k_leases, k_lease, k_seen }
-- The pool outlives every lease, candidate set and staleness window by a margin.
local pool_ttl_ms = 2 * math.max(lease_ttl_ms, cand_ttl_ms, host_stale_ms)

reconcile_expired(k_load, k_leases, k_lease, now, RECONCILE_BATCH)

-- A retried acquire (its first reply was lost) must not count the request twice.
local existing = redis.call('HGET', k_lease, lease_id)
if existing then
  local host = parse_lease(existing)
  if host then
    return { 'OK', host, redis.call('ZSCORE', k_load, host) or '0' }
  end
end

if n > 0 then
  local hosts = {}
  for i = 9, 8 + n do hosts[#hosts + 1] = ARGV[i] end
  sync_candidates(k_load, k_cand, k_seen, hosts, now, cand_ttl_ms)
elseif redis.call('PEXPIRE', k_cand, cand_ttl_ms) == 0 then
  return { 'NEED_CANDIDATES' } -- the set for this fingerprint expired or was never sent
end

drop_stale_hosts(k_load, k_cand, k_seen, now, host_stale_ms)

local host, load = pick_least_loaded(k_load, k_cand, rnd)
if not host then
  keep_pool_alive(pool_keys, pool_ttl_ms)
  -- With n = 0 the set exists but none of its hosts is loaded (another gateway dropped them as
  -- stale): resending the list re-adds them.
  if n == 0 then return { 'NEED_CANDIDATES' } end
  return { 'NO_CANDIDATE' }
end

if limit > 0 and load + cost > limit then
  keep_pool_alive(pool_keys, pool_ttl_ms)
  return { 'SHED', host, num_str(load) }
end

add_lease(k_load, k_leases, k_lease, lease_id, host, cost, now + lease_ttl_ms)
redis.call('ZADD', k_seen, now, host) -- a host that takes traffic is current
keep_pool_alive(pool_keys, pool_ttl_ms)
return { 'OK', host, num_str(load) }
