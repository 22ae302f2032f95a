package lualease

// The scripts run atomically on the server: no other command runs between
// their reads and their writes, which is what the seed article's
// GET-then-INCR-then-SET allocation lacked outside Lua and what its
// "first free id" never had (it only counted up, burning ids for ever).
//
// Keys, for a prefix p (the braces make every key of a prefix hash to one
// Redis Cluster slot, so the scripts may build keys from KEYS[1]):
//
//	{p}:lease:<id>  the lease: the holder's random token, with a TTL
//	{p}:node:<id>   a hash without TTL: token and holder of the latest
//	                acquirer, the node's high-water mark (mark), and
//	                "<token> <n>" of the save that stored it (saved)
//	{p}:epoch       a hash without TTL: the prefix's epoch (id), a random
//	                value made when the key is missing, and the run_id of
//	                the server process that last ran a script (run)
//	{p}:quiet       present, with a TTL, while ids taken now must not be
//	                used: TTL + Margin + MaxLead after the epoch was made
//	                or the server process changed

// guard is the start of every script that reads or makes the epoch. With
// KEYS[1] = "{p}", create (a new epoch value, or "" to never make one) and
// quiet (the quiet period in ms), it returns the prefix's epoch (false
// when there is none and create is "") and the quiet period left in ms.
//
// A missing epoch means a prefix nobody used yet, or a server that lost
// the prefix's data (restarted without persistence, FLUSHALL): holders
// the server forgot may still be issuing, so the epoch is made again and
// a quiet period starts. A run_id that changed means the server process
// changed (a restart, a failover to a replica), which may have lost the
// latest writes (snapshots, appendfsync everysec, asynchronous
// replication): a quiet period starts too, but the epoch stays, so that
// holders whose keys survived keep them.
//
// INFO is nondeterministic: Redis before 7 replicates a script that calls
// it by its effects only when asked to.
const guard = `
if redis.replicate_commands then redis.replicate_commands() end
local function guard(p, create, quiet)
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
  if not run then
    return nil, 'redislease: the server reports no run_id in INFO server'
  end
  local e = redis.call('HMGET', p .. ':epoch', 'id', 'run')
  local epoch, fresh = e[1], false
  if not epoch then
    if create == '' then
      return false, 0
    end
    epoch, fresh = create, true
    redis.call('HSET', p .. ':epoch', 'id', epoch, 'run', run)
  elseif e[2] ~= run then
    redis.call('HSET', p .. ':epoch', 'run', run)
    fresh = true
  end
  local left = redis.call('PTTL', p .. ':quiet')
  if fresh and left < tonumber(quiet) then
    redis.call('SET', p .. ':quiet', '1', 'PX', quiet)
    left = tonumber(quiet)
  end
  return epoch, math.max(left, 0)
end
`

// acquireScript takes the lowest free id of [from, to]: the first
// {p}:lease:<id> that SET NX creates (Claim asks for one id: from = to).
// KEYS[1] = "{p}"; ARGV = from, to, token, TTL in ms, holder, new epoch,
// quiet period in ms. Returns {id, epoch, quiet ms left, ""}, or, when
// every id of [from, to] is held, {-1, epoch, quiet ms left, holder of
// id to}: the holder recorded in its node hash when the hash's token is
// the lease key's, else "".
const acquireScript = guard + `
local p = KEYS[1]
local epoch, quiet = guard(p, ARGV[6], ARGV[7])
if not epoch then
  return redis.error_reply(quiet)
end
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  if redis.call('SET', p .. ':lease:' .. i, ARGV[3], 'NX', 'PX', ARGV[4]) then
    redis.call('HSET', p .. ':node:' .. i, 'token', ARGV[3], 'holder', ARGV[5])
    return {i, epoch, quiet, ''}
  end
end
local h = redis.call('HMGET', p .. ':node:' .. ARGV[2], 'token', 'holder')
local holder = ''
if h[1] and h[1] == redis.call('GET', p .. ':lease:' .. ARGV[2]) then
  holder = h[2] or ''
end
return {-1, epoch, quiet, holder}
`

// renewScript extends a lease, or takes the id again when its key is gone
// and nobody acquired the id since (the node hash still names our token).
// KEYS[1] = "{p}"; ARGV = id, token, TTL in ms, epoch, quiet period in
// ms. Returns {1, 0} renewed, {2, quiet ms left} taken again, {0, 0}
// another token holds it, {-1, 0} the key is gone and someone else
// acquired the id since, {-2, 0} the epoch is not ours: the server lost
// the prefix's data.
const renewScript = guard + `
local p = KEYS[1]
local epoch, quiet = guard(p, '', ARGV[5])
if epoch == nil then
  return redis.error_reply(quiet)
end
if epoch ~= ARGV[4] then
  return {-2, 0}
end
local lease = p .. ':lease:' .. ARGV[1]
local cur = redis.call('GET', lease)
if cur == ARGV[2] then
  redis.call('PEXPIRE', lease, ARGV[3])
  return {1, 0}
end
if cur then
  return {0, 0}
end
if redis.call('HGET', p .. ':node:' .. ARGV[1], 'token') ~= ARGV[2] then
  return {-1, 0}
end
redis.call('SET', lease, ARGV[2], 'PX', ARGV[3])
return {2, quiet}
`

// releaseScript deletes the lease key if it still holds our token.
// KEYS = lease key; ARGV = token. Returns 1 when deleted.
const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`

// saveMarkScript stores the mark only while our token holds the lease: the
// token is the fencing token. And only when it is the lease's latest save
// yet: a lease numbers its saves, and a save that arrives after a later
// one of the same token was stored (a request that stalled on the way) is
// a no-op. KEYS = lease key, node key; ARGV = token, mark, the save's
// number. Returns 1 when saved, 0 when the lease is not ours, 2 when a
// later save of ours was stored first.
const saveMarkScript = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local saved = redis.call('HGET', KEYS[2], 'saved')
if saved then
  local token, n = string.match(saved, '^(%x+) (%d+)$')
  if token == ARGV[1] and tonumber(n) >= tonumber(ARGV[3]) then
    return 2
  end
end
redis.call('HSET', KEYS[2], 'mark', ARGV[2], 'saved', ARGV[1] .. ' ' .. ARGV[3])
return 1
`

// loadMarkScript returns the latest acquirer's token and the mark.
// KEYS = node key.
const loadMarkScript = `
return redis.call('HMGET', KEYS[1], 'token', 'mark')
`

// listScript reports the held ids in [ARGV[1], ARGV[2]]: for each, the id,
// its remaining TTL in ms, the lease's token, and the node hash's token,
// holder and mark. KEYS[1] = "{p}".
const listScript = `
local p, out = KEYS[1], {}
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local k = p .. ':lease:' .. i
  local ttl = redis.call('PTTL', k)
  if ttl ~= -2 then
    local h = redis.call('HMGET', p .. ':node:' .. i, 'token', 'holder', 'mark')
    out[#out + 1] = {i, ttl, redis.call('GET', k), h[1], h[2], h[3]}
  end
end
return out
`
