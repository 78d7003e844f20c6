package h1

import (
	"net"
	"reflect"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestFillSetsEveryField: clear zeroes only the fields of httpmsg.Request that fill
// does not set, so an exchange filled after holding anything at all must equal a
// fresh one filled from the same head. A field added to httpmsg.Request that
// neither sets fails here, with its name.
func TestFillSetsEveryField(t *testing.T) {
	heads := []string{
		"GET /a?b=c HTTP/1.1\r\nHost: h\r\nX: y\r\n\r\n",
		"POST /p HTTP/1.0\r\nContent-Length: 3\r\n\r\n",
		"POST http://h:1/q HTTP/1.1\r\nHost: h:1\r\nTransfer-Encoding: chunked\r\n\r\n",
	}
	for _, head := range heads {
		var r Request
		buf := []byte(head)
		n, err := ParseHead(buf, &r, nil)
		if err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		cn := NewConn(&memConn{}, &ServerConfig{Handler: recycleHandler{}})
		fresh := &exchange{conn: cn}
		fresh.fill(buf[:n], &r)

		dirty := &exchange{conn: cn}
		dirtyFields(t, reflect.ValueOf(&dirty.msg).Elem())
		dirty.msg.Spare = nil // kept on purpose (KeepsSpare)
		dirty.fill(buf[:n], &r)

		fv, dv := reflect.ValueOf(fresh.msg), reflect.ValueOf(dirty.msg)
		for i := range fv.NumField() {
			name := fv.Type().Field(i).Name
			a, b := fv.Field(i), dv.Field(i)
			if a.Kind() == reflect.Slice && a.Len() == 0 && b.Len() == 0 {
				continue // nil and empty are the same request
			}
			if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				t.Errorf("%q: httpmsg.Request.%s = %v after fill over a used exchange, %v over a fresh one: neither clear nor fill sets it",
					head, name, dv.Field(i).Interface(), fv.Field(i).Interface())
			}
		}
		if !dirty.msg.KeepsSpare {
			t.Errorf("%q: KeepsSpare is false after fill", head)
		}
	}
}

// dirtyFields sets every exported field of the struct v to a non-zero value.
func dirtyFields(t *testing.T, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("stale")
		case reflect.Int, reflect.Int64:
			f.SetInt(99)
		case reflect.Uint32:
			f.SetUint(99)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			if s.Index(0).Kind() == reflect.Struct {
				dirtyFields(t, s.Index(0))
			} else if s.Index(0).Kind() == reflect.Uint8 {
				s.Index(0).SetUint('x')
			}
			f.Set(s)
		case reflect.Interface:
			switch {
			case reflect.TypeFor[net.Addr]().AssignableTo(f.Type()) && f.Type() == reflect.TypeFor[net.Addr]():
				f.Set(reflect.ValueOf(net.Addr(&net.TCPAddr{Port: 9})))
			case f.Type().NumMethod() == 0:
				f.Set(reflect.ValueOf("stale"))
			case f.Type() == reflect.TypeFor[httpmsg.Spare]():
				f.Set(reflect.ValueOf(httpmsg.Spare(&countSpare{})))
			default: // io.Reader and the like
				f.Set(reflect.ValueOf(&staleReader{}))
			}
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("dirtyFields: field %s of kind %s: teach the test", v.Type().Field(i).Name, f.Kind())
		}
	}
}

type staleReader struct{}

func (*staleReader) Read([]byte) (int, error) { return 0, nil }

// countSpare counts its Recycle calls.
type countSpare struct{ recycled int }

func (s *countSpare) Recycle() { s.recycled++ }

// spareHandler leaves a countSpare with every Request that keeps one, as the
// framework's Server leaves its Context, and records what Prepare found.
type spareHandler struct {
	made  []*countSpare
	found int // Prepare calls that found a Spare
}

func (h *spareHandler) Prepare(req *httpmsg.Request) bool {
	if req.Spare != nil {
		h.found++
		req.Route, req.Spare = req.Spare, nil
	}
	return true
}

func (h *spareHandler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	s, _ := req.Route.(*countSpare)
	if s == nil {
		s = &countSpare{}
		h.made = append(h.made, s)
	}
	if req.KeepsSpare {
		req.Spare = s
	}
	_ = w.WriteResponse(200, nil, nil)
}

// TestSpareKeptAndRecycled: an exchange keeps the Spare its handler left for the
// next request it carries, and the connection hands every Spare it holds back
// (Recycle, once) when it is released, so none is lost to the garbage collector.
func TestSpareKeptAndRecycled(t *testing.T) {
	h := &spareHandler{}
	mc := &memConn{}
	cn := NewConn(mc, &ServerConfig{Handler: h})
	req := "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
	for range 5 {
		if _, err := cn.OnData([]byte(req)); err != nil {
			t.Fatal(err)
		}
		cn.AfterFlush(0)
	}
	// Inline, pipelined requests are served one after another by the same exchange.
	if _, err := cn.OnData([]byte(req + req + req)); err != nil {
		t.Fatal(err)
	}
	cn.AfterFlush(0)
	if len(h.made) != 1 || h.found != 7 {
		t.Fatalf("made %d Spares, Prepare found one %d times; want 1 and 7", len(h.made), h.found)
	}
	cn.release()
	for i, s := range h.made {
		if s.recycled != 1 {
			t.Errorf("Spare %d recycled %d times, want 1", i, s.recycled)
		}
	}
}
