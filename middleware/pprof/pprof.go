// Package pprof serves the runtime profiles of net/http/pprof from a Celeris
// server, for go tool pprof and go tool trace:
//
//	pprof.Register(s.Group("/debug/pprof", adminOnly))
//
// mounts, under the group's prefix:
//
//	GET  /                 index page (links to every profile)
//	GET  /cmdline          the command line
//	GET  /profile          CPU profile (?seconds=N, default 30)
//	GET  /trace            execution trace (?seconds=N, default 1)
//	GET  /symbol, POST /symbol   symbol lookup
//	GET  /{name}           a named profile: allocs, block, goroutine, heap, mutex,
//	                       threadcreate (?debug=1 for text, ?gc=1 for heap)
//
// and redirects the bare prefix to prefix + "/" (unless the prefix is empty). The handlers are net/http/pprof's,
// run through celeris.Adapt: the profile and trace handlers stream for as long as
// they sample, on a worker goroutine. Profiles expose internals of the process:
// mount them behind authentication middleware (the group's), or on a server that
// listens on a private address only.
//
// Importing this package imports net/http/pprof, which also registers its
// handlers on http.DefaultServeMux; that mux is not served unless the program
// serves it.
package pprof

import (
	"net/http"
	netpprof "net/http/pprof"

	"github.com/celeris-dev/celeris"
)

// Register mounts the profile handlers under g's prefix (see the package doc).
// Use s.Group("/debug/pprof") for the conventional location.
func Register(g *celeris.Group) {
	if g.GET("/", celeris.AdaptFunc(netpprof.Index)).Pattern() != "/" {
		// Relative links of the index need the trailing slash.
		g.GET("", func(c *celeris.Context) error {
			return c.Redirect(http.StatusMovedPermanently, c.Path()+"/")
		})
	}
	g.GET("/cmdline", celeris.AdaptFunc(netpprof.Cmdline))
	g.GET("/profile", celeris.AdaptFunc(netpprof.Profile))
	g.GET("/trace", celeris.AdaptFunc(netpprof.Trace))
	symbol := celeris.AdaptFunc(netpprof.Symbol)
	g.GET("/symbol", symbol)
	g.POST("/symbol", symbol)
	g.GET("/:name", celeris.AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		netpprof.Handler(r.PathValue("name")).ServeHTTP(w, r)
	}))
}
