-- reconcile.lua (the healer): settles due expiry buckets (each takes the summed cost of its dead
-- leases off its host, so a dead gateway's load leaves in one entry per host and 250 ms), then
-- removes records of dead leases; both in bounded batches. Call it again while `more` is 1.
-- KEYS: 1 load, 2 leases, 3 lease (the acquire layout may be passed as is)[, Higress counter
-- hash as the last key when compat = 1].
-- ARGV: 1 max (entries per batch, 1..MAX_HEAL_BATCH = 250: bounds the time Redis is blocked), 2 compat (0 | 1,
-- optional).
-- Returns {settled, removed, more}: bucket entries settled, lease records removed, 1 when a
-- batch was full (more may be due).

local o = read_options(2, { 'compat' })
local k = pool_keys(o.compat == 1)
if k.n_keys < 3 then fail('reconcile needs keys load, leases, lease') end
local max = int_arg(ARGV[1], 'max', 1, MAX_HEAL_BATCH)
local now = now_ms()
local settled, more_due = settle_due(k, now, max)
local removed, more_dead = collect_dead(k, now, max)
local more = 0
if more_due or more_dead then more = 1 end
return { settled, removed, more }
