package humaceleris_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/go-chi/chi/v5"
	"github.com/gofiber/fiber/v2"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/humaceleris"
)

// The operation of huma's own adapter benchmark (humachi's
// BenchmarkHumaV2ChiNormal): path, header and query inputs, a validated JSON
// body, output headers and a JSON body.
type greetIn struct {
	ID          string `path:"id"`
	ContentType string `header:"Content-Type"`
	Num         int    `query:"num"`
	Body        struct {
		Suffix string `json:"suffix" maxLength:"5"`
	}
}

type greetOut struct {
	ETag         string    `header:"ETag"`
	LastModified time.Time `header:"Last-Modified"`
	Body         struct {
		Greeting    string `json:"greeting"`
		Suffix      string `json:"suffix"`
		Length      int    `json:"length"`
		ContentType string `json:"content_type"`
		Num         int    `json:"num"`
	}
}

var lastModified = time.Now()

func register(api huma.API) {
	huma.Register(api, huma.Operation{OperationID: "greet", Method: http.MethodPost, Path: "/foo/{id}"},
		func(ctx context.Context, in *greetIn) (*greetOut, error) {
			resp := &greetOut{ETag: "abc123", LastModified: lastModified}
			resp.Body.Greeting = "Hello, " + in.ID + in.Body.Suffix
			resp.Body.Suffix = in.Body.Suffix
			resp.Body.Length = len(resp.Body.Greeting)
			resp.Body.ContentType = in.ContentType
			resp.Body.Num = in.Num
			return resp, nil
		})
}

const greetBody = `{"suffix": "!"}`

// In process: each framework's own request path without a socket (chi:
// ServeHTTP into a ResponseRecorder; Celeris: celeristest.Do). humafiber has
// no such path: it sets read deadlines on the connection, which a bare
// fasthttp.RequestCtx lacks, so fiber is measured over a socket only.

func BenchmarkInProcessHumaCeleris(b *testing.B) {
	s := celeris.New(celeris.Config{})
	register(humaceleris.New(s, huma.DefaultConfig("Test", "1.0.0")))
	benchInProcess(b, s)
}

// benchInProcess sends the greet request through s without a socket.
func benchInProcess(b *testing.B, s *celeris.Server) {
	req := func() *celeristest.Request {
		return celeristest.NewRequest(http.MethodPost, "/foo/123?num=5", strings.NewReader(greetBody)).
			WithHeader("Content-Type", "application/json")
	}
	if r := celeristest.Do(s, req()); r.Status != 200 {
		b.Fatalf("%d %s", r.Status, r.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		celeristest.Do(s, req())
	}
}

func BenchmarkInProcessHumaChi(b *testing.B) {
	r := chi.NewMux()
	register(humachi.New(r, huma.DefaultConfig("Test", "1.0.0")))
	body := strings.NewReader(greetBody)
	req, _ := http.NewRequest(http.MethodPost, "/foo/123?num=5", body)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		body.Seek(0, io.SeekStart)
		w.Body.Reset()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Body.String())
		}
	}
}

// Over a socket: one keep-alive connection from net/http's client, requests
// in sequence, to each framework serving on 127.0.0.1.

func benchSocket(b *testing.B, base string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	do := func() {
		res, err := client.Post(base+"/foo/123?num=5", "application/json", strings.NewReader(greetBody))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatal(res.Status)
		}
	}
	do()
	b.ReportAllocs()
	for b.Loop() {
		do()
	}
}

func BenchmarkSocketHumaCeleris(b *testing.B) {
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	register(humaceleris.New(s, huma.DefaultConfig("Test", "1.0.0")))
	benchSocket(b, "http://"+celeristest.Start(b, s))
}

func BenchmarkSocketHumaChi(b *testing.B) {
	r := chi.NewMux()
	register(humachi.New(r, huma.DefaultConfig("Test", "1.0.0")))
	srv := httptest.NewServer(r)
	defer srv.Close()
	benchSocket(b, srv.URL)
}

func BenchmarkSocketHumaFiber(b *testing.B) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	register(humafiber.New(app, huma.DefaultConfig("Test", "1.0.0")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go app.Listener(ln)
	defer app.Shutdown()
	benchSocket(b, "http://"+ln.Addr().String())
}

// Baselines: the same work as a plain Celeris handler (Bind, the output
// headers, JSON), so that the adapter's and huma's share shows.

type plainIn struct {
	ID          string `param:"id"`
	ContentType string `header:"Content-Type"`
	Num         int    `query:"num"`
	Suffix      string `json:"suffix"`
}

type plainOut struct {
	Greeting    string `json:"greeting"`
	Suffix      string `json:"suffix"`
	Length      int    `json:"length"`
	ContentType string `json:"content_type"`
	Num         int    `json:"num"`
}

func plainServer(cfg celeris.Config) *celeris.Server {
	s := celeris.New(cfg)
	s.POST("/foo/:id", func(c *celeris.Context) error {
		var in plainIn
		if err := c.Bind(&in); err != nil {
			return err
		}
		c.SetHeader("ETag", "abc123")
		c.SetHeader("Last-Modified", lastModified.UTC().Format(http.TimeFormat))
		g := "Hello, " + in.ID + in.Suffix
		return c.JSON(http.StatusOK, &plainOut{Greeting: g, Suffix: in.Suffix, Length: len(g), ContentType: in.ContentType, Num: in.Num})
	})
	return s
}

func BenchmarkInProcessPlainCeleris(b *testing.B) {
	s := plainServer(celeris.Config{})
	benchInProcess(b, s)
}

func BenchmarkSocketPlainCeleris(b *testing.B) {
	s := plainServer(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	benchSocket(b, "http://"+celeristest.Start(b, s))
}
