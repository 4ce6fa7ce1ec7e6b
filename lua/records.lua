-- records.lua: the gateways' exchange of predicted_latency's VM records (sloShareReplicasMs). One
-- VM of a gateway (an Envoy) at a time stores the records of a pool of every VM of that Envoy (its
-- own and its sibling workers': open streams, recent ends and held requests, in the plugin's text
-- format: assembly/policy/predicted_latency/sibling_streams.ts) and reads every other gateway's,
-- so that a pick sees the streams another gateway opened on a pod and not only their count. Each
-- record is stored with Redis's time less its age, which a reader turns into the record's age (the
-- gateways' clocks need not agree).
-- KEYS: 1 the records hash (ns:rec; field: a VM's tag, value "<stored ms> <record>").
-- ARGV: 1 stale_ms (a record stored longer ago is a VM gone: deleted, not returned; the hash lives
--       2 x stale_ms after the last call), 2 max (other records returned at most), 3 n (records
--       stored, 1..MAX_STORE), then n triples: tag, age_ms (how long before this call its VM
--       wrote it, 0..stale_ms), record (its bytes, at most MAX_RECORD_BYTES).
-- Returns { now ms, then per live record of a tag not stored by this call (at most max): its
--   stored ms, its record }.
-- Errors (nothing written) on malformed arguments.
local MAX_RECORD_BYTES = 1048576
local MAX_STORE = 64
local stale = int_arg(ARGV[1], 'stale_ms', 1, MAX_TTL_MS)
local max = int_arg(ARGV[2], 'max', 0, 1024)
local n = int_arg(ARGV[3], 'n', 1, MAX_STORE)
if #ARGV ~= 3 + 3 * n then fail('expected ' .. n .. ' tag, age_ms, record triples after n, got ' .. (#ARGV - 3) .. ' arguments') end
check_key(KEYS[1])
local mine = {}
for i = 0, n - 1 do
  local tag = ARGV[4 + 3 * i]
  if tag == '' then fail('tag must not be empty') end
  if #tag > MAX_ID_BYTES then fail('tag longer than ' .. MAX_ID_BYTES .. ' bytes') end
  int_arg(ARGV[5 + 3 * i], 'age_ms', 0, stale)
  if #ARGV[6 + 3 * i] > MAX_RECORD_BYTES then fail('record longer than ' .. MAX_RECORD_BYTES .. ' bytes') end
  mine[tag] = true
end

local now = now_ms()
local all = redis.call('HGETALL', KEYS[1])
local out = { num_str(now) }
local gone = {}
for i = 1, #all, 2 do
  if not mine[all[i]] then
    local value = all[i + 1]
    local sp = string.find(value, ' ', 1, true)
    local at = sp and tonumber(string.sub(value, 1, sp - 1))
    if at == nil or now - at > stale then
      gone[#gone + 1] = all[i]
    elseif #out < 2 * max then
      out[#out + 1] = num_str(at)
      out[#out + 1] = string.sub(value, sp + 1)
    end
  end
end
call_chunked('HDEL', KEYS[1], {}, gone, itself)
local fields = {}
for i = 0, n - 1 do
  fields[#fields + 1] = ARGV[4 + 3 * i]
  fields[#fields + 1] = num_str(now - tonumber(ARGV[5 + 3 * i])) .. ' ' .. ARGV[6 + 3 * i]
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIRE', KEYS[1], 2 * stale)
return out
