package tcpproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestHTTP1Counts: through the proxy, an HTTP/1 client's requests and the
// server's responses are counted exactly, bodies of every shape included
// (a Content-Length body, a chunked one, none), on one kept-alive
// connection.
func TestHTTP1Counts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/chunked":
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "part %d\n", i)
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	p, err := New(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cl := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	const n = 30
	for i := 0; i < n; i++ {
		path := []string{"/plain", "/chunked", "/empty"}[i%3]
		var body io.Reader
		method := "GET"
		if i%2 == 1 {
			method, body = "PUT", strings.NewReader(strings.Repeat("x", i*100))
		}
		req, _ := http.NewRequest(method, "http://"+p.Addr()+path, body)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitFor(t, "every response counted", func() bool { return p.Counts().Messages[Reply] >= n })
	if c := p.Counts(); c.Messages != [2]int64{n, n} || c.Unframed != 0 || c.Conns != 1 || c.Protocol != "http/1" {
		t.Errorf("counts %+v; want %d requests and responses on one framed connection", c, n)
	}
}

// TestGRPCCounts: through the proxy, a gRPC client's calls (HTTP/2) are
// counted as messages each way.
func TestGRPCCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(ln)
	defer gs.Stop()
	p, err := New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cc, err := grpc.NewClient(p.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	const n = 25
	for i := 0; i < n; i++ {
		if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if c := p.Counts(); c.Messages != [2]int64{n, n} || c.Unframed != 0 || c.Protocol != "http/2" {
		t.Errorf("counts %+v; want %d calls each way", c, n)
	}
}

// TestHTTP1FramerSplits: the HTTP/1 framer counts the same messages however
// the stream is cut.
func TestHTTP1FramerSplits(t *testing.T) {
	replies := "HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nwiki\r\n5\r\npedia\r\n0\r\nTrailer: 1\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nno\n"
	for step := 1; step <= len(replies); step++ {
		var proto atomic.Uint32
		proto.Store(protoHTTP1)
		f := framer{proto: &proto}
		got := 0
		for i := 0; i < len(replies); i += step {
			m, _, gaveUp := f.feed([]byte(replies[i:min(i+step, len(replies))]), Reply, false)
			if gaveUp {
				t.Fatalf("step %d: gave up at %d", step, i)
			}
			got += m
		}
		if got != 4 {
			t.Fatalf("step %d: %d responses, want 4 (the 100 Continue answers nothing)", step, got)
		}
	}
	if sniff([]byte("GET / HTTP/1.1\r\n")) != protoHTTP1 || sniff([]byte(h2Preface[:10])) != protoH2 || sniff([]byte("\x16\x03\x01")) != protoNone {
		t.Error("sniff misnamed a protocol")
	}
	if !bytes.HasPrefix([]byte(h2Preface), []byte("PRI")) {
		t.Error("preface")
	}
}
