package demo

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// Bounded output, against the demo in a child process (see wsmem_test.go): what
// the server holds for a connection's output is bounded whatever the response size
// and however slowly the client reads. One child per engine serves every case: the
// gnet child serves plaintext with gnet and TLS with the std engine, the std child
// plaintext with the std engine.

// envEngine names the child's plaintext engine (Config.Engine); the child then
// serves TLS too, as under envServeTLS=1.
const envEngine = "CELERIS_DEMO_CHILD_ENGINE"

// perConnBound is the RSS growth per connection the output tests accept.
const perConnBound = 8 << 20

// outTransport is one listener of a child: plaintext or TLS.
type outTransport struct {
	name string
	addr string
	tls  bool
}

// dial opens a connection to tr speaking proto ("h1" or "h2": ALPN over TLS,
// prior knowledge in plaintext).
func (tr outTransport) dial(t *testing.T, proto string) net.Conn {
	t.Helper()
	if tr.tls {
		alpn := map[string]string{"h1": "http/1.1", "h2": "h2"}[proto]
		tc := tlsDial(t, tr.addr, alpn)
		if tc == nil {
			t.FailNow()
		}
		_ = tc.SetDeadline(time.Time{})
		return tc
	}
	nc, err := net.DialTimeout("tcp", tr.addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// outClient is one client of an output case; stop ends its reading (if any) and
// closes it.
type outClient struct {
	stop func()
	got  func() int64 // body bytes read so far
}

// h1Client asks for path over HTTP/1.1; with rate > 0 it reads the answer at about
// rate bytes per second (1<<40: as fast as it can), otherwise never.
func h1Client(t *testing.T, nc net.Conn, path string, rate int) outClient {
	t.Helper()
	if _, err := io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	if rate > 0 {
		wg.Go(func() { paceRead(nc, rate, done, func(n int) { mu.Lock(); got += int64(n); mu.Unlock() }) })
	}
	return outClient{
		stop: func() { close(done); nc.Close(); wg.Wait() },
		got:  func() int64 { mu.Lock(); defer mu.Unlock(); return got },
	}
}

// paceRead reads from nc at about rate bytes per second until done or an error.
func paceRead(nc net.Conn, rate int, done chan struct{}, read func(int)) {
	if rate >= 1<<40 {
		buf := make([]byte, 64<<10)
		for {
			n, err := nc.Read(buf)
			read(n)
			if err != nil {
				return
			}
		}
	}
	const step = 10 * time.Millisecond
	buf := make([]byte, max(rate/100, 1))
	for {
		select {
		case <-done:
			return
		case <-time.After(step):
		}
		_ = nc.SetReadDeadline(time.Now().Add(step))
		n, err := io.ReadFull(nc, buf)
		read(n)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
	}
}

// h2Client sends a GET for path on each of streams streams of one HTTP/2
// connection. window is the initial stream window (SETTINGS_INITIAL_WINDOW_SIZE)
// and the connection's; with grant > 0 a reader reads every frame and gives each
// stream, and the connection, grant bytes of window every 10 ms; with replenish,
// it reads every frame and gives back at once the window each DATA frame used;
// otherwise nothing is ever read.
func h2Client(t *testing.T, nc net.Conn, scheme, path string, streams int, window, grant uint32, replenish bool) outClient {
	t.Helper()
	fr := http2.NewFramer(nc, bufio.NewReaderSize(nc, 16<<10))
	fr.SetMaxReadFrameSize(1 << 24)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	err := func() error {
		if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
			return err
		}
		if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
			return err
		}
		if window > 65535 {
			if err := fr.WriteWindowUpdate(0, window-65535); err != nil {
				return err
			}
		}
		for i := range streams {
			hb.Reset()
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", scheme}, {":authority", "localhost"}, {":path", path}} {
				_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // serialises writes of the reader and the granter
	var got int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	if grant > 0 || replenish {
		wg.Go(func() {
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				switch f := f.(type) {
				case *http2.DataFrame:
					mu.Lock()
					n := uint32(len(f.Data()))
					got += int64(n)
					if replenish && n > 0 {
						_ = fr.WriteWindowUpdate(0, n)
						_ = fr.WriteWindowUpdate(f.StreamID, n)
					}
					mu.Unlock()
				case *http2.SettingsFrame:
					if !f.IsAck() {
						mu.Lock()
						_ = fr.WriteSettingsAck()
						mu.Unlock()
					}
				}
			}
		})
	}
	if grant > 0 {
		wg.Go(func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				mu.Lock()
				err := fr.WriteWindowUpdate(0, grant*uint32(streams))
				for i := 0; i < streams && err == nil; i++ {
					err = fr.WriteWindowUpdate(uint32(2*i+1), grant)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	return outClient{
		stop: func() { close(done); nc.Close(); wg.Wait() },
		got:  func() int64 { mu.Lock(); defer mu.Unlock(); return got },
	}
}

// freeOS asks the child to return freed memory to the OS, so that RSS shows what
// is held, garbage aside.
func (c *child) freeOS(t *testing.T) {
	t.Helper()
	resp, err := http.Get("http://" + c.addr + "/-/freeosmemory")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
}

// outCase is one kind of client.
type outCase struct {
	proto string // "h1" or "h2"
	path  string
	slow  bool // reads slowly
	all   bool // reads everything at once (the control); neither: never reads
}

func (oc outCase) String() string {
	how := "never-reads"
	switch {
	case oc.slow:
		how = "reads-slowly"
	case oc.all:
		how = "reads-all"
	}
	return oc.proto + "/" + how + oc.path
}

// open starts one client of oc on tr.
func (oc outCase) open(t *testing.T, tr outTransport) outClient {
	nc := tr.dial(t, oc.proto)
	if oc.proto == "h1" {
		rate := 0
		switch {
		case oc.slow:
			rate = 1 << 20
		case oc.all:
			rate = 1 << 40
		}
		return h1Client(t, nc, oc.path, rate)
	}
	scheme := "http"
	if tr.tls {
		scheme = "https"
	}
	switch {
	case oc.slow:
		return h2Client(t, nc, scheme, oc.path, 1, 16<<10, 10<<10, false) // about 1 MB/s
	case oc.all:
		return h2Client(t, nc, scheme, oc.path, 1, 1<<20, 0, true)
	}
	// Windows of 2 GiB: only TCP holds the server back.
	return h2Client(t, nc, scheme, oc.path, 1, 1<<31-1, 0, false)
}

var outCases = []outCase{
	{proto: "h1", path: "/download?size=67108864"},
	{proto: "h1", path: "/download?size=67108864", slow: true},
	{proto: "h1", path: "/stream?n=65536"},
	{proto: "h1", path: "/stream?n=65536", slow: true},
	{proto: "h2", path: "/download?size=67108864"},
	{proto: "h2", path: "/download?size=67108864", slow: true},
	{proto: "h2", path: "/stream?n=65536"},
	{proto: "h2", path: "/stream?n=65536", slow: true},
	{proto: "h1", path: "/download?size=67108864", all: true},
	{proto: "h2", path: "/download?size=67108864", all: true},
}

// outChild starts a child whose plaintext engine is engine, with TLS beside it,
// and warms it up: each protocol's first answers allocate what they keep.
func outChild(t *testing.T, engine string) (*child, []outTransport) {
	t.Helper()
	srv := startChild(t, envServeTLS+"=1", envEngine+"="+engine)
	trs := []outTransport{{name: engine, addr: srv.addr}}
	if engine == "gnet" {
		trs = append(trs, outTransport{name: "tls", addr: srv.tlsAddr, tls: true})
	}
	for _, tr := range trs {
		for _, oc := range outCases {
			c := outCase{proto: oc.proto, path: "/download?size=1000000", slow: true}
			if strings.HasPrefix(oc.path, "/stream") {
				c.path = "/stream?n=100"
			}
			cl := c.open(t, tr)
			testkit.Wait(t, "the warm-up transfer to deliver 32 KiB", func() bool { return cl.got() >= 32<<10 })
			cl.stop()
		}
	}
	return srv, trs
}

// TestOutputBoundedPerConnection: for each listener of both engines (gnet and std
// plaintext, TLS), each protocol (HTTP/1.1, h2) and each route (/download of
// 64 MiB, /stream of 64 MiB in flushed 1 KiB chunks), 4 clients that never read,
// then 4 that read slowly (about 1 MB/s), and for /download 4 that read as fast as
// they can, grow the server's RSS by less than perConnBound per connection, and the
// server keeps answering others meanwhile.
func TestOutputBoundedPerConnection(t *testing.T) {
	for _, engine := range []string{"gnet", "std"} {
		t.Run(engine, func(t *testing.T) {
			srv, trs := outChild(t, engine)
			for _, tr := range trs {
				for _, oc := range outCases {
					t.Run(tr.name+"/"+oc.String(), func(t *testing.T) {
						const n = 4
						srv.freeOS(t)
						srv.settle(100 * time.Millisecond) // the freed memory leaves RSS before the baseline is read; RSS has no event
						base := srv.rss(t)
						clients := make([]outClient, n)
						for i := range clients {
							clients[i] = oc.open(t, tr)
						}
						peak := base
						for range 8 {
							srv.settle(100 * time.Millisecond) // RSS is sampled over a time while the clients read nothing
							peak = max(peak, srv.rss(t))
						}
						var got int64
						for _, cl := range clients {
							got += cl.got()
						}
						benchGet(t, srv) // still serving
						for _, cl := range clients {
							cl.stop()
						}
						grown := (peak - base) / n
						t.Logf("%s %v: server RSS %d MB, +%d KB per connection (peak); %d KB read by the clients in all",
							tr.name, oc, base>>20, grown>>10, got>>10)
						if (oc.slow || oc.all) && got == 0 {
							t.Errorf("the clients read nothing")
						}
						if grown > perConnBound {
							t.Errorf("server RSS grew by %d KB per connection, want < %d KB", grown>>10, perConnBound>>10)
						}
					})
				}
			}
		})
	}
}

// benchGet asks the child's plaintext listener for /bench.
func benchGet(t *testing.T, srv *child) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + srv.addr + "/bench")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /bench: %d", resp.StatusCode)
	}
}

// TestOutputSlowH2Streams: 4 h2 connections with 5 streams each, every stream a
// 64 MiB /download read through windows that start at 1 byte and grow by 1 KiB
// every 10 ms, grow the server's RSS by less than 64 MiB in all (the responses
// are 1.25 GiB), while another client's requests answer with a p99 under 20 ms.
// Over TLS, and over gnet's plaintext listener.
func TestOutputSlowH2Streams(t *testing.T) {
	srv, trs := outChild(t, "gnet")
	for _, tr := range trs {
		t.Run(tr.name, func(t *testing.T) {
			const conns, streams = 4, 5
			srv.freeOS(t)
			srv.settle(100 * time.Millisecond) // the freed memory leaves RSS before the baseline is read; RSS has no event
			base := srv.rss(t)
			scheme := map[bool]string{false: "http", true: "https"}[tr.tls]
			var clients []outClient
			for range conns {
				clients = append(clients, h2Client(t, tr.dial(t, "h2"), scheme, "/download?size=67108864", streams, 1, 1<<10, false))
			}
			defer func() {
				for _, cl := range clients {
					cl.stop()
				}
			}()
			// Another client, on a connection of its own, one request at a time.
			get := tlsClients(t, nil)["tls-h1"]
			url := "https://" + tr.addr + "/bench"
			if !tr.tls {
				get = &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
				url = "http://" + tr.addr + "/bench"
			}
			var lat []time.Duration
			peak := base
			start := time.Now()
			for i := 0; time.Since(start) < 1500*time.Millisecond; i++ {
				t0 := time.Now()
				resp, err := get.Get(url)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if i > 0 { // the first opens the connection (a TLS handshake)
					lat = append(lat, time.Since(t0))
				}
				if i%20 == 0 {
					peak = max(peak, srv.rss(t))
				}
			}
			peak = max(peak, srv.rss(t))
			var got int64
			for _, cl := range clients {
				got += cl.got()
			}
			slices.Sort(lat)
			p99 := lat[len(lat)*99/100]
			t.Logf("%s: %d x %d slow h2 streams of 64 MiB: server RSS %d MB, peak +%d KB; %d KB read; another client: %d requests, p50 %v, p99 %v",
				tr.name, conns, streams, base>>20, (peak-base)>>10, got>>10, len(lat), lat[len(lat)/2], p99)
			if got == 0 {
				t.Errorf("the slow streams got nothing")
			}
			if peak-base > 64<<20 {
				t.Errorf("server RSS grew by %d MB, want < 64 MB", (peak-base)>>20)
			}
			if p99 > 20*time.Millisecond {
				t.Errorf("another client's p99 %v, want < 20 ms", p99)
			}
		})
	}
}
