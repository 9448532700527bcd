/**
 * The sliding-window log, for every rate-limit call of one event-loop turn in ONE script call
 * (atomic in Redis, time from Redis `TIME`): each key is a sorted set of its admitted calls
 * (score: the call's time in ms), so any number of replicas sharing Redis admit at most `limit`
 * calls in any window of `window` ms.
 *
 * KEYS: one per call, in the order the calls were made (a key may repeat: the calls of one
 * integration in the same turn). ARGV[1]: the window (ms); ARGV[2]: a tag unique to this
 * script call (instance and batch number), which with the call's index makes each logged
 * member unique; ARGV[2 + i]: the i-th call's limit, negative when the call is only checked
 * and not logged (a budget that counts a call only once its outcome is known checks before
 * and logs after); ARGV[2 + n + i], when given: the i-th call's weight (default 1), the units it
 * takes all or nothing (a bulk job counts once per item: admitted only when all fit, then logged
 * as that many members).
 *
 * Returns {now, allowed_1, remaining_1, reset_1, allowed_2, …}: reset is when the oldest
 * logged call leaves the window, i.e. when at least one more call will be admitted.
 *
 * Each distinct key is read once (expired entries removed, counted, oldest entry) and written
 * once (the admitted calls' members in one ZADD, one PEXPIRE): the calls of one key are decided
 * in order against a running count, which is what a script per call did, with one clock
 * reading for all of them. Only admitted calls are logged (a client hammering while limited
 * does not extend its own penalty); a key that gets one gets a TTL of one window from now,
 * which outlives its newest entry's time in the window. The data shape and member format are
 * those of the script-per-call limiter before it (`<time>:<instance>:<seq>` members there,
 * `<instance>:<batch>:<index>` here), so replicas of both versions count in the same logs
 * during a rolling upgrade.
 */
export const SLIDING_WINDOW_BATCH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local tag = ARGV[2]
local out = {now}
local seen = {}
local order = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local s = seen[key]
  if not s then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    local count = redis.call('ZCARD', key)
    local oldest = now
    if count > 0 then oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) end
    s = {count = count, oldest = oldest, add = {}}
    seen[key] = s
    order[#order + 1] = key
  end
  local limit = tonumber(ARGV[2 + i])
  local weight = tonumber(ARGV[2 + #KEYS + i]) or 1
  local record = limit >= 0
  if not record then limit = -limit end
  local allowed = 0
  if s.count + weight <= limit then
    allowed = 1
    if record then
      s.count = s.count + weight
      for w = 1, weight do
        s.add[#s.add + 1] = now
        if w == 1 then s.add[#s.add + 1] = tag .. i else s.add[#s.add + 1] = tag .. i .. '.' .. w end
      end
    end
  end
  out[#out + 1] = allowed
  out[#out + 1] = limit - s.count
  out[#out + 1] = s.oldest + window
end
for _, key in ipairs(order) do
  local add = seen[key].add
  if #add > 0 then
    redis.call('ZADD', key, unpack(add))
    redis.call('PEXPIRE', key, window)
  end
end
return out
`;
