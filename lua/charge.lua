-- charge.lua: leases a host the plugin already chose (endpoint_metrics picks from engine metrics
-- in the plugin) with the same accounting as acquire.lua, so counts, releases, renewals and
-- expiries are shared with global_least_request.
-- KEYS: acquire.lua's layout. ARGV: 1..7 as acquire.lua (rnd picks nothing here), 8 host, 9 n,
-- 10..9+n candidate hosts, then optional deadline_ms and compat as acquire.lua.
-- Returns {"OK", host, load_before} | {"SHED", host, load} | {"NEED_CANDIDATES"} |
-- {"NO_CANDIDATE"} (host is not in the candidate set) | {"LATE", now} | {"RELEASED"}; an error
-- reply for malformed arguments (nothing written). Full contract: lua/README.md.

local a = read_acquire_args('charge', 9)
local host = ARGV[8]
check_host(host, 'host')

local now = now_ms()
local early = acquire_prologue(a, now)
if early then return early end

-- Only a current candidate may be charged: a host the gateway no longer sees must not gain load.
if redis.call('SISMEMBER', a.k.cand, host) == 0 then
  if a.n == 0 and redis.call('EXISTS', a.k.cand) == 0 then return { 'NEED_CANDIDATES' } end
  return { 'NO_CANDIDATE' }
end

local load = tonumber(redis.call('ZSCORE', a.k.load, host) or '0')
if a.limit > 0 and load + a.cost > a.limit then return shed_reply(a, host, load) end

local existing = take_lease(a, host, now)
if existing then return existing end
return { 'OK', host, num_str(load) }
