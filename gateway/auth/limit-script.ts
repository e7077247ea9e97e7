// The Lua scripts that admit and settle requests against every scope's limits in ONE Redis round
// trip each, atomically across all gateways. Rates use a sliding window: the previous minute's
// count weighted by how much of it still lies within the last 60 s, plus the current minute's.
// Concurrency is counted per lease: an admission may reserve more than one request and slot at once —
// a lease the gateway then spends without asking (gateway/auth/limit-lease.ts). Each scope keeps its
// leases that hold slots, scored by when they lapse (`:leases`, a sorted set: a gateway that dies
// holding slots frees them then), and for a lease of more than one slot how many it holds past its
// first (`:held`, a hash, with their sum in field '*'). So a lease of 256 costs Redis a few commands
// per scope, not one per slot, and a lease of one no more than a set member (docs/benchmarks-history.md,
// stop 22). Settling gives back what a lease did not use. gateway/auth/local-limits.ts is the same
// logic in memory.

/**
 * KEYS[i]: the scope's key prefix. ARGV: now ms, window ms, lease id, slot ttl ms, month, requests
 * wanted, then per scope: rpm, tpm, concurrent, budget micros, GPU budget in GPU-seconds (-1 for none).
 * Checks one request as it would be alone; admitted, it grants g = min(wanted, the room every rate
 * and slot limit has left) requests, counted in this minute, and g slots held by the lease id.
 * Returns {1, g, then per scope: tokens in the window, spent this month, GPU-seconds this month} when admitted, else
 * {0, scope index (1-based), reason, retry ms (-1: none)}.
 */
export const ADMIT_LUA = `
local now, w, id, ttl, month, want = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local cur = math.floor(now / w)
local elapsed = now - cur * w
local function counts(prefix, kind)
  return tonumber(redis.call('GET', prefix .. ':' .. kind .. ':' .. cur) or '0'),
         tonumber(redis.call('GET', prefix .. ':' .. kind .. ':' .. (cur - 1)) or '0')
end
-- ms until prev * (1 - e / w) + c + 1 <= limit, e being the time into a window
local function wait(c, p, limit)
  if limit < 1 then return w end
  if c + 1 > limit then
    if c == 0 then return w - elapsed end
    return (w - elapsed) + math.ceil(w * (1 - (limit - 1) / c))
  end
  return math.ceil(w * (1 - (limit - 1 - c) / p)) - elapsed
end
-- Slots the scope's live leases hold: one for each lease in :leases, plus what :held counts for a
-- lease of more than one (its slots past the first; field '*', their sum). A lease past its lapse
-- time (its gateway died) goes, and its slots with it.
local function holding(prefix)
  local leases, held = prefix .. ':leases', prefix .. ':held'
  local gone = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #gone > 0 then
    for _, lease in ipairs(gone) do
      local more = redis.call('HGET', held, lease)
      if more then
        redis.call('HDEL', held, lease)
        redis.call('HINCRBY', held, '*', -tonumber(more))
      end
    end
    redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  end
  return redis.call('ZCARD', leases) + tonumber(redis.call('HGET', held, '*') or '0')
end
-- Per scope index, the slots its leases hold now (set where the scope limits concurrency).
local inUse = {}
for i, prefix in ipairs(KEYS) do
  local base = 6 + (i - 1) * 5
  local rpm, tpm, conc, budget, gpuBudget = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
  for _, rate in ipairs({{'rpm', rpm}, {'tpm', tpm}}) do
    if rate[2] >= 0 then
      local c, p = counts(prefix, rate[1])
      if p * (w - elapsed) / w + c + 1 > rate[2] then return {0, i, rate[1], math.max(wait(c, p, rate[2]), 1)} end
    end
  end
  if conc >= 0 then
    inUse[i] = holding(prefix)
    if inUse[i] >= conc then return {0, i, 'concurrent', 1000} end
  end
  if budget >= 0 and tonumber(redis.call('GET', prefix .. ':spent:' .. month) or '0') >= budget then
    return {0, i, 'budget', -1}
  end
  if gpuBudget >= 0 and tonumber(redis.call('GET', prefix .. ':gpu:' .. month) or '0') >= gpuBudget then
    return {0, i, 'gpu_budget', -1}
  end
end
local g = want
local out = {1, 0}
for i, prefix in ipairs(KEYS) do
  local base = 6 + (i - 1) * 5
  local rpm, conc = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 3])
  if rpm >= 0 then
    local c, p = counts(prefix, 'rpm')
    g = math.min(g, math.floor(rpm - (p * (w - elapsed) / w + c)))
  end
  if conc >= 0 then g = math.min(g, conc - inUse[i]) end
  local c, p = counts(prefix, 'tpm')
  out[#out + 1] = math.floor(p * (w - elapsed) / w + c)
  out[#out + 1] = tonumber(redis.call('GET', prefix .. ':spent:' .. month) or '0')
  -- As a string: Lua numbers go back to the client as integers, and GPU-seconds have fractions.
  out[#out + 1] = redis.call('GET', prefix .. ':gpu:' .. month) or '0'
end
g = math.max(g, 1)
out[2] = g
for i, prefix in ipairs(KEYS) do
  local base = 6 + (i - 1) * 5
  if tonumber(ARGV[base + 1]) >= 0 then
    local k = prefix .. ':rpm:' .. cur
    redis.call('INCRBY', k, g)
    redis.call('PEXPIRE', k, 2 * w + 1000)
  end
  if tonumber(ARGV[base + 3]) >= 0 then
    -- Each key expires ttl after the last admission that wrote it, when every lease in it has lapsed.
    redis.call('ZADD', prefix .. ':leases', now + ttl, id)
    redis.call('PEXPIRE', prefix .. ':leases', ttl)
    if g > 1 then
      redis.call('HSET', prefix .. ':held', id, g - 1)
      redis.call('HINCRBY', prefix .. ':held', '*', g - 1)
      redis.call('PEXPIRE', prefix .. ':held', ttl)
    end
  end
end
return out
`;

/**
 * KEYS[i]: the scope's key prefix. ARGV: now ms, window ms, tokens, cost micros, month, then the
 * minute bucket and count of leased requests given back unused (0 0: none), GPU-seconds, then triples of a lease
 * id, how many of its slots to free, and where it holds them: one character per KEYS entry, '0'
 * none there (no concurrency limit), '1' its only slot, '2' more than one (counted in :held). So a
 * scope without slots costs nothing and a lease of one a single ZREM. A lease that lapsed meanwhile
 * has nothing left to free.
 * Adds tokens to the minute and cost and GPU-seconds to the month at every scope; a give-back only touches counts
 * that exist (a scope without a rate limit has none).
 */
export const SETTLE_LUA = `
local now, w, tokens, cost, month = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local bucket, unused, gpu = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local cur = math.floor(now / w)
for n = 9, #ARGV - 2, 3 do
  local lease, freed, where = ARGV[n], tonumber(ARGV[n + 1]), ARGV[n + 2]
  for i, prefix in ipairs(KEYS) do
    local held = string.sub(where, i, i)
    -- Its only slot: the lease goes (ZREM of a lease that lapsed and went already does nothing).
    if held == '1' then redis.call('ZREM', prefix .. ':leases', lease) end
    if held == '2' then
      local more = tonumber(redis.call('HGET', prefix .. ':held', lease) or '0')
      local keeps = more + 1 - freed
      if keeps <= 0 then
        -- All of them: the lease goes (ZREM says 0 when it lapsed and went already).
        if redis.call('ZREM', prefix .. ':leases', lease) == 1 and more > 0 then
          redis.call('HDEL', prefix .. ':held', lease)
          redis.call('HINCRBY', prefix .. ':held', '*', -more)
        end
      else
        if keeps == 1 then redis.call('HDEL', prefix .. ':held', lease) else redis.call('HINCRBY', prefix .. ':held', lease, -freed) end
        redis.call('HINCRBY', prefix .. ':held', '*', -freed)
      end
    end
  end
end
for _, prefix in ipairs(KEYS) do
  if unused > 0 then
    local k = prefix .. ':rpm:' .. bucket
    local left = tonumber(redis.call('GET', k) or '0')
    if left > 0 then redis.call('DECRBY', k, math.min(left, unused)) end
  end
  if tokens > 0 then
    local k = prefix .. ':tpm:' .. cur
    redis.call('INCRBY', k, tokens)
    redis.call('PEXPIRE', k, 2 * w + 1000)
  end
  if cost > 0 then
    local k = prefix .. ':spent:' .. month
    redis.call('INCRBY', k, cost)
    redis.call('EXPIRE', k, 40 * 86400)
  end
  if gpu > 0 then
    local k = prefix .. ':gpu:' .. month
    redis.call('INCRBYFLOAT', k, ARGV[8])
    redis.call('EXPIRE', k, 40 * 86400)
  end
end
return 1
`;
