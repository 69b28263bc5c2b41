package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Databases 1-15 belong to the queue contract suite; scripts/services.sh starts Redis with 64.
const firstDB, lastDB = 16, 63

// FreshRedis returns a URL for an empty Redis database on the server at baseURL. Databases
// 16-63 are claimed with a lease key in database 0 (SET NX), so test binaries running at the
// same time against one server — packages in parallel, or several checkouts — never share
// or flush each other's database; the lease is released when the test ends.
func FreshRedis(t testing.TB, baseURL string) string {
	t.Helper()
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/0"
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c0 := redis.NewClient(opt)
	defer c0.Close()
	tok := make([]byte, 8)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	n := lastDB - firstDB + 1
	start, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	for i := 0; i < n; i++ {
		db := firstDB + (int(start.Int64())+i)%n
		key := fmt.Sprintf("lectern-test:db-lease:%d", db)
		ok, err := c0.SetNX(ctx, key, token, 2*time.Hour).Result()
		if err != nil {
			t.Fatalf("claim redis db %d: %v", db, err)
		}
		if !ok {
			continue
		}
		t.Cleanup(func() {
			c := redis.NewClient(opt)
			defer c.Close()
			// Only our own lease: compare and delete in one step.
			_ = c.Eval(context.Background(), `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`, []string{key}, token).Err()
		})
		u.Path = fmt.Sprintf("/%d", db)
		dopt, _ := redis.ParseURL(u.String())
		c := redis.NewClient(dopt)
		defer c.Close()
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatalf("flush redis db %d: %v", db, err)
		}
		return u.String()
	}
	t.Fatalf("no free Redis database among %d-%d: every one is leased by a running test", firstDB, lastDB)
	return ""
}
