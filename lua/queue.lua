-- queue.lua: the gateway-side admission queue of a pool. At most `capacity` requests of the pool
-- are admitted at once (slots); the others wait in one queue ordered by priority band, then by a
-- start-time fair tag per tenant (tenants interleave; FIFO within a tenant). Whichever gateway
-- holds a waiting request polls for it; a request is admitted when fewer requests are ahead of it
-- than there are free slots, so several gateways admit their heads concurrently and a new arrival
-- never overtakes a waiting one. Entries not polled for entry_ttl_ms (crashed gateway, departed
-- client) and slots not renewed for slot_ttl_ms expire and are settled by the next call.
-- KEYS: 1 q (ZSET id -> order), 2 qhb (ZSET id -> heartbeat expiry ms), 3 qt (HASH "t:<tenant>" ->
--       last tag, "~v" -> virtual clock, "~c" -> the tenant sweep's cursor), 4 adm (ZSET admitted
--       id -> slot expiry ms).
-- Tenants are a request header's values, and every enter renews the keys' TTL: so each enter that
-- queues also sweeps a few tenant fields (HSCAN, TENANT_SWEEP) and deletes those whose last tag
-- the clock has passed (their next tag is the clock's + 1 with or without the field): the hash
-- holds the tenants ahead of the clock, not every tenant ever seen.
-- ARGV: 1 op, then
--   enter: 2 id, 3 band (0 low .. 2 high), 4 tenant, 5 capacity, 6 entry_ttl_ms, 7 slot_ttl_ms
--          -> {"ADMITTED"} | {"QUEUED", ahead}
--   poll:  2 id, 3 capacity, 4 entry_ttl_ms, 5 slot_ttl_ms
--          -> {"ADMITTED"} | {"QUEUED", ahead} | {"GONE"} (expired or never queued)
--   exit:  2 id[, 3 capacity, 4 grant_ttl_ms] -> removes a waiting entry or frees a slot, then
--          (with capacity) hands the free slots (at most 32) to the head of the queue at once; the entries
--          handed a slot hold it grant_ttl_ms until their gateway claims it (a poll, an enter or a
--          renew of the id extends it to the slot TTL), so a crashed gateway's grant expires
--          -> {removed (0 | 1), id handed a slot, ...}
--   renew: 2 slot_ttl_ms, 3.. ids -> each id holds a slot for slot_ttl_ms (restored when Redis lost
--          it: the stream is running); the keys live at least 2 x slot_ttl_ms
--          -> the number of ids whose slot was still there
--   depth: -> {waiting, admitted}
local BAND_SPAN = 1e13
local SETTLE_BATCH = 32
local HAND_OFF_MAX = 32 -- heads one exit admits at most (more free slots: the heads' polls take them)
local TENANT_SWEEP = 16 -- the HSCAN COUNT of one enter's sweep of tenant fields

local k_q, k_hb, k_t, k_adm = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local op = ARGV[1]
local now = now_ms()

local function settle()
  local gone = redis.call('ZRANGEBYSCORE', k_hb, '-inf', now, 'LIMIT', 0, SETTLE_BATCH)
  for i = 1, #gone do
    redis.call('ZREM', k_q, gone[i])
    redis.call('ZREM', k_hb, gone[i])
  end
  redis.call('ZREMRANGEBYSCORE', k_adm, '-inf', now)
end

local function keep_alive(ttl)
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
end

-- Keeps the keys for at least ttl ms without shortening a longer TTL an enter or poll gave them
-- (a renew or an exit may be the pool's only call for minutes while long streams hold the slots).
local function extend_alive(ttl)
  for i = 1, 4 do
    local left = redis.call('PTTL', KEYS[i])
    if left == -1 or (left >= 0 and left < ttl) then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end

local function admit(id, slot_ttl)
  local order = redis.call('ZSCORE', k_q, id)
  if order then
    local tag = tonumber(order) % BAND_SPAN
    local v = tonumber(redis.call('HGET', k_t, '~v') or '0')
    if tag > v then redis.call('HSET', k_t, '~v', num_str(tag)) end
  end
  redis.call('ZREM', k_q, id)
  redis.call('ZREM', k_hb, id)
  redis.call('ZADD', k_adm, now + slot_ttl, id)
  return { 'ADMITTED' }
end

-- Deletes the swept tenant fields whose last tag is at or behind the clock `v`; the cursor is kept
-- in the hash, so successive enters go round it.
local function sweep_tenants(v)
  local page = redis.call('HSCAN', k_t, redis.call('HGET', k_t, '~c') or '0', 'COUNT', TENANT_SWEEP)
  local items = page[2]
  for i = 1, #items, 2 do
    local f = items[i]
    if string.sub(f, 1, 2) == 't:' and (tonumber(items[i + 1]) or 0) <= v then redis.call('HDEL', k_t, f) end
  end
  if page[1] == '0' then redis.call('HDEL', k_t, '~c') else redis.call('HSET', k_t, '~c', page[1]) end
end

-- An id that holds a slot (admitted, or handed one by an exit) claims it for slot_ttl ms.
local function claimed(id, slot_ttl)
  if not redis.call('ZSCORE', k_adm, id) then return false end
  redis.call('ZADD', k_adm, 'XX', now + slot_ttl, id)
  return true
end

-- Hands the free slots to the head of the queue (in queue order, at most HAND_OFF_MAX), for
-- grant_ttl ms unless claimed. Returns the ids handed a slot.
local function hand_off(capacity, grant_ttl)
  local free = math.min(capacity - redis.call('ZCARD', k_adm), HAND_OFF_MAX)
  if free <= 0 then return {} end
  local heads = redis.call('ZRANGE', k_q, 0, free - 1)
  for i = 1, #heads do admit(heads[i], grant_ttl) end
  return heads
end

if op == 'enter' then
  local id, band, tenant = ARGV[2], int_arg(ARGV[3], 'band', 0), ARGV[4]
  local capacity = int_arg(ARGV[5], 'capacity', 1)
  local entry_ttl, slot_ttl = int_arg(ARGV[6], 'entry_ttl_ms', 1), int_arg(ARGV[7], 'slot_ttl_ms', 1)
  if id == nil or id == '' then fail('id must not be empty') end
  if band > 2 then fail('band must be 0..2') end
  settle()
  keep_alive(2 * math.max(entry_ttl, slot_ttl))
  if claimed(id, slot_ttl) then return { 'ADMITTED' } end
  local queued = redis.call('ZRANK', k_q, id)
  if queued then return { 'QUEUED', tostring(queued) } end
  if redis.call('ZCARD', k_q) == 0 and redis.call('ZCARD', k_adm) < capacity then
    redis.call('ZADD', k_adm, now + slot_ttl, id)
    return { 'ADMITTED' }
  end
  -- Start-time fair tag: a tenant's next entry starts after its previous one, but never before
  -- the clock (the tag of the last admitted entry), so an idle tenant cannot bank credit.
  local v = tonumber(redis.call('HGET', k_t, '~v') or '0')
  local last = tonumber(redis.call('HGET', k_t, 't:' .. tenant) or '0')
  local tag = math.max(v, last) + 1
  sweep_tenants(v)
  redis.call('HSET', k_t, 't:' .. tenant, num_str(tag))
  redis.call('ZADD', k_q, (2 - band) * BAND_SPAN + tag, id)
  redis.call('ZADD', k_hb, now + entry_ttl, id)
  -- The poll's rule at once (a higher band, or free slots the heads have not polled for yet).
  local ahead = redis.call('ZRANK', k_q, id)
  if ahead < capacity - redis.call('ZCARD', k_adm) then return admit(id, slot_ttl) end
  return { 'QUEUED', tostring(ahead) }
elseif op == 'poll' then
  local id = ARGV[2]
  local capacity = int_arg(ARGV[3], 'capacity', 1)
  local entry_ttl, slot_ttl = int_arg(ARGV[4], 'entry_ttl_ms', 1), int_arg(ARGV[5], 'slot_ttl_ms', 1)
  settle()
  keep_alive(2 * math.max(entry_ttl, slot_ttl))
  if claimed(id, slot_ttl) then return { 'ADMITTED' } end
  local ahead = redis.call('ZRANK', k_q, id)
  if not ahead then return { 'GONE' } end
  redis.call('ZADD', k_hb, now + entry_ttl, id)
  if ahead < capacity - redis.call('ZCARD', k_adm) then return admit(id, slot_ttl) end
  return { 'QUEUED', tostring(ahead) }
elseif op == 'exit' then
  local id = ARGV[2]
  local capacity, grant_ttl = nil, nil
  if ARGV[3] then capacity, grant_ttl = int_arg(ARGV[3], 'capacity', 1), int_arg(ARGV[4], 'grant_ttl_ms', 1) end
  local n = redis.call('ZREM', k_q, id) + redis.call('ZREM', k_adm, id)
  redis.call('ZREM', k_hb, id)
  local reply = { n > 0 and 1 or 0 }
  if capacity then
    settle()
    local heads = hand_off(capacity, grant_ttl)
    for i = 1, #heads do reply[#reply + 1] = heads[i] end
    if #heads > 0 then extend_alive(2 * grant_ttl) end
  end
  return reply
elseif op == 'renew' then
  -- A renewed id is a running stream: it holds a slot, even one Redis lost (the keys expired, a
  -- restart, an outage past slot_ttl) or never gave (admitted while Redis was away): counting
  -- it again keeps later arrivals from being admitted past capacity.
  local slot_ttl = int_arg(ARGV[2], 'slot_ttl_ms', 1)
  local n = 0
  for i = 3, #ARGV do
    if ARGV[i] == '' then fail('id must not be empty') end
    if redis.call('ZSCORE', k_adm, ARGV[i]) then n = n + 1 end
    admit(ARGV[i], slot_ttl)
  end
  if #ARGV >= 3 then extend_alive(2 * slot_ttl) end
  return n
elseif op == 'depth' then
  settle()
  return { redis.call('ZCARD', k_q), redis.call('ZCARD', k_adm) }
end
fail('unknown op ' .. tostring(op))
