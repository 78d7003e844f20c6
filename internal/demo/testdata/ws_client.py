import asyncio, sys, websockets
async def main(addr):
    async with websockets.connect(f"ws://{addr}/ws/echo", max_size=None) as ws:
        for msg in ["hello", b"\x00\x01\x02", "κόσμε" * 1000, b"x" * (1 << 20)]:
            await ws.send(msg)
            got = await ws.recv()
            assert got == msg, (len(got), len(msg))
        pong = await ws.ping(b"abc")
        await asyncio.wait_for(pong, 5)
    print("python websockets: ok")
asyncio.run(main(sys.argv[1]))
