"""HTTP/3 requests with aioquic's client, for TestAioquicClient.

Usage: aioquic_client.py HOST PORT. Prints one JSON object: for each request,
its status, headers, trailers, body length and the first bytes of its body.
"""
import asyncio
import hashlib
import json
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiters = {}
        self.responses = {}

    def quic_event_received(self, event):
        for ev in self.h3.handle_event(event):
            if not isinstance(ev, (HeadersReceived, DataReceived)):
                continue
            r = self.responses.setdefault(
                ev.stream_id, {"headers": None, "trailers": [], "body": b""})
            if isinstance(ev, HeadersReceived):
                if r["headers"] is None:
                    r["headers"] = ev.headers
                else:
                    r["trailers"] += ev.headers
            else:
                r["body"] += ev.data
            if ev.stream_ended:
                waiter = self.waiters.pop(ev.stream_id, None)
                if waiter is not None:
                    waiter.set_result(r)

    async def request(self, method, path, body=b""):
        sid = self._quic.get_next_available_stream_id()
        headers = [(b":method", method.encode()), (b":scheme", b"https"),
                   (b":authority", b"localhost"), (b":path", path.encode())]
        if body:
            headers.append((b"content-length", str(len(body)).encode()))
        self.h3.send_headers(sid, headers, end_stream=not body)
        if body:
            self.h3.send_data(sid, body, end_stream=True)
        fut = asyncio.get_running_loop().create_future()
        self.waiters[sid] = fut
        self.transmit()
        r = await asyncio.wait_for(fut, 30)
        hdr = {k.decode(): v.decode() for k, v in r["headers"]}
        return {
            "status": int(hdr.pop(":status")),
            "headers": hdr,
            "trailers": {k.decode(): v.decode() for k, v in r["trailers"]},
            "length": len(r["body"]),
            "sha256": hashlib.sha256(r["body"]).hexdigest(),
            "head": r["body"][:64].decode("latin-1"),
        }


async def main(host, port):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    cfg.verify_mode = ssl.CERT_NONE
    async with connect(host, port, configuration=cfg, create_protocol=Client) as c:
        upload = b"u" * (1 << 20)
        results = await asyncio.gather(
            c.request("GET", "/hello"),
            c.request("GET", "/users/7?q=a"),
            c.request("POST", "/upload", upload),
            c.request("GET", "/trailers"),
            c.request("GET", "/download/2"),
            c.request("GET", "/sse"),
        )
        names = ["hello", "json", "upload", "trailers", "download", "sse"]
        print(json.dumps(dict(zip(names, results))))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
