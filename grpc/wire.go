package celerisgrpc

// The gRPC over HTTP/2 wire pieces that do not depend on the transport:
// length-prefixed messages, grpc-timeout, grpc-message percent-encoding and
// binary metadata (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// prefixLen is the size of a message's prefix: a compressed flag byte and a
// big-endian uint32 length.
const prefixLen = 5

// msgReader reads length-prefixed messages from a request body.
type msgReader struct {
	r    io.Reader
	max  int // largest message accepted (after decompression)
	hdr  [prefixLen]byte
	buf  []byte              // the last message; reused by the next read
	comp encoding.Compressor // the request's grpc-encoding; nil: identity
	zbuf []byte              // a compressed message's bytes
}

// errors the reader returns besides the body's own, as gRPC statuses.
var (
	errTruncated = status.Error(codes.Internal, "grpc: truncated message: the request body ended inside a message")
)

// next reads the next message. It returns io.EOF when the body ends cleanly
// between messages; a status error for a bad prefix, a message over max or a
// body that ends inside a message; otherwise the body's error. The message is
// valid until the next call.
func (mr *msgReader) next() ([]byte, error) {
	n, err := io.ReadFull(mr.r, mr.hdr[:])
	if err != nil {
		if err == io.EOF && n == 0 {
			return nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return nil, errTruncated
		}
		return nil, err
	}
	size, err := checkPrefix(mr.hdr, mr.max, mr.comp != nil)
	if err != nil {
		return nil, err
	}
	if mr.hdr[0] == 1 {
		return mr.nextCompressed(size)
	}
	if cap(mr.buf) < size {
		mr.buf = make([]byte, size)
	}
	mr.buf = mr.buf[:size]
	if _, err := io.ReadFull(mr.r, mr.buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errTruncated
		}
		return nil, err
	}
	return mr.buf, nil
}

// nextCompressed reads a compressed message of size bytes and decompresses
// it, refusing more than max bytes of output (a small compressed message may
// expand to any size: a decompression bomb).
func (mr *msgReader) nextCompressed(size int) ([]byte, error) {
	if cap(mr.zbuf) < size {
		mr.zbuf = make([]byte, size)
	}
	mr.zbuf = mr.zbuf[:size]
	if _, err := io.ReadFull(mr.r, mr.zbuf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errTruncated
		}
		return nil, err
	}
	dr, err := mr.comp.Decompress(bytes.NewReader(mr.zbuf))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	buf := bytes.NewBuffer(mr.buf[:0])
	n, err := buf.ReadFrom(io.LimitReader(dr, int64(mr.max)+1))
	mr.buf = buf.Bytes()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	if n > int64(mr.max) {
		return nil, status.Errorf(codes.ResourceExhausted, "grpc: received message after decompression larger than max %d", mr.max)
	}
	return mr.buf, nil
}

// checkPrefix validates a message prefix and returns the message length.
// A flag other than 0 or 1 is a protocol error; 1 (compressed) without a
// negotiated encoding is Internal (the gRPC spec); a length over max is
// ResourceExhausted, as grpc-go answers.
func checkPrefix(hdr [prefixLen]byte, max int, encoded bool) (int, error) {
	switch hdr[0] {
	case 0:
	case 1:
		if !encoded {
			return 0, status.Error(codes.Internal, "grpc: compressed flag set with identity or empty encoding")
		}
	default:
		return 0, status.Errorf(codes.Internal, "grpc: invalid message prefix flag %d", hdr[0])
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if uint64(n) > uint64(max) {
		return 0, status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, max)
	}
	return int(n), nil
}

// appendMsg appends m's encoding behind a prefix to b; compressed with comp
// (flag 1) unless comp is nil. scratch is a buffer for the uncompressed
// encoding, returned for reuse.
func appendMsg(b []byte, m any, max int, comp encoding.Compressor, scratch []byte) ([]byte, []byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return b, scratch, status.Errorf(codes.Internal, "grpc: error while marshaling: message is %T, not a proto.Message", m)
	}
	start := len(b)
	if comp == nil {
		b = append(b, 0, 0, 0, 0, 0)
		b, err := proto.MarshalOptions{}.MarshalAppend(b, pm)
		if err != nil {
			return b[:start], scratch, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
		}
		n := len(b) - start - prefixLen
		if n > max {
			return b[:start], scratch, status.Errorf(codes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", n, max)
		}
		binary.BigEndian.PutUint32(b[start+1:], uint32(n))
		return b, scratch, nil
	}
	raw, err := proto.MarshalOptions{}.MarshalAppend(scratch[:0], pm)
	if err != nil {
		return b, raw, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	if len(raw) > max {
		return b, raw, status.Errorf(codes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", len(raw), max)
	}
	buf := bytes.NewBuffer(append(b, 1, 0, 0, 0, 0))
	zw, err := comp.Compress(buf)
	if err == nil {
		_, err = zw.Write(raw)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	b = buf.Bytes()
	if err != nil {
		return b[:start], raw, status.Errorf(codes.Internal, "grpc: error while compressing: %v", err)
	}
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-prefixLen))
	return b, raw, nil
}

// decodeMsg decodes b into m.
func decodeMsg(b []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "grpc: error while unmarshaling: message is %T, not a proto.Message", m)
	}
	if err := proto.Unmarshal(b, pm); err != nil {
		return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

// decodeTimeout parses a grpc-timeout value: at most 8 digits and a unit
// (H, M, S, m, u, n).
func decodeTimeout(s string) (time.Duration, error) {
	if len(s) < 2 || len(s) > 9 {
		return 0, fmt.Errorf("grpc: malformed grpc-timeout %q", s)
	}
	var unit time.Duration
	switch s[len(s)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, fmt.Errorf("grpc: malformed grpc-timeout unit in %q", s)
	}
	var v int64
	for _, ch := range []byte(s[:len(s)-1]) {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("grpc: malformed grpc-timeout %q", s)
		}
		v = v*10 + int64(ch-'0')
	}
	const maxHours = int64(1<<63-1) / int64(time.Hour)
	if unit == time.Hour && v > maxHours || unit == time.Minute && v > maxHours*60 {
		return time.Duration(1<<63 - 1), nil
	}
	return time.Duration(v) * unit, nil
}

// encodeGRPCMessage percent-encodes a status message (the spec's
// Percent-Encoded: bytes outside 0x20-0x7E, and '%', as %XX).
func encodeGRPCMessage(msg string) string {
	i := 0
	for ; i < len(msg); i++ {
		if c := msg[i]; c < 0x20 || c > 0x7e || c == '%' {
			break
		}
	}
	if i == len(msg) {
		return msg
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(msg) + 16)
	b.WriteString(msg[:i])
	for ; i < len(msg); i++ {
		c := msg[i]
		if c < 0x20 || c > 0x7e || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// statusOf converts a handler's error to a status, as grpc-go does: a status
// error keeps its code; a context error becomes Canceled or DeadlineExceeded;
// anything else is Unknown.
func statusOf(err error) *status.Status {
	if st, ok := status.FromError(err); ok {
		return st
	}
	return status.FromContextError(err)
}

// statusTrailer returns the grpc-status, grpc-message and
// grpc-status-details-bin values of st (nil: OK).
func statusTrailer(st *status.Status) (code, msg, details string) {
	if st == nil {
		return "0", "", ""
	}
	code = strconv.Itoa(int(st.Code()))
	msg = encodeGRPCMessage(st.Message())
	if p := st.Proto(); p != nil && len(p.Details) > 0 {
		if b, err := proto.Marshal(p); err == nil {
			details = base64.RawStdEncoding.EncodeToString(b)
		}
	}
	return code, msg, details
}

// reservedHeader reports a request field that does not become metadata
// (grpc-go's isReservedHeader, less the whitelisted user-agent).
func reservedHeader(k string) bool {
	if k != "" && k[0] == ':' {
		return true
	}
	switch k {
	case "content-type", "grpc-message-type", "grpc-encoding", "grpc-message",
		"grpc-status", "grpc-timeout", "te":
		return true
	}
	return false
}

// decodeMetadataValue decodes a -bin value (base64, padded or not).
func decodeMetadataValue(k, v string) (string, error) {
	if !strings.HasSuffix(k, "-bin") {
		return v, nil
	}
	var b []byte
	var err error
	if len(v)%4 == 0 {
		b, err = base64.StdEncoding.DecodeString(v)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(v)
	}
	return string(b), err
}

// encodeMetadataValue encodes a -bin value for the wire.
func encodeMetadataValue(k, v string) string {
	if strings.HasSuffix(k, "-bin") {
		return base64.RawStdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// visitMD calls fn with every wire field of md, -bin values encoded, skipping
// fields a handler may not set (pseudo and reserved ones).
func visitMD(md metadata.MD, fn func(k, v string)) {
	for k, vs := range md {
		if reservedHeader(k) {
			continue
		}
		for _, v := range vs {
			fn(k, encodeMetadataValue(k, v))
		}
	}
}

func reflectType(handlerType any) reflect.Type { return reflect.TypeOf(handlerType).Elem() }

func reflectImplements(impl any, t reflect.Type) bool {
	return reflect.TypeOf(impl).Implements(t)
}
