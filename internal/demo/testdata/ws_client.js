const WebSocket = require('ws');
const ws = new WebSocket('ws://' + process.argv[2] + '/ws/echo');
const want = ['hello', Buffer.from([1,2,3]), 'x'.repeat(100000)];
let i = 0;
ws.on('open', () => ws.send(want[0]));
ws.on('message', (data, isBinary) => {
  const w = want[i];
  const ok = Buffer.isBuffer(w) ? (isBinary && Buffer.compare(data, w) === 0) : (!isBinary && data.toString() === w);
  if (!ok) { console.log('mismatch', i); process.exit(1); }
  i++;
  if (i === want.length) { ws.close(1000); return; }
  ws.send(want[i]);
});
ws.on('close', (code) => { console.log('node ws: ok, close', code); process.exit(i === want.length ? 0 : 1); });
ws.on('error', (e) => { console.log('error', e); process.exit(1); });
