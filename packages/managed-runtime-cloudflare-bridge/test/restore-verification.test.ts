/**
 * A restore proves the tree in the sandbox equals the checkpoint before it returns. Here the tree is changed
 * between extraction and the proof (a command run before the expected listing's last marker lands), on the local stack
 * with Cloudflare-like file writes: each change is `integrity_failed` naming the first differing path, and
 * the sandbox is destroyed. A part whose confirmation does not match its bytes is refused the same way.
 */
import { createHash } from "node:crypto";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import {
  FILL_DELAY_ENV,
  type LocalBridge,
  startLocalBridge,
} from "@open-managed-agents/local-container";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";
import { createCheckpointHandle } from "../src/checkpoint/checkpoint-handle.js";
import { createBridgeSandboxProvider } from "../src/runtime/bridge-provider.js";
import { execCollect } from "../src/runtime/exec.js";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";

const KIB = 1024;
let bridge: LocalBridge;
let plain: BridgeClient;
/** Shell run in the sandbox between the next extraction and its proof, then forgotten. */
let tamper: string | null = null;
/** Turns the sha256 marker of the next part with this index into one of other bytes. */
let forgeMarkerOf: number | null = null;
const destroyed: string[] = [];
const store = createMemoryBlobStore();
const CONTEXT = { sessionId: "verify", workdir: "/workspace" };

beforeAll(async () => {
  const before = process.env[FILL_DELAY_ENV];
  process.env[FILL_DELAY_ENV] = "25";
  try {
    bridge = await startLocalBridge();
  } finally {
    if (before === undefined) delete process.env[FILL_DELAY_ENV];
    else process.env[FILL_DELAY_ENV] = before;
  }
  plain = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
}, 120_000);
afterAll(() => bridge?.stop());

/**
 * The client the driver uses: runs `tamper` once the archive is extracted (its scratch folder is gone) and
 * before the listing's end marker lands, so the tree changes after extraction and before the proof walks it.
 */
const client = (): BridgeClient => ({
  ...plain,
  async writeFile(id, path, body, signal) {
    const listingEnd = /^(\/workspace\/\.oma-restore-[0-9a-f-]+)-listing\/end$/.exec(path);
    if (listingEnd && tamper !== null) {
      const script = `while [ -e ${listingEnd[1]} ]; do sleep 0.05; done; ${tamper}`;
      tamper = null;
      const result = await execCollect(plain, id, {
        command: "sh",
        args: ["-c", script],
        maxOutputBytes: 64 * KIB,
      });
      if (result.exitCode !== 0) throw new Error(`tampering failed: ${result.stderr}`);
    }
    const marker = /\/part-(\d{6})\.sha256$/.exec(path);
    if (marker && !path.includes("-listing/") && Number(marker[1]) === forgeMarkerOf) {
      forgeMarkerOf = null;
      return plain.writeFile(
        id,
        path,
        Buffer.from(createHash("sha256").update("other bytes").digest("hex")),
        signal,
      );
    }
    return plain.writeFile(id, path, body, signal);
  },
  destroy(id) {
    destroyed.push(id);
    return plain.destroy(id);
  },
});

function setup() {
  const bridgeClient = client();
  const checkpointer = createBridgeCheckpointer({
    provider: "cloudflare-bridge",
    client: bridgeClient,
    store,
    keyPrefix: "verify",
    excludes: [],
    maxRequestBytes: 1024 * KIB,
    singleRequestBytes: 32 * KIB,
    partBytes: 64 * KIB,
    maxCheckpointBytes: 64 * 1024 * KIB,
    archiveLimits: {
      maxEntries: 10_000,
      maxBytes: 64 * 1024 * KIB,
      maxEntryBytes: 64 * 1024 * KIB,
    },
  });
  return createBridgeSandboxProvider({
    provider: "cloudflare-bridge",
    client: bridgeClient,
    checkpointer,
    maxRequestBytes: 1024 * KIB,
    maxExecOutputBytes: 1024 * KIB,
  });
}

/** A stored full-tar checkpoint: a folder, a small and a large file (`big` sets its size), a symlink. */
async function checkpointOf(bigBytes: number) {
  const { pack } = await import("tar-stream");
  const archive = pack();
  archive.entry({ name: "./src/", type: "directory", mode: 0o755 });
  archive.entry({ name: "./src/notes.txt", mode: 0o644 }, "hello restore\n");
  archive.entry({ name: "./src/big.bin", mode: 0o600 }, Buffer.alloc(bigBytes, 7));
  archive.entry({ name: "./link", type: "symlink", linkname: "src/notes.txt", mode: 0o777 });
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  const tar = Buffer.concat(chunks);
  const sha256 = createHash("sha256").update(tar).digest("hex");
  const blobKey = `verify/source/${sha256}.tar`;
  await store.put(blobKey, new Blob([tar]).stream(), { contentLength: tar.byteLength });
  return createCheckpointHandle({
    provider: "cloudflare-bridge",
    sandboxId: "source",
    sha256,
    blobKey,
    size: tar.byteLength,
  });
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`not a typed refusal: ${String(error)}`);
  return error;
}

describe("verified restores on the local stack", () => {
  it("restores an untouched tree, in parts and in one request", async () => {
    const provider = setup();
    for (const size of [4 * KIB, 300 * KIB]) {
      const runtime = await provider.restore(await checkpointOf(size), CONTEXT);
      const listed = await runtime.exec(
        "cd /workspace && find . -mindepth 1 | LC_ALL=C sort | tr '\\n' ' ' && stat -c %s src/big.bin",
      );
      expect(listed.stdout.trim()).toBe(`./link ./src ./src/big.bin ./src/notes.txt ${size}`);
      await runtime.destroy();
    }
  }, 120_000);

  const cases = [
    {
      name: "a changed byte",
      size: 300 * KIB,
      script: "printf x | dd of=/workspace/src/big.bin bs=1 seek=1000 conv=notrunc 2>/dev/null",
      path: "src/big.bin",
    },
    {
      name: "a file too many, in one request",
      size: 4 * KIB,
      script: "printf x > /workspace/extra",
      path: "extra",
    },
    {
      name: "a mode",
      size: 300 * KIB,
      script: "chmod 640 /workspace/src/notes.txt",
      path: "src/notes.txt",
    },
    {
      name: "a link target",
      size: 4 * KIB,
      script: "ln -sfn src/big.bin /workspace/link",
      path: "link",
    },
    { name: "a missing folder", size: 300 * KIB, script: "rm -rf /workspace/src", path: "src" },
  ];
  for (const change of cases) {
    it(`refuses ${change.name} with integrity_failed naming the path, and destroys the sandbox`, async () => {
      const provider = setup();
      tamper = change.script;
      destroyed.length = 0;
      const error = await refusal(provider.restore(await checkpointOf(change.size), CONTEXT));
      expect(error.code).toBe("integrity_failed");
      expect(error.context?.path).toBe(change.path);
      expect(error.message).toContain(JSON.stringify(change.path));
      expect(destroyed).toHaveLength(1);
    }, 120_000);
  }

  it("refuses a part whose confirmation does not match its bytes, before tar reads it", async () => {
    const provider = setup();
    forgeMarkerOf = 0;
    destroyed.length = 0;
    const error = await refusal(provider.restore(await checkpointOf(300 * KIB), CONTEXT));
    expect(error.code).toBe("integrity_failed");
    expect(error.message).toContain("part 0 of the restore does not match its sha256");
    expect(destroyed).toHaveLength(1);
  }, 120_000);
});
