package h2

import (
	"reflect"
	"testing"
	"unsafe"
)

// dirty sets every settable bool, integer and slice field of v (a struct,
// addressable) to a non-zero value, recursing into structs; it skips names in
// skip.
func dirty(t *testing.T, v reflect.Value, skip map[string]bool) {
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if skip[name] {
			continue
		}
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(7)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Interface:
			if f.Type().Name() == "error" {
				f.Set(reflect.ValueOf(ErrStreamClosed))
			}
		case reflect.Struct:
			dirty(t, f, skip)
		}
	}
}

// zeroExcept fails for every field of v (recursively) that is not zero, other
// than the names in keep.
func zeroExcept(t *testing.T, path string, v reflect.Value, keep map[string]bool) {
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if keep[name] {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct && !f.IsZero() {
			zeroExcept(t, path+"."+name, f, keep)
			continue
		}
		if !f.IsZero() {
			t.Errorf("%s.%s not reset by maybeRecycle: %v", path, name, f)
		}
	}
}

// TestRecycleResetsEveryField dirties every field of a stream, recycles it and
// checks that only the fields meant to survive (buffers kept for reuse, the
// constant links) did.
func TestRecycleResetsEveryField(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	c := hs.c
	s := c.newStream(1)
	// The links, the request (reset by Request.Reset, tested in httpmsg) and the
	// context pointer are not dirtied here.
	dirty(t, reflect.ValueOf(s).Elem(), map[string]bool{"c": true, "req": true, "ctx": true, "cond": true, "reader": true})
	s.ctx.Store(&reqCtx{})
	s.closed, s.free, s.running, s.waiting, s.inSendq = true, false, false, false, false
	s.sh.inReady = false
	c.free = c.free[:0]
	c.maybeRecycle(s)
	if len(c.free) != 1 || c.free[0] != s {
		t.Fatal("not recycled")
	}
	if !s.closed || !s.free {
		t.Fatal("a recycled stream must stay closed and free")
	}
	s.closed, s.free = false, false
	if s.ctx.Load() != nil {
		t.Error("ctx kept")
	}
	// Buffers survive emptied.
	for name, n := range map[string]int{"body": len(s.body), "sh.data": len(s.sh.data), "sh.in": len(s.sh.in),
		"sh.hdr.buf": len(s.sh.hdr.buf), "sh.hdr.fields": len(s.sh.hdr.fields),
		"sh.trailer.buf": len(s.sh.trailer.buf), "sh.trailer.fields": len(s.sh.trailer.fields)} {
		if n != 0 {
			t.Errorf("%s not emptied", name)
		}
	}
	zeroExcept(t, "stream", reflect.ValueOf(s).Elem(), map[string]bool{
		"c": true, "req": true, "cond": true, "reader": true, "ctx": true,
		"body": true, "data": true, "in": true, "buf": true, "fields": true,
	})
}
