-- model.lua: folds latency observations into the shared per-host statistics of predicted_latency
-- (exponentially forgotten least squares: every gateway adds what it observed, every gateway reads
-- the same sums, so the fleet learns one model per host).
-- KEYS: 1 the model hash (ns:lat; field "<host>|b" for the base TTFT, "<host>|p" for TPOT, "<host>|c"
--       for the trust in the prefix tree there).
-- ARGV: 1 ttl_ms (of the hash), then groups: field, decay (0 < d <= 1: weight kept by the field's
--       old sums per observation), k (1..4 features), y (observed), x1..xk.
-- A field holds k(k+1)/2 + k + 2 numbers separated by spaces: the upper triangle of sum(x x^T)
-- (row-major), sum(x y), sum(y y), and the weight n. A field of another length is restarted.
-- Returns the number of groups folded. Errors (nothing written) on malformed arguments.
local ttl = int_arg(ARGV[1], 'ttl_ms', 1)

-- Validate every group before writing anything.
local groups = {}
local i = 2
while i <= #ARGV do
  local field = ARGV[i]
  if field == nil or field == '' then fail('field must not be empty') end
  local decay = tonumber(ARGV[i + 1])
  if decay == nil or decay <= 0 or decay > 1 then fail('decay must be in (0, 1], got ' .. tostring(ARGV[i + 1])) end
  local k = tonumber(ARGV[i + 2])
  if k == nil or k ~= math.floor(k) or k < 1 or k > 4 then fail('k must be an integer in 1..4, got ' .. tostring(ARGV[i + 2])) end
  local y = tonumber(ARGV[i + 3])
  if y == nil or y ~= y then fail('y must be a number') end
  local x = {}
  for j = 1, k do
    x[j] = tonumber(ARGV[i + 3 + j])
    if x[j] == nil or x[j] ~= x[j] then fail('x' .. j .. ' must be a number') end
  end
  groups[#groups + 1] = { field = field, decay = decay, k = k, y = y, x = x }
  i = i + 4 + k
end

for g = 1, #groups do
  local grp = groups[g]
  local k = grp.k
  local size = k * (k + 1) / 2 + k + 2
  local s = {}
  local cur = redis.call('HGET', KEYS[1], grp.field)
  if cur then
    for v in string.gmatch(cur, '%S+') do s[#s + 1] = tonumber(v) or 0 end
  end
  if #s ~= size then
    s = {}
    for j = 1, size do s[j] = 0 end
  end
  for j = 1, size do s[j] = s[j] * grp.decay end
  local at = 1
  for r = 1, k do
    for c = r, k do
      s[at] = s[at] + grp.x[r] * grp.x[c]
      at = at + 1
    end
  end
  for r = 1, k do
    s[at] = s[at] + grp.x[r] * grp.y
    at = at + 1
  end
  s[at] = s[at] + grp.y * grp.y
  s[at + 1] = s[at + 1] + 1
  local out = {}
  for j = 1, size do out[j] = string.format('%.10g', s[j]) end
  redis.call('HSET', KEYS[1], grp.field, table.concat(out, ' '))
end
redis.call('PEXPIRE', KEYS[1], ttl)
return #groups
