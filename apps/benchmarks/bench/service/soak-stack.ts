/**
 * The local stack of the soak benchmark, in a process of its own so that its RSS is the container server's
 * alone: Cloudflare's bridge Worker in local workerd (a child of this process) over the local container
 * server (this process). Prints one JSON line with its addresses; answers each `stats` line on stdin with one
 * JSON line of what it holds, and each `collect` line, after a full garbage collection of the Worker's isolate
 * (through workerd's V8 inspector; run with `--experimental-websocket` on Node 20), with `{"collected":true}`,
 * and each `count` line with the number of Durable Objects alive in the Worker's isolate (a heap snapshot).
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

/**
 * Sends one inspector command to the Worker's isolate and resolves with its heap snapshot chunks (none for
 * other commands), or null if it did not answer.
 */
async function inspectorCall(method: string): Promise<string | null> {
  const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/core:user:`);
  const chunks: string[] = [];
  const answered = new Promise<boolean>((resolve) => {
    socket.onopen = () => socket.send(JSON.stringify({ id: 1, method }));
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: { chunk?: string };
      };
      if (message.method === "HeapProfiler.addHeapSnapshotChunk")
        chunks.push(message.params?.chunk ?? "");
      if (message.id === 1) resolve(true);
    };
    socket.onerror = (event) => {
      process.stderr.write(`inspector: ${(event as { message?: string }).message ?? "error"}\n`);
      resolve(false);
    };
  });
  const timedOut = new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(false), 60_000).unref(),
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
  const done = await Promise.race([answered, timedOut]);
  waiting = false;
  socket.close();
  return done ? chunks.join("") : null;
}

/** Runs one full collection in the Worker's isolate (the bridge and its Durable Objects); false if it did not answer. */
async function collectGarbage(): Promise<boolean> {
  return (await inspectorCall("HeapProfiler.collectGarbage")) !== null;
}

/**
 * Durable Objects alive in the Worker's isolate, from a heap snapshot: one `DurableObjectState` per instance
 * workerd holds (the `WarmPool` and every `Sandbox` not evicted yet); null if the inspector did not answer.
 */
async function countDurableObjects(): Promise<number | null> {
  const text = await inspectorCall("HeapProfiler.takeHeapSnapshot");
  if (text === null) return null;
  const snapshot = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const nameAt = fields.indexOf("name");
  const typeAt = fields.indexOf("type");
  const objectType = snapshot.snapshot.meta.node_types[0].indexOf("object");
  let count = 0;
  for (let index = 0; index < snapshot.nodes.length; index += fields.length) {
    if (
      snapshot.nodes[index + typeAt] === objectType &&
      snapshot.strings[snapshot.nodes[index + nameAt] as number] === "DurableObjectState"
    )
      count += 1;
  }
  return count;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stats") {
    const containers = bridge.containerServer.containers.list().length;
    process.stdout.write(`${JSON.stringify({ containers })}\n`);
  } else if (line === "collect") {
    process.stdout.write(`${JSON.stringify({ collected: await collectGarbage() })}\n`);
  } else if (line === "count") {
    process.stdout.write(`${JSON.stringify({ durableObjects: await countDurableObjects() })}\n`);
  } else if (line === "stop") {
    break;
  }
}
await bridge.stop();
process.exit(0);
