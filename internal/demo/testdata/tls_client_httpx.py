# Python httpx (http2=True) on every HTTP route of the demo contract over TLS:
# python3 tls_client_httpx.py https://127.0.0.1:8443 (the demo's -tls-addr; its
# self-signed certificate is not verified). Each answer must come over HTTP/2.
import gzip, sys
import httpx

HELLO = b'{"message":"Hello, World!"}'
# (method, path, request body, gzip, status, exact body, length, content type,
#  substring, SSE events)
ROUTES = [
    ("GET", "/bench", None, False, 200, b"OK", None, "text/plain", None, 0),
    ("GET", "/json", None, False, 200, HELLO, None, "application/json", None, 0),
    ("GET", "/json", None, True, 200, HELLO, None, "application/json", None, 0),
    ("GET", "/users/1/posts/2", None, False, 200, b"user=1 post=2", None, "text/plain", None, 0),
    ("POST", "/upload", b"u" * (1 << 20), False, 200, b"1048576", None, None, None, 0),
    ("GET", "/download?size=1000000", None, False, 200, None, 1000000, "application/octet-stream", None, 0),
    ("GET", "/download?size=x", None, False, 400, None, None, None, None, 0),
    ("GET", "/slow?ms=50", None, False, 200, b"OK", None, None, None, 0),
    ("GET", "/panic", None, False, 500, None, None, None, None, 0),
    ("GET", "/nethttp/hello", None, False, 200, b"hello from net/http", None, None, None, 0),
    ("GET", "/sse", None, False, 200, None, None, "text/event-stream", None, 5),
    ("GET", "/stream?n=7", None, False, 200, None, 7 << 10, None, None, 0),
    ("GET", "/metrics", None, False, 200, None, None, None, b"celeris_http_requests_total", 0),
    ("GET", "/", None, False, 200, None, None, "text/html", b"/ws/echo", 0),
]


def main(base):
    with httpx.Client(http2=True, verify=False, timeout=20) as client:
        for method, path, body, gz, status, want, length, ctype, sub, events in ROUTES:
            what = f"{method} {path} (gzip {gz})"
            headers = {"Accept-Encoding": "gzip" if gz else "identity"}
            with client.stream(method, base + path, content=body, headers=headers) as r:
                raw = b"".join(r.iter_raw())  # as sent: gzip not decoded
            assert r.http_version == "HTTP/2", (what, r.http_version)
            assert r.status_code == status, (what, r.status_code, r.content[:200])
            assert r.headers.get("x-request-id"), (what, "no X-Request-ID")
            got = raw
            if gz:
                assert r.headers.get("content-encoding") == "gzip", (what, r.headers)
                got = gzip.decompress(raw)
            if want is not None:
                assert got == want, (what, got[:200])
            if length is not None:
                assert len(got) == length, (what, len(got))
            if ctype is not None:
                assert r.headers.get("content-type", "").startswith(ctype), (what, r.headers.get("content-type"))
            if sub is not None:
                assert sub in got, (what, got[:200])
            if events:
                assert got.count(b"data: ") == events, (what, got)
    print(f"python httpx: ok (httpx {httpx.__version__}), {len(ROUTES)} requests over HTTP/2")


main(sys.argv[1])
