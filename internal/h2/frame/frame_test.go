package frame

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/net/http2"
)

func hdr(length int, t Type, fl Flags, id uint32) []byte {
	return AppendHeader(nil, length, t, fl, id)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		conn    ErrCode // expected ConnError code
		stream  ErrCode // expected StreamError code
		wantErr bool
	}{
		{name: "DATA stream 0", in: cat(hdr(1, TypeData, 0, 0), []byte{0}), conn: ErrCodeProtocol, wantErr: true},
		{name: "DATA pad too long", in: cat(hdr(3, TypeData, FlagPadded, 1), []byte{200, 0, 0}), conn: ErrCodeProtocol, wantErr: true},
		{name: "DATA pad exactly rest", in: cat(hdr(3, TypeData, FlagPadded, 1), []byte{3, 0, 0}), conn: ErrCodeProtocol, wantErr: true},
		{name: "DATA padded empty", in: cat(hdr(0, TypeData, FlagPadded, 1)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "HEADERS stream 0", in: cat(hdr(1, TypeHeaders, FlagEndHeaders, 0), []byte{0x82}), conn: ErrCodeProtocol, wantErr: true},
		{name: "HEADERS pad too long", in: cat(hdr(2, TypeHeaders, FlagPadded|FlagEndHeaders, 1), []byte{5, 0x82}), conn: ErrCodeProtocol, wantErr: true},
		{name: "HEADERS priority short", in: cat(hdr(3, TypeHeaders, FlagPriority, 1), []byte{0, 0, 0}), conn: ErrCodeFrameSize, wantErr: true},
		{name: "PRIORITY stream 0", in: cat(hdr(5, TypePriority, 0, 0), make([]byte, 5)), conn: ErrCodeProtocol, wantErr: true},
		{name: "PRIORITY length 4", in: cat(hdr(4, TypePriority, 0, 1), make([]byte, 4)), stream: ErrCodeFrameSize, wantErr: true},
		{name: "RST_STREAM length 3", in: cat(hdr(3, TypeRSTStream, 0, 1), make([]byte, 3)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "RST_STREAM stream 0", in: cat(hdr(4, TypeRSTStream, 0, 0), make([]byte, 4)), conn: ErrCodeProtocol, wantErr: true},
		{name: "SETTINGS length 5", in: cat(hdr(5, TypeSettings, 0, 0), make([]byte, 5)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "SETTINGS ack payload", in: cat(hdr(6, TypeSettings, FlagAck, 0), make([]byte, 6)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "SETTINGS stream 1", in: cat(hdr(0, TypeSettings, 0, 1)), conn: ErrCodeProtocol, wantErr: true},
		{name: "PING length 7", in: cat(hdr(7, TypePing, 0, 0), make([]byte, 7)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "PING stream 1", in: cat(hdr(8, TypePing, 0, 1), make([]byte, 8)), conn: ErrCodeProtocol, wantErr: true},
		{name: "GOAWAY stream 1", in: cat(hdr(8, TypeGoAway, 0, 1), make([]byte, 8)), conn: ErrCodeProtocol, wantErr: true},
		{name: "GOAWAY short", in: cat(hdr(7, TypeGoAway, 0, 0), make([]byte, 7)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "WINDOW_UPDATE length 3", in: cat(hdr(3, TypeWindowUpdate, 0, 0), make([]byte, 3)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "CONTINUATION stream 0", in: cat(hdr(1, TypeContinuation, 0, 0), []byte{0x82}), conn: ErrCodeProtocol, wantErr: true},
		{name: "PUSH_PROMISE short", in: cat(hdr(3, TypePushPromise, 0, 1), make([]byte, 3)), conn: ErrCodeFrameSize, wantErr: true},
		{name: "too large", in: hdr(16385, TypeData, 0, 1), conn: ErrCodeFrameSize, wantErr: true},
		{name: "unknown type ok", in: cat(hdr(3, Type(0xfa), 0xff, 7), []byte{1, 2, 3})},
		{name: "WINDOW_UPDATE zero ok", in: cat(hdr(4, TypeWindowUpdate, 0, 1), make([]byte, 4))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n, err := Parse(tt.in, 16384)
			if !tt.wantErr {
				if err != nil || n != len(tt.in) {
					t.Fatalf("n=%d err=%v", n, err)
				}
				return
			}
			var ce ConnError
			var se StreamError
			switch {
			case errors.As(err, &ce):
				if tt.conn == 0 && tt.stream != 0 || ce.Code != tt.conn {
					t.Fatalf("got %v, want conn %v stream %v", err, tt.conn, tt.stream)
				}
				if n != 0 {
					t.Fatalf("conn error with n=%d", n)
				}
			case errors.As(err, &se):
				if se.Code != tt.stream || tt.conn != 0 {
					t.Fatalf("got %v, want conn %v stream %v", err, tt.conn, tt.stream)
				}
				if n != len(tt.in) {
					t.Fatalf("stream error n=%d want %d", n, len(tt.in))
				}
			default:
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestParseNeedMore(t *testing.T) {
	full := AppendData(nil, 1, true, []byte("hello"))
	for i := range len(full) {
		if _, n, err := Parse(full[:i], 16384); err != ErrNeedMore || n != 0 {
			t.Fatalf("prefix %d: n=%d err=%v", i, n, err)
		}
	}
	// The size check needs only the header.
	big := hdr(1<<20, TypeData, 0, 1)
	if _, _, err := Parse(big, 16384); !errors.As(err, new(ConnError)) {
		t.Fatalf("oversize header: %v", err)
	}
}

// TestAppendMatchesXNet checks every Append function against x/net's Framer and
// every Parse against the result.
func TestAppendMatchesXNet(t *testing.T) {
	var buf bytes.Buffer
	fr := http2.NewFramer(&buf, nil)
	ping := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	block := []byte{0x82, 0x86, 0x84}
	tests := []struct {
		name  string
		ours  []byte
		xnet  func() error
		check func(t *testing.T, f *Frame)
	}{
		{
			name: "DATA", ours: AppendData(nil, 3, true, []byte("abc")),
			xnet: func() error { return fr.WriteData(3, true, []byte("abc")) },
			check: func(t *testing.T, f *Frame) {
				if f.Type != TypeData || !f.EndStream() || string(f.Data) != "abc" || f.StreamID != 3 {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "DATA padded", ours: AppendDataPadded(nil, 3, false, []byte("abc"), 4),
			xnet: func() error { return fr.WriteDataPadded(3, false, []byte("abc"), make([]byte, 4)) },
			check: func(t *testing.T, f *Frame) {
				if string(f.Data) != "abc" || f.EndStream() || len(f.Payload) != 8 {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "HEADERS", ours: AppendHeaders(nil, 5, false, true, block),
			xnet: func() error {
				return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block, EndHeaders: true})
			},
			check: func(t *testing.T, f *Frame) {
				if !f.EndHeaders() || f.EndStream() || !bytes.Equal(f.Data, block) || f.HasPriority {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "HEADERS priority", ours: AppendHeadersPriority(nil, 5, true, false, Priority{StreamDep: 3, Exclusive: true, Weight: 200}, block),
			xnet: func() error {
				return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block, EndStream: true,
					Priority: http2.PriorityParam{StreamDep: 3, Exclusive: true, Weight: 200}})
			},
			check: func(t *testing.T, f *Frame) {
				if !f.HasPriority || f.Priority != (Priority{StreamDep: 3, Exclusive: true, Weight: 200}) || !bytes.Equal(f.Data, block) {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "CONTINUATION", ours: AppendContinuation(nil, 5, true, block),
			xnet: func() error { return fr.WriteContinuation(5, true, block) },
			check: func(t *testing.T, f *Frame) {
				if !f.EndHeaders() || !bytes.Equal(f.Data, block) {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "PRIORITY", ours: AppendPriority(nil, 7, Priority{StreamDep: 1, Weight: 15}),
			xnet: func() error { return fr.WritePriority(7, http2.PriorityParam{StreamDep: 1, Weight: 15}) },
			check: func(t *testing.T, f *Frame) {
				if f.Priority.StreamDep != 1 || f.Priority.Weight != 15 || f.Priority.Exclusive {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "RST_STREAM", ours: AppendRSTStream(nil, 9, ErrCodeCancel),
			xnet: func() error { return fr.WriteRSTStream(9, http2.ErrCodeCancel) },
			check: func(t *testing.T, f *Frame) {
				if f.ErrCode != ErrCodeCancel {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "SETTINGS", ours: AppendSettings(nil, Setting{ID: SettingMaxFrameSize, Val: 1 << 20}, Setting{ID: SettingEnablePush, Val: 0}),
			xnet: func() error {
				return fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20}, http2.Setting{ID: http2.SettingEnablePush, Val: 0})
			},
			check: func(t *testing.T, f *Frame) {
				if f.NumSettings() != 2 || f.Setting(0) != (Setting{ID: SettingMaxFrameSize, Val: 1 << 20}) || f.Setting(1).ID != SettingEnablePush {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "SETTINGS ack", ours: AppendSettingsAck(nil),
			xnet: func() error { return fr.WriteSettingsAck() },
			check: func(t *testing.T, f *Frame) {
				if !f.IsAck() {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "PUSH_PROMISE", ours: AppendPushPromise(nil, 1, 2, true, block),
			xnet: func() error {
				return fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: block, EndHeaders: true})
			},
			check: func(t *testing.T, f *Frame) {
				if f.PromisedID != 2 || !bytes.Equal(f.Data, block) {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "PING", ours: AppendPing(nil, true, ping),
			xnet: func() error { return fr.WritePing(true, ping) },
			check: func(t *testing.T, f *Frame) {
				if !f.IsAck() || f.PingData() != ping {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "GOAWAY", ours: AppendGoAway(nil, 11, ErrCodeEnhanceYourCalm, []byte("calm")),
			xnet: func() error { return fr.WriteGoAway(11, http2.ErrCodeEnhanceYourCalm, []byte("calm")) },
			check: func(t *testing.T, f *Frame) {
				if f.LastStreamID != 11 || f.ErrCode != ErrCodeEnhanceYourCalm || string(f.Data) != "calm" {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "WINDOW_UPDATE", ours: AppendWindowUpdate(nil, 0, 1<<30),
			xnet: func() error { return fr.WriteWindowUpdate(0, 1<<30) },
			check: func(t *testing.T, f *Frame) {
				if f.Increment != 1<<30 || f.StreamID != 0 {
					t.Fatalf("%+v", f)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf.Reset()
			if err := tt.xnet(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), tt.ours) {
				t.Fatalf("ours %x\nxnet %x", tt.ours, buf.Bytes())
			}
			f, n, err := Parse(tt.ours, 1<<20)
			if err != nil || n != len(tt.ours) {
				t.Fatalf("n=%d err=%v", n, err)
			}
			tt.check(t, &f)
		})
	}
}

func TestSettingValid(t *testing.T) {
	tests := []struct {
		s    Setting
		code ErrCode
		ok   bool
	}{
		{s: Setting{ID: SettingEnablePush, Val: 1}, ok: true},
		{s: Setting{ID: SettingEnablePush, Val: 2}, code: ErrCodeProtocol},
		{s: Setting{ID: SettingInitialWindowSize, Val: 1<<31 - 1}, ok: true},
		{s: Setting{ID: SettingInitialWindowSize, Val: 1 << 31}, code: ErrCodeFlowControl},
		{s: Setting{ID: SettingMaxFrameSize, Val: 16383}, code: ErrCodeProtocol},
		{s: Setting{ID: SettingMaxFrameSize, Val: 1 << 24}, code: ErrCodeProtocol},
		{s: Setting{ID: SettingMaxFrameSize, Val: 1<<24 - 1}, ok: true},
		{s: Setting{ID: 0xff, Val: 12345}, ok: true},
	}
	for _, tt := range tests {
		err := tt.s.Valid()
		if tt.ok != (err == nil) {
			t.Fatalf("%v %d: %v", tt.s.ID, tt.s.Val, err)
		}
		if err != nil && err.(ConnError).Code != tt.code {
			t.Fatalf("%v %d: %v", tt.s.ID, tt.s.Val, err)
		}
	}
}

func TestErrCodeString(t *testing.T) {
	if ErrCodeEnhanceYourCalm.String() != "ENHANCE_YOUR_CALM" || ErrCode(0x99).String() != "unknown error code 0x99" {
		t.Fatal(ErrCodeEnhanceYourCalm.String(), ErrCode(0x99).String())
	}
	for c := ErrCodeNo; c <= ErrCodeHTTP11Required; c++ {
		if c.String() != http2.ErrCode(c).String() {
			t.Fatalf("%d: %s vs %s", c, c, http2.ErrCode(c))
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	in := AppendHeadersPriority(nil, 5, true, true, Priority{StreamDep: 3}, []byte{0x82})
	in = AppendSettings(in, Setting{ID: SettingMaxFrameSize, Val: 1 << 20})
	n := testing.AllocsPerRun(100, func() {
		b := AppendData(buf[:0], 1, true, []byte("x"))
		b = AppendHeaders(b, 1, true, true, []byte{0x82})
		b = AppendSettings(b, Setting{ID: SettingMaxFrameSize, Val: 1 << 20})
		b = AppendWindowUpdate(b, 1, 10)
		_ = AppendPing(b, true, [8]byte{})
		off := 0
		for off < len(in) {
			_, k, err := Parse(in[off:], 16384)
			if err != nil {
				panic(err)
			}
			off += k
		}
	})
	if n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(AppendData(nil, 1, true, []byte("abc")))
	f.Add(AppendHeadersPriority(nil, 1, true, true, Priority{StreamDep: 3}, []byte{0x82}))
	f.Add(AppendSettings(nil, Setting{ID: SettingMaxFrameSize, Val: 1 << 20}))
	f.Add(AppendGoAway(nil, 1, ErrCodeCancel, []byte("x")))
	f.Add(AppendDataPadded(nil, 1, true, []byte("abc"), 3))
	f.Fuzz(func(t *testing.T, in []byte) {
		for len(in) > 0 {
			fr, n, err := Parse(in, 16384)
			if err == ErrNeedMore {
				return
			}
			var se StreamError
			if err != nil && !errors.As(err, &se) {
				if n != 0 {
					t.Fatalf("conn error with n=%d", n)
				}
				return
			}
			if n < HeaderLen || n > len(in) || int(fr.Length) != n-HeaderLen {
				t.Fatalf("bad n=%d len=%d", n, fr.Length)
			}
			if len(fr.Data) > len(fr.Payload) {
				t.Fatal("data longer than payload")
			}
			in = in[n:]
		}
	})
}

func BenchmarkParse(b *testing.B) {
	in := AppendHeaders(nil, 1, true, true, make([]byte, 40))
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = Parse(in, 16384)
	}
}
