-- lib.lua: helpers shared by every entry script of the in-flight accounting (global_least_request).
-- The bundler (scripts/lua-bundle.mjs) prepends this file to each entry script, so everything here
-- is `local` (Redis refuses scripts that create globals) and nothing runs at load time.
-- Data model and per-script contracts: lua/README.md. Lua 5.1 only (Redis 6.2 and 7.x).

local RECONCILE_BATCH = 32 -- expired leases settled per acquire: bounds the work of one call
local STALE_BATCH = 4      -- stale hosts examined per acquire
local SCAN_WINDOW = 16     -- members read per ZRANGE when the fast pick lands on a non-candidate
local PICK_RETRIES = 4     -- random re-draws among the least-loaded before scanning
local ARG_CHUNK = 200      -- hosts per SADD/ZADD: unpack() of huge tables overflows the Lua stack
local PRNG_MODULUS = 2147483647 -- Park-Miller: products stay below 2^53, exact in Lua doubles

-- Rejects a malformed call before anything is written (Redis does not roll back a script).
local function fail(message)
  error({ err = 'ERR llmlb: ' .. message })
end

-- Non-negative integer argument, or a failed call naming the argument.
local function int_arg(value, name, minimum)
  local n = tonumber(value)
  if n == nil or n ~= math.floor(n) or n < minimum then
    fail(name .. ' must be an integer >= ' .. minimum .. ', got ' .. tostring(value))
  end
  return n
end

-- Integers print without exponent or ".0" so the plugin can parse them as plain decimals.
local function num_str(n)
  if n == math.floor(n) and math.abs(n) < 1e15 then
    return string.format('%d', n)
  end
  return tostring(n)
end

-- Server clock in ms: the one clock shared by every gateway, so lease expiries are comparable.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Next value of a Park-Miller generator seeded by the plugin's random number (Redis' own
-- math.random is seeded identically in every script run, so it is not random).
local function next_random(r)
  return ((r % (PRNG_MODULUS - 1)) + 1) * 16807 % PRNG_MODULUS
end

-- Guarantees every existing key of the pool at least ttl_ms to live after this call, all keys
-- sharing one expiry (they vanish together: no load without its leases) that is never shortened,
-- so only an abandoned pool expires. Keys are re-armed to 1.5 x ttl_ms only once one of them
-- drops below ttl_ms (or is new), which spares the PEXPIREs on most calls.
local function keep_pool_alive(keys, ttl_ms)
  local live = {}
  local lowest, highest = nil, 0
  for _, key in ipairs(keys) do
    local pttl = redis.call('PTTL', key)
    if pttl ~= -2 then
      if pttl == -1 then pttl = 0 end -- a key without TTL needs one now
      live[#live + 1] = key
      if lowest == nil or pttl < lowest then lowest = pttl end
      if pttl > highest then highest = pttl end
    end
  end
  if lowest == nil or ttl_ms <= 0 or lowest >= ttl_ms then return end
  local target = math.max(highest, math.floor(ttl_ms * 3 / 2))
  for _, key in ipairs(live) do
    redis.call('PEXPIRE', key, target)
  end
end

-- The pool keys a lifecycle script keeps alive: load, leases, lease, and seen when the caller
-- passed the full acquire key layout (KEYS[4] is the candidate set, which has its own TTL).
local function pool_keys_from(keys)
  local list = { keys[1], keys[2], keys[3] }
  if keys[5] then list[#list + 1] = keys[5] end
  return list
end

-- Lowers a host's load by cost, clamped at 0. A host no longer in the ZSET (dropped as stale) is
-- left absent: settling an old lease must not resurrect a host that is gone.
local function subtract_load(k_load, host, cost)
  local score = redis.call('ZSCORE', k_load, host)
  if not score then return end
  local left = tonumber(score) - cost
  if left < 0 then left = 0 end
  redis.call('ZADD', k_load, 'XX', left, host)
end

-- Records a lease: its cost goes onto the host, its expiry into the leases ZSET.
local function add_lease(k_load, k_leases, k_lease, lease_id, host, cost, expiry_ms)
  redis.call('ZINCRBY', k_load, cost, host)
  redis.call('ZADD', k_leases, expiry_ms, lease_id)
  redis.call('HSET', k_lease, lease_id, host .. ' ' .. num_str(cost))
end

-- Splits a lease record "<host> <cost>"; nil for a record this code did not write.
local function parse_lease(record)
  local host, cost = string.match(record, '^(%S+) (%d+)$')
  if not host then return nil, nil end
  return host, tonumber(cost)
end

-- Deletes a lease and takes its cost off its host. Returns found, host, cost.
local function remove_lease(k_load, k_leases, k_lease, lease_id)
  local record = redis.call('HGET', k_lease, lease_id)
  redis.call('ZREM', k_leases, lease_id)
  if not record then return false, nil, nil end
  redis.call('HDEL', k_lease, lease_id)
  local host, cost = parse_lease(record)
  if host then subtract_load(k_load, host, cost) end
  return true, host, cost
end

-- Settles up to max leases whose expiry has passed (crashed gateway, lost release, expired
-- penalty). Returns how many were removed.
local function reconcile_expired(k_load, k_leases, k_lease, now, max)
  if max <= 0 then return 0 end
  local expired = redis.call('ZRANGEBYSCORE', k_leases, '-inf', now, 'LIMIT', 0, max)
  for _, lease_id in ipairs(expired) do
    remove_lease(k_load, k_leases, k_lease, lease_id)
  end
  return #expired
end

-- Calls `command key prefix... item...` in chunks so long host lists stay within Lua's stack.
local function call_chunked(command, key, prefix, items, item_args)
  local i = 1
  while i <= #items do
    local args = { command, key }
    for _, p in ipairs(prefix) do args[#args + 1] = p end
    local last = math.min(i + ARG_CHUNK - 1, #items)
    for j = i, last do
      for _, a in ipairs(item_args(items[j])) do args[#args + 1] = a end
    end
    redis.call(unpack(args))
    i = last + 1
  end
end

-- Replaces the candidate set with hosts; new hosts enter the load ZSET at 0 (existing ones keep
-- their load) and every host is marked as seen now.
local function sync_candidates(k_load, k_cand, k_seen, hosts, now, cand_ttl_ms)
  redis.call('DEL', k_cand)
  call_chunked('SADD', k_cand, {}, hosts, function(h) return { h } end)
  redis.call('PEXPIRE', k_cand, cand_ttl_ms)
  call_chunked('ZADD', k_load, { 'NX' }, hosts, function(h) return { 0, h } end)
  call_chunked('ZADD', k_seen, {}, hosts, function(h) return { now, h } end)
end

-- Examines up to STALE_BATCH hosts not seen in a synced candidate list for stale_ms. One that is
-- still in the caller's candidate set is current (its gateway simply has not resent the list),
-- so it is marked seen; any other is removed from load and seen. Its leases stay and settle
-- without recreating it. stale_ms = 0 disables dropping.
local function drop_stale_hosts(k_load, k_cand, k_seen, now, stale_ms)
  if stale_ms <= 0 then return end
  local stale = redis.call('ZRANGEBYSCORE', k_seen, '-inf', now - stale_ms, 'LIMIT', 0, STALE_BATCH)
  for _, host in ipairs(stale) do
    if redis.call('SISMEMBER', k_cand, host) == 1 then
      redis.call('ZADD', k_seen, now, host)
    else
      redis.call('ZREM', k_load, host)
      redis.call('ZREM', k_seen, host)
    end
  end
end

-- Slow path: walks the load ZSET upward in windows, collects the candidates with the lowest load
-- and picks one of them uniformly. Cost grows with the number of non-candidates loaded less
-- than the best candidate. Returns host, load or nil when no candidate is in the ZSET.
local function scan_least_loaded(k_load, k_cand, rnd)
  local best = nil
  local tied = {}
  local start = 0
  while true do
    local window = redis.call('ZRANGE', k_load, start, start + SCAN_WINDOW - 1, 'WITHSCORES')
    if #window == 0 then break end
    for i = 1, #window, 2 do
      local score = tonumber(window[i + 1])
      if best ~= nil and score > best then
        return tied[(rnd % #tied) + 1], best
      end
      if redis.call('SISMEMBER', k_cand, window[i]) == 1 then
        best = score -- ascending order: the first candidate found has the lowest load
        tied[#tied + 1] = window[i]
      end
    end
    start = start + SCAN_WINDOW
  end
  if best == nil then return nil, nil end
  return tied[(rnd % #tied) + 1], best
end

-- Picks the candidate with the lowest load, ties broken uniformly by rnd. Common case: every
-- member of the load ZSET is a candidate, and the pick costs O(log N): lowest score, count of
-- members at that score, and the member at a random rank among them (they hold ranks
-- 0..ties-1). A draw that lands on a non-candidate is redrawn a few times (rejection sampling
-- stays uniform), then the scan decides. Returns host, load or nil.
local function pick_least_loaded(k_load, k_cand, rnd)
  local first = redis.call('ZRANGE', k_load, 0, 0, 'WITHSCORES')
  if #first == 0 then return nil, nil end
  local min_score = first[2]
  local ties = redis.call('ZCOUNT', k_load, min_score, min_score)
  local draw = rnd
  for _ = 1, PICK_RETRIES do
    local rank = draw % ties
    local host = first[1]
    if rank > 0 then host = redis.call('ZRANGE', k_load, rank, rank)[1] end
    if host and redis.call('SISMEMBER', k_cand, host) == 1 then
      return host, tonumber(min_score)
    end
    if ties == 1 then break end -- a redraw would land on the same member
    draw = next_random(draw)
  end
  return scan_least_loaded(k_load, k_cand, draw)
end

-- The argument head every acquire-like script shares (acquire.lua's layout, lua/README.md):
-- KEYS 1..5 (load, leases, lease, cand, seen), ARGV 1..7, the script's own ARGV up to n_at - 1,
-- ARGV[n_at] = n and then the n candidate hosts. Validates all of it (fail() before any write).
local function read_acquire_args(script, n_at)
  local a = { k_load = KEYS[1], k_leases = KEYS[2], k_lease = KEYS[3], k_cand = KEYS[4], k_seen = KEYS[5] }
  if not a.k_seen then fail(script .. ' needs 5 keys first: load, leases, lease, cand, seen') end
  a.lease_id = ARGV[1]
  if a.lease_id == nil or a.lease_id == '' then fail('lease_id must not be empty') end
  a.cost = int_arg(ARGV[2], 'cost', 1)
  a.lease_ttl_ms = int_arg(ARGV[3], 'lease_ttl_ms', 1)
  a.cand_ttl_ms = int_arg(ARGV[4], 'cand_ttl_ms', 1)
  a.limit = int_arg(ARGV[5], 'limit', 0)
  a.rnd = int_arg(ARGV[6], 'rnd', 0)
  a.host_stale_ms = int_arg(ARGV[7], 'host_stale_ms', 0)
  a.n = int_arg(ARGV[n_at], 'n', 0)
  if #ARGV ~= n_at + a.n then fail('n = ' .. a.n .. ' but ' .. (#ARGV - n_at) .. ' hosts follow') end
  a.hosts = {}
  for i = n_at + 1, n_at + a.n do a.hosts[#a.hosts + 1] = ARGV[i] end
  a.pool_keys = { a.k_load, a.k_leases, a.k_lease, a.k_seen }
  -- The pool outlives every lease, candidate set and staleness window by a margin.
  a.pool_ttl_ms = 2 * math.max(a.lease_ttl_ms, a.cand_ttl_ms, a.host_stale_ms)
  return a
end

-- Steps 1-4 of an acquire (lua/README.md): settle expired leases, answer a retried call from the
-- lease it already wrote, sync or refresh the candidate set, drop stale hosts. Returns the reply
-- to send as is ({"OK", host, load} or {"NEED_CANDIDATES"}), or nil to go on to the pick.
local function acquire_prologue(a, now)
  reconcile_expired(a.k_load, a.k_leases, a.k_lease, now, RECONCILE_BATCH)
  -- A retried acquire (its first reply was lost) must not count the request twice.
  local existing = redis.call('HGET', a.k_lease, a.lease_id)
  if existing then
    local host = parse_lease(existing)
    if host then return { 'OK', host, redis.call('ZSCORE', a.k_load, host) or '0' } end
  end
  if a.n > 0 then
    sync_candidates(a.k_load, a.k_cand, a.k_seen, a.hosts, now, a.cand_ttl_ms)
  elseif redis.call('PEXPIRE', a.k_cand, a.cand_ttl_ms) == 0 then
    return { 'NEED_CANDIDATES' } -- the set for this fingerprint expired or was never sent
  end
  drop_stale_hosts(a.k_load, a.k_cand, a.k_seen, now, a.host_stale_ms)
  return nil
end

-- The reply when the pick found no candidate in the pool: with n = 0 the set exists but none of
-- its hosts is loaded (another gateway dropped them as stale), and resending the list heals it.
local function no_candidate_reply(a)
  keep_pool_alive(a.pool_keys, a.pool_ttl_ms)
  if a.n == 0 then return { 'NEED_CANDIDATES' } end
  return { 'NO_CANDIDATE' }
end

-- Writes the request's lease on host and marks the host current.
local function take_lease(a, host, now)
  add_lease(a.k_load, a.k_leases, a.k_lease, a.lease_id, host, a.cost, now + a.lease_ttl_ms)
  redis.call('ZADD', a.k_seen, now, host) -- a host that takes traffic is current
  keep_pool_alive(a.pool_keys, a.pool_ttl_ms)
end
