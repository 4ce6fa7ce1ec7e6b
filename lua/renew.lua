-- renew.lua: pushes back the expiry of leases whose streams are still open, so leases can be
-- short (a crashed gateway's leases expire soon) while streams last longer.
-- KEYS: 1 load, 2 leases, 3 lease; optional 4, 5 (the acquire key layout may be passed as is).
-- ARGV: 1 lease_ttl_ms, 2.. lease ids (at most MAX_RENEW_IDS = 64); or 2 '+' and then triplets
-- lease id, host, cost (restore mode, what the plugin sends: it knows each open lease).
-- Returns the number of leases renewed. Ids only: ids that are unknown, released or dead (their
-- bucket passed) are skipped and stay gone. Restore mode: the stream is still open, so a lease
-- Redis lost (a restart, a flush) or let expire (renewals held up) is counted again from now,
-- when its host is still in the pool; a tombstone (released) is left alone. Restored leases do
-- not touch Higress's counter hash (compat). The leases move to the bucket of now + lease_ttl_ms with one
-- HINCRBY per (bucket, host) and variadic writes, so a call costs O(ids / 200 + hosts).

if not KEYS[3] then fail('renew needs keys load, leases, lease') end
local k = pool_keys(false)
local lease_ttl_ms = int_arg(ARGV[1], 'lease_ttl_ms', 1, MAX_TTL_MS)
local restore = ARGV[2] == '+'
local ids, hosts, costs = {}, {}, {}
-- An id named again in the same call is renewed once: each occurrence would move its cost out of
-- the old bucket again (the records are read once, before any move).
local named = {}
local function add_id(id, host, cost)
  if named[id] then return end
  named[id] = true
  ids[#ids + 1] = id
  hosts[#ids] = host
  costs[#ids] = cost
end
local given
if restore then
  if (#ARGV - 2) % 3 ~= 0 then fail('restore mode takes lease id, host, cost triplets') end
  given = (#ARGV - 2) / 3
  if given > MAX_RENEW_IDS then fail('at most ' .. MAX_RENEW_IDS .. ' lease ids per call, got ' .. given) end
  for i = 3, #ARGV, 3 do
    check_lease_id(ARGV[i])
    check_host(ARGV[i + 1], 'host')
    add_id(ARGV[i], ARGV[i + 1], int_arg(ARGV[i + 2], 'cost', 1, MAX_COST))
  end
else
  given = #ARGV - 1
  if given > MAX_RENEW_IDS then fail('at most ' .. MAX_RENEW_IDS .. ' lease ids per call, got ' .. given) end
  for i = 2, #ARGV do add_id(ARGV[i]) end
end

local now = now_ms()
local b_new = bucket_of(now + lease_ttl_ms)
local records = call_chunked('HMGET', k.lease, {}, ids, itself)
local deltas, buckets, order = {}, {}, {}
local function move(member, b, delta)
  if deltas[member] == nil then order[#order + 1] = member; deltas[member] = 0; buckets[member] = b end
  deltas[member] = deltas[member] + delta
end
local rewritten, reindexed = {}, {}
local renewed = 0
-- Restore mode: count the lease again from now (its old record, if any, is dead: its bucket
-- settles or settled its cost). Only for a host still in the pool.
local function restore_lease(i, id)
  if not redis.call('ZSCORE', k.load, hosts[i]) then return end
  if records[i] then
    redis.call('HDEL', k.lease, id)
    redis.call('ZREM', k.leases, id)
  end
  add_lease(k, id, hosts[i], costs[i], now + lease_ttl_ms, false)
  renewed = renewed + 1
end
for i, id in ipairs(ids) do
  local host, cost, b, compat = nil, nil, nil, false
  if records[i] then host, cost, b, compat = parse_lease(records[i]) end
  if restore and (not records[i] or (host and b ~= nil and b <= now)) then
    restore_lease(i, id)
  elseif host and b == nil then
    -- Earlier layout: move the lease into a bucket (it carried its own cost until now).
    local score = redis.call('ZSCORE', k.leases, id)
    if score and tonumber(score) > now then
      redis.call('HDEL', k.lease, id)
      redis.call('ZREM', k.leases, id)
      redis.call('ZINCRBY', k.load, -cost, host)
      add_lease(k, id, host, cost, now + lease_ttl_ms, false)
      renewed = renewed + 1
    end
  elseif host and b > now then
    if b_new ~= b then
      move(bucket_member(b, host, false), b, -cost)
      move(bucket_member(b_new, host, false), b_new, cost)
      if compat then
        move(bucket_member(b, host, true), b, -1)
        move(bucket_member(b_new, host, true), b_new, 1)
      end
      local r = host .. ' ' .. num_str(cost) .. ' ' .. num_str(b_new)
      if compat then r = r .. ' h' end
      rewritten[#rewritten + 1] = { id, r }
      reindexed[#reindexed + 1] = { num_str(LEASE_BASE + b_new), id }
    end
    renewed = renewed + 1
  end
end
for _, member in ipairs(order) do
  if deltas[member] ~= 0 then bump_bucket(k.leases, k.lease, member, buckets[member], deltas[member]) end
end
call_chunked('HSET', k.lease, {}, rewritten, function(p) return p end)
call_chunked('ZADD', k.leases, { 'XX' }, reindexed, function(p) return p end)

-- The pool must outlive the renewed leases (never shortened: see keep_pool_alive).
if renewed > 0 then keep_pool_alive(pool_keys_from(KEYS, #KEYS), 2 * lease_ttl_ms) end
return renewed
