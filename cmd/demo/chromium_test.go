package main

import (
	"bufio"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/celeris-dev/celeris/internal/browsertest"
)

// TestDemoChromiumHTTP3: headless Chromium, forced onto QUIC for the demo's
// origin (--origin-to-force-quic-on) and trusting the demo's self-signed
// certificate by its SPKI hash (Chromium ignores --ignore-certificate-errors
// for QUIC), loads GET / of the demo, run as a process with -tls-addr (its
// main, which serves HTTP/3 at the TLS port by default). The page's script
// must report that it was served over h3 and that its WebSocket echo and its
// SSE stream worked; Chromium's net-log must show QUIC sessions to the
// demo's port with ALPN h3 and HTTP/3 requests for / and /sse. The test waits
// on the DOM through the DevTools protocol (over --remote-debugging-pipe), not
// on a fixed time, and closes the browser through it so that the net-log is
// complete.
func TestDemoChromiumHTTP3(t *testing.T) {
	origin := startDemo(t, "-addr", "127.0.0.1:0", "-tls-addr", "127.0.0.1:0")
	spki := certSPKI(t, origin)

	netlog := filepath.Join(t.TempDir(), "netlog.json")
	b := browsertest.Start(t, browsertest.Chromium(t), "--enable-quic",
		"--origin-to-force-quic-on="+origin, "--ignore-certificate-errors-spki-list="+spki,
		"--log-net-log="+netlog)

	deadline := time.Now().Add(60 * time.Second)
	page, err := b.Open(deadline, "https://"+origin+"/")
	if err != nil {
		t.Fatal(err)
	}
	const markers = `["proto","ws","sse"].map(id => (document.getElementById(id) || {}).textContent).join(" ")`
	if got, err := page.Poll(deadline, markers, func(v string) (bool, error) { return v == "h3 ok ok", nil }); err != nil {
		log, _ := page.Eval(time.Now().Add(5*time.Second), `(document.getElementById("log") || {}).textContent`)
		t.Fatalf("page markers (proto ws sse) %q, want \"h3 ok ok\": %v; page log:\n%s", got, err, log)
	}
	b.Close() // completes the net-log

	checkNetLog(t, netlog, origin)
}

// TestDemoProcess is the demo's main in a child process (of
// TestDemoChromiumHTTP3): CELERIS_DEMO_ARGS holds its command line. It serves
// until SIGTERM.
func TestDemoProcess(t *testing.T) {
	args := os.Getenv("CELERIS_DEMO_ARGS")
	if args == "" {
		t.Skip("the child process of TestDemoChromiumHTTP3")
	}
	os.Args = append([]string{"demo"}, strings.Fields(args)...)
	main()
}

// startDemo runs the demo's main with args in a child process and returns
// the address of its TLS listener once HTTP/3 answers at the same port; the
// process gets SIGTERM (a graceful shutdown) when the test ends.
func startDemo(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDemoProcess$")
	cmd.Env = append(os.Environ(), "CELERIS_DEMO_ARGS="+strings.Join(args, " "))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addrc := make(chan string, 1)
	listening := regexp.MustCompile(`demo: listening .*tls_addr=(\S+)`)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-exited:
		t.Fatal("the demo exited before it listened")
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not listen in 30 s")
	}
	// The TLS listener is ready; HTTP/3 starts beside it.
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get("https://" + addr + "/bench")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no HTTP/3 answer at %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// certSPKI returns the base64 SHA-256 of the SubjectPublicKeyInfo of the
// certificate that addr presents over TLS: the form of Chromium's
// --ignore-certificate-errors-spki-list.
func certSPKI(t *testing.T, addr string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum := sha256.Sum256(c.ConnectionState().PeerCertificates[0].RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// netLog is the part of Chromium's --log-net-log JSON that checkNetLog reads:
// event and source types are numbers named in constants.
type netLog struct {
	Constants struct {
		EventTypes  map[string]int `json:"logEventTypes"`
		SourceTypes map[string]int `json:"logSourceType"`
	} `json:"constants"`
	Events []struct {
		Type   int `json:"type"`
		Phase  int `json:"phase"` // 0 none, 1 begin, 2 end
		Source struct {
			ID   int `json:"id"`
			Type int `json:"type"`
		} `json:"source"`
		Params json.RawMessage `json:"params"`
	} `json:"events"`
}

// checkNetLog reads the net-log at path and checks that Chromium reached
// origin (host:port) over HTTP/3: a QUIC session to it (Chromium may open
// more than one) completed its handshake and exchanged HTTP/3 SETTINGS (control streams exist only under
// ALPN "h3", RFC 9114 §3.1 and §6.2.1), the server's SETTINGS carry
// SETTINGS_ENABLE_CONNECT_PROTOCOL (Celeris's, not some other endpoint's),
// and the URL requests for the page, /sse and every other https request to
// origin were bound to a session to origin and sent their headers as HTTP/3 HEADERS
// frames, answered with a status. The WebSocket is not among them: Chromium
// opens WebSockets over TCP (it does not implement RFC 9220).
func checkNetLog(t *testing.T, path, origin string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nl netLog
	if err := json.Unmarshal(data, &nl); err != nil {
		t.Fatalf("net-log %s: %v", path, err)
	}
	ev := func(name string) int {
		id, ok := nl.Constants.EventTypes[name]
		if !ok {
			t.Fatalf("net-log has no event type %s", name)
		}
		return id
	}
	host, port, _ := strings.Cut(origin, ":")
	var (
		quicSession   = ev("QUIC_SESSION")
		handshakeDone = ev("QUIC_SESSION_CRYPTO_HANDSHAKE_COMPLETE")
		settingsIn    = ev("HTTP3_SETTINGS_RECEIVED")
		headersSent   = ev("HTTP3_HEADERS_SENT")
		headersIn     = ev("HTTP3_HEADERS_DECODED")
		startJob      = ev("URL_REQUEST_START_JOB")
		boundToQUIC   = ev("HTTP_STREAM_REQUEST_BOUND_TO_QUIC_SESSION")
		quicHeaders   = ev("HTTP_TRANSACTION_QUIC_SEND_REQUEST_HEADERS")
	)
	// The source ids of the QUIC sessions to origin: Chromium may open more than
	// one (a later request can go on a new session).
	sessions := map[int]bool{}
	for _, e := range nl.Events {
		if e.Type != quicSession || e.Phase != 1 {
			continue
		}
		var p struct {
			Host string `json:"host"`
			Port int    `json:"port"`
		}
		if json.Unmarshal(e.Params, &p) == nil && p.Host == host && strconv.Itoa(p.Port) == port {
			sessions[e.Source.ID] = true
		}
	}
	if len(sessions) == 0 {
		t.Fatalf("net-log: no QUIC session to %s", origin)
	}
	var (
		handshake, serverSettings bool
		sentPaths                 = map[string]bool{}
		streamsAnswered           int
		urls                      = map[int]string{} // URL request source id -> url, for https://origin/...
		bound                     = map[int]bool{}   // URL requests bound to a session to origin
		sentOverQUIC              = map[int]bool{}
	)
	for _, e := range nl.Events {
		params := string(e.Params)
		switch {
		case sessions[e.Source.ID] && e.Type == handshakeDone:
			handshake = true
		case sessions[e.Source.ID] && e.Type == settingsIn:
			serverSettings = serverSettings || strings.Contains(params, "SETTINGS_ENABLE_CONNECT_PROTOCOL")
		case sessions[e.Source.ID] && e.Type == headersSent:
			var p struct {
				Headers []string `json:"headers"`
			}
			_ = json.Unmarshal(e.Params, &p)
			for _, h := range p.Headers {
				if path, ok := strings.CutPrefix(h, ":path: "); ok {
					sentPaths[path] = true
				}
			}
		case sessions[e.Source.ID] && e.Type == headersIn:
			if strings.Contains(params, `":status: `) {
				streamsAnswered++
			}
		case e.Type == startJob && e.Phase == 1:
			var p struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(e.Params, &p) == nil && strings.HasPrefix(p.URL, "https://"+origin+"/") {
				urls[e.Source.ID] = p.URL
			}
		case e.Type == boundToQUIC:
			var p struct {
				Dep struct {
					ID int `json:"id"`
				} `json:"source_dependency"`
			}
			if json.Unmarshal(e.Params, &p) == nil && sessions[p.Dep.ID] {
				bound[e.Source.ID] = true
			}
		case e.Type == quicHeaders:
			sentOverQUIC[e.Source.ID] = true
		}
	}
	if !handshake || !serverSettings {
		t.Fatalf("net-log: QUIC sessions %v to %s: handshake complete %v, Celeris's HTTP/3 SETTINGS received %v", sessions, origin, handshake, serverSettings)
	}
	for _, p := range []string{"/", "/sse"} {
		if !sentPaths[p] {
			t.Fatalf("net-log: no HTTP/3 HEADERS for %s on the QUIC sessions (sent: %v)", p, sentPaths)
		}
	}
	if streamsAnswered < len(sentPaths) {
		t.Fatalf("net-log: %d HTTP/3 responses for %d requests", streamsAnswered, len(sentPaths))
	}
	if len(urls) < 2 {
		t.Fatalf("net-log: URL requests to %s: %v", origin, urls)
	}
	for id, u := range urls {
		if !bound[id] || !sentOverQUIC[id] {
			t.Fatalf("net-log: %s: bound to a QUIC session to the demo %v, headers sent over QUIC %v", u, bound[id], sentOverQUIC[id])
		}
	}
	t.Logf("over HTTP/3 (QUIC sessions %v): %d requests, paths %v", sessions, len(urls), sentPaths)
}
