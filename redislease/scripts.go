package redislease

import "github.com/redis/go-redis/v9"

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
//	                acquirer, and the node's high-water mark (mark)

// acquireScript takes the lowest free id: the first {p}:lease:<id> that
// SET NX creates. KEYS[1] = "{p}"; ARGV = max id, token, TTL in ms, holder.
// Returns the id, or -1 when every id is held.
var acquireScript = redis.NewScript(`
local p = KEYS[1]
for i = 0, tonumber(ARGV[1]) do
  if redis.call('SET', p .. ':lease:' .. i, ARGV[2], 'NX', 'PX', ARGV[3]) then
    redis.call('HSET', p .. ':node:' .. i, 'token', ARGV[2], 'holder', ARGV[4])
    return i
  end
end
return -1
`)

// renewScript extends a lease, or takes the id again when its key is gone
// and nobody acquired the id since (the node hash still names our token).
// KEYS = lease key, node key; ARGV = token, TTL in ms.
// Returns 1 renewed, 2 taken again, 0 another token holds it, -1 the key
// is gone and someone else acquired the id since.
var renewScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then
  return 0
end
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[1] then
  return -1
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
`)

// releaseScript deletes the lease key if it still holds our token.
// KEYS = lease key; ARGV = token. Returns 1 when deleted.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// saveMarkScript stores the mark only while our token holds the lease: the
// token is the fencing token. KEYS = lease key, node key; ARGV = token,
// mark. Returns 1 when saved, 0 when the lease is not ours.
var saveMarkScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[2], 'mark', ARGV[2])
return 1
`)

// loadMarkScript returns the latest acquirer's token and the mark.
// KEYS = node key.
var loadMarkScript = redis.NewScript(`
return redis.call('HMGET', KEYS[1], 'token', 'mark')
`)

// listScript reports the held ids in [ARGV[1], ARGV[2]]: for each, the id,
// its remaining TTL in ms, the lease's token, and the node hash's token,
// holder and mark. KEYS[1] = "{p}".
var listScript = redis.NewScript(`
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
`)
