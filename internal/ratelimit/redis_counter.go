package ratelimit

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript counts one event in every window (KEYS, with ARGV the limit
// and the window's length in milliseconds of each) or in none: it returns
// {0, 0} when it counted, else {i, ms} for the first full window i
// (1-based) and the milliseconds until it ends. A window starts with its
// first event (INCR to 1 sets its expiry), as in Counts.
var takeScript = redis.NewScript(`
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n >= tonumber(ARGV[2*i-1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      ttl = tonumber(ARGV[2*i])
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
    return {i, ttl}
  end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[2*i])
  end
end
return {0, 0}
`)

// giveScript takes back one event from every window that still counts
// one (DECR keeps the expiry; a window that ended is not recreated).
var giveScript = redis.NewScript(`
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n > 0 then
    redis.call('DECR', KEYS[i])
  end
end
return 0
`)

// countPrefix namespaces the counts among linkqr's keys.
const countPrefix = keyPrefix + "count:"

// Take implements Counter through Redis, so that every instance counts
// in the same windows: one script, atomic in Redis, counted before the
// caller acts. While Redis is unavailable the in-process counts decide,
// as for rate limits (Redis.AllowN), and every event Redis counts is
// counted in-process too. It returns an error only when ctx ends first.
func (r *Redis) Take(ctx context.Context, windows ...Window) (int, time.Duration, error) {
	state := r.state.Load()
	if isDown(state) {
		if r.now().UnixNano() < r.retryAt.Load() || !r.probing.CompareAndSwap(false, true) {
			r.fallbacks.Add(1)
			return r.counts.Take(ctx, windows...)
		}
		defer r.probing.Store(false)
	}
	keys, args := redisWindows(windows)
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	res, err := takeScript.Run(cctx, r.client, keys, args...).Int64Slice()
	cancel()
	if err == nil && len(res) != 2 {
		err = redis.Nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		r.failed(state, err)
		r.fallbacks.Add(1)
		return r.counts.Take(ctx, windows...)
	}
	r.answered(state)
	if res[0] == 0 {
		r.counts.charge(windows...)
		return -1, 0, nil
	}
	return int(res[0] - 1), time.Duration(res[1]) * time.Millisecond, nil
}

// Give implements Counter through Redis (and the in-process counts, which
// Take charged). While Redis is unavailable the event stays counted there
// until its window ends. It returns an error only when ctx ends first.
func (r *Redis) Give(ctx context.Context, windows ...Window) error {
	_ = r.counts.Give(ctx, windows...)
	state := r.state.Load()
	if isDown(state) && r.now().UnixNano() < r.retryAt.Load() {
		return nil
	}
	keys, _ := redisWindows(windows)
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	err := giveScript.Run(cctx, r.client, keys).Err()
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.failed(state, err)
		return nil
	}
	r.answered(state)
	return nil
}

// redisWindows are the script's keys and arguments for windows.
func redisWindows(windows []Window) (keys []string, args []any) {
	keys = make([]string, len(windows))
	args = make([]any, 0, 2*len(windows))
	for i, w := range windows {
		keys[i] = countPrefix + w.Key
		args = append(args, strconv.Itoa(max(w.Limit, 0)), strconv.FormatInt(max(w.Length.Milliseconds(), 1), 10))
	}
	return keys, args
}
