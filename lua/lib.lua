-- lib.lua: helpers shared by every entry script of the in-flight accounting (global_least_request).
-- The bundler (scripts/lua-bundle.mjs) prepends this file to each entry script, so everything here
-- is `local` (Redis refuses scripts that create globals) and nothing runs at load time.
-- Data model and per-script contracts: lua/README.md. Lua 5.1 only (Redis 6.2 and 7.x).

local BUCKET_MS = 250          -- expiry granularity: a lease's cost leaves its host at the end of its bucket
local SETTLE_BATCH = 256       -- due buckets an acquire settles before picking (~2 ms; more due: SETTLING)
local STALE_BATCH = 4          -- stale hosts examined when a stale check runs
local STALE_EVERY = 8          -- an acquire with n = 0 checks for stale hosts when rnd % 8 == 0
local SCAN_WINDOW = 16         -- members read per ZRANGE (and checked per SMISMEMBER) when the fast pick misses
local SCAN_MAX = 256           -- members the scan reads before it scores the candidate set directly
local SCORE_SAMPLE = 500       -- candidates scored directly at most (a random sample of a larger set)
local TIE_WINDOW = 16          -- members of the lowest load level read to find its least recently picked candidate
local ARG_CHUNK = 200          -- arguments per variadic call: unpack() of huge tables overflows the Lua stack
local PRNG_MODULUS = 2147483647 -- Park-Miller: products stay below 2^53, exact in Lua doubles
local LEASE_BASE = 70368744177664 -- 2^46: earlier layout's per-lease entries scored LEASE_BASE + bucket
-- Caps on what a call may write (lua/README.md, "Bounds"): anything larger is refused, nothing written.
local MAX_ID_BYTES = 128
local MAX_HOST_BYTES = 261     -- a 255-byte DNS name, ':' and a port
local MAX_HOSTS = 500          -- hosts per call (a longer candidate list is synced in chunks: sync.lua)
local MAX_POOL_HOSTS = 10000   -- hosts in one candidate set
local MAX_RENEW_IDS = 64       -- lease ids per renew call (each may move two bucket aggregates)
local MAX_HEAL_BATCH = 250     -- entries per healer batch (settled buckets, then removed records)
local MAX_KEY_BYTES = 512
local MAX_LEVELS = 256 -- maxPrefixLevels allows up to 256; compat (Higress, no cap) is clamped there too
local MAX_COST = 1000000000
local MAX_TTL_MS = 2592000000  -- 30 days
local MAX_KEY_TTL_S = 31536000 -- a prefix-tree key lives at most a year (redisKeyTTL's own bound)

-- Rejects a malformed call before anything is written (Redis does not roll back a script).
local function fail(message)
  error({ err = 'ERR llmlb: ' .. message })
end

-- Integer argument in [minimum, maximum], or a failed call naming the argument.
local function int_arg(value, name, minimum, maximum)
  local n = tonumber(value)
  if n == nil or n ~= math.floor(n) or n < minimum then
    fail(name .. ' must be an integer >= ' .. minimum .. ', got ' .. string.sub(tostring(value), 1, 32))
  end
  if maximum and n > maximum then fail(name .. ' must be <= ' .. maximum .. ', got ' .. n) end
  return n
end

-- A field of the lease HASH that is not a lease id: a bucket aggregate ('@') or the healer's
-- marks ('#').
local function reserved_field(name)
  local first = string.byte(name, 1)
  return first == 64 or first == 35
end

-- A lease id: 1..128 bytes, not a reserved field name (starting with '@' or '#').
local function check_lease_id(id)
  if id == nil or id == '' then fail('lease_id must not be empty') end
  if #id > MAX_ID_BYTES then fail('lease_id longer than ' .. MAX_ID_BYTES .. ' bytes') end
  if reserved_field(id) then fail('lease_id must not start with @ or #') end
end

-- A host: 1..261 bytes of [A-Za-z0-9.-_:[]] (ip:port, [v6]:port, name:port). No space: lease
-- records are "<host> <cost> <bucket>".
local function check_host(h, name)
  if h == nil or h == '' then fail(name .. ' must not be empty') end
  if #h > MAX_HOST_BYTES or not string.find(h, '^[%w%.%-_:%[%]]+$') then
    fail(name .. ' must be at most ' .. MAX_HOST_BYTES .. ' bytes of [A-Za-z0-9.-_:[]]')
  end
end

-- A key the plugin computed (prefix levels): at most MAX_KEY_BYTES.
local function check_key(k)
  if #k > MAX_KEY_BYTES then fail('key longer than ' .. MAX_KEY_BYTES .. ' bytes') end
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

-- Calls `command key prefix... item...` in chunks so long lists stay within Lua's stack.
-- Returns the replies of the chunks concatenated when they are arrays.
local function call_chunked(command, key, prefix, items, item_args)
  local out = {}
  local i = 1
  while i <= #items do
    local args = { command, key }
    for _, p in ipairs(prefix) do args[#args + 1] = p end
    local last = math.min(i + ARG_CHUNK - 1, #items)
    for j = i, last do
      for _, a in ipairs(item_args(items[j])) do args[#args + 1] = a end
    end
    local reply = redis.call(unpack(args))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
    i = last + 1
  end
  return out
end

local function itself(x) return { x } end

-- Guarantees every existing key of the pool at least ttl_ms to live after this call, all keys
-- sharing one expiry (they vanish together: no load without its leases) that is never shortened,
-- so only an abandoned pool expires. Keys are re-armed to 1.5 x ttl_ms only once one of them
-- drops below ttl_ms (or is new), which spares the PEXPIREs on most calls. Callers run it only
-- when they may have created a key (a new bucket, a sync, a penalty, a renewal).
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
-- n_keys excludes a trailing Higress counter key.
local function pool_keys_from(keys, n_keys)
  local list = { keys[1], keys[2], keys[3] }
  if n_keys >= 5 then list[#list + 1] = keys[5] end
  return list
end

-- The expiry bucket of a time: the end of its BUCKET_MS slot. A lease is dead once its bucket
-- is <= now, and its cost leaves its host with the bucket's aggregate.
local function bucket_of(expiry)
  return math.ceil(expiry / BUCKET_MS) * BUCKET_MS
end

-- Bucket aggregate: member of KEYS[2] (score = bucket) and field of KEYS[3] (value = summed cost),
-- "@<bucket> <host>"; the Higress-compat count of the same leases is "@<bucket> <host> h".
local function bucket_member(b, host, compat)
  local m = '@' .. num_str(b) .. ' ' .. host
  if compat then m = m .. ' h' end
  return m
end

-- Adds delta to a host's load, clamped at 0. A host no longer in the ZSET (dropped as stale) is
-- left absent: settling an old lease must not resurrect a host that is gone.
local function add_load(k_load, host, delta)
  local left = redis.call('ZADD', k_load, 'XX', 'INCR', delta, host)
  if left and tonumber(left) < 0 then redis.call('ZADD', k_load, 'XX', 0, host) end
end

-- Adds delta to Higress's in-flight counter of host, never below 0 (compat mode, lua/README.md).
-- A host without a field (dropped as stale, or by Higress's cleanup) is not given one back by a
-- release: a missing field reads 0 to Higress as well.
local function add_higress(k_higress, host, delta)
  if not k_higress then return end
  if delta < 0 and redis.call('HEXISTS', k_higress, host) == 0 then return end
  local left = redis.call('HINCRBY', k_higress, host, delta)
  if left < 0 then redis.call('HSET', k_higress, host, 0) end
end

-- Adds delta to a bucket aggregate; a new one is indexed, an emptied one removed. Returns true
-- when the aggregate is new (the caller may have created a pool key).
local function bump_bucket(k_leases, k_lease, member, b, delta)
  local left = redis.call('HINCRBY', k_lease, member, delta)
  if left <= 0 then
    redis.call('HDEL', k_lease, member)
    redis.call('ZREM', k_leases, member)
    return false
  end
  if left == delta then
    redis.call('ZADD', k_leases, b, member)
    return true
  end
  return false
end

-- Splits a lease record "<host> <cost> <bucket>[ h]"; bucket is nil for a record of the earlier
-- layout "<host> <cost>" (settled lease by lease), host nil for a tombstone or foreign value.
local function parse_lease(record)
  local host, cost, b, h = string.match(record, '^(%S+) (%d+) (%d+)( ?h?)$')
  if host then return host, tonumber(cost), tonumber(b), h == ' h' end
  host, cost = string.match(record, '^(%S+) (%d+)$')
  if host then return host, tonumber(cost), nil, false end
  return nil, nil, nil, false
end

-- Writes a lease unless its id exists (a retried call or a tombstone): returns written,
-- new_bucket. Its cost goes onto the host and into its expiry bucket's aggregate.
local function add_lease(k, lease_id, host, cost, expiry_ms, compat)
  local b = bucket_of(expiry_ms)
  local record = host .. ' ' .. num_str(cost) .. ' ' .. num_str(b)
  if compat then record = record .. ' h' end
  if redis.call('HSETNX', k.lease, lease_id, record) == 0 then return false, false end
  redis.call('ZINCRBY', k.load, cost, host)
  local new_bucket = bump_bucket(k.leases, k.lease, bucket_member(b, host, false), b, cost)
  if compat then
    bump_bucket(k.leases, k.lease, bucket_member(b, host, true), b, 1)
    add_higress(k.higress, host, 1)
  end
  return true, new_bucket
end

-- Ends a lease: returns found_live, host. A live lease's cost leaves its host and its bucket now;
-- a dead one (bucket <= now) leaves with its bucket, so removing its record changes no count. A
-- per-lease index entry the earlier layout wrote is left to collect_dead.
local function remove_lease(k, lease_id, now)
  local record = redis.call('HGET', k.lease, lease_id)
  if not record then return false, nil end
  redis.call('HDEL', k.lease, lease_id)
  local host, cost, b, compat = parse_lease(record)
  if not host then return false, nil end -- a tombstone
  if b == nil then -- earlier layout: the lease carries its own cost
    add_load(k.load, host, -cost)
    return true, host
  end
  if b <= now then return false, host end
  bump_bucket(k.leases, k.lease, bucket_member(b, host, false), b, -cost)
  add_load(k.load, host, -cost)
  if compat then
    bump_bucket(k.leases, k.lease, bucket_member(b, host, true), b, -1)
    add_higress(k.higress, host, -1)
  end
  return true, host
end

-- A healer mark of the lease HASH as a number: absent -> nil; unreadable (not written by these
-- scripts) -> 0, the earliest time, so a walk runs and rewrites it instead of a Lua error (which
-- would come after the settle's writes, on every call with a due bucket).
local function mark_of(v)
  if v == nil or v == false then return nil end
  return tonumber(v) or 0
end

-- Records that lease records may be dead from time `at` on (a bucket with live leases passed, or
-- a tombstone was written): the lease HASH's field "#dead" keeps the latest such time, and
-- collect_dead walks the HASH only while it is set (nothing to look for otherwise).
local function note_deaths(k, at)
  local t = mark_of(redis.call('HGET', k.lease, '#dead')) or 0
  if at > t then redis.call('HSET', k.lease, '#dead', num_str(at)) end
end

-- Settles up to max entries of KEYS[2] whose bucket has passed: each bucket aggregate takes its
-- summed cost off its host (one ZADD per host), a compat aggregate its count off Higress's
-- counter; a lease of the earlier layout is removed lease by lease. Returns the number of
-- entries settled and whether more may be due.
local function settle_due(k, now, max)
  local due = redis.call('ZRANGEBYSCORE', k.leases, '-inf', now, 'LIMIT', 0, max)
  if #due == 0 then return 0, false end
  local buckets, legacy = {}, {}
  for _, m in ipairs(due) do
    if string.byte(m, 1) == 64 then buckets[#buckets + 1] = m else legacy[#legacy + 1] = m end
  end
  if #buckets > 0 then
    local sums = call_chunked('HMGET', k.lease, {}, buckets, itself)
    local load_by_host, higress_by_host, order = {}, {}, {}
    for i, m in ipairs(buckets) do
      local host, h = string.match(m, '^@%d+ (%S+)( ?h?)$')
      local v = tonumber(sums[i] or '0') or 0
      if host and v > 0 then
        local into = load_by_host
        if h == ' h' then into = higress_by_host end
        if load_by_host[host] == nil and higress_by_host[host] == nil then order[#order + 1] = host end
        into[host] = (into[host] or 0) + v
      end
    end
    -- One ZMSCORE and a few variadic ZADD XX for every host at once (the script is atomic, so
    -- reading then writing the loads cannot race); a host dropped from load stays dropped.
    local hosts = {}
    for _, host in ipairs(order) do
      if load_by_host[host] then hosts[#hosts + 1] = host end
      if higress_by_host[host] then add_higress(k.higress, host, -higress_by_host[host]) end
    end
    local loads = call_chunked('ZMSCORE', k.load, {}, hosts, itself)
    local updates = {}
    for i, host in ipairs(hosts) do
      if loads[i] then
        updates[#updates + 1] = { math.max(0, tonumber(loads[i]) - load_by_host[host]), host }
      end
    end
    call_chunked('ZADD', k.load, { 'XX' }, updates, function(u) return u end)
    call_chunked('HDEL', k.lease, {}, buckets, itself)
    call_chunked('ZREM', k.leases, {}, buckets, itself)
    note_deaths(k, now) -- a due aggregate held leases nobody released: their records are dead
  end
  for _, id in ipairs(legacy) do remove_lease(k, id, now) end
  return #due, #due == max
end

-- A lease record or tombstone that counts for nothing any more: a lease whose bucket passed, or
-- a tombstone "~<expiry>" whose expiry passed ("~" alone: the earlier layout's, indexed). The
-- second value is a pending tombstone's expiry.
local function dead_record(record, now)
  local host, _, b = parse_lease(record)
  if host then return b ~= nil and b <= now, nil end
  local t = tonumber(string.match(record, '^~(%d+)$') or '')
  if t == nil then return false, nil end
  if t <= now then return true, nil end
  return false, t
end

-- Removes up to max records of dead leases (bucket <= now) and expired tombstones; counts are
-- not touched (the buckets carry them). Entries of the earlier layout (lease ids indexed in KEYS[2]
-- at LEASE_BASE + bucket) are collected through that index. Records of this layout have no index
-- entry: while "#dead" (note_deaths) is set and not in the future, the lease HASH is walked by
-- HSCAN, one page of about max fields per call whoever calls, in fields of the HASH itself: "#gc"
-- the cursor, "#gcs" when the pass started, "#gcp" the latest expiry of a tombstone seen pending.
-- A completed pass clears "#dead" unless a death was noted after it started (then another pass
-- runs), or sets it to that pending expiry (a pass runs again once the tombstone expired). So a
-- pool whose leases are all released costs two reads per call. Returns the number removed and
-- whether more may be due now (a full batch, or dead records on a page of an unfinished pass: a
-- dead gateway's are spread over the whole HASH).
local function collect_dead(k, now, max)
  local ids = redis.call('ZRANGEBYSCORE', k.leases, num_str(LEASE_BASE), num_str(LEASE_BASE + now), 'LIMIT', 0, max)
  if #ids > 0 then
    call_chunked('HDEL', k.lease, {}, ids, itself)
    call_chunked('ZREM', k.leases, {}, ids, itself)
    if #ids == max then return #ids, true end
  end
  local meta = redis.call('HMGET', k.lease, '#gc', '#gcs', '#gcp', '#dead')
  local cursor, started, pending = meta[1] or '0', mark_of(meta[2]), mark_of(meta[3]) or 0
  local deaths = mark_of(meta[4])
  -- A cursor or pass start that is not a number (HSCAN refuses such a cursor): a new pass.
  if not string.find(cursor, '^%d+$') or started == nil then cursor = '0' end
  if cursor == '0' then
    if deaths == nil or deaths > now then return #ids, false end
    started, pending = now, 0
  end
  local budget = max - #ids
  local page = redis.call('HSCAN', k.lease, cursor, 'COUNT', budget)
  local dead, full = {}, false
  local fields = page[2]
  for i = 1, #fields, 2 do
    if not reserved_field(fields[i]) then
      local gone, expiry = dead_record(fields[i + 1], now)
      if gone then
        if #dead == budget then full = true break end
        dead[#dead + 1] = fields[i]
      elseif expiry and expiry > pending then
        pending = expiry
      end
    end
  end
  call_chunked('HDEL', k.lease, {}, dead, itself)
  -- A page may hold more than COUNT fields (a small hash comes whole): the cursor stays, so the
  -- rest of this page is read again by the next call.
  if full then return #ids + #dead, true end
  if page[1] ~= '0' then
    redis.call('HSET', k.lease, '#gc', page[1], '#gcs', num_str(started), '#gcp', num_str(pending))
    return #ids + #dead, #dead > 0
  end
  -- The pass is complete: every record dead when it started was seen.
  redis.call('HDEL', k.lease, '#gc', '#gcs', '#gcp')
  if deaths ~= nil and deaths <= started then
    if pending > 0 then redis.call('HSET', k.lease, '#dead', num_str(pending))
    else redis.call('HDEL', k.lease, '#dead') end
  end
  return #ids + #dead, false
end

-- Replaces the candidate set with hosts; new hosts enter the load ZSET at 0 (existing ones keep
-- their load) and every host is marked as seen now. A set synced less than half its lifetime ago
-- (its TTL, which only a sync sets, is above half) holds this very list (the key is the list's
-- fingerprint; the size is checked too) and its hosts were marked seen then: nothing to do. Every
-- VM re-sends its list every half lifetime, so a fleet of VMs sharing one list did a full sync
-- each (1,000 hosts: ~2.4 ms of Redis time per VM per 15 s); now about one of them does.
local function sync_candidates(k, hosts, now, cand_ttl_ms)
  if redis.call('PTTL', k.cand) > cand_ttl_ms / 2 and redis.call('SCARD', k.cand) == #hosts then return end
  redis.call('DEL', k.cand)
  call_chunked('SADD', k.cand, {}, hosts, itself)
  redis.call('PEXPIRE', k.cand, cand_ttl_ms)
  call_chunked('ZADD', k.load, { 'NX' }, hosts, function(h) return { 0, h } end)
  call_chunked('ZADD', k.seen, {}, hosts, function(h) return { now, h } end)
end

-- Examines `hosts` (not named by a synced list for a while): one still in the caller's set is
-- current (its gateway has not resent the list yet) and is marked seen; any other is dropped from
-- load and seen, when `idle_only` only at load 0. Higress's counter field goes with it (its hash
-- has no TTL: pods replaced with new addresses would stay in it for good, and Higress's own cleanup
-- drops hosts gone from its host list), for an idle host only at a count of 0 (Higress's gateways
-- may still count it: a mixed fleet).
local function examine_unseen(k, hosts, now, idle_only)
  for _, host in ipairs(hosts) do
    if redis.call('SISMEMBER', k.cand, host) == 1 then
      redis.call('ZADD', k.seen, now, host)
    elseif not idle_only or tonumber(redis.call('ZSCORE', k.load, host) or '0') <= 0 then
      redis.call('ZREM', k.load, host)
      redis.call('ZREM', k.seen, host)
      if k.higress and (not idle_only or tonumber(redis.call('HGET', k.higress, host) or '0') <= 0) then
        redis.call('HDEL', k.higress, host)
      end
    end
  end
end

-- A host with nothing leased on it that no candidate list has named for idle_ms (two
-- candidate-set lifetimes: every live list is synced at least once per lifetime) is dropped: a
-- rollout replaces every pod, and the old ones, at load 0 below a busy fleet, were under every
-- pick's first draws (and read by its scan) for stale_ms. If a list still names it, its next
-- sync adds it back at load 0, which is its load. A host examined here with a load stays for the
-- stale_ms rule; which hosts are examined is drawn by rnd, so those cannot block the others.
local function drop_idle_hosts(k, now, idle_ms, rnd)
  local before = now - idle_ms
  local idle = redis.call('ZCOUNT', k.seen, '-inf', before)
  if idle == 0 then return end
  local from = 0
  if idle > STALE_BATCH then from = next_random(rnd) % (idle - STALE_BATCH + 1) end
  examine_unseen(k, redis.call('ZRANGEBYSCORE', k.seen, '-inf', before, 'LIMIT', from, STALE_BATCH), now, true)
end

-- Examines up to STALE_BATCH hosts not seen in a synced candidate list for stale_ms (after the
-- idle ones, drop_idle_hosts); a host dropped keeps its leases, which settle without recreating
-- it. stale_ms = 0 disables dropping.
local function drop_stale_hosts(k, now, stale_ms, idle_ms, rnd)
  if stale_ms <= 0 then return end
  if idle_ms < stale_ms then drop_idle_hosts(k, now, idle_ms, rnd) end
  examine_unseen(k, redis.call('ZRANGEBYSCORE', k.seen, '-inf', now - stale_ms, 'LIMIT', 0, STALE_BATCH), now, false)
end

-- The member of `members` picked least recently: the lowest score in `seen` (a host's latest pick,
-- or the latest sync of a candidate list holding it; none: the oldest), read from a rotation by rnd
-- so that equal scores fall to rnd. Least request with ties broken this way spreads arrivals like
-- round robin while loads are equal; a uniform draw sends a request to a host that was handed one
-- a moment ago as often as to one idle for long, and the two prefills then queue on one engine
-- (bench/RESULTS.md 3c: TTFT p99 1.5x). Without a seen key (compat layouts) rnd alone decides.
local function least_recent(k, members, rnd)
  local n = #members
  if n == 0 then return nil end
  if n == 1 or not k.seen then return members[(rnd % n) + 1] end
  local seen = call_chunked('ZMSCORE', k.seen, {}, members, itself)
  local best, best_t = nil, nil
  for j = 0, n - 1 do
    local i = ((rnd + j) % n) + 1
    local t = tonumber(seen[i]) or -1
    if best == nil or t < best_t then best, best_t = members[i], t end
  end
  return best
end

-- A pick's mark in `seen` (only for a host already there: XX), with Redis TIME's microseconds as the
-- fraction of its ms so picks within one ms keep their order; the stale checks read ms and are
-- unaffected. least_recent orders ties by it.
local function mark_picked(k, host)
  if not k.seen then return end
  local t = redis.call('TIME')
  redis.call('ZADD', k.seen, 'XX', tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000, host)
end

-- The lowest-scored members of `pairs` (member, score, ...), the least recently picked among them.
local function least_of(k, pairs, rnd)
  local best, tied = nil, {}
  for i = 1, #pairs, 2 do
    local score = tonumber(pairs[i + 1])
    if best == nil or score < best then best, tied = score, { pairs[i] }
    elseif score == best then tied[#tied + 1] = pairs[i] end
  end
  if best == nil then return nil, nil end
  return least_recent(k, tied, rnd), best
end

-- Direct scoring: the loads of the members of the candidate set (ZMSCORE), all of them up to
-- SCORE_SAMPLE, else a random sample of SCORE_SAMPLE (SRANDMEMBER: distinct members), so the call
-- stays bounded whatever the set's size. Used when the scan would read more than SCAN_MAX lighter
-- non-candidates.
local function score_candidates(k, rnd)
  local members
  if redis.call('SCARD', k.cand) <= SCORE_SAMPLE then members = redis.call('SMEMBERS', k.cand)
  else members = redis.call('SRANDMEMBER', k.cand, SCORE_SAMPLE) end
  local scores = call_chunked('ZMSCORE', k.load, {}, members, itself)
  local pairs = {}
  for i, h in ipairs(members) do
    if scores[i] then pairs[#pairs + 1] = h; pairs[#pairs + 1] = scores[i] end
  end
  return least_of(k, pairs, rnd)
end

-- The least recently picked candidate in one level of equal load: the members of the load ZSET at
-- ranks from..from+count-1 all have the same score. Reads TIE_WINDOW of them (all of a shorter
-- level) from a rank drawn with `draw`, keeps the candidates and returns the one least_recent
-- chooses, or nil when the window holds none; and the next unused draw. `known` is the member at
-- rank `from` (read already). O(log N + TIE_WINDOW).
local function draw_in_level(k, from, count, known, draw)
  local next_draw = next_random(draw)
  if count == 1 then
    if redis.call('SISMEMBER', k.cand, known) == 1 then return known, next_draw end
    return nil, next_draw
  end
  local n = math.min(count, TIE_WINDOW)
  local start = from + draw % (count - n + 1)
  local members = redis.call('ZRANGE', k.load, start, start + n - 1)
  local in_cand = redis.call('SMISMEMBER', k.cand, unpack(members))
  local cands = {}
  for i, m in ipairs(members) do
    if in_cand[i] == 1 then cands[#cands + 1] = m end
  end
  return least_recent(k, cands, next_draw), next_random(next_draw)
end

-- Slow path: walks the load ZSET upward in windows to the first candidate, whose load is the
-- lowest of any candidate, and picks the least recently picked candidate at that load. When that level
-- goes on past the window (a busy fleet: every healthy pod tied at a load above a few lighter
-- hosts that left the candidate set), it draws within the level (draw_in_level, from the
-- candidate found: the members before it are not candidates) instead of reading it whole; only
-- when that window misses (few candidates among many members) does it collect the level's
-- candidates, and past SCAN_MAX members it scores the candidate set directly.
-- Returns host, load or nil when no candidate is in the ZSET.
local function scan_least_loaded(k, draw)
  local found = {}
  local best = nil
  local start = 0
  while start < SCAN_MAX do
    local window = redis.call('ZRANGE', k.load, start, start + SCAN_WINDOW - 1, 'WITHSCORES')
    if #window == 0 then break end
    local full = #window == 2 * SCAN_WINDOW
    local members = {}
    for i = 1, #window, 2 do members[#members + 1] = window[i] end
    local in_cand = redis.call('SMISMEMBER', k.cand, unpack(members)) -- one call per window
    for i = 1, #window, 2 do
      local score = tonumber(window[i + 1])
      if best ~= nil and score > best then return least_of(k, found, draw) end
      if in_cand[(i + 1) / 2] == 1 then
        if best == nil and full and tonumber(window[#window]) == score then
          -- The first candidate (the lowest load of any): its level may run far past this window.
          local from = start + (i - 1) / 2
          local count = redis.call('ZCOUNT', k.load, '-inf', window[i + 1]) - from
          local host
          host, draw = draw_in_level(k, from, count, window[i], draw)
          if host then return host, score end
        end
        best = score -- ascending order: the first candidate found has the lowest load
        found[#found + 1] = window[i]
        found[#found + 1] = window[i + 1]
      end
    end
    if not full then return least_of(k, found, draw) end
    start = start + SCAN_WINDOW
  end
  -- Past SCAN_MAX members (many lighter non-candidates, or ties beyond it): score the set.
  return score_candidates(k, draw)
end

-- Picks the candidate with the lowest load, ties going to the least recently picked (read in a
-- window of TIE_WINDOW members from a rank drawn by rnd). Common case: every member of the load
-- ZSET is a candidate, and the pick costs O(log N + TIE_WINDOW): lowest score, count of members
-- at that score, the window among them (they hold ranks 0..ties-1) and their seen scores. A window
-- without a candidate leaves it to the scan. Returns host, load or nil.
local function pick_least_loaded(k, rnd)
  local first = redis.call('ZRANGE', k.load, 0, 0, 'WITHSCORES')
  if #first == 0 then return nil, nil end
  local min_score = first[2]
  local ties = redis.call('ZCOUNT', k.load, min_score, min_score)
  local host, draw = draw_in_level(k, 0, ties, first[1], rnd)
  if host then return host, tonumber(min_score) end
  if redis.call('EXISTS', k.cand) == 0 then return nil, nil end -- the set expired
  return scan_least_loaded(k, draw)
end

-- The pool's keys from KEYS (acquire layout), with Higress's counter as the last key when
-- compat is on. n_keys = keys before that counter.
local function pool_keys(compat)
  local n_keys = #KEYS
  local k = { load = KEYS[1], leases = KEYS[2], lease = KEYS[3], cand = KEYS[4], seen = KEYS[5] }
  if compat then
    if n_keys < 4 then fail('compat needs Higress counter key as the last key') end
    k.higress = KEYS[n_keys]
    n_keys = n_keys - 1
    if k.cand == k.higress then k.cand = nil end
    if k.seen == k.higress then k.seen = nil end
  end
  k.n_keys = n_keys
  return k
end

-- Optional trailing arguments (after the hosts of acquire-like scripts, after the fixed ones of
-- release and reconcile): deadline_ms (absolute Redis TIME in ms; 0 = none), compat (0 | 1).
local function read_options(at, names)
  local o = {}
  for i, name in ipairs(names) do
    local v = ARGV[at + i - 1]
    if v == nil then o[name] = 0 else o[name] = int_arg(v, name, 0) end
  end
  if #ARGV > at + #names - 1 then fail('too many arguments: ' .. #ARGV) end
  return o
end

-- The argument head every acquire-like script shares (acquire.lua's layout, lua/README.md):
-- KEYS 1..5 (load, leases, lease, cand, seen), ARGV 1..7, the script's own ARGV up to n_at - 1,
-- ARGV[n_at] = n, the n candidate hosts, then optional deadline_ms and compat. Validates all of
-- it (fail() before any write).
local function read_acquire_args(script, n_at)
  if not KEYS[5] then fail(script .. ' needs 5 keys first: load, leases, lease, cand, seen') end
  local a = {}
  a.lease_id = ARGV[1]
  check_lease_id(a.lease_id)
  a.cost = int_arg(ARGV[2], 'cost', 1, MAX_COST)
  a.lease_ttl_ms = int_arg(ARGV[3], 'lease_ttl_ms', 1, MAX_TTL_MS)
  a.cand_ttl_ms = int_arg(ARGV[4], 'cand_ttl_ms', 1, MAX_TTL_MS)
  a.limit = int_arg(ARGV[5], 'limit', 0)
  a.rnd = int_arg(ARGV[6], 'rnd', 0, PRNG_MODULUS)
  a.host_stale_ms = int_arg(ARGV[7], 'host_stale_ms', 0, MAX_TTL_MS)
  a.n = int_arg(ARGV[n_at], 'n', 0, MAX_HOSTS)
  if #ARGV < n_at + a.n then fail('n = ' .. a.n .. ' but ' .. (#ARGV - n_at) .. ' hosts follow') end
  a.hosts = {}
  for i = n_at + 1, n_at + a.n do
    check_host(ARGV[i], 'host')
    a.hosts[#a.hosts + 1] = ARGV[i]
  end
  local o = read_options(n_at + a.n + 1, { 'deadline_ms', 'compat' })
  a.deadline_ms = o.deadline_ms
  a.compat = o.compat == 1
  a.k = pool_keys(a.compat)
  if a.k.n_keys < 5 then fail(script .. ' needs 5 keys first: load, leases, lease, cand, seen') end
  a.pool_keys = { a.k.load, a.k.leases, a.k.lease, a.k.seen }
  -- The pool outlives every lease, candidate set and staleness window by a margin.
  a.pool_ttl_ms = 2 * math.max(a.lease_ttl_ms, a.cand_ttl_ms, a.host_stale_ms)
  return a
end

-- Steps 1-4 of an acquire (lua/README.md): refuse a late call, settle due buckets, sync the
-- candidate set (or ask for it), drop stale hosts now and then. Returns the reply to send as is
-- ({"LATE", now}, {"SETTLING"} when more than SETTLE_BATCH buckets were due: the pick must not
-- count the rest, so the caller sends the call again, or {"NEED_CANDIDATES"}), or nil to go on to
-- the pick.
local function acquire_prologue(a, now)
  if a.deadline_ms > 0 and now > a.deadline_ms then return { 'LATE', num_str(now) } end
  local _, more_due = settle_due(a.k, now, SETTLE_BATCH)
  if more_due then return { 'SETTLING' } end
  if a.n > 0 then
    sync_candidates(a.k, a.hosts, now, a.cand_ttl_ms)
    keep_pool_alive(a.pool_keys, a.pool_ttl_ms)
    drop_stale_hosts(a.k, now, a.host_stale_ms, 2 * a.cand_ttl_ms, a.rnd)
  elseif a.rnd % STALE_EVERY == 0 then
    if redis.call('EXISTS', a.k.cand) == 0 then return { 'NEED_CANDIDATES' } end
    drop_stale_hosts(a.k, now, a.host_stale_ms, 2 * a.cand_ttl_ms, a.rnd)
  end
  return nil
end

-- The reply when the pick found no candidate in the pool: with n = 0 the set is gone (expired),
-- or it exists but none of its hosts is loaded (another gateway dropped them as stale), and
-- resending the list heals both.
local function no_candidate_reply(a)
  -- A set none of whose hosts is in the pool (another gateway dropped them) is dropped too, so the
  -- list the caller sends next is synced in full, not skipped as fresh (sync_candidates).
  if a.n == 0 then
    if a.k.cand then redis.call('DEL', a.k.cand) end
    return { 'NEED_CANDIDATES' }
  end
  return { 'NO_CANDIDATE' }
end

-- The reply for a lease id that already has a record: the lease it names (a retried call), or
-- RELEASED for a tombstone (the plugin gave the call up and released its id first).
local function existing_reply(a)
  local record = redis.call('HGET', a.k.lease, a.lease_id)
  local host = record and parse_lease(record)
  if not host then return { 'RELEASED' } end
  return { 'OK', host, redis.call('ZSCORE', a.k.load, host) or '0' }
end

-- Sheds unless the lease id exists already (a retry of a call that was admitted).
local function shed_reply(a, host, load)
  if redis.call('HEXISTS', a.k.lease, a.lease_id) == 1 then return existing_reply(a) end
  return { 'SHED', host, num_str(load) }
end

-- After a write that may have created the leases ZSET and lease HASH (a new bucket aggregate):
-- load and seen are created only by a sync (which re-arms every key), and the lease HASH is never
-- created without the ZSET (an empty HASH has no aggregate, so the ZSET is empty too), but the
-- ZSET is often created alone: the HASH outlives it with dead records, tombstones and "#dead"
-- after the last aggregate settled. So one PTTL, the ZSET's, tells whether the pool's shared
-- expiry needs re-arming (the HASH's did not: the ZSET stayed without a TTL).
local function keep_alive_after_bucket(a)
  local pttl = redis.call('PTTL', a.k.leases)
  if pttl == -1 or pttl < a.pool_ttl_ms then keep_pool_alive(a.pool_keys, a.pool_ttl_ms) end
end

-- Writes the request's lease on host. Returns nil, or the reply for an id that already exists.
local function take_lease(a, host, now)
  local written, new_bucket = add_lease(a.k, a.lease_id, host, a.cost, now + a.lease_ttl_ms, a.compat)
  if not written then return existing_reply(a) end
  mark_picked(a.k, host)
  if new_bucket then keep_alive_after_bucket(a) end
  return nil
end
