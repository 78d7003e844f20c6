package compress_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/compress"
	"github.com/celeris-dev/celeris/compress/compresstest"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

var text = strings.Repeat("celeris compresses text with zstd and brotli. ", 80)

func encoders() []mwcompress.Encoder {
	return []mwcompress.Encoder{compress.Zstd(0), compress.Brotli(0), compress.Gzip(0)}
}

func clients(t testing.TB) map[string]*http.Client {
	h1 := &http.Transport{DisableCompression: true}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h2 := &http.Transport{DisableCompression: true, Protocols: &p}
	t.Cleanup(h1.CloseIdleConnections)
	t.Cleanup(h2.CloseIdleConnections)
	return map[string]*http.Client{
		"h1":  {Transport: h1, Timeout: 20 * time.Second},
		"h2c": {Transport: h2, Timeout: 20 * time.Second},
	}
}

func get(t testing.TB, cl *http.Client, url, ae string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestCodingsDecodeIndependently: whole and streamed answers in zstd, br and gzip,
// chosen by Accept-Encoding, over h1 and h2c with Go's client, decode with
// Python's zstandard and brotli to the bytes the handler wrote.
func TestCodingsDecodeIndependently(t *testing.T) {
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(mwcompress.New(mwcompress.Config{Encoders: encoders(), MinLength: -1}))
		s.GET("/text", func(c *celeris.Context) error { return c.String(200, text) })
		s.GET("/json", func(c *celeris.Context) error {
			return c.JSON(200, map[string]string{"message": "Hello, World!"})
		})
		s.GET("/stream", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			for i := range 4 {
				fmt.Fprintf(w, "piece %d: %s\n", i, text[:500])
				if err := w.Flush(); err != nil {
					return err
				}
			}
			return nil
		})
	})
	var stream strings.Builder
	for i := range 4 {
		fmt.Fprintf(&stream, "piece %d: %s\n", i, text[:500])
	}
	want := map[string]string{"/text": text, "/json": `{"message":"Hello, World!"}`, "/stream": stream.String()}
	for proto, cl := range clients(t) {
		t.Run(proto, func(t *testing.T) {
			type check struct{ path, ae string }
			var checks []check
			var answers []compresstest.Encoded
			for _, tc := range []struct{ ae, coding string }{
				{ae: "zstd", coding: "zstd"},
				{ae: "br", coding: "br"},
				{ae: "gzip", coding: "gzip"},
				{ae: "gzip, deflate, br, zstd", coding: "zstd"}, // Chrome's: the server's order
				{ae: "gzip, br;q=0.9, zstd;q=0.8", coding: "gzip"},
				{ae: "zstd;q=0, br;q=0.5, *;q=0.1", coding: "br"},
			} {
				for _, path := range []string{"/text", "/json", "/stream"} {
					resp, b := get(t, cl, "http://"+addr+path, tc.ae)
					if got := resp.Header.Get("Content-Encoding"); got != tc.coding {
						t.Fatalf("%s %q: Content-Encoding %q, want %q", path, tc.ae, got, tc.coding)
					}
					if len(b) >= len(want[path]) && path != "/json" {
						t.Errorf("%s %s: %d encoded bytes for %d", path, tc.coding, len(b), len(want[path]))
					}
					checks = append(checks, check{path: path, ae: tc.ae})
					answers = append(answers, compresstest.Encoded{Coding: tc.coding, Body: b})
				}
			}
			for i, out := range compresstest.DecodeWithPython(t, answers) {
				if c := checks[i]; string(out) != want[c.path] {
					t.Errorf("%s %q: decoded %d bytes %.40q, want %d bytes", c.path, c.ae, len(out), out, len(want[c.path]))
				}
			}
		})
	}
}

// TestCurlDecodes: curl, built with libzstd and brotli (curl -V lists them),
// asks for each coding over HTTP/1.1 and h2c and decodes the answer itself.
func TestCurlDecodes(t *testing.T) {
	v, err := exec.Command("curl", "-V").Output()
	if err != nil {
		t.Skip("curl is not installed")
	}
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(mwcompress.New(mwcompress.Config{Encoders: encoders()}))
		s.GET("/text", func(c *celeris.Context) error { return c.String(200, text) })
	})
	for _, coding := range []string{"zstd", "br", "gzip"} {
		feature := map[string]string{"zstd": "zstd", "br": "brotli", "gzip": "libz"}[coding]
		if !strings.Contains(strings.ToLower(string(v)), strings.ToLower(feature)) {
			t.Logf("curl lacks %s: %s skipped", feature, coding)
			continue
		}
		for _, proto := range []string{"--http1.1", "--http2-prior-knowledge"} {
			out, err := exec.Command("curl", "-sS", "--compressed", proto, "-H", "Accept-Encoding: "+coding,
				"-D", "/dev/stderr", "http://"+addr+"/text").CombinedOutput()
			if err != nil {
				t.Fatalf("curl %s %s: %v: %s", proto, coding, err, out)
			}
			head, body, _ := strings.Cut(string(out), "\r\n\r\n")
			if !strings.Contains(strings.ToLower(head), "content-encoding: "+coding) || body != text {
				t.Errorf("curl %s %s: head %q, body %d bytes", proto, coding, head, len(body))
			}
		}
	}
}

// TestStreamPerFlushZstdBrotli: each flush of a streamed answer reaches the
// client as zstd or brotli data it decodes at once: the handler writes its
// second piece only after the client decoded the first. Over h2c the client is
// Go's with klauspost's zstd reader and go-brrr's reader; over HTTP/1.1 it is
// Python's http.client with zstandard's and brotli's incremental decoders.
func TestStreamPerFlushZstdBrotli(t *testing.T) {
	first := "first: " + text[:700]
	second := "second: " + text[:300]
	decoded := make(chan struct{}, 1)
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(mwcompress.New(mwcompress.Config{Encoders: encoders()}))
		s.GET("/sse", func(c *celeris.Context) error {
			w, err := c.SSE()
			if err != nil {
				return err
			}
			if err := w.Send(celeris.Event{Data: first}); err != nil {
				return err
			}
			select {
			case <-decoded:
			case <-time.After(10 * time.Second):
				return nil // the client saw nothing: it fails
			case <-c.Context().Done():
				return nil
			}
			return w.Send(celeris.Event{Data: second})
		})
	})
	ev1, ev2 := "data: "+first+"\n\n", "data: "+second+"\n\n"
	cl := clients(t)["h2c"]
	for _, coding := range []string{"zstd", "br"} {
		t.Run("h2c/"+coding, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://"+addr+"/sse", nil)
			req.Header.Set("Accept-Encoding", coding)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != 2 || resp.Header.Get("Content-Encoding") != coding {
				t.Fatalf("%s, Content-Encoding %q", resp.Proto, resp.Header.Get("Content-Encoding"))
			}
			var r io.Reader
			if coding == "zstd" {
				zr, err := zstd.NewReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				defer zr.Close()
				r = zr
			} else {
				r = brrr.NewReader(resp.Body)
			}
			got := make([]byte, len(ev1))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != ev1 {
				t.Fatalf("first event: %.40q, %v", got, err)
			}
			decoded <- struct{}{}
			rest, err := io.ReadAll(r)
			if err != nil || string(rest) != ev2 {
				t.Fatalf("second event: %.40q, %v", rest, err)
			}
		})
	}
	if !compresstest.HavePython() {
		t.Skip("python3 with zstandard and brotli is not installed")
	}
	const script = `import sys, http.client, zstandard, brotli
host, coding, n1 = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = http.client.HTTPConnection(host, timeout=20)
c.request("GET", "/sse", headers={"Accept-Encoding": coding})
r = c.getresponse()
assert r.getheader("Content-Encoding") == coding, r.getheaders()
d = zstandard.ZstdDecompressor().decompressobj() if coding == "zstd" else brotli.Decompressor()
step = d.decompress if coding == "zstd" else d.process
got = b""
while len(got) < n1:
    chunk = r.read1(65536)
    if not chunk:
        break
    got += step(chunk)
sys.stdout.write("FIRST %d\n" % len(got)); sys.stdout.flush()
first = got
while True:
    chunk = r.read1(65536)
    if not chunk:
        break
    got += step(chunk)
sys.stdout.buffer.write(got)`
	for _, coding := range []string{"zstd", "br"} {
		t.Run("h1-python/"+coding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "python3", "-c", script, addr, coding, fmt.Sprint(len(ev1)))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(out)
			line, err := br.ReadString('\n')
			if err != nil || line != fmt.Sprintf("FIRST %d\n", len(ev1)) {
				_ = cmd.Wait()
				t.Fatalf("python saw %q, %v: %s", line, err, stderr.String())
			}
			decoded <- struct{}{}
			all, _ := io.ReadAll(br)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("python: %v: %s", err, stderr.String())
			}
			if string(all) != ev1+ev2 {
				t.Errorf("python decoded %d bytes %.60q", len(all), all)
			}
		})
	}
}

// TestLevels: invalid levels panic; the defaults are documented.
func TestLevels(t *testing.T) {
	for name, f := range map[string]func(){
		"zstd 23":   func() { compress.Zstd(23) },
		"zstd -1":   func() { compress.Zstd(-1) },
		"brotli 12": func() { compress.Brotli(12) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if compress.Zstd(1).Coding() != "zstd" || compress.Brotli(11).Coding() != "br" {
		t.Error("codings")
	}
}

// TestRegister: Register makes a default middleware prefer zstd, then br, then
// gzip.
func TestRegister(t *testing.T) {
	compress.Register()
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		s.GET("/text", func(c *celeris.Context) error { return c.String(200, text) }, mwcompress.Default())
	})
	cl := clients(t)["h1"]
	for ae, want := range map[string]string{"gzip, br, zstd": "zstd", "gzip, br": "br", "gzip": "gzip"} {
		if resp, _ := get(t, cl, "http://"+addr+"/text", ae); resp.Header.Get("Content-Encoding") != want {
			t.Errorf("%q: %q, want %q", ae, resp.Header.Get("Content-Encoding"), want)
		}
	}
}
