// Package throttle slows down guessing: it counts failed attempts (a wrong password, a wrong
// client secret) per key in a leaky bucket and refuses a key whose bucket is full until enough
// of it has leaked away. Successful attempts cost nothing, so a client that knows its secret is
// never slowed down by its own traffic; only a run of failures is.
//
// The counts live in the memory of one node: a cluster of n nodes lets an attacker n times the
// rate. That is enough against guessing (the budget stays a few attempts a minute) without a
// shared store on the authentication path.
package throttle

import (
	"math"
	"sync"
	"time"
)

// Limiter is a set of leaky buckets, one per key: each failure adds one to its key's bucket,
// each Leak period takes one away, and a key whose bucket holds Burst failures is refused.
// The zero value is not usable; use New.
type Limiter struct {
	burst   time.Duration // the bucket's capacity, as leak time: burst failures × leak
	leak    time.Duration
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucket holds its failures as the time they take to leak away (failures × leak), so that
// waits come out exact.
type bucket struct {
	level time.Duration
	at    time.Time
}

// New returns a limiter that allows burst failures per key, then one more per leak period;
// it tracks at most maxKeys keys (the emptiest are forgotten first when it is full, so a flood
// of new keys cannot grow memory without bound).
func New(burst int, leak time.Duration, maxKeys int) *Limiter {
	return &Limiter{burst: time.Duration(burst) * leak, leak: leak, maxKeys: maxKeys, now: time.Now, buckets: map[string]*bucket{}}
}

// level is the key's bucket after leaking up to now; the caller holds mu.
func (l *Limiter) level(key string, now time.Time) time.Duration {
	b, ok := l.buckets[key]
	if !ok {
		return 0
	}
	lv := b.level - now.Sub(b.at)
	if lv <= 0 {
		delete(l.buckets, key)
		return 0
	}
	b.level, b.at = lv, now
	return lv
}

// Wait is how long key must wait before its next attempt is allowed: zero when it may try now.
func (l *Limiter) Wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lv := l.level(key, l.now())
	return max(lv+l.leak-l.burst, 0)
}

// Fail records a failed attempt by key.
func (l *Limiter) Fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	lv := l.level(key, now)
	if _, ok := l.buckets[key]; !ok && len(l.buckets) >= l.maxKeys {
		l.evict(now)
	}
	l.buckets[key] = &bucket{level: min(lv+l.leak, l.burst+l.leak), at: now}
}

// Forget clears key's failures (its owner has just proved the secret).
func (l *Limiter) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.buckets, key)
}

// evict drops emptied buckets and, if the map is still full, the one with the fewest
// failures left; the caller holds mu. A full map is rare (maxKeys distinct keys failing within
// one burst's leak time), so the linear scan is cheap in practice.
func (l *Limiter) evict(now time.Time) {
	victim, least := "", time.Duration(math.MaxInt64)
	for k := range l.buckets {
		lv := l.level(k, now)
		if lv == 0 {
			continue
		}
		if lv < least {
			victim, least = k, lv
		}
	}
	if len(l.buckets) >= l.maxKeys && victim != "" {
		delete(l.buckets, victim)
	}
}

// Guard throttles attempts to prove a secret both per account (the key or user name tried,
// against a guess spread over many addresses) and per source (the client's address, against
// one address trying many accounts).
type Guard struct {
	Account *Limiter
	Source  *Limiter
}

// NewGuard returns the guard Lectern uses for sign-in, API credentials and OAuth client
// secrets: an account may fail 10 times, then once every 30 seconds; a source address 30
// times, then once every 10 seconds. A person who mistypes a password a few times never
// meets it; a guesser gets a few attempts a minute.
func NewGuard() *Guard {
	return &Guard{Account: New(10, 30*time.Second, 100_000), Source: New(30, 10*time.Second, 100_000)}
}

// Wait is how long an attempt for account from source must wait: zero when it may go ahead.
func (g *Guard) Wait(account, source string) time.Duration {
	return max(g.Account.Wait(account), g.Source.Wait(source))
}

// Failed records a failed attempt.
func (g *Guard) Failed(account, source string) {
	g.Account.Fail(account)
	g.Source.Fail(source)
}

// Succeeded clears the account's failures; the source's stay, so that one address cannot
// interleave a known secret with guesses at others to keep its budget full.
func (g *Guard) Succeeded(account string) {
	g.Account.Forget(account)
}
