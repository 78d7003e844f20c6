package celerish3_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	celerish3 "github.com/celeris-dev/celeris/http3"
)

// TestAioquicClient: Python aioquic's HTTP/3 client (another QUIC and QPACK
// implementation) against the server: concurrent requests on one connection,
// an upload, trailers, a streamed download and server-sent events. It skips
// when python3 or aioquic is missing (.ci/run installs aioquic).
func TestAioquicClient(t *testing.T) {
	if exec.Command("python3", "-c", "import aioquic").Run() != nil {
		t.Skip("python3 with aioquic is not installed (pip install aioquic)")
	}
	st := start(t, celerish3.Config{})
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(st.h3URL, "https://"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "python3", "testdata/aioquic_client.py", host, port).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("aioquic client: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	type response struct {
		Status   int
		Headers  map[string]string
		Trailers map[string]string
		Length   int
		Sha256   string
		Head     string
	}
	var got map[string]response
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	check("hello", got["hello"].Status == 200 && got["hello"].Head == "hello HTTP/3.0" && got["hello"].Headers["date"] != "")
	check("json", got["json"].Status == 200 && got["json"].Head == `{"id":"7","q":"a"}` && got["json"].Headers["x-custom"] == "yes")
	sum := sha256.Sum256([]byte(strings.Repeat("u", 1<<20)))
	want := sha256.Sum256(fmt.Appendf(nil, "%d %s", 1<<20, hex.EncodeToString(sum[:])))
	check("upload", got["upload"].Status == 200 && got["upload"].Sha256 == hex.EncodeToString(want[:]))
	check("trailers", got["trailers"].Status == 200 && got["trailers"].Head == "body" && got["trailers"].Trailers["x-checksum"] == "abc123")
	check("download", got["download"].Status == 200 && got["download"].Length == 2<<20 && got["download"].Headers["content-length"] == "2097152")
	check("sse", got["sse"].Status == 200 && got["sse"].Head == "data: 0\n\ndata: 1\n\ndata: 2\n\n" && got["sse"].Headers["content-type"] == "text/event-stream")
}
