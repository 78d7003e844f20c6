package h1

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// view is a comparable copy of a parsed Request.
type view struct {
	Method, URI, Path, Query, Host string
	HasQuery                       bool
	Minor                          uint8
	Headers                        []string // "Name: Value"; compared only when the want sets it
	ContentLength                  int64
	Chunked, KeepAlive, Expect100  bool
	UpgradeH2C                     bool
	HTTP2Settings                  string
	HeadLen                        int
}

func viewOf(r *Request) view {
	v := view{
		Method: string(r.Method), URI: string(r.URI), Path: string(r.Path),
		Query: string(r.Query), HasQuery: r.Query != nil, Host: string(r.Host),
		Minor: r.Minor, ContentLength: r.ContentLength, Chunked: r.Chunked,
		KeepAlive: r.KeepAlive, Expect100: r.Expect100, UpgradeH2C: r.UpgradeH2C,
		HTTP2Settings: string(r.HTTP2Settings), HeadLen: r.HeadLen,
	}
	for _, f := range r.Headers {
		v.Headers = append(v.Headers, string(f.Name)+": "+string(f.Value))
	}
	return v
}

// get is the view of "GET / HTTP/1.1" with "Host: h", changed by fn.
func get(fn func(v *view)) *view {
	v := &view{Method: "GET", URI: "/", Path: "/", Host: "h", Minor: 1, ContentLength: -1, KeepAlive: true}
	if fn != nil {
		fn(v)
	}
	return v
}

type parseTest struct {
	name   string
	in     string
	lim    *Limits
	status int   // the refusal's status; 0 when the head is valid
	want   *view // for a valid head; HeadLen 0 means len(in)
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

func fields(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "X-F%d: v%d\r\n", i, i)
	}
	return b.String()
}

var small = &Limits{MaxURILength: 16, MaxHeaderBytes: 64, MaxHeaderCount: 3, MaxBodySize: 100}

var parseTests = []parseTest{
	// Valid requests.
	{name: "simple", in: "GET / HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.Headers = []string{"Host: h"} })},
	{name: "headers", in: "GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: h\r\nAccept:  text/html \t\r\nX-Empty:\r\nX-Sp:   \r\nUser-Agent: t\r\n\r\n",
		want: get(func(v *view) {
			v.URI, v.Path, v.Query, v.HasQuery = "/a/b?x=1&y=2", "/a/b", "x=1&y=2", true
			v.Headers = []string{"Host: h", "Accept: text/html", "X-Empty: ", "X-Sp: ", "User-Agent: t"}
		})},
	{name: "empty query", in: "GET /p? HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.URI, v.Path, v.HasQuery = "/p?", "/p", true })},
	{name: "query with ?", in: "GET /p?a?b=/c HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.URI, v.Path, v.Query, v.HasQuery = "/p?a?b=/c", "/p", "a?b=/c", true })},
	{name: "pipelined", in: "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
		want: get(func(v *view) { v.URI, v.Path, v.HeadLen = "/1", "/1", len("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n") })},
	{name: "body follows", in: "POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
		want: get(func(v *view) {
			v.Method, v.URI, v.Path, v.ContentLength, v.HeadLen = "POST", "/u", "/u", 5, len("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n")
		})},
	{name: "absolute-form", in: "GET http://example.com:8080/a?b HTTP/1.1\r\nHost: other\r\n\r\n",
		want: get(func(v *view) {
			v.URI, v.Path, v.Query, v.HasQuery, v.Host = "http://example.com:8080/a?b", "/a", "b", true, "example.com:8080"
		})},
	{name: "absolute-form no path", in: "GET HTTP://Example.com HTTP/1.1\r\nHost: x\r\n\r\n",
		want: get(func(v *view) { v.URI, v.Host = "HTTP://Example.com", "Example.com" })},
	{name: "absolute-form query only", in: "GET https://[::1]:443?q=1 HTTP/1.1\r\nHost: x\r\n\r\n",
		want: get(func(v *view) { v.URI, v.Query, v.HasQuery, v.Host = "https://[::1]:443?q=1", "q=1", true, "[::1]:443" })},
	{name: "OPTIONS *", in: "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.Method, v.URI, v.Path = "OPTIONS", "*", "*" })},
	{name: "CONNECT", in: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		want: get(func(v *view) { v.Method, v.URI, v.Path, v.Host = "CONNECT", "example.com:443", "", "example.com:443" })},
	{name: "unknown method", in: "M-SEARCH!x /q HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.Method, v.URI, v.Path = "M-SEARCH!x", "/q", "/q" })},
	{name: "HTTP/1.0 without Host", in: "GET / HTTP/1.0\r\n\r\n", want: get(func(v *view) { v.Minor, v.Host, v.KeepAlive = 0, "", false })},
	{name: "HTTP/1.0 keep-alive", in: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.Minor = 0 })},
	{name: "HTTP/1.0 keep-alive then close", in: "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", want: get(func(v *view) { v.Minor, v.Host, v.KeepAlive = 0, "", false })},
	{name: "close", in: "GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, CLOSE\r\n\r\n", want: get(func(v *view) { v.KeepAlive = false })},
	{name: "LF only", in: "GET / HTTP/1.1\nHost: h\nX: y\n\n", want: get(func(v *view) { v.Headers = []string{"Host: h", "X: y"} })},
	{name: "mixed line ends", in: "GET / HTTP/1.1\nHost: h\r\nX: y\n\r\n", want: get(func(v *view) { v.Headers = []string{"Host: h", "X: y"} })},
	{name: "obs-text and tabs", in: "GET / HTTP/1.1\r\nHost: h\r\nX: \tcaf\xc3\xa9 \x80\xff\tz\t \r\n\r\n",
		want: get(func(v *view) { v.Headers = []string{"Host: h", "X: caf\xc3\xa9 \x80\xff\tz"} })},
	{name: "leading CRLF", in: "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", want: get(nil)},
	{name: "four leading empty lines", in: "\r\n\n\r\n\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", want: get(nil)},
	{name: "token name chars", in: "GET / HTTP/1.1\r\nHost: h\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n",
		want: get(func(v *view) { v.Headers = []string{"Host: h", "!#$%&'*+-.^_`|~09azAZ: v"} })},
	{name: "target specials", in: "GET /%41%20;p=1/a:b@c!$&'()*+,=~?x=[]{}|\\^`\"<> HTTP/1.1\r\nHost: h\r\n\r\n",
		want: get(func(v *view) {
			v.URI, v.Path, v.Query, v.HasQuery = "/%41%20;p=1/a:b@c!$&'()*+,=~?x=[]{}|\\^`\"<>", "/%41%20;p=1/a:b@c!$&'()*+,=~", "x=[]{}|\\^`\"<>", true
		})},
	{name: "host IPv6", in: "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", want: get(func(v *view) { v.Host = "[::1]:8080" })},
	{name: "host IPv6 without port", in: "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", want: get(func(v *view) { v.Host = "[::1]" })},
	{name: "host IPv4 and port", in: "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", want: get(func(v *view) { v.Host = "127.0.0.1:80" })},
	{name: "host empty port", in: "GET / HTTP/1.1\r\nHost: h:\r\n\r\n", want: get(func(v *view) { v.Host = "h:" })}, // RFC 3986 §3.2.3: port = *DIGIT
	{name: "host pct-encoded and sub-delims", in: "GET / HTTP/1.1\r\nHost: a%41-b_c~d!$&'()*+,;=e:8080\r\n\r\n", want: get(func(v *view) { v.Host = "a%41-b_c~d!$&'()*+,;=e:8080" })},
	{name: "CONNECT IPv6", in: "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n",
		want: get(func(v *view) { v.Method, v.URI, v.Path, v.Host = "CONNECT", "[::1]:443", "", "[::1]:443" })},
	{name: "method at limit", in: rep("A", MaxMethodLength) + " / HTTP/1.1\r\nHost: h\r\n\r\n", want: get(func(v *view) { v.Method = rep("A", MaxMethodLength) })},
	{name: "content-length", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\n\r\n", want: get(func(v *view) { v.Method, v.ContentLength = "POST", 7 })},
	{name: "content-length zero", in: "POST / HTTP/1.1\r\nHost: h\r\ncontent-length: 0\r\n\r\n", want: get(func(v *view) { v.Method, v.ContentLength = "POST", 0 })},
	{name: "content-length list", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5,,5\r\n\r\n", want: get(func(v *view) { v.Method, v.ContentLength = "POST", 5 })},
	{name: "content-length twice", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nCONTENT-LENGTH: 5\r\n\r\n", want: get(func(v *view) { v.Method, v.ContentLength = "POST", 5 })},
	{name: "chunked", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", want: get(func(v *view) { v.Method, v.Chunked = "POST", true })},
	{name: "chunked case and empty elements", in: "POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: , ChUnKeD ,\r\n\r\n", want: get(func(v *view) { v.Method, v.Chunked = "POST", true })},
	{name: "expect", in: "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n",
		want: get(func(v *view) { v.Method, v.Expect100, v.ContentLength = "POST", true, 1 })},
	{name: "expect ignored on 1.0", in: "POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", want: get(func(v *view) { v.Method, v.Minor, v.Host, v.KeepAlive = "POST", 0, "", false })},
	{name: "h2c upgrade", in: "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: websocket, H2C\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
		want: get(func(v *view) { v.UpgradeH2C, v.HTTP2Settings = true, "AAMAAABkAARAAAAAAAIAAAAA" })},
	{name: "h2c without connection option", in: "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA\r\n\r\n", want: get(nil)},
	{name: "h2c with two settings", in: "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA\r\nHTTP2-Settings: AAMA\r\n\r\n", want: get(nil)},
	{name: "h2c on 1.0", in: "GET / HTTP/1.0\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA\r\n\r\n", want: get(func(v *view) { v.Minor, v.Host, v.KeepAlive = 0, "", false })},
	{name: "32 fields", in: "GET / HTTP/1.1\r\nHost: h\r\n" + fields(31) + "\r\n", want: get(nil)},
	{name: "100 fields", in: "GET / HTTP/1.1\r\nHost: h\r\n" + fields(99) + "\r\n", want: get(nil)},
	{name: "256 fields", in: "GET / HTTP/1.1\r\nHost: h\r\n" + fields(255) + "\r\n", want: get(nil)},
	{name: "URI at limit", in: "GET /" + rep("a", 15) + " HTTP/1.0\r\n\r\n", lim: small,
		want: get(func(v *view) {
			v.URI, v.Path, v.Minor, v.Host, v.KeepAlive = "/"+rep("a", 15), "/"+rep("a", 15), 0, "", false
		})},
	{name: "header bytes at limit", in: "GET / HTTP/1.1\r\nHost: h\r\nX: " + rep("a", 32) + "\r\n\r\n", lim: small, want: get(nil)},
	{name: "field count at limit", in: "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", lim: small, want: get(nil)},
	{name: "body size at limit", in: "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n", lim: small, want: get(func(v *view) { v.Method, v.ContentLength = "PUT", 100 })},
	{name: "max content-length default", in: "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 4194304\r\n\r\n", want: get(func(v *view) { v.Method, v.ContentLength = "PUT", 4<<20 })},

	// 400 Bad Request.
	{name: "bare CR after request line", in: "GET / HTTP/1.1\rHost: h\r\n\r\n", status: 400},
	{name: "bare CR in value", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", status: 400},
	{name: "bare CR at end of value", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\r\n\r\n", status: 400},
	{name: "bare CR leading", in: "\rGET / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "bare CR final line", in: "GET / HTTP/1.1\r\nHost: h\r\n\r\r\n", status: 400},
	{name: "bare CR in target", in: "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "five leading empty lines", in: "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "method bad char", in: "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "method then tab", in: "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "leading space", in: " GET / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "two spaces after method", in: "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "two spaces after target", in: "GET /  HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "HTTP/0.9 request line", in: "GET /\r\n\r\n", status: 400},
	{name: "missing target", in: "GET HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target CTL", in: "GET /a\x01b HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target DEL", in: "GET /a\x7fb HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target non-ASCII", in: "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target NUL", in: "GET /\x00 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target tab", in: "GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "target fragment", in: "GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "relative target", in: "GET foo HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "asterisk with GET", in: "GET * HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "asterisk with path", in: "OPTIONS *a HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT origin-form", in: "CONNECT / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT without port", in: "CONNECT example.com HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT without host", in: "CONNECT :443 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT bad port", in: "CONNECT h:https HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT with path", in: "CONNECT h/x:443 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "authority-form with GET", in: "GET example.com:443 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "absolute-form other scheme", in: "GET ftp://h/ HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "absolute-form empty host", in: "GET http:///a HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "absolute-form userinfo", in: "GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "version lower case", in: "GET / http/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "version trailing byte", in: "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", status: 400},
	{name: "version trailing space", in: "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", status: 400},
	{name: "version two minor digits", in: "GET / HTTP/1.10\r\nHost: h\r\n\r\n", status: 400},
	{name: "version no dot", in: "GET / HTTP/11\r\nHost: h\r\n\r\n", status: 400},
	{name: "version letters", in: "GET / HTTP/a.b\r\nHost: h\r\n\r\n", status: 400},
	{name: "version missing", in: "GET / \r\nHost: h\r\n\r\n", status: 400},
	{name: "space before colon", in: "GET / HTTP/1.1\r\nHost : h\r\n\r\n", status: 400},
	{name: "tab before colon", in: "GET / HTTP/1.1\r\nHost: h\r\nX\t: y\r\n\r\n", status: 400},
	{name: "no colon", in: "GET / HTTP/1.1\r\nHost: h\r\nFoo\r\n\r\n", status: 400},
	{name: "empty name", in: "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", status: 400},
	{name: "name bad char", in: "GET / HTTP/1.1\r\nHost: h\r\nX(a): v\r\n\r\n", status: 400},
	{name: "name non-ASCII", in: "GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: v\r\n\r\n", status: 400},
	{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", status: 400},
	{name: "obs-fold tab", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n", status: 400},
	{name: "space before first field", in: "GET / HTTP/1.1\r\n Host: h\r\n\r\n", status: 400},
	{name: "NUL in value", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n\r\n", status: 400},
	{name: "CTL in value", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\x01b\r\n\r\n", status: 400},
	{name: "DEL in value", in: "GET / HTTP/1.1\r\nHost: h\r\nX: a\x7fb\r\n\r\n", status: 400},
	{name: "missing Host", in: "GET / HTTP/1.1\r\nX: y\r\n\r\n", status: 400},
	{name: "two Hosts", in: "GET / HTTP/1.1\r\nHost: h\r\nhost: h\r\n\r\n", status: 400},
	{name: "two Hosts on 1.0", in: "GET / HTTP/1.0\r\nHost: h\r\nHost: i\r\n\r\n", status: 400},
	{name: "Host with space", in: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400},
	{name: "Host with slash", in: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", status: 400},
	{name: "Host with userinfo", in: "GET / HTTP/1.1\r\nHost: u@h\r\n\r\n", status: 400},
	{name: "Host non-ASCII", in: "GET / HTTP/1.1\r\nHost: \xc3\xa9\r\n\r\n", status: 400},
	// RFC 9112 §3.2: an invalid Host value is a MUST-400 (Host header confusion).
	{name: "Host port not digits", in: "GET / HTTP/1.1\r\nHost: 127.0.0.1:80x\r\n\r\n", status: 400},
	{name: "Host port with sign", in: "GET / HTTP/1.1\r\nHost: h:+80\r\n\r\n", status: 400},
	{name: "Host two ports", in: "GET / HTTP/1.1\r\nHost: h:80:80\r\n\r\n", status: 400},
	{name: "Host empty", in: "GET / HTTP/1.1\r\nHost:\r\n\r\n", status: 400},
	{name: "Host blank", in: "GET / HTTP/1.1\r\nHost:  \t \r\n\r\n", status: 400},
	{name: "Host empty on 1.0", in: "GET / HTTP/1.0\r\nHost:\r\n\r\n", status: 400},
	{name: "Host port only", in: "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", status: 400},
	{name: "Host with tab", in: "GET / HTTP/1.1\r\nHost: a\tb\r\n\r\n", status: 400},
	{name: "Host userinfo and port", in: "GET / HTTP/1.1\r\nHost: u:p@h:80\r\n\r\n", status: 400},
	{name: "Host bad pct-encoding", in: "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n", status: 400},
	{name: "Host with query", in: "GET / HTTP/1.1\r\nHost: h?x\r\n\r\n", status: 400},
	{name: "Host with backslash", in: "GET / HTTP/1.1\r\nHost: h\\x\r\n\r\n", status: 400},
	{name: "Host IPv6 unclosed", in: "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", status: 400},
	{name: "Host IPv6 trailing byte", in: "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", status: 400},
	{name: "Host bracket in reg-name", in: "GET / HTTP/1.1\r\nHost: a[b]\r\n\r\n", status: 400},
	{name: "absolute-form port not digits", in: "GET http://h:80x/ HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "absolute-form bad pct-encoding", in: "GET http://h%zz/ HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "absolute-form valid, Host invalid", in: "GET http://h/ HTTP/1.1\r\nHost: h:x\r\n\r\n", status: 400},
	{name: "CONNECT bad pct-encoding", in: "CONNECT h%zz:443 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "CONNECT userinfo", in: "CONNECT u@h:443 HTTP/1.1\r\nHost: h\r\n\r\n", status: 400},
	{name: "content-length negative", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", status: 400},
	{name: "content-length plus", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", status: 400},
	{name: "content-length inner space", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5 5\r\n\r\n", status: 400},
	{name: "content-length hex", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", status: 400},
	{name: "content-length empty", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", status: 400},
	{name: "content-length comma only", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ,\r\n\r\n", status: 400},
	{name: "content-length differing list", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", status: 400},
	{name: "content-length differing fields", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", status: 400},
	{name: "content-length minus zero", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -0\r\n\r\n", status: 400},
	{name: "content-length plus in list", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, +5\r\n\r\n", status: 400},
	{name: "content-length inner tab", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\t0\r\n\r\n", status: 400},
	{name: "content-length decimal point", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5.0\r\n\r\n", status: 400},
	{name: "content-length zero then other", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n", status: 400},
	{name: "content-length list then field", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\nContent-Length: 6\r\n\r\n", status: 400},
	{name: "content-length overflow", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n", status: 400},
	{name: "TE on 1.0", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400},
	{name: "TE and CL", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", status: 400},
	{name: "CL and TE", in: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400},
	{name: "chunked twice", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", status: 400},
	{name: "chunked in two fields", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400},
	{name: "TE empty", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n", status: 400},
	{name: "TE commas", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , ,\r\n\r\n", status: 400},

	// 413, 414, 417, 431.
	{name: "body too large", in: "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n", lim: small, status: 413},
	{name: "body too large default", in: "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 4194305\r\n\r\n", status: 413},
	{name: "URI too long", in: "GET /" + rep("a", 16) + " HTTP/1.0\r\n\r\n", lim: small, status: 414},
	{name: "URI too long incomplete", in: "GET /" + rep("a", 16), lim: small, status: 414},
	{name: "URI too long default", in: "GET /" + rep("a", 8<<10) + " HTTP/1.1\r\nHost: h\r\n\r\n", status: 414},
	{name: "expect other", in: "POST / HTTP/1.1\r\nHost: h\r\nExpect: foo\r\n\r\n", status: 417},
	{name: "expect list", in: "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue, foo\r\n\r\n", status: 417},
	{name: "header too large", in: "GET / HTTP/1.1\r\nHost: h\r\nX: " + rep("a", 33) + "\r\n\r\n", lim: small, status: 431},
	{name: "header too large incomplete", in: "GET / HTTP/1.1\r\nHost: h\r\nX: " + rep("a", 60), lim: small, status: 431},
	{name: "header too large default", in: "GET / HTTP/1.1\r\nHost: h\r\nX: " + rep("a", 64<<10) + "\r\n\r\n", status: 431},
	{name: "too many fields", in: "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", lim: small, status: 431},
	{name: "too many fields default", in: "GET / HTTP/1.1\r\nHost: h\r\n" + fields(256) + "\r\n", status: 431},

	// 501, 505.
	// RFC 9112 §3: a method longer than any implemented gets 501.
	{name: "method too long", in: rep("A", MaxMethodLength+1) + " / HTTP/1.1\r\nHost: h\r\n\r\n", status: 501},
	{name: "method 40 bytes", in: rep("A", 40) + " / HTTP/1.1\r\nHost: h\r\n\r\n", status: 501},
	{name: "TE gzip", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501},
	{name: "TE gzip, chunked", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501},
	// RFC 9112 §6.3 item 4: chunked not final is a MUST-400, before any 501.
	{name: "TE chunked, gzip", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", status: 400},
	{name: "TE chunked, identity", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n", status: 400},
	{name: "TE gzip, chunked, identity", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked, identity\r\n\r\n", status: 400},
	{name: "TE gzip field then chunked, gzip field", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", status: 400},
	{name: "TE gzip, chunked, chunked fields", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400},
	{name: "TE chunked then gzip field", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", status: 400},
	{name: "TE identity", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n", status: 501},
	{name: "TE unknown", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: x-foo\r\n\r\n", status: 501},
	{name: "TE gzip then chunked field", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", status: 501},
	{name: "TE chunked with parameter", in: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", status: 501},
	{name: "HTTP/2.0", in: "GET / HTTP/2.0\r\nHost: h\r\n\r\n", status: 505},
	{name: "HTTP/1.2", in: "GET / HTTP/1.2\r\nHost: h\r\n\r\n", status: 505},
	{name: "HTTP/3.0", in: "GET / HTTP/3.0\r\nHost: h\r\n\r\n", status: 505},
	{name: "HTTP/0.9", in: "GET / HTTP/0.9\r\n\r\n", status: 505},
	{name: "h2 preface", in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 400},
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return -1
}

func checkParse(t *testing.T, tt parseTest, buf []byte, r *Request) {
	t.Helper()
	n, err := ParseHead(buf, r, tt.lim)
	if tt.status != 0 {
		if got := statusOf(err); got != tt.status || n != 0 {
			t.Fatalf("ParseHead = %d, %v (status %d), want status %d", n, err, got, tt.status)
		}
		return
	}
	if err != nil {
		t.Fatalf("ParseHead: %v", err)
	}
	want := *tt.want
	if want.HeadLen == 0 {
		want.HeadLen = len(tt.in)
	}
	got := viewOf(r)
	if want.Headers == nil {
		got.Headers = nil
	}
	if n != want.HeadLen {
		t.Errorf("n = %d, want %d", n, want.HeadLen)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseHead(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			checkParse(t, tt, []byte(tt.in), &r)
			// Again into the used Request: no state may leak from the first parse.
			checkParse(t, tt, []byte(tt.in), &r)
		})
	}
}

// TestParseHeadReuse parses every row into one Request, as a connection does.
func TestParseHeadReuse(t *testing.T) {
	var r Request
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) { checkParse(t, tt, []byte(tt.in), &r) })
	}
}

// TestParseHeadIncremental feeds every row byte by byte: each prefix of a valid head
// returns ErrNeedMore; the refusal of an invalid one comes at some prefix and stays.
func TestParseHeadIncremental(t *testing.T) {
	for _, tt := range parseTests {
		if len(tt.in) > 4096 {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			buf := []byte(tt.in)
			end := len(buf)
			if tt.want != nil && tt.want.HeadLen != 0 {
				end = tt.want.HeadLen
			}
			failed := false
			for k := 0; k < end; k++ {
				n, err := ParseHead(buf[:k], &r, tt.lim)
				switch {
				case err == ErrNeedMore && !failed:
				case tt.status != 0 && statusOf(err) == tt.status && n == 0:
					failed = true
				default:
					t.Fatalf("prefix %d (%q): %d, %v", k, buf[:k], n, err)
				}
			}
			checkParse(t, tt, buf[:end], &r)
			checkParse(t, tt, buf, &r)
		})
	}
}

// TestParseHeadEarly checks that refusals do not wait for the end of the head.
func TestParseHeadEarly(t *testing.T) {
	tests := []struct {
		in     string
		lim    *Limits
		status int
	}{
		{in: "G(", status: 400},
		{in: "\x00", status: 400},
		{in: "GET /\x01", status: 400},
		{in: "GET / HTTQ", status: 400},
		{in: "GET / HTTP/1.1\r\nX : ", status: 400},
		{in: "GET / HTTP/1.1\r\nX: a\x00", status: 400},
		{in: "GET / HTTP/1.1\r\nX: a\r\n ", status: 400},
		{in: "GET /" + rep("a", 8<<10), status: 414},
		{in: rep("A", MaxMethodLength+1), status: 501},
		{in: rep("M", 70<<10), status: 501}, // not 431: the method limit comes first
		{in: "GET / HTTP/1.1\r\nHost: h:8x\r\n", status: 400},
		{in: "GET / HTTP/1.1\r\n" + rep("X: y\r\n", 11<<10), status: 431},
		{in: "GET / HTTP/1.1\r\n" + fields(257), lim: &Limits{MaxHeaderCount: 256}, status: 431},
		{in: "POST / HTTP/1.1\r\nExpect: x\r\n", status: 417},
		{in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n", status: 400},
		{in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", status: 400},
		// An unknown coding alone is 501 only once the head is complete: a later
		// field could still put a coding after chunked (400).
	}
	for _, tt := range tests {
		var r Request
		n, err := ParseHead([]byte(tt.in), &r, tt.lim)
		if statusOf(err) != tt.status || n != 0 {
			t.Errorf("ParseHead(%.40q) = %d, %v, want status %d", tt.in, n, err, tt.status)
		}
	}
}

func TestParseHeadNeedMore(t *testing.T) {
	for _, in := range []string{"", "\r", "\r\n", "G", "GET", "GET ", "GET /", "GET / ", "GET / HTTP/1.", "GET / HTTP/2.0",
		"GET / HTTP/1.1\r", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost", "GET / HTTP/1.1\r\nHost: h", "GET / HTTP/1.1\r\nHost: h\r\n\r"} {
		var r Request
		if n, err := ParseHead([]byte(in), &r, nil); err != ErrNeedMore || n != 0 {
			t.Errorf("ParseHead(%q) = %d, %v, want ErrNeedMore", in, n, err)
		}
	}
}

func TestParseHeadPure(t *testing.T) {
	for _, tt := range parseTests {
		buf := []byte(tt.in)
		var r Request
		_, _ = ParseHead(buf, &r, tt.lim)
		if string(buf) != tt.in {
			t.Fatalf("%s: ParseHead modified its input", tt.name)
		}
	}
}

func TestRebase(t *testing.T) {
	for _, tt := range parseTests {
		if tt.status != 0 {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			old := []byte(tt.in)
			n, err := ParseHead(old, &r, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			want := viewOf(&r)
			inline := len(r.Headers) <= inlineFields
			// The copy holds the head only, as a connection keeps it.
			copied := append([]byte(nil), old[:n]...)
			r.Rebase(old, copied)
			for i := range old {
				old[i] = 'x'
			}
			if got := viewOf(&r); !reflect.DeepEqual(got, want) {
				t.Fatalf("after Rebase:\ngot  %+v\nwant %+v", got, want)
			}
			if inline && len(r.Headers) > 0 && &r.Headers[0] != &r.inline[0] {
				t.Fatal("Headers left the inline array")
			}
			// A second Rebase, from a sub-slice as a connection presents pipelined
			// heads, and of a copied Request value.
			big := append(make([]byte, 0, 1000), "prefix"...)
			big = append(big, copied...)
			r2 := r
			r2.Rebase(copied, big[6:])
			clear(copied)
			if got := viewOf(&r2); !reflect.DeepEqual(got, want) {
				t.Fatalf("after second Rebase:\ngot  %+v\nwant %+v", got, want)
			}
			if inline && len(r2.Headers) > 0 && &r2.Headers[0] != &r2.inline[0] {
				t.Fatal("copied Request's Headers not rebased onto its own inline array")
			}
		})
	}
}

func TestRequestReset(t *testing.T) {
	var r Request
	if _, err := ParseHead([]byte("POST /a?b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n"), &r, nil); err != nil {
		t.Fatal(err)
	}
	r.Reset()
	if r.Method != nil || r.URI != nil || r.Host != nil || len(r.Headers) != 0 || cap(r.Headers) != inlineFields ||
		r.ContentLength != -1 || r.HeadLen != 0 || r.KeepAlive || r.inline[0].Name != nil {
		t.Fatalf("Reset left %+v", viewOf(&r))
	}
	// After growing beyond the inline array.
	if _, err := ParseHead([]byte("GET / HTTP/1.1\r\nHost: h\r\n"+fields(40)+"\r\n"), &r, nil); err != nil {
		t.Fatal(err)
	}
	r.Reset()
	if cap(r.Headers) != inlineFields || r.inline[31].Name != nil {
		t.Fatal("Reset did not return to the inline array")
	}
}

// TestParseHeadLongIncomplete: an incomplete head longer than fullParseLimit gets
// only its request line and size checked on each call; its fields are checked once
// it is complete. Feeding a large head in small pieces stays cheap.
func TestParseHeadLongIncomplete(t *testing.T) {
	head := "GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n" + rep("X-Pad: 0123456789\r\n", 400)
	var r Request
	if _, err := ParseHead([]byte(head[:1000]), &r, nil); statusOf(err) != 400 {
		t.Fatalf("short prefix: %v", err)
	}
	if _, err := ParseHead([]byte(head), &r, nil); err != ErrNeedMore {
		t.Fatalf("long incomplete head: %v", err)
	}
	if _, err := ParseHead([]byte(head+"\r\n"), &r, nil); statusOf(err) != 400 {
		t.Fatalf("complete head: %v", err)
	}
	for _, bad := range []string{"G(T / HTTP/1.1\r\n", "GET /\x01 HTTP/1.1\r\n", "GET / HTTP/1.1 \r\n"} {
		if _, err := ParseHead([]byte(bad+rep("X-Pad: 0123456789\r\n", 400)), &r, nil); statusOf(err) != 400 {
			t.Fatalf("bad request line in a long head: %v", err)
		}
	}
	if _, err := ParseHead([]byte("GET /"+rep("a", 9000)), &r, nil); statusOf(err) != 414 {
		t.Fatalf("long target: %v", err)
	}

	// 60 KiB arriving 16 bytes at a time.
	big := []byte("GET / HTTP/1.1\r\nHost: h\r\n" + rep("X-Pad: 0123456789abcdef0123456789abcdef\r\n", 1500) + "\r\n")
	for k := 16; k < len(big); k += 16 {
		if _, err := ParseHead(big[:k], &r, nil); err != ErrNeedMore {
			t.Fatalf("prefix %d: %v", k, err)
		}
	}
	if n, err := ParseHead(big, &r, &Limits{MaxHeaderCount: 2000}); err != nil || n != len(big) || len(r.Headers) != 1501 {
		t.Fatalf("%d %v", n, err)
	}
}
