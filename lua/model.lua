-- model.lua: folds latency observations into the shared per-host statistics of predicted_latency
-- (exponentially forgotten least squares: every gateway adds what it observed, every gateway reads
-- the same sums, so the fleet learns one model per host).
-- KEYS: 1 the model hash (ns:lat; field "<host>|b" for the base TTFT, "<host>|p" for TPOT, "<host>|c"
--       for the trust in the prefix tree there), 2 each host's last observation (ns:lat:at, a
--       sorted set: host -> Redis time in ms).
-- ARGV: 1 ttl_ms (of both keys), 2 idle_ms (a host observed by no one for longer is forgotten),
--       then groups: field, decay (0 < d <= 1: weight kept by the field's old sums per
--       observation), k (1..4 features), y (observed), x1..xk.
-- A field holds k(k+1)/2 + k + 2 numbers separated by spaces: the upper triangle of sum(x x^T)
-- (row-major), sum(x y), sum(y y), and the weight n. A field of another length is restarted.
-- Pods come and go with new addresses while the hash lives on (every observation renews its TTL),
-- so each call also deletes the fields of at most FORGET_MAX hosts idle past idle_ms: the hash
-- holds the hosts observed lately, and so does every gateway's read of it (HGETALL). Hosts whose
-- fields have no time yet (the set missing: written by an earlier version, or lost) are given
-- this call's time once.
-- No field ever holds a number that is not finite (Redis's Lua reads "inf" and "nan" back as
-- numbers, and inf x decay stays inf: the host's sums would be lost for good): a group whose own
-- products overflow is malformed, a field holding such a number restarts, and so does a field whose
-- sums this observation would overflow (from this observation alone).
-- Returns the number of groups folded. Errors (nothing written) on malformed arguments.
local FORGET_MAX = 16
local SUFFIXES = { 'b', 'p', 'c', 't' } -- 't': the fields of an earlier version
local function finite(v) return v ~= nil and v == v and v ~= math.huge and v ~= -math.huge end

-- Folds the observation `grp` into the sums `s` (decayed first).
local function fold(s, grp)
  local k = grp.k
  for j = 1, #s do s[j] = s[j] * grp.decay end
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
end

local function all_finite(s)
  for j = 1, #s do if not finite(s[j]) then return false end end
  return true
end

local function zeros(size)
  local s = {}
  for j = 1, size do s[j] = 0 end
  return s
end

local ttl = int_arg(ARGV[1], 'ttl_ms', 1)
local idle = int_arg(ARGV[2], 'idle_ms', 1)

-- Validate every group before writing anything.
local groups = {}
local i = 3
while i <= #ARGV do
  local field = ARGV[i]
  if field == nil or field == '' then fail('field must not be empty') end
  local decay = tonumber(ARGV[i + 1])
  if decay == nil or decay <= 0 or decay > 1 then fail('decay must be in (0, 1], got ' .. tostring(ARGV[i + 1])) end
  local k = tonumber(ARGV[i + 2])
  if k == nil or k ~= math.floor(k) or k < 1 or k > 4 then fail('k must be an integer in 1..4, got ' .. tostring(ARGV[i + 2])) end
  local y = tonumber(ARGV[i + 3])
  -- Finite only: one inf (a NaN is refused too) would make the host's sums NaN for good.
  if not finite(y) then fail('y must be a finite number') end
  local x = {}
  for j = 1, k do
    x[j] = tonumber(ARGV[i + 3 + j])
    if not finite(x[j]) then fail('x' .. j .. ' must be a finite number') end
  end
  local grp = { field = field, decay = decay, k = k, y = y, x = x }
  -- Its products too (1e200 is finite, its square is not): the sums of this observation alone,
  -- also what a field restarts from.
  grp.alone = zeros(k * (k + 1) / 2 + k + 2)
  fold(grp.alone, grp)
  if not all_finite(grp.alone) then fail('the products of y and x must be finite numbers') end
  groups[#groups + 1] = grp
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
  if #s ~= size or not all_finite(s) then
    s = grp.alone
  else
    fold(s, grp)
    if not all_finite(s) then s = grp.alone end
  end
  local out = {}
  for j = 1, size do out[j] = string.format('%.10g', s[j]) end
  redis.call('HSET', KEYS[1], grp.field, table.concat(out, ' '))
end
local now = now_ms()
-- Stamps each host of `fields` (a host's fields are "<host>|<one letter>"; the plugin writes no
-- other) once with `now`.
local function stamp(fields)
  local seen = {}
  for _, field in ipairs(fields) do
    local host = string.match(field, '^(.*)|.$')
    if host and not seen[host] then
      seen[host] = true
      redis.call('ZADD', KEYS[2], now, host)
    end
  end
end
if redis.call('EXISTS', KEYS[2]) == 0 then stamp(redis.call('HKEYS', KEYS[1])) end
local written = {}
for g = 1, #groups do written[g] = groups[g].field end
stamp(written)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - idle, 'LIMIT', 0, FORGET_MAX)
for _, host in ipairs(gone) do
  local fields = {}
  for s = 1, #SUFFIXES do fields[s] = host .. '|' .. SUFFIXES[s] end
  redis.call('HDEL', KEYS[1], unpack(fields))
  redis.call('ZREM', KEYS[2], host)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return #groups
