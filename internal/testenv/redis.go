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
	redisNext = firstDB
)

// Databases 1-15 belong to the queue contract suite; scripts/services.sh starts Redis with 64.
const firstDB, lastDB = 16, 63

// FreshRedis returns a URL for an empty Redis database on the server at baseURL. Databases
// 16-63 are handed out in turn inside one test binary and flushed before use.
func FreshRedis(t testing.TB, baseURL string) string {
	t.Helper()
	redisMu.Lock()
	db := redisNext
	redisNext++
	if redisNext > lastDB {
		redisNext = firstDB
	}
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
