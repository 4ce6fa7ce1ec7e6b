-- reconcile.lua: settles expired leases (crashed gateways, lost releases, expired penalties):
-- each one's cost is taken off its host, clamped at 0; a host dropped as stale is not recreated.
-- KEYS: 1 load, 2 leases, 3 lease (extra keys are ignored).
-- ARGV: 1 max (leases settled in this call, 1..10000: bounds the time Redis is blocked).
-- Returns the number of leases removed. Acquire already settles a few per call; this script is
-- for a timer on idle pools and for tests.

if not KEYS[3] then fail('reconcile needs keys load, leases, lease') end
local max = int_arg(ARGV[1], 'max', 1)
if max > 10000 then fail('max must be <= 10000, got ' .. max) end
return reconcile_expired(KEYS[1], KEYS[2], KEYS[3], now_ms(), max)
