-- prefix_write.lua: points prefix-tree levels at a host (endpoint_metrics with scoring: weighted and
-- prefixWeight > 0 records where a conversation went, in the same tree prefix_cache uses).
-- KEYS: the level keys (shallowest first; one hash tag, like every key of the pool; at most 256,
-- each at most 512 bytes).
-- ARGV: 1 host, 2 key_ttl_s.
-- Returns the number of levels written. Errors (nothing written) on malformed arguments.
local host = ARGV[1]
check_host(host, 'host')
local ttl = int_arg(ARGV[2], 'key_ttl_s', 1, MAX_KEY_TTL_S)
if #KEYS > MAX_LEVELS then fail('at most ' .. MAX_LEVELS .. ' level keys') end
for i = 1, #KEYS do check_key(KEYS[i]) end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], host, 'EX', ttl)
end
return #KEYS
