import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import {
  ManagedRuntimeError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";
import { createBridgeSandboxProvider } from "../src/runtime/bridge-provider.js";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import { type HostileBridge, json, startHostileBridge } from "./hostile-bridge.js";

// A scripted bridge: it answers exec, persist and hydrate the way a broken or tampered deployment would.
let bridge: HostileBridge;
beforeAll(async () => {
  bridge = await startHostileBridge();
});
afterAll(() => bridge.close());

const ID = "aaaaaaaaaaaaaaaaaaaaaaaaaa";
const store = createMemoryBlobStore();

function setup() {
  const client = createBridgeClient({
    baseUrl: bridge.url,
    apiKey: "k".repeat(32),
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const checkpointer = createBridgeCheckpointer({
    provider: "cloudflare-bridge",
    client,
    store,
    keyPrefix: "ckpt",
    excludes: [],
    maxRequestBytes: 1024 * 1024,
    singleRequestBytes: 1024 * 1024,
    partBytes: 256 * 1024,
    maxCheckpointBytes: 64 * 1024 * 1024,
    archiveLimits: {
      maxEntries: 10_000,
      maxBytes: 64 * 1024 * 1024,
      maxEntryBytes: 64 * 1024 * 1024,
    },
  });
  const provider = createBridgeSandboxProvider({
    provider: "cloudflare-bridge",
    client,
    checkpointer,
    maxRequestBytes: 1024 * 1024,
    maxExecOutputBytes: 1024 * 1024,
  });
  return { checkpointer, provider };
}

/** Answers every exec with `stdout` and exit 0, persist with `persistBody`, and records hydrates and deletes. */
function scriptBridge(persistBody: Uint8Array, stdout = "2048\n") {
  const seen = { hydrates: 0, deletes: 0, creates: 0 };
  bridge.respond((request, response) => {
    const url = request.url ?? "";
    if (request.method === "POST" && url === "/v1/sandbox") {
      seen.creates++;
      return json(response, 200, { id: ID });
    }
    if (url.endsWith("/exec")) {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        `event: stdout\ndata: ${Buffer.from(stdout).toString("base64")}\n\nevent: exit\ndata: {"exit_code":0}\n\n`,
      );
      return;
    }
    if (url.includes("/persist"))
      return response.writeHead(200, { "content-type": "application/x-tar" }).end(persistBody);
    if (url.endsWith("/hydrate")) {
      seen.hydrates++;
      return json(response, 200, { ok: true });
    }
    if (request.method === "DELETE") {
      seen.deletes++;
      return response.writeHead(204).end();
    }
    json(response, 404, { error: "no route", code: "invalid_request" });
  });
  return seen;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  return ManagedRuntimeError.isInstance(error) ? error.code : `untyped: ${String(error)}`;
}

describe("bridge checkpoint integrity", () => {
  it("refuses a persist body that is not a tar and stores nothing", async () => {
    scriptBridge(new TextEncoder().encode("<html>definitely not a tar archive</html>".repeat(40)));
    const { checkpointer } = setup();
    expect(await codeOf(checkpointer.checkpoint({ sandboxId: ID }))).toBe("archive_rejected");
    expect((await store.list({ prefix: "ckpt/" })).objects).toHaveLength(0);
  });

  it("refuses to restore a checkpoint whose stored bytes changed, before anything reaches the sandbox, and leaks no sandbox", async () => {
    const tar = await tarOf({ "a.txt": "alpha" });
    scriptBridge(tar);
    const { checkpointer, provider } = setup();
    const handle = await checkpointer.checkpoint({ sandboxId: ID });
    const key = String(handle.metadata?.blobKey);
    const tampered = new Uint8Array(tar);
    tampered[600] = (tampered[600] ?? 0) ^ 0xff;
    await store.delete(key);
    await store.put(key, tampered);
    const seen = scriptBridge(tar);
    expect(await codeOf(provider.restore(handle, { sessionId: "s", workdir: "/workspace" }))).toBe(
      "integrity_failed",
    );
    expect(seen.hydrates).toBe(0);
    expect(seen.deletes).toBe(seen.creates);
  });

  it("refuses handles of another provider, with altered metadata, or outside the key prefix", async () => {
    const { checkpointer } = setup();
    const base: SandboxCheckpointHandle = {
      provider: "cloudflare-bridge",
      checkpointId: `sha256:${"0".repeat(64)}`,
      sourceRuntimeId: ID,
      kind: "filesystem",
      scope: "portable",
      metadata: { blobKey: "ckpt/x.tar", contentHash: `sha256:${"0".repeat(64)}`, size: 10 },
    };
    expect(
      await codeOf(checkpointer.restore({ sandboxId: ID, handle: { ...base, provider: "e2b" } })),
    ).toBe("provider_mismatch");
    expect(
      await codeOf(
        checkpointer.restore({
          sandboxId: ID,
          handle: { ...base, checkpointId: `sha256:${"1".repeat(64)}` },
        }),
      ),
    ).toBe("integrity_failed");
    expect(
      await codeOf(
        checkpointer.restore({
          sandboxId: ID,
          handle: { ...base, metadata: { ...base.metadata, blobKey: "elsewhere/x.tar" } },
        }),
      ),
    ).toBe("integrity_failed");
    expect(
      await codeOf(checkpointer.restore({ sandboxId: ID, handle: { ...base, scope: "runtime" } })),
    ).toBe("integrity_failed");
  });

  it("reports a storage collision when another object sits at the content key", async () => {
    const tar = await tarOf({ "b.txt": "beta" });
    scriptBridge(tar);
    const { checkpointer } = setup();
    const handle = await checkpointer.checkpoint({ sandboxId: ID });
    const key = String(handle.metadata?.blobKey);
    await store.delete(key);
    await store.put(key, new TextEncoder().encode("squatter"));
    expect(await codeOf(checkpointer.checkpoint({ sandboxId: ID }))).toBe("integrity_failed");
  });

  it("reports a lost lease when the container no longer carries the marker written at start", async () => {
    const { provider } = setup();
    scriptBridge(new Uint8Array(0));
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    await runtime.renewLease({ ttlMs: 1_000 });
    bridge.respond((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end('event: exit\ndata: {"exit_code":1}\n\n');
    });
    expect(await codeOf(runtime.renewLease({ ttlMs: 1_000 }))).toBe("lease_lost");
  });
});

async function tarOf(files: Record<string, string>): Promise<Uint8Array> {
  const { pack } = await import("tar-stream");
  const archive = pack();
  for (const [name, content] of Object.entries(files))
    archive.entry({ name: `./${name}`, mode: 0o644 }, content);
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}
