package asynqq_test

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/workers/queue"
	asynqq "github.com/lectern-lms/lectern/workers/queue/asynq"
)

// loadingRedis is a stand-in Redis on loopback that answers PING but refuses every script
// with LOADING, as a restarted Redis does while it reads its append-only file back: the
// moment a soak's Redis restart hit, when the enqueue's script failed and the ping that
// followed found Redis back.
func loadingRedis(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveLoading(c)
		}
	}()
	return l.Addr().String()
}

// serveLoading answers one connection's RESP commands (arrays of bulk strings).
func serveLoading(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "*") {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		var args []string
		for range n {
			if _, err := r.ReadString('\n'); err != nil { // $len
				return
			}
			arg, err := r.ReadString('\n')
			if err != nil {
				return
			}
			args = append(args, strings.TrimSpace(arg))
		}
		var reply string
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			reply = "-ERR unknown command 'HELLO'\r\n"
		case "PING":
			reply = "+PONG\r\n"
		case "EVAL", "EVALSHA":
			reply = "-LOADING Redis is loading the dataset in memory\r\n"
		case "SADD":
			reply = ":1\r\n"
		default:
			reply = "+OK\r\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}

// TestEnqueueDuringRedisLoadingIsUnavailable: an enqueue that fails because Redis is loading
// its data after a restart is an outage (503 with Retry-After at the HTTP edge), even when
// Redis answers the ping that follows: asynq flattens the script's error into text, so the
// error chain alone cannot tell. The soak found it as a 500 on POST /api/v1/content.
func TestEnqueueDuringRedisLoadingIsUnavailable(t *testing.T) {
	q, err := asynqq.New(t.Context(), asynqq.Config{RedisURL: "redis://" + loadingRedis(t) + "/0", Queue: "loading"})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	_, err = q.Enqueue(t.Context(), &queue.Task{Type: "t", Payload: []byte("{}")})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("enqueue while Redis loads: %v; want a storage.ErrUnavailable", err)
	}
}
