-- release.lua: ends a lease (stream finished, failed or cancelled); exactly once per lease id.
-- KEYS: 1 load, 2 leases, 3 lease; optional 4 cand, 5 seen (the acquire key layout may be passed
-- as is)[, Higress counter hash as the last key when compat = 1].
-- ARGV: 1 lease_id, 2 penalty_cost (0 = none), 3 penalty_ttl_ms, 4 pool_ttl_ms, optional
-- 5 tombstone_ms (0 = none), 6 compat (0 | 1).
-- Returns 1 when a live lease existed and was removed, 0 otherwise (unknown, already released,
-- or dead: its cost left with its expiry bucket). A penalty turns a fast failure into load on
-- its host for penalty_ttl_ms, so a host that fails instantly stops attracting traffic. With
-- tombstone_ms > 0 an unknown id is remembered that long, so an acquire of it arriving later
-- (a call the plugin gave up) writes nothing and answers {"RELEASED"}.

local lease_id = ARGV[1]
check_lease_id(lease_id)
local penalty_cost = int_arg(ARGV[2] or '0', 'penalty_cost', 0, MAX_COST)
local penalty_ttl_ms = int_arg(ARGV[3] or '0', 'penalty_ttl_ms', 0, MAX_TTL_MS)
local pool_ttl_ms = int_arg(ARGV[4] or '0', 'pool_ttl_ms', 0, MAX_TTL_MS)
local o = read_options(5, { 'tombstone_ms', 'compat' })
if o.tombstone_ms > MAX_TTL_MS then fail('tombstone_ms must be <= ' .. MAX_TTL_MS) end
local k = pool_keys(o.compat == 1)
if k.n_keys < 3 then fail('release needs keys load, leases, lease') end

local now = now_ms()
local live, host = remove_lease(k, lease_id, now)
if not live then
  if host == nil and o.tombstone_ms > 0 and redis.call('HSETNX', k.lease, lease_id, '~' .. num_str(now + o.tombstone_ms)) == 1 then
    note_deaths(k, now)
    keep_pool_alive(pool_keys_from(KEYS, k.n_keys), math.max(pool_ttl_ms, 2 * o.tombstone_ms))
  end
  return 0
end

-- Only on a host still in the pool: a penalty must not resurrect a dropped host.
if penalty_cost > 0 and penalty_ttl_ms > 0 and redis.call('ZSCORE', k.load, host) then
  local written = add_lease(k, lease_id .. '#p', host, penalty_cost, now + penalty_ttl_ms, false)
  if written then keep_pool_alive(pool_keys_from(KEYS, k.n_keys), math.max(pool_ttl_ms, 2 * penalty_ttl_ms)) end
end
return 1
