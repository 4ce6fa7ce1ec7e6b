-- sync.lua: one chunk of a candidate list longer than one acquire may carry (MAX_HOSTS): the
-- chunks fill a staging set of the calling VM, and the last one replaces the candidate set with
-- it in one step (RENAME), so a pick never sees a half-built set. Each chunk does what an
-- acquire's sync does for its hosts: new hosts enter the load ZSET at 0, all are marked seen.
-- KEYS: 1 load, 2 leases, 3 lease, 4 cand:<fp>, 5 seen (acquire.lua's layout), 6 the staging set
--       (cand:<fp>:next:<vm tag>: private to one VM, so two VMs syncing at once do not mix).
-- ARGV: 1 cand_ttl_ms, 2 pool_ttl_ms, 3 have (hosts the earlier chunks added; 0 = the first
--       chunk: what an abandoned sync left is dropped), 4 last (1: swap the staging set in),
--       5.. the chunk's hosts (1..MAX_HOSTS, distinct, none in an earlier chunk).
-- Returns the staging set's size (after the swap: the candidate set's). Error reply, nothing
-- written, for malformed arguments, a list longer than MAX_POOL_HOSTS, or a staging set that does
-- not hold `have` hosts (it expired, or a chunk was lost): the caller starts over.

if not KEYS[6] then fail('sync needs keys load, leases, lease, cand, seen, staging') end
local k = { load = KEYS[1], leases = KEYS[2], lease = KEYS[3], cand = KEYS[4], seen = KEYS[5] }
local staging = KEYS[6]
local cand_ttl_ms = int_arg(ARGV[1], 'cand_ttl_ms', 1, MAX_TTL_MS)
local pool_ttl_ms = int_arg(ARGV[2], 'pool_ttl_ms', 1, MAX_TTL_MS)
local have = int_arg(ARGV[3], 'have', 0, MAX_POOL_HOSTS)
local last = int_arg(ARGV[4], 'last', 0, 1)
local hosts = {}
for i = 5, #ARGV do
  check_host(ARGV[i], 'host')
  hosts[#hosts + 1] = ARGV[i]
end
if #hosts == 0 then fail('sync needs at least one host') end
if #hosts > MAX_HOSTS then fail('at most ' .. MAX_HOSTS .. ' hosts per chunk, got ' .. #hosts) end
if have + #hosts > MAX_POOL_HOSTS then fail('a candidate list holds at most ' .. MAX_POOL_HOSTS .. ' hosts') end
if have > 0 and redis.call('SCARD', staging) ~= have then fail('staging set does not hold the ' .. have .. ' hosts sent: start over') end
if have == 0 then redis.call('DEL', staging) end

local now = now_ms()
call_chunked('SADD', staging, {}, hosts, itself)
call_chunked('ZADD', k.load, { 'NX' }, hosts, function(h) return { 0, h } end)
call_chunked('ZADD', k.seen, {}, hosts, function(h) return { now, h } end)
keep_pool_alive({ k.load, k.leases, k.lease, k.seen }, pool_ttl_ms)
if last == 1 then
  redis.call('RENAME', staging, k.cand)
  redis.call('PEXPIRE', k.cand, cand_ttl_ms)
  return redis.call('SCARD', k.cand)
end
-- An abandoned sync (the VM went away) leaves nothing for long.
redis.call('PEXPIRE', staging, cand_ttl_ms)
return redis.call('SCARD', staging)
