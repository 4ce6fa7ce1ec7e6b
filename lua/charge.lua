-- charge.lua: leases a host the plugin already chose (endpoint_metrics picks from engine metrics
-- in the plugin) with the same accounting as acquire.lua, so counts, releases, renewals and
-- expiries are shared with global_least_request.
-- KEYS: 1 load, 2 leases, 3 lease, 4 cand:<fp>, 5 seen (acquire.lua's layout).
-- ARGV: 1..7 as acquire.lua (rnd unused), 8 host, 9 n, 10..9+n candidate hosts.
-- Returns {"OK", host, load_before} | {"SHED", host, load} | {"NEED_CANDIDATES"} |
-- {"NO_CANDIDATE"} (host is not in the candidate set); an error reply for malformed arguments
-- (nothing written). Full contract: lua/README.md.

local a = read_acquire_args('charge', 9)
local host = ARGV[8]
if host == nil or host == '' then fail('host must not be empty') end

local now = now_ms()
local early = acquire_prologue(a, now)
if early then return early end

-- Only a current candidate may be charged: a host the gateway no longer sees must not gain load.
if redis.call('SISMEMBER', a.k_cand, host) == 0 then
  keep_pool_alive(a.pool_keys, a.pool_ttl_ms)
  return { 'NO_CANDIDATE' }
end

local load = tonumber(redis.call('ZSCORE', a.k_load, host) or '0')
if a.limit > 0 and load + a.cost > a.limit then
  keep_pool_alive(a.pool_keys, a.pool_ttl_ms)
  return { 'SHED', host, num_str(load) }
end

take_lease(a, host, now)
return { 'OK', host, num_str(load) }
