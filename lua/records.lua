-- records.lua: the gateways' exchange of predicted_latency's VM records (sloShareReplicasMs). One
-- VM of a gateway (an Envoy) at a time stores the records of a pool of every VM of that Envoy (its
-- own and its sibling workers': open streams, recent ends and held requests, in the plugin's text
-- format: assembly/policy/predicted_latency/sibling_streams.ts) and reads every other gateway's,
-- so that a pick sees the streams another gateway opened on a pod and not only their count. Each
-- record is stored with Redis's time less its age, which a reader turns into the record's age (the
-- gateways' clocks need not agree).
-- KEYS: 1 the records hash (ns:rec; field: a VM's tag, value "<stored ms> <record>"), 2 its index
--       (ns:rec:at, ZSET tag -> stored ms), so that a call reads only the records it returns and
--       finds the stale ones without reading any record (HGETALL of the hash read every VM's
--       record, up to 1 MiB each, on every call: 26 ms at 1,024 x 2 KiB, 0.7 s at 1,024 x 16 KiB).
-- ARGV: 1 stale_ms (a record stored longer ago is a VM gone: deleted, not returned; the hash lives
--       2 x stale_ms after the last call), 2 max (other records returned at most), 3 n (records
--       stored, 1..MAX_STORE), then n triples: tag, age_ms (how long before this call its VM
--       wrote it, 0..stale_ms), record (its bytes, at most MAX_RECORD_BYTES).
-- Returns { now ms, then per live record of a tag not stored by this call (at most max, the
--   newest first): its stored ms, its record }.
-- Errors (nothing written) on malformed arguments.
local MAX_RECORD_BYTES = 1048576
local MAX_STORE = 64
local GONE_BATCH = 64          -- stale tags deleted per call at most (the rest by the next calls)
local UNINDEXED_BATCH = 16     -- fields of the hash without an index entry (a hash written before the index) per call
local stale = int_arg(ARGV[1], 'stale_ms', 1, MAX_TTL_MS)
local max = int_arg(ARGV[2], 'max', 0, 1024)
local n = int_arg(ARGV[3], 'n', 1, MAX_STORE)
if #ARGV ~= 3 + 3 * n then fail('expected ' .. n .. ' tag, age_ms, record triples after n, got ' .. (#ARGV - 3) .. ' arguments') end
check_key(KEYS[1])
if not KEYS[2] then fail('records needs keys: the records hash and its index') end
check_key(KEYS[2])
local mine = {}
for i = 0, n - 1 do
  local tag = ARGV[4 + 3 * i]
  if tag == '' then fail('tag must not be empty') end
  if #tag > MAX_ID_BYTES then fail('tag longer than ' .. MAX_ID_BYTES .. ' bytes') end
  int_arg(ARGV[5 + 3 * i], 'age_ms', 0, stale)
  if #ARGV[6 + 3 * i] > MAX_RECORD_BYTES then fail('record longer than ' .. MAX_RECORD_BYTES .. ' bytes') end
  mine[tag] = true
end

local rec, at = KEYS[1], KEYS[2]
local now = now_ms()

-- Fields the index does not hold (a hash from before the index, or written by hand): indexed from
-- their stored time, or deleted when they have none; a bounded batch per call.
if redis.call('HLEN', rec) > redis.call('ZCARD', at) then
  local names = redis.call('HKEYS', rec) -- names only, no record
  local indexed = call_chunked('ZMSCORE', at, {}, names, itself)
  local done = 0
  for i, tag in ipairs(names) do
    if not indexed[i] and done < UNINDEXED_BATCH then
      done = done + 1
      local value = redis.call('HGET', rec, tag)
      local sp = value and string.find(value, ' ', 1, true)
      local t = sp and tonumber(string.sub(value, 1, sp - 1))
      if t then redis.call('ZADD', at, t, tag) else redis.call('HDEL', rec, tag) end
    end
  end
end

-- VMs gone: stored more than stale_ms ago.
local gone = redis.call('ZRANGEBYSCORE', at, '-inf', '(' .. num_str(now - stale), 'LIMIT', 0, GONE_BATCH)
if #gone > 0 then
  redis.call('HDEL', rec, unpack(gone))
  redis.call('ZREM', at, unpack(gone))
end

-- The newest live records of other VMs, at most max: only those are read.
local out = { num_str(now) }
if max > 0 then
  local tags = redis.call('ZREVRANGEBYSCORE', at, '+inf', num_str(now - stale), 'LIMIT', 0, max + n)
  local want = {}
  for _, tag in ipairs(tags) do
    if not mine[tag] and #want < max then want[#want + 1] = tag end
  end
  if #want > 0 then
    local values = redis.call('HMGET', rec, unpack(want))
    for i, tag in ipairs(want) do
      local value = values[i]
      local sp = value and string.find(value, ' ', 1, true)
      local t = sp and tonumber(string.sub(value, 1, sp - 1))
      if t then
        out[#out + 1] = num_str(t)
        out[#out + 1] = string.sub(value, sp + 1)
      else
        redis.call('ZREM', at, tag) -- its record is gone or unreadable
        if value then redis.call('HDEL', rec, tag) end
      end
    end
  end
end

local fields, stamps = {}, {}
for i = 0, n - 1 do
  local stored = num_str(now - tonumber(ARGV[5 + 3 * i]))
  fields[#fields + 1] = ARGV[4 + 3 * i]
  fields[#fields + 1] = stored .. ' ' .. ARGV[6 + 3 * i]
  stamps[#stamps + 1] = stored
  stamps[#stamps + 1] = ARGV[4 + 3 * i]
end
redis.call('HSET', rec, unpack(fields))
redis.call('ZADD', at, unpack(stamps))
redis.call('PEXPIRE', rec, 2 * stale)
redis.call('PEXPIRE', at, 2 * stale)
return out
