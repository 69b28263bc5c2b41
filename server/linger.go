package server

import (
	"net"
	"sync"
	"time"
)

// Lingering close, as nginx's lingering_close: a refusal (a 413, a 401 before the body was
// read) is answered at once and the connection closed without reading the rest of the body.
// Closing a socket with unread bytes makes the kernel send a reset, and a reset makes the
// client's kernel throw away the answer it has not read yet: a client still sending its body
// would see "connection reset" instead of the 413. So a connection is closed in two steps:
// its sending half at once (the answer, then end of stream, reaches the client), then, after
// reading and dropping what the client still sends for a short while, the whole of it.
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 16 << 20
)

// Serve serves the application on ln, closing its connections lingeringly.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(lingerListener{ln})
}

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, nil
}

// lingerConn is a TCP connection whose Close half-closes it and drains it in the background;
// the drain is bounded in time and bytes, and holds one small buffer.
type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

var lingerBuffers = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

func (c *lingerConn) Close() error {
	var err error
	c.once.Do(func() {
		if c.TCPConn.CloseWrite() != nil {
			err = c.TCPConn.Close()
			return
		}
		go func() {
			defer c.TCPConn.Close()
			if c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime)) != nil {
				return
			}
			bp := lingerBuffers.Get().(*[]byte)
			defer lingerBuffers.Put(bp)
			for n := 0; n < lingerBytes; {
				m, err := c.TCPConn.Read(*bp)
				n += m
				if err != nil {
					return
				}
			}
		}()
	})
	return err
}
