import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buffer } from "node:stream/consumers";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { Header } from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCheckpointHandle } from "../src/checkpoint/checkpoint-handle.js";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { resolveBridgeOptions } from "../src/options.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime. Hostile archives are put
// straight into the checkpoint store with a handle whose hash matches, as a compromised store would.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;
const requests: string[] = [];

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-hostile-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

function components() {
  const fetchAndRecord: typeof fetch = (input, init) => {
    requests.push(
      `${init?.method ?? "GET"} ${new URL(String(input)).pathname.replace(/\/v1\/sandbox\/[a-z2-7]+/, "/v1/sandbox/:id")}`,
    );
    return fetch(input, init);
  };
  const resolved = resolveBridgeOptions({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    fetch: fetchAndRecord,
    singleRequestBytes: 64 * 1024,
    partBytes: 64 * 1024,
    archiveLimits: { maxEntries: 200, maxBytes: 4 * 1024 * 1024, maxEntryBytes: 1024 * 1024 },
  });
  return createBridgeSandboxComponents(resolved);
}

type Entry = Partial<Header> & { name: string; body?: string | Buffer };

async function tarOf(entries: readonly Entry[]): Promise<Uint8Array> {
  const { pack } = await import("tar-stream");
  const archive = pack();
  // Read while writing: tar-stream holds entry callbacks until its output drains.
  const collected = buffer(archive as unknown as NodeJS.ReadableStream);
  for (const { body, ...header } of entries) {
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body === undefined) archive.entry({ mode: 0o644, ...header }, done).end(undefined);
      else archive.entry({ mode: 0o644, ...header }, body, done);
    });
  }
  archive.finalize();
  return new Uint8Array(await collected);
}

async function storedHandle(label: string, bytes: Uint8Array) {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const blobKey = `cloudflare-bridge-workspaces/hostile/${label}-${sha256}.tar`;
  await store.put(blobKey, bytes);
  return createCheckpointHandle({
    provider: "cloudflare-bridge",
    sandboxId: "hostile",
    sha256,
    blobKey,
    size: bytes.byteLength,
  });
}

const file = (name: string, body = "data"): Entry => ({ name, body });
// Enough benign bytes that the archive takes the split path (larger than singleRequestBytes).
const padding = Array.from({ length: 24 }, (_, index) =>
  file(`./pad/${index}.bin`, "p".repeat(8 * 1024)),
);

const HOSTILE: ReadonlyArray<readonly [string, readonly Entry[]]> = [
  ["an absolute name", [file("./ok"), file("/etc/oma-planted")]],
  ["a '..' traversal", [file("./ok"), file("../oma-planted")]],
  ["a nested traversal", [file("a/../../oma-planted")]],
  ["a character device", [{ name: "./tty", type: "character-device", devmajor: 5, devminor: 0 }]],
  ["a block device", [{ name: "./sda", type: "block-device", devmajor: 8, devminor: 0 }]],
  ["a FIFO", [{ name: "./pipe", type: "fifo" }]],
  [
    "an absolute symlink out of /workspace",
    [{ name: "./passwd", type: "symlink", linkname: "/etc/passwd" }],
  ],
  [
    "a relative symlink climbing out",
    [
      { name: "./a/", type: "directory" },
      { name: "./a/up", type: "symlink", linkname: "../../etc" },
    ],
  ],
  [
    "a symlink through /workspace/..",
    [{ name: "./up", type: "symlink", linkname: "/workspace/../etc" }],
  ],
  [
    "a write through a symlink",
    [{ name: "./link", type: "symlink", linkname: "/tmp" }, file("./link/planted")],
  ],
  ["a hardlink out", [{ name: "./h", type: "link", linkname: "../etc/passwd" }]],
  ["more entries than maxEntries", Array.from({ length: 201 }, (_, index) => file(`./f${index}`))],
  ["one entry over maxEntryBytes", [file("./big", "x".repeat(1024 * 1024 + 1))]],
  [
    "more bytes than maxBytes",
    Array.from({ length: 5 }, (_, index) => file(`./m${index}`, "y".repeat(1024 * 1024))),
  ],
  ["a bad entry after parts' worth of good ones", [...padding, file("/etc/oma-late")]],
];

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  return ManagedRuntimeError.isInstance(error) ? error.code : `not refused: ${String(error)}`;
}

describe("restores inspect first", () => {
  for (const [title, entries] of HOSTILE) {
    it(`refuses ${title} before any sandbox exists or any byte is sent`, async () => {
      const { provider } = components();
      const handle = await storedHandle(title.replace(/[^a-z]+/g, "-"), await tarOf(entries));
      requests.length = 0;
      expect(
        await refusal(provider.restore(handle, { sessionId: "s", workdir: "/workspace" })),
      ).toBe("archive_rejected");
      expect(requests).toEqual([]);
      expect(bridge.containerServer.containers.list()).toEqual([]);
    }, 60_000);
  }

  it("refuses a hostile archive restored into a running sandbox before anything is hydrated", async () => {
    const { provider } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    try {
      const handle = await storedHandle(
        "resume",
        await tarOf([
          ...padding,
          { name: "./tty", type: "character-device", devmajor: 5, devminor: 0 },
        ]),
      );
      requests.length = 0;
      expect(await refusal(runtime.resume(handle))).toBe("archive_rejected");
      expect(requests.filter((request) => request.endsWith("/hydrate"))).toEqual([]);
    } finally {
      await runtime.destroy();
    }
  }, 60_000);

  it("restores a benign archive with a link into /workspace, so the checks above are what refuse", async () => {
    const { provider } = components();
    // A directory as tar writes one (0755; tarOf's default is a file's 0644). A full-tar handle goes to the
    // bridge as stored, and tar running as a root without capabilities cannot extract into a 0644 directory.
    const directory: Entry = { name: "./sub/", type: "directory", mode: 0o755 };
    const handle = await storedHandle(
      "benign",
      await tarOf([
        ...padding,
        directory,
        file("./sub/x", "inside"),
        { name: "./abs", type: "symlink", linkname: "/workspace/sub" },
      ]),
    );
    requests.length = 0;
    const runtime = await provider.restore(handle, { sessionId: "s", workdir: "/workspace" });
    try {
      // It went in parts: hydrates, or file PUTs of compressed parts (the padding compresses well).
      expect(
        requests.filter(
          (request) =>
            request.endsWith("/hydrate") ||
            (request.startsWith("PUT") && request.includes("/file/")),
        ).length,
      ).toBeGreaterThan(1);
      expect((await runtime.exec("cat abs/x")).stdout).toBe("inside");
    } finally {
      await runtime.destroy();
    }
    expect(bridge.containerServer.containers.list()).toEqual([]);
  }, 60_000);

  it.each([
    ["a link out of /workspace", "ln -s /etc/passwd leak"],
    ["a FIFO", "mkfifo pipe"],
    ["a FIFO four folders down", "mkdir -p many/a/b/c && mkfifo many/a/b/c/pipe"],
    [
      "more entries than maxEntries",
      "mkdir many && cd many && for i in $(seq 1 250); do : > f$i; done",
    ],
    ["a file over maxEntryBytes", "head -c 1100000 /dev/urandom > big"],
  ])(
    "refuses to store a session's first (streamed) and later (listed) checkpoint of a workspace holding %s, and publishes nothing",
    async (_title, script) => {
      const { provider, checkpointer } = components();
      const sessionId = `hostile-${crypto.randomUUID()}`;
      const manifests = async () =>
        (await store.list({ prefix: "cloudflare-bridge-workspaces/sessions/" })).objects.filter(
          (object) => object.key.includes("/manifests/"),
        ).length;
      const runtime = await provider.create({ sessionId, workdir: "/workspace" });
      try {
        await runtime.exec("echo ok > kept.txt");
        const sandboxId = runtime.runtimeHandle().runtimeId;
        const published = await manifests();
        await runtime.exec(script);
        expect(await refusal(checkpointer.checkpoint({ sandboxId, sessionId }))).toBe(
          "archive_rejected",
        );
        expect(await manifests()).toBe(published);
        // A later checkpoint of the session (its first one published) takes the listing and refuses alike.
        await runtime.exec("rm -rf leak pipe many big");
        await checkpointer.checkpoint({ sandboxId, sessionId });
        await runtime.exec(script);
        expect(await refusal(checkpointer.checkpoint({ sandboxId, sessionId }))).toBe(
          "archive_rejected",
        );
        expect(await manifests()).toBe(published + 1);
      } finally {
        await runtime.destroy();
      }
    },
    60_000,
  );

  it("names a special file below the listing's top levels by its workspace path", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    try {
      await runtime.exec("mkdir -p deep/a/b/c && mkfifo 'deep/a/b/c/a pipe'");
      const error = await checkpointer
        .checkpoint({
          sandboxId: runtime.runtimeHandle().runtimeId,
          sessionId: `special-${crypto.randomUUID()}`,
        })
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      expect(ManagedRuntimeError.isInstance(error) && error.code).toBe("archive_rejected");
      expect(ManagedRuntimeError.isInstance(error) && error.context).toMatchObject({
        entry: "deep/a/b/c/a pipe",
        reason: "unsupported_type",
      });
    } finally {
      await runtime.destroy();
    }
  }, 60_000);

  it("refuses to store a checkpoint of a workspace holding a link out of /workspace", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    try {
      await runtime.exec("ln -s /etc/passwd leak && echo ok > kept.txt");
      const sandboxId = runtime.runtimeHandle().runtimeId;
      expect(await refusal(checkpointer.checkpoint({ sandboxId }))).toBe("archive_rejected");
    } finally {
      await runtime.destroy();
    }
  }, 60_000);
});
