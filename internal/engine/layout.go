//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"

	"github.com/panjf2000/gnet/v2"
)

// gnet's layout.
//
// Read back-pressure (pause.go), answers after a half-close (detach.go), Hijack
// (hijack.go) and refusing connections during shutdown (unlisten_linux.go) reach
// unexported fields of gnet v2.10.0 by name and type: the connection's event
// loop, that loop's poller, the connection's poll attachment and outbound
// buffer, and the engine's listeners. go.mod's gnet version is a minimum: an
// application whose other dependencies require a later gnet builds with that
// one. CheckLayout finds the fields in gnet's types before anything is served,
// and the engine refuses to run (Run fails with CheckLayout's error) rather
// than serve without those defences. The root package checks first, so that
// EngineAuto can fall back to the std engine instead.

// PinnedGnet is the gnet version whose layout the engine is written against.
const PinnedGnet = "v2.10.0"

var (
	layoutOnce sync.Once
	layoutErr  error
)

// CheckLayout reports whether gnet's internals are where the engine looks for
// them (as in PinnedGnet), with an error naming the gnet version built in and
// the ways out when they are not. The fields are located once, on the first
// call; the engine's hooks use them from then on.
func CheckLayout() error {
	layoutOnce.Do(func() {
		l, err := findLayout(reflect.TypeOf(gnet.Engine{}))
		if err != nil {
			layoutErr = fmt.Errorf("celeris: gnet %s is not laid out as gnet %s, whose unexported fields the gnet engine reaches for read back-pressure, half-close answers, Hijack and refusing connections during shutdown (%v): require github.com/panjf2000/gnet/v2 %s in go.mod (a replace directive if another dependency asks for a later one), or set Config.Engine to EngineStd (or EngineAuto, which then falls back to it)",
				GnetVersion(), PinnedGnet, err, PinnedGnet)
			return
		}
		gnetConnType, loopOffset, pollerOffset, attachOffset, outboundOffset = l.conn, l.loop, l.poller, l.attach, l.outbound
		pauseOK, outboundOK = true, true
	})
	return layoutErr
}

// checkLayout is what Run checks (a variable: tests simulate a mismatch).
var checkLayout = CheckLayout

// GnetVersion is the version of gnet built into the program, as its build
// information records it ("of unknown version" when it cannot tell: a test
// binary records no dependencies).
func GnetVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "of unknown version"
	}
	for _, m := range bi.Deps {
		if m.Path == "github.com/panjf2000/gnet/v2" {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "of unknown version"
}

// layout is where the fields are.
type layout struct {
	conn                           reflect.Type // *gnet.conn
	loop, poller, attach, outbound uintptr
}

// findLayout locates the fields from the type of gnet.Engine: Engine.eng
// (*engine) -> engine.ingress (*eventloop) -> eventloop.poller
// (*netpoll.Poller) and eventloop.connections, whose elements are *conn ->
// conn.loop (*eventloop), conn.pollAttachment, conn.outboundBuffer; and the
// listeners' descriptors (engine.listeners, eventloop.listeners: map[int]*listener
// with listener.fd). It names the first that is missing or of another type.
func findLayout(engine reflect.Type) (layout, error) {
	var l layout
	eng, err := ptrField(engine, "eng")
	if err != nil {
		return l, err
	}
	loop, err := ptrField(eng, "ingress")
	if err != nil {
		return l, err
	}
	if err := listenersField(eng); err != nil {
		return l, err
	}
	if err := listenersField(loop); err != nil {
		return l, err
	}
	if f, ok := eng.FieldByName("eventLoops"); !ok || f.Type.Kind() != reflect.Interface {
		return l, fmt.Errorf("%s.eventLoops is not an interface", eng)
	}
	pf, ok := loop.FieldByName("poller")
	if !ok || pf.Type != pollerPtrType {
		return l, fmt.Errorf("%s.poller is not a %s", loop, pollerPtrType)
	}
	l.poller = pf.Offset
	cf, ok := loop.FieldByName("connections")
	if !ok {
		return l, fmt.Errorf("%s.connections not found", loop)
	}
	conn := connElem(cf.Type)
	if conn == nil {
		return l, fmt.Errorf("%s.connections holds no *conn", loop)
	}
	l.conn = conn
	ct := conn.Elem()
	lf, ok := ct.FieldByName("loop")
	if !ok || lf.Type != reflect.PointerTo(loop) {
		return l, fmt.Errorf("%s.loop is not a *%s", ct, loop)
	}
	af, ok := ct.FieldByName("pollAttachment")
	if !ok || af.Type != attachmentType {
		return l, fmt.Errorf("%s.pollAttachment is not a %s", ct, attachmentType)
	}
	of, ok := ct.FieldByName("outboundBuffer")
	if !ok || of.Type != outboundType {
		return l, fmt.Errorf("%s.outboundBuffer is not a %s", ct, outboundType)
	}
	l.loop, l.attach, l.outbound = lf.Offset, af.Offset, of.Offset
	return l, nil
}

// ptrField returns the struct a pointer field of struct type t points to.
func ptrField(t reflect.Type, name string) (reflect.Type, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct", t)
	}
	f, ok := t.FieldByName(name)
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s.%s is not a pointer to a struct", t, name)
	}
	return f.Type.Elem(), nil
}

// listenersField checks that t.listeners maps to listeners with an int fd.
func listenersField(t reflect.Type) error {
	f, ok := t.FieldByName("listeners")
	if !ok || f.Type.Kind() != reflect.Map || f.Type.Elem().Kind() != reflect.Pointer || f.Type.Elem().Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s.listeners is not a map of listeners", t)
	}
	if fd, ok := f.Type.Elem().Elem().FieldByName("fd"); !ok || fd.Type.Kind() != reflect.Int {
		return fmt.Errorf("%s.fd is not an int", f.Type.Elem().Elem())
	}
	return nil
}

// connElem finds the *conn a connection store holds (gnet keeps them in a map
// or, with the gc_opt tag, in a matrix of slices): the first field whose
// elements, through maps, arrays and slices, are pointers to a struct named conn.
func connElem(t reflect.Type) reflect.Type {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		ft := t.Field(i).Type
		for ft.Kind() == reflect.Map || ft.Kind() == reflect.Array || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && ft.Elem().Name() == "conn" {
			return ft
		}
	}
	return nil
}
