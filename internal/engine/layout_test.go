//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/netpoll"
)

// The gnet built in (go.mod's) is laid out as the engine expects.
func TestCheckLayout(t *testing.T) {
	if err := CheckLayout(); err != nil {
		t.Fatal(err)
	}
	if !pauseOK || !outboundOK || gnetConnType == nil {
		t.Fatal("CheckLayout passed but left the hooks off")
	}
	t.Logf("gnet %s", GnetVersion())
}

// Stand-ins for gnet's types, laid out as in v2.10.0 and then moved one field
// at a time: findLayout names what moved.
type (
	okListener struct{ fd int }
	conn2      struct{}
)

func TestFindLayoutMismatch(t *testing.T) {
	// The real types pass.
	if _, err := findLayout(reflect.TypeOf(gnet.Engine{})); err != nil {
		t.Fatalf("gnet.Engine: %v", err)
	}
	type noEng struct{ engine *struct{} }
	type loopNoPoller struct {
		listeners   map[int]*okListener
		connections struct{ connMap map[int]*conn2 }
	}
	type engNoPoller struct {
		listeners  map[int]*okListener
		ingress    *loopNoPoller
		eventLoops interface{ x() }
	}
	type fdString struct{ fd string }
	type loopBadListener struct {
		listeners map[int]*fdString
	}
	type engBadListener struct {
		listeners  map[int]*okListener
		ingress    *loopBadListener
		eventLoops interface{ x() }
	}
	type engNoConn struct {
		listeners map[int]*okListener
		ingress   *struct {
			listeners   map[int]*okListener
			poller      *netpoll.Poller
			connections struct{ n int }
		}
		eventLoops interface{ x() }
	}
	for _, tc := range []struct {
		name string
		typ  any
		want string
	}{
		{"no eng", struct{ x int }{}, ".eng is not a pointer"},
		{"eng renamed", noEng{}, ".eng is not a pointer"},
		{"no poller", struct{ eng *engNoPoller }{}, ".poller is not a *netpoll.Poller"},
		{"listener fd type", struct{ eng *engBadListener }{}, ".fd is not an int"},
		{"no conn store", struct{ eng *engNoConn }{}, "holds no *conn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := findLayout(reflect.TypeOf(tc.typ))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("findLayout = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// An engine whose gnet is laid out otherwise does not run: Run and WaitReady
// return the layout's error instead of serving without the defences.
func TestRunRefusesMismatchedLayout(t *testing.T) {
	errMoved := errors.New("simulated: gnet moved")
	old := checkLayout
	checkLayout = func() error { return errMoved }
	defer func() { checkLayout = old }()
	e := New(Config{Addr: "127.0.0.1:0"})
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	select {
	case err := <-errc:
		if !errors.Is(err, errMoved) {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run served")
	}
	if _, err := e.WaitReady(); !errors.Is(err, errMoved) {
		t.Fatalf("WaitReady = %v", err)
	}
}
