-- prefix.lua: prefix_cache in one atomic call. Finds the host that served the longest known
-- prefix of this request, keeps it unless a load gate says it is overloaded, takes the lease
-- (as acquire.lua does) and points every level key of the request at the chosen host.
-- KEYS: 1..5 as acquire.lua, 6..5+L the level keys, shallowest first (the plugin computes them;
--       L <= 256, each <= 512 bytes)[, Higress counter hash as the last key when compat = 1].
-- ARGV: 1..7 as acquire.lua, 8 key_ttl_s, 9 gate_abs, 10 gate_rel, 11 gate_cap, 12 n,
--       13..12+n candidate hosts, then optional deadline_ms and compat as acquire.lua.
-- Returns {"OK", host, load_before, reason, depth} (reason prefix_hit | prefix_miss |
-- prefix_spill; depth = levels matched) | {"SHED", host, load} | {"NEED_CANDIDATES"} |
-- {"NO_CANDIDATE"} | {"LATE", now} | {"RELEASED"}; an error reply for malformed arguments (nothing written). lua/README.md.

local a = read_acquire_args('prefix', 12)
local key_ttl_s = int_arg(ARGV[8], 'key_ttl_s', 1, MAX_KEY_TTL_S)
local gate_abs = int_arg(ARGV[9], 'gate_abs', 0)
local gate_rel = tonumber(ARGV[10])
if gate_rel == nil or gate_rel < 0 then fail('gate_rel must be a number >= 0, got ' .. tostring(ARGV[10])) end
local gate_cap = int_arg(ARGV[11], 'gate_cap', 0)
local FIRST_LEVEL = 6
local LAST_LEVEL = a.k.n_keys
if LAST_LEVEL - FIRST_LEVEL + 1 > MAX_LEVELS then fail('at most ' .. MAX_LEVELS .. ' level keys') end
for i = FIRST_LEVEL, LAST_LEVEL do check_key(KEYS[i]) end

local now = now_ms()
local early = acquire_prologue(a, now)
if early then return early end

-- Longest known prefix. The walk stops at the first level that is missing or whose host is not a
-- current candidate: deeper levels were derived from that prefix and are rewritten below, so the
-- chain stays consistent (Higress rewrote from a wrong key here: anchor defect 5).
local depth, affinity = 0, nil
for i = FIRST_LEVEL, LAST_LEVEL do
  local holder = redis.call('GET', KEYS[i])
  if not holder or redis.call('SISMEMBER', a.k.cand, holder) == 0 then break end
  redis.call('EXPIRE', KEYS[i], key_ttl_s)
  depth = i - FIRST_LEVEL + 1
  affinity = holder
end

local least, least_load = pick_least_loaded(a.k, a.rnd)
if not least then return no_candidate_reply(a) end

local target, load, reason = least, least_load, 'prefix_miss'
if affinity then
  -- A candidate absent from the load ZSET (dropped by another gateway) carries no lease: load 0.
  local affinity_load = tonumber(redis.call('ZSCORE', a.k.load, affinity) or '0')
  target, load, reason = affinity, affinity_load, 'prefix_hit'
  if affinity_load > least_load then
    -- Load gate (anchor defect 7): leave a hot prefix's host when it is clearly busier than the
    -- least-loaded one, when it reached the cap, or when only the least-loaded one fits the limit.
    local imbalanced = affinity_load > least_load + gate_abs and affinity_load > gate_rel * least_load
    local capped = gate_cap > 0 and affinity_load >= gate_cap
    local only_least_fits = a.limit > 0 and affinity_load + a.cost > a.limit and least_load + a.cost <= a.limit
    if imbalanced or capped or only_least_fits then
      target, load, reason = least, least_load, 'prefix_spill'
    end
  end
end

if a.limit > 0 and load + a.cost > a.limit then return shed_reply(a, target, load) end

local existing = take_lease(a, target, now)
if existing then return existing end

-- The chosen host now holds the whole path: levels past the match are new, and on a spill the
-- matched levels move too, so the conversation's next turn follows it.
for i = FIRST_LEVEL, LAST_LEVEL do
  if target ~= affinity or i - FIRST_LEVEL + 1 > depth then
    redis.call('SET', KEYS[i], target, 'EX', key_ttl_s)
  end
end
return { 'OK', target, num_str(load), reason, num_str(depth) }
