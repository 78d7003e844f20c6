package ws

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
)

// permessage-deflate (RFC 7692).
//
// A compressed message is the DEFLATE stream of its payload after a sync flush,
// less the flush's final 0x00 0x00 0xff 0xff (§7.2.1); its first frame has RSV1
// set. With context takeover each side's compressor keeps its sliding window from
// one message to the next; without, every message is compressed on its own. Go's
// compress/flate always compresses with a 32 KiB window (server_max_window_bits
// 15), so an offer that limits the server's window is declined; it inflates with
// any window, so client_max_window_bits is accepted as offered.

// ErrInflate is a compressed message that is not valid DEFLATE data.
var ErrInflate = errors.New("ws: invalid compressed message")

// DeflateParams are the negotiated parameters of permessage-deflate.
type DeflateParams struct {
	ServerNoContextTakeover bool // the server compresses each message alone
	ClientNoContextTakeover bool // the client compresses each message alone
}

// Response is the extension's Sec-WebSocket-Extensions element for the answer.
func (p DeflateParams) Response() string {
	s := "permessage-deflate"
	if p.ServerNoContextTakeover {
		s += "; server_no_context_takeover"
	}
	if p.ClientNoContextTakeover {
		s += "; client_no_context_takeover"
	}
	return s
}

// NegotiateDeflate picks the first permessage-deflate offer of the client's
// Sec-WebSocket-Extensions values that the server can accept (RFC 7692 §5,
// §7.1). With takeover false the server asks for no context takeover both ways
// (no window kept between messages: less memory per connection). ok is false
// when no offer is acceptable.
func NegotiateDeflate(values []string, takeover bool) (p DeflateParams, ok bool) {
	for _, v := range values {
		for _, offer := range strings.Split(v, ",") {
			if p, ok := acceptOffer(offer, takeover); ok {
				return p, true
			}
		}
	}
	return DeflateParams{}, false
}

func acceptOffer(offer string, takeover bool) (DeflateParams, bool) {
	parts := strings.Split(offer, ";")
	if strings.TrimSpace(parts[0]) != "permessage-deflate" {
		return DeflateParams{}, false
	}
	p := DeflateParams{ServerNoContextTakeover: !takeover, ClientNoContextTakeover: !takeover}
	seen := map[string]bool{}
	for _, param := range parts[1:] {
		name, value, hasValue := strings.Cut(strings.TrimSpace(param), "=")
		name = strings.TrimSpace(name)
		value = strings.Trim(strings.TrimSpace(value), `"`)
		if seen[name] {
			return DeflateParams{}, false // §7: a parameter twice declines the offer
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover":
			if hasValue {
				return DeflateParams{}, false
			}
			p.ServerNoContextTakeover = true
		case "client_no_context_takeover":
			if hasValue {
				return DeflateParams{}, false
			}
			p.ClientNoContextTakeover = true
		case "server_max_window_bits":
			bits, err := strconv.Atoi(value)
			if !hasValue || err != nil || bits < 8 || bits > 15 {
				return DeflateParams{}, false
			}
			if bits < 15 {
				return DeflateParams{}, false // compress/flate's window is 2^15
			}
		case "client_max_window_bits":
			if hasValue {
				if bits, err := strconv.Atoi(value); err != nil || bits < 8 || bits > 15 {
					return DeflateParams{}, false
				}
			}
		default:
			return DeflateParams{}, false // §7: an unknown parameter declines the offer
		}
	}
	return p, true
}

// Deflate is one connection's compression state. Compress is used by writers
// (serialised by wmu), Inflate by the single reader of the connection's messages.
type Deflate struct {
	Params DeflateParams
	Level  int // compress/flate level; 0: flate.BestSpeed

	wmu sync.Mutex
	fw  *flate.Writer
	out bytes.Buffer

	src  bytes.Reader
	dict []byte // the last 32 KiB the client's messages inflated to (context takeover)
}

// deflateTail ends every compressed message before its tail is removed.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

const windowSize = 32 << 10

// Without context takeover a compressor or decompressor is needed only while a
// message is compressed or inflated: they come from pools, so an idle connection
// holds none (a compressor is some 100s of KiB, a decompressor some 10s).
var (
	writerPools [12]sync.Pool // by level + 2 (flate.HuffmanOnly is -2)
	readerPool  sync.Pool
)

// Compress appends the compressed form of p (without the final
// 0x00 0x00 0xff 0xff) to dst. Safe for concurrent use.
func (d *Deflate) Compress(dst, p []byte) []byte {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	level := d.Level
	if level == 0 || level < flate.HuffmanOnly || level > flate.BestCompression {
		level = flate.BestSpeed
	}
	d.out.Reset()
	fw := d.fw
	switch {
	case fw != nil:
	case d.Params.ServerNoContextTakeover:
		if w, _ := writerPools[level+2].Get().(*flate.Writer); w != nil {
			fw = w
			fw.Reset(&d.out)
		}
	}
	if fw == nil {
		fw, _ = flate.NewWriter(&d.out, level)
	}
	_, _ = fw.Write(p)
	_ = fw.Flush()
	if d.Params.ServerNoContextTakeover {
		writerPools[level+2].Put(fw)
	} else {
		d.fw = fw // the window goes on to the next message
	}
	b := bytes.TrimSuffix(d.out.Bytes(), deflateTail)
	if len(b) == 0 {
		b = []byte{0x00} // an empty message: one empty stored block, tail removed (§7.2.3.6)
	}
	dst = append(dst, b...)
	if d.out.Cap() > 64<<10 {
		d.out = bytes.Buffer{}
	}
	return dst
}

// Inflate appends the message p inflates to to dst. More than max bytes (when
// max > 0) is ErrMessageTooBig: a small compressed message cannot blow up
// (decompression bomb). Not safe for concurrent use.
func (d *Deflate) Inflate(dst, p []byte, max int64) ([]byte, error) {
	d.src.Reset(p)
	r := io.MultiReader(&d.src, bytes.NewReader(deflateTail))
	var dict []byte
	if !d.Params.ClientNoContextTakeover {
		dict = d.dict
	}
	// The client's window is d.dict: the decompressor itself keeps nothing
	// between messages, so it comes from a pool.
	fr, _ := readerPool.Get().(io.ReadCloser)
	if fr != nil {
		_ = fr.(flate.Resetter).Reset(r, dict)
	} else {
		fr = flate.NewReaderDict(r, dict)
	}
	defer readerPool.Put(fr)
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := fr.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if max > 0 && int64(len(dst)-start) > max {
			return dst[:start], ErrMessageTooBig
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break // the stream ends at the sync flush, without a final block
		}
		if err != nil {
			return dst[:start], ErrInflate
		}
	}
	if !d.Params.ClientNoContextTakeover {
		// The client's next message may refer to the last 32 KiB of this one (and
		// of earlier ones when this one is short).
		out := dst[start:]
		if len(out) >= windowSize {
			d.dict = append(d.dict[:0], out[len(out)-windowSize:]...)
		} else {
			d.dict = append(d.dict, out...)
			if len(d.dict) > windowSize {
				d.dict = append(d.dict[:0], d.dict[len(d.dict)-windowSize:]...)
			}
		}
	}
	return dst, nil
}
