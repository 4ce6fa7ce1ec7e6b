-- renew.lua: pushes back the expiry of leases whose streams are still open, so leases can be
-- short (a crashed gateway's leases expire soon) while streams last longer.
-- KEYS: 1 load, 2 leases, 3 lease; optional 5 seen (the acquire key layout may be passed as is).
-- ARGV: 1 lease_ttl_ms, 2.. lease ids.
-- Returns the number of leases renewed; ids no longer in the pool (released, expired and
-- settled) are skipped and stay gone.

local k_leases = KEYS[2]
if not KEYS[3] then fail('renew needs keys load, leases, lease') end
local lease_ttl_ms = int_arg(ARGV[1], 'lease_ttl_ms', 1)

local expiry = now_ms() + lease_ttl_ms
local renewed = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', k_leases, ARGV[i]) then
    redis.call('ZADD', k_leases, 'XX', expiry, ARGV[i])
    renewed = renewed + 1
  end
end

-- The pool must outlive the renewed leases (never shortened: see keep_pool_alive).
if renewed > 0 then keep_pool_alive(pool_keys_from(KEYS), 2 * lease_ttl_ms) end
return renewed
