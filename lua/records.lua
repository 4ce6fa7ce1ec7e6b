-- records.lua: the gateways' exchange of predicted_latency's VM records (sloShareReplicasMs). A VM
-- stores its record of a pool (its open streams, recent ends and held requests, in the plugin's
-- text format: assembly/policy/predicted_latency/sibling_streams.ts) and reads every other VM's, of
-- every gateway, so that a pick sees the streams another gateway opened on a pod and not only their
-- count. Each record is stored with Redis's time, which a reader turns into the record's age (the
-- gateways' clocks need not agree).
-- KEYS: 1 the records hash (ns:rec; field: a VM's tag, value "<stored ms> <record>").
-- ARGV: 1 tag (this VM's), 2 record (its bytes, at most MAX_RECORD_BYTES), 3 stale_ms (a record
--       stored longer ago is a VM gone: deleted, not returned; the hash lives 2 x stale_ms after the
--       last call), 4 max (other records returned at most), 5... tags whose records not to return
--       (the caller's sibling workers, whose records it reads from its Envoy's shared data; at most
--       MAX_SKIP).
-- Returns { now ms, then per other live record (at most max): its stored ms, its record }.
-- Errors (nothing written) on malformed arguments.
local MAX_RECORD_BYTES = 1048576
local MAX_SKIP = 64
local tag = ARGV[1]
if tag == nil or tag == '' then fail('tag must not be empty') end
if #tag > MAX_ID_BYTES then fail('tag longer than ' .. MAX_ID_BYTES .. ' bytes') end
local record = ARGV[2]
if record == nil then fail('record missing') end
if #record > MAX_RECORD_BYTES then fail('record longer than ' .. MAX_RECORD_BYTES .. ' bytes') end
local stale = int_arg(ARGV[3], 'stale_ms', 1, MAX_TTL_MS)
local max = int_arg(ARGV[4], 'max', 0, 1024)
check_key(KEYS[1])
if #ARGV - 4 > MAX_SKIP then fail('at most ' .. MAX_SKIP .. ' tags to skip, got ' .. (#ARGV - 4)) end
local skip = {}
for i = 5, #ARGV do skip[ARGV[i]] = true end

local now = now_ms()
local all = redis.call('HGETALL', KEYS[1])
local out = { num_str(now) }
local gone = {}
for i = 1, #all, 2 do
  if all[i] ~= tag then
    local value = all[i + 1]
    local sp = string.find(value, ' ', 1, true)
    local at = sp and tonumber(string.sub(value, 1, sp - 1))
    if at == nil or now - at > stale then
      gone[#gone + 1] = all[i] -- a skipped one too: a gone sibling's record must not stay
    elseif not skip[all[i]] and #out < 2 * max then
      out[#out + 1] = num_str(at)
      out[#out + 1] = string.sub(value, sp + 1)
    end
  end
end
call_chunked('HDEL', KEYS[1], {}, gone, itself)
redis.call('HSET', KEYS[1], tag, num_str(now) .. ' ' .. record)
redis.call('PEXPIRE', KEYS[1], 2 * stale)
return out
