import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";
import { createMemoryBudget } from "../src/memory-budget.js";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import { type HostileBridge, json, startHostileBridge } from "./hostile-bridge.js";

// A scripted bridge that holds every hydrate a moment and counts the hydrate bytes it holds at once.
let bridge: HostileBridge;
beforeAll(async () => {
  bridge = await startHostileBridge();
});
afterAll(() => bridge.close());

const KIB = 1024;
const ID = "aaaaaaaaaaaaaaaaaaaaaaaaaa";

async function tarOf(files: number, bytesEach: number): Promise<Uint8Array> {
  const { pack } = await import("tar-stream");
  const archive = pack();
  for (let index = 0; index < files; index++) archive.entry({ name: `./file-${index}.bin`, mode: 0o644 }, Buffer.alloc(bytesEach, index));
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function scriptBridge(persistBody: Uint8Array) {
  const seen = { hydrates: 0, bytesInFlight: 0, mostBytesInFlight: 0 };
  bridge.respond((request, response) => {
    const url = request.url ?? "";
    if (url.endsWith("/exec")) {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`event: stdout\ndata: ${Buffer.from("2048\n").toString("base64")}\n\nevent: exit\ndata: {"exit_code":0}\n\n`);
      return;
    }
    if (url.includes("/persist")) return response.writeHead(200, { "content-type": "application/x-tar" }).end(persistBody);
    if (url.endsWith("/hydrate")) {
      const bytes = Number(request.headers["content-length"]);
      seen.hydrates += 1;
      seen.bytesInFlight += bytes;
      seen.mostBytesInFlight = Math.max(seen.mostBytesInFlight, seen.bytesInFlight);
      setTimeout(() => {
        seen.bytesInFlight -= bytes;
        json(response, 200, { ok: true });
      }, 20);
      return;
    }
    json(response, 404, { error: "no route", code: "invalid_request" });
  });
  return seen;
}

function checkpointerWith(budgetBytes: number) {
  const memoryBudget = createMemoryBudget({ maxBytes: budgetBytes });
  const checkpointer = createBridgeCheckpointer({
    provider: "cloudflare-bridge",
    client: createBridgeClient({ baseUrl: bridge.url, apiKey: "k".repeat(32), retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }),
    store: createMemoryBlobStore(),
    keyPrefix: "ckpt",
    excludes: [],
    maxRequestBytes: 1024 * KIB,
    singleRequestBytes: 512 * KIB,
    partBytes: 256 * KIB,
    maxCheckpointBytes: 64 * 1024 * KIB,
    archiveLimits: { maxEntries: 10_000, maxBytes: 64 * 1024 * KIB, maxEntryBytes: 64 * 1024 * KIB },
    memoryBudget,
  });
  return { checkpointer, memoryBudget };
}

describe("restores share one memory budget", () => {
  it("holds at most the budget's bytes of whole small archives across concurrent restores", async () => {
    const tar = await tarOf(3, 100 * KIB);
    const seen = scriptBridge(tar);
    const { checkpointer, memoryBudget } = checkpointerWith(2 * tar.byteLength);
    const handle = await checkpointer.checkpoint({ sandboxId: ID });
    await Promise.all(Array.from({ length: 6 }, () => checkpointer.restore({ sandboxId: ID, handle })));
    expect(seen.hydrates).toBe(6);
    // Six restores, two archives' worth of budget: never more than two hydrates held at once.
    expect(seen.mostBytesInFlight).toBe(2 * tar.byteLength);
    expect(memoryBudget).toMatchObject({ heldBytes: 0, peakBytes: 2 * tar.byteLength, waiting: 0 });
  });

  it("holds at most the budget's parts across concurrent restores in parts", async () => {
    const tar = await tarOf(8, 120 * KIB);
    const seen = scriptBridge(tar);
    const { checkpointer, memoryBudget } = checkpointerWith(512 * KIB);
    const handle = await checkpointer.checkpoint({ sandboxId: ID });
    await Promise.all(Array.from({ length: 5 }, () => checkpointer.restore({ sandboxId: ID, handle })));
    expect(seen.hydrates).toBeGreaterThanOrEqual(5 * 4);
    // Each part is at most 256 KiB and is held before it is read: two parts at once, whatever the runs.
    expect(seen.mostBytesInFlight).toBeLessThanOrEqual(512 * KIB);
    expect(seen.mostBytesInFlight).toBeGreaterThan(256 * KIB);
    expect(memoryBudget).toMatchObject({ heldBytes: 0, peakBytes: 512 * KIB, waiting: 0 });
  });
});
