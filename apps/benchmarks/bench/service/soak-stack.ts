/**
 * The local stack of the soak benchmark, in a process of its own so that its RSS is the container server's
 * alone: Cloudflare's bridge Worker in local workerd (a child of this process) over the local container
 * server (this process). Prints one JSON line with its addresses; answers each `stats` line on stdin with one
 * JSON line of what it holds, and each `collect` line, after a full garbage collection of the Worker's isolate
 * (through workerd's V8 inspector; run with `--experimental-websocket` on Node 20), with `{"collected":true}`.
 */
import { createServer } from "node:net";
import { createInterface } from "node:readline";

const { startLocalBridge } = await import("@open-managed-agents/local-container");

const allow = process.env.OMA_SOAK_EGRESS_ALLOW ?? "";
const rootDir = process.env.OMA_SOAK_ROOT_DIR as string;
const stateDir = process.env.OMA_SOAK_STATE_DIR as string;
const inspectorPort = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  });
});
const bridge = await startLocalBridge({
  egressAllowList: [allow],
  rootDir,
  stateDir,
  inspectorPort,
});
process.stdout.write(`${JSON.stringify({ url: bridge.url, apiKey: bridge.apiKey })}\n`);

/** Runs one full collection in the Worker's isolate (the bridge and its Durable Objects); false if it did not answer. */
async function collectGarbage(): Promise<boolean> {
  const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/core:user:`);
  const answered = new Promise<boolean>((resolve) => {
    socket.onopen = () =>
      socket.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
    socket.onmessage = () => resolve(true);
    socket.onerror = (event) => {
      process.stderr.write(`inspector: ${(event as { message?: string }).message ?? "error"}\n`);
      resolve(false);
    };
  });
  const timedOut = new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(false), 30_000).unref(),
  );
  // workerd reads inspector messages while its isolate runs an event: a request to the Worker gives it one.
  let waiting = true;
  void (async () => {
    while (waiting) {
      await fetch(`${bridge.url}/health`).then(
        (response) => response.body?.cancel(),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const collected = await Promise.race([answered, timedOut]);
  waiting = false;
  socket.close();
  return collected;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stats") {
    const containers = bridge.containerServer.containers.list().length;
    process.stdout.write(`${JSON.stringify({ containers })}\n`);
  } else if (line === "collect") {
    process.stdout.write(`${JSON.stringify({ collected: await collectGarbage() })}\n`);
  } else if (line === "stop") {
    break;
  }
}
await bridge.stop();
process.exit(0);
