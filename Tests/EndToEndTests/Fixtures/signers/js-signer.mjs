// A JavaScript signer stand-in, as nsecbunkerd or igloo-server run (node, or bun):
// it does real JIT work at start (a hot function the optimising compilers take up,
// which needs writable-and-executable memory), then runs like igloo-server does:
// with STATUS_PORT, `GET /api/status` answers `{"health": {"isConnected": …}}`
// (false while the file `disconnected` exists in FIXTURE_DIR). It writes
// <pid>.js into FIXTURE_DIR once the JIT work is done, and exits 0 on SIGTERM or SIGINT.
import fs from "node:fs";
import http from "node:http";

function mix(x) {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

let hash = 1;
for (let i = 0; i < 5_000_000; i++) hash = mix(hash + i);

const directory = process.env.FIXTURE_DIR ?? ".";
fs.writeFileSync(`${directory}/${process.pid}.js`, `jit=${hash}\n`);
console.log(`js signer ${process.pid}: jit work done (${hash})`);

if (process.env.STATUS_PORT) {
  const server = http.createServer((request, response) => {
    if (request.url !== "/api/status") {
      response.writeHead(404).end();
      return;
    }
    const connected = !fs.existsSync(`${directory}/disconnected`);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ status: "ok", health: { isConnected: connected, activeNodes: connected ? 3 : 0 } }));
  });
  server.listen(Number(process.env.STATUS_PORT), "127.0.0.1");
}

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
setInterval(() => {}, 1 << 30);
