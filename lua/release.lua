-- release.lua: ends a lease (stream finished, failed or cancelled); exactly once per lease id.
-- KEYS: 1 load, 2 leases, 3 lease; optional 5 seen (the acquire key layout may be passed as is).
-- ARGV: 1 lease_id, 2 penalty_cost (0 = none), 3 penalty_ttl_ms, 4 pool_ttl_ms.
-- Returns 1 when the lease existed and was removed, 0 otherwise (unknown, already released or
-- already expired: nothing changes). A penalty turns a fast failure into load on its host for
-- penalty_ttl_ms, so a host that fails instantly stops attracting traffic.

local k_load, k_leases, k_lease = KEYS[1], KEYS[2], KEYS[3]
if not k_lease then fail('release needs keys load, leases, lease') end

local lease_id = ARGV[1]
if lease_id == nil or lease_id == '' then fail('lease_id must not be empty') end
local penalty_cost = int_arg(ARGV[2] or '0', 'penalty_cost', 0)
local penalty_ttl_ms = int_arg(ARGV[3] or '0', 'penalty_ttl_ms', 0)
local pool_ttl_ms = int_arg(ARGV[4] or '0', 'pool_ttl_ms', 0)

local found, host = remove_lease(k_load, k_leases, k_lease, lease_id)
if not found then return 0 end

-- Only on a host still in the pool: a penalty must not resurrect a dropped host.
if host and penalty_cost > 0 and penalty_ttl_ms > 0 and redis.call('ZSCORE', k_load, host) then
  local penalty_id = lease_id .. '#p'
  if redis.call('HEXISTS', k_lease, penalty_id) == 0 then
    add_lease(k_load, k_leases, k_lease, penalty_id, host, penalty_cost, now_ms() + penalty_ttl_ms)
  end
end

keep_pool_alive(pool_keys_from(KEYS), math.max(pool_ttl_ms, 2 * penalty_ttl_ms))
return 1
