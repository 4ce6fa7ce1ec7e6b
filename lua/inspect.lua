-- inspect.lua (read-only): current load of hosts, for endpoint_metrics and debugging.
-- KEYS: 1 load. ARGV: hosts (none = every host in the pool, O(N): debugging only).
-- Returns a flat array host, load (both strings) for the given hosts present in the pool, in
-- argument order; absent hosts are left out.

local k_load = KEYS[1]
if not k_load then fail('inspect needs key load') end
if #ARGV > MAX_HOSTS then fail('at most ' .. MAX_HOSTS .. ' hosts') end
if #ARGV == 0 then
  return redis.call('ZRANGE', k_load, 0, -1, 'WITHSCORES')
end
local out = {}
for _, host in ipairs(ARGV) do
  local score = redis.call('ZSCORE', k_load, host)
  if score then
    out[#out + 1] = host
    out[#out + 1] = score
  end
end
return out
