-- inspect.lua (read-only): current load of hosts, for endpoint_metrics and debugging.
-- KEYS: 1 load. ARGV: at most MAX_HOSTS (500) hosts; none = the MAX_HOSTS least-loaded hosts of
-- the pool (debugging; a larger pool is read by ZRANGE in pages, outside this script).
-- Returns a flat array host, load (both strings) for the given hosts present in the pool, in
-- argument order; absent hosts are left out.

local k_load = KEYS[1]
if not k_load then fail('inspect needs key load') end
if #ARGV > MAX_HOSTS then fail('at most ' .. MAX_HOSTS .. ' hosts') end
if #ARGV == 0 then
  return redis.call('ZRANGE', k_load, 0, MAX_HOSTS - 1, 'WITHSCORES')
end
local scores = call_chunked('ZMSCORE', k_load, {}, ARGV, itself)
local out = {}
for i, host in ipairs(ARGV) do
  if scores[i] then
    out[#out + 1] = host
    out[#out + 1] = scores[i]
  end
end
return out
