package testenv

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

var (
	redisMu   sync.Mutex
	redisNext = 1
)

// FreshRedis returns a URL for an empty Redis database on the server at baseURL. Databases
// 1-15 are handed out in turn inside one test binary and flushed before use; packages run in
// parallel binaries, so each package should pass its own base database in baseURL's path
// only when it needs isolation from others (the queue tests use key prefixes of their own).
func FreshRedis(t testing.TB, baseURL string) string {
	t.Helper()
	redisMu.Lock()
	db := redisNext
	redisNext = redisNext%15 + 1
	redisMu.Unlock()
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = fmt.Sprintf("/%d", db)
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("flush redis db %d: %v", db, err)
	}
	return u.String()
}
