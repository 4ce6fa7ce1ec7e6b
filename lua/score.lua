-- score.lua: cluster_metrics' AdaptiveScore with global in-flight counts in one atomic call. The
-- plugin scores its sampled candidates locally; the script weighs each score by the candidate's
-- global load (score * (load + 1), Higress's formula), picks the lowest (ties uniformly by rnd)
-- and takes the lease on it exactly as acquire.lua does, so counts are leases (released, renewed,
-- expiring) instead of Higress's TTL-less counter hash.
-- KEYS: 1..5 as acquire.lua. ARGV: 1..7 as acquire.lua, 8 k, then k pairs (host, local score >= 0),
-- then n and the n candidate hosts (n at 9 + 2k).
-- Returns {"OK", host, load_before, "adaptive_score"} | {"SHED", host, load} | {"NEED_CANDIDATES"} |
-- {"NO_CANDIDATE"} (no scored host is a candidate); an error reply for malformed arguments
-- (nothing written). Full contract: lua/README.md.

local k = int_arg(ARGV[8], 'k', 1, MAX_HOSTS) -- scored services: each costs a SISMEMBER and a ZSCORE
local a = read_acquire_args('score', 9 + 2 * k)
local scored = {}
for i = 1, k do
  local host, factor = ARGV[7 + 2 * i], tonumber(ARGV[8 + 2 * i])
  check_host(host, 'scored host')
  if factor == nil or factor < 0 then fail('score of ' .. host .. ' must be a number >= 0, got ' .. tostring(ARGV[8 + 2 * i])) end
  scored[i] = { host, factor }
end

local now = now_ms()
local early = acquire_prologue(a, now)
if early then return early end

local best, best_score, best_load, ties, r = nil, 0, 0, 0, a.rnd
for i = 1, k do
  local host = scored[i][1]
  if redis.call('SISMEMBER', a.k.cand, host) == 1 then
    local load = tonumber(redis.call('ZSCORE', a.k.load, host) or '0')
    local score = scored[i][2] * (load + 1)
    if best == nil or score < best_score then
      best, best_score, best_load, ties = host, score, load, 1
    elseif score == best_score then
      -- Reservoir sampling over equal scores: the i-th tie replaces the choice with p = 1/i.
      ties = ties + 1
      r = next_random(r)
      if r % ties == 0 then best, best_load = host, load end
    end
  end
end
if not best then
  if a.n == 0 and redis.call('EXISTS', a.k.cand) == 0 then return { 'NEED_CANDIDATES' } end
  return { 'NO_CANDIDATE' }
end

if a.limit > 0 and best_load + a.cost > a.limit then return shed_reply(a, best, best_load) end

local existing = take_lease(a, best, now)
if existing then return existing end
return { 'OK', best, num_str(best_load), 'adaptive_score' }
