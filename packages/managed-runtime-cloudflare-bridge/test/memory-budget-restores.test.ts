import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";
import { createMemoryBudget } from "../src/memory-budget.js";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import type { ServerResponse } from "node:http";
import { type HostileBridge, json, startHostileBridge } from "./hostile-bridge.js";

// A scripted bridge that holds every hydrate and part upload a moment and counts the bytes it holds at once.
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
  for (let index = 0; index < files; index++)
    archive.entry({ name: `./file-${index}.bin`, mode: 0o644 }, Buffer.alloc(bytesEach, index));
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function scriptBridge(persistBody: Uint8Array) {
  const seen = { hydrates: 0, parts: 0, bytesInFlight: 0, mostBytesInFlight: 0 };
  // Extraction and verification execs wait for their folder's `end` marker, as the sandbox's loop does.
  const extractions = new Map<string, () => void>();
  const hold = (bytes: number, answer: () => void) => {
    seen.bytesInFlight += bytes;
    seen.mostBytesInFlight = Math.max(seen.mostBytesInFlight, seen.bytesInFlight);
    setTimeout(() => {
      seen.bytesInFlight -= bytes;
      answer();
    }, 20);
  };
  const exited = (response: ServerResponse, stdout = "") => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(
      `${stdout ? `event: stdout\ndata: ${Buffer.from(stdout).toString("base64")}\n\n` : ""}event: exit\ndata: {"exit_code":0}\n\n`,
    );
  };
  bridge.respond((request, response, body) => {
    const url = request.url ?? "";
    if (url.endsWith("/exec")) {
      const argv = (JSON.parse(body.toString("utf8")) as { argv: string[] }).argv;
      const script = argv.join(" ");
      // `restore` ends once the listing (its 9th argument's folder) is in; `extract` and `verify` once their own folder is.
      const awaited = argv[4] === "restore" ? argv[8] : argv[5];
      const folder =
        argv[3] === "restore.sh"
          ? /\/workspace\/(\.oma-restore-[0-9a-z-]+)$/.exec(awaited ?? "")?.[1]
          : undefined;
      if (folder) extractions.set(folder, () => exited(response));
      else exited(response, script.includes("du -sb") ? "2048\n" : "");
      return;
    }
    if (url.includes("/persist"))
      return response.writeHead(200, { "content-type": "application/x-tar" }).end(persistBody);
    if (url.endsWith("/hydrate")) {
      seen.hydrates += 1;
      hold(Number(request.headers["content-length"]), () => json(response, 200, { ok: true }));
      return;
    }
    if (request.method === "PUT" && url.includes("/file/workspace/.oma-restore-")) {
      const folder = /(\.oma-restore-[0-9a-z-]+)\/(.+)$/.exec(url);
      if (folder?.[2] === "end") {
        extractions.get(folder[1] as string)?.();
        return json(response, 200, { ok: true });
      }
      if (folder?.[1]?.endsWith("-listing") || folder?.[2]?.endsWith(".sha256"))
        return json(response, 200, { ok: true });
      seen.parts += 1;
      hold(body.byteLength, () => json(response, 200, { ok: true }));
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
    client: createBridgeClient({
      baseUrl: bridge.url,
      apiKey: "k".repeat(32),
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    }),
    store: createMemoryBlobStore(),
    keyPrefix: "ckpt",
    excludes: [],
    maxRequestBytes: 1024 * KIB,
    singleRequestBytes: 512 * KIB,
    partBytes: 256 * KIB,
    maxCheckpointBytes: 64 * 1024 * KIB,
    archiveLimits: {
      maxEntries: 10_000,
      maxBytes: 64 * 1024 * KIB,
      maxEntryBytes: 64 * 1024 * KIB,
    },
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
    await Promise.all(
      Array.from({ length: 6 }, () => checkpointer.restore({ sandboxId: ID, handle })),
    );
    expect(seen.hydrates).toBe(6);
    // Six restores, two archives' worth of budget: never more than two hydrates held at once.
    expect(seen.mostBytesInFlight).toBe(2 * tar.byteLength);
    expect(memoryBudget).toMatchObject({ heldBytes: 0, peakBytes: 2 * tar.byteLength, waiting: 0 });
  });

  it("holds at most the budget's parts across concurrent restores in parts", async () => {
    const tar = await tarOf(8, 120 * KIB);
    const seen = scriptBridge(tar);
    // Each restore in parts holds two parts (one uploading, the next filling) for its length: a budget of four
    // parts runs two at once.
    const { checkpointer, memoryBudget } = checkpointerWith(1024 * KIB);
    const handle = await checkpointer.checkpoint({ sandboxId: ID });
    await Promise.all(
      Array.from({ length: 5 }, () => checkpointer.restore({ sandboxId: ID, handle })),
    );
    expect(seen.hydrates).toBe(0);
    expect(seen.parts).toBeGreaterThanOrEqual(5 * 4);
    // Each part is at most 256 KiB and two runs go at once: never more than the budget, more than one part.
    expect(seen.mostBytesInFlight).toBeLessThanOrEqual(1024 * KIB);
    expect(seen.mostBytesInFlight).toBeGreaterThan(256 * KIB);
    expect(memoryBudget).toMatchObject({ heldBytes: 0, peakBytes: 1024 * KIB, waiting: 0 });
  });
});
