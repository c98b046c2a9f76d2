/**
 * The local stack of the soak benchmark, in a process of its own so that its RSS is the container server's
 * alone: Cloudflare's bridge Worker in local workerd (a child of this process) over the local container
 * server (this process). Prints one JSON line with its addresses; answers each `stats` line on stdin with one
 * JSON line of what it holds, and each `collect` line, after a full garbage collection of every isolate of
 * workerd (through its V8 inspector; run with `--experimental-websocket` on Node 20), with `{}`.
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
const bridge = await startLocalBridge({ egressAllowList: [allow], rootDir, stateDir, inspectorPort });

/** Runs one full collection in each of workerd's isolates (the Worker's own among them). */
async function collectGarbage(): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  for (const target of targets) {
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    await new Promise<void>((resolve) => {
      socket.onmessage = () => resolve();
      socket.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
    });
    socket.close();
  }
}

process.stdout.write(`${JSON.stringify({ url: bridge.url, apiKey: bridge.apiKey })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stats") {
    const containers = bridge.containerServer.containers.list().length;
    process.stdout.write(`${JSON.stringify({ containers })}\n`);
  } else if (line === "collect") {
    await collectGarbage();
    process.stdout.write("{}\n");
  } else if (line === "stop") {
    break;
  }
}
await bridge.stop();
process.exit(0);
