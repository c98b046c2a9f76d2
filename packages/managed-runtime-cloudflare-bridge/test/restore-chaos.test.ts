/**
 * Restores of random trees through the local stack, whose file writes land as Cloudflare's do (full-length
 * first, filled a moment later): every restore either leaves exactly the tree that was checkpointed or fails
 * with a typed error. The tree is described in the sandbox by commands of its own and compared with the tree
 * the test generated, so the check does not lean on the restore's own verification. `OMA_CHAOS_RESTORES`
 * sets the number of restores (`pnpm test:chaos` runs 200); `OMA_CHAOS_SEED` the first seed.
 */
import { createHash, randomBytes } from "node:crypto";
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
import { execCollect } from "../src/runtime/exec.js";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";
import { prng } from "./random-workspace.js";

const RESTORES = Number(process.env.OMA_CHAOS_RESTORES ?? 24);
const FIRST_SEED = Number(process.env.OMA_CHAOS_SEED ?? 1);
// The pause between a write making a file full-length and filling it: parts are small, so a short one
// covers most of a part's upload.
const FILL_DELAY_MS = 25;
const KIB = 1024;
const PART_BYTES = 64 * KIB;
const SINGLE_REQUEST_BYTES = 16 * KIB;

let bridge: LocalBridge;
let client: BridgeClient;
let sandboxId: string;
const store = createMemoryBlobStore();
/** Archive part PUTs of the restore in progress. */
let partsSent = 0;

beforeAll(async () => {
  const before = process.env[FILL_DELAY_ENV];
  process.env[FILL_DELAY_ENV] = String(FILL_DELAY_MS);
  try {
    bridge = await startLocalBridge();
  } finally {
    if (before === undefined) delete process.env[FILL_DELAY_ENV];
    else process.env[FILL_DELAY_ENV] = before;
  }
  const plain = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
  client = {
    ...plain,
    writeFile: (id, path, body, signal) => {
      if (/\.oma-restore-[0-9a-f-]+\/part-\d{6}(-\d+)?$/.test(path)) partsSent += 1;
      return plain.writeFile(id, path, body, signal);
    },
  };
  sandboxId = await client.create();
}, 120_000);

afterAll(async () => {
  if (sandboxId) await client.destroy(sandboxId).catch(() => undefined);
  await bridge?.stop();
});

type Entry =
  | { readonly type: "directory"; readonly path: string; readonly mode: number }
  | {
      readonly type: "file";
      readonly path: string;
      readonly mode: number;
      readonly content: Buffer;
    }
  | { readonly type: "symlink"; readonly path: string; readonly target: string };

const FILE_MODES = [0o644, 0o600, 0o755, 0o444, 0o700, 0o640];
const DIR_MODES = [0o755, 0o700, 0o750];
/** Bytes of contents each kind of round aims at: one /hydrate, then archives of about 1, 2 and 6 parts. */
const SHAPES = [
  { name: "hydrate", bytes: 3 * KIB },
  { name: "1 part", bytes: 40 * KIB },
  { name: "2 parts", bytes: 96 * KIB },
  { name: "6 parts", bytes: 350 * KIB },
] as const;

/** A random tree of about `bytes` of contents: folders, empty, random, zero and text files, symlinks, modes. */
function randomTree(seed: number, bytes: number): Entry[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const names = ["a", "b", "c d", "é", `long-name-${"x".repeat(60)}`, "n1", "n2", ".hidden"];
  const folders = [""];
  const entries: Entry[] = [];
  const taken = new Set<string>();
  const fresh = (folder: string) => {
    for (;;) {
      const path = `${folder}${pick(names)}${Math.floor(random() * 1000)}`;
      if (!taken.has(path)) {
        taken.add(path);
        return path;
      }
    }
  };
  for (let index = 0; index < 1 + Math.floor(random() * 6); index++) {
    const path = fresh(pick(folders));
    folders.push(`${path}/`);
    entries.push({ type: "directory", path, mode: pick(DIR_MODES) });
  }
  let left = bytes;
  while (left > 0) {
    const roll = random();
    const size =
      roll < 0.15 ? 0 : Math.min(left, 1 + Math.floor(random() * Math.min(bytes, 80 * KIB)));
    const content =
      roll < 0.15
        ? Buffer.alloc(0)
        : roll < 0.75
          ? randomBytes(size)
          : roll < 0.85
            ? Buffer.alloc(size)
            : Buffer.from("line of text\n".repeat(size / 13 + 1).slice(0, size));
    entries.push({ type: "file", path: fresh(pick(folders)), mode: pick(FILE_MODES), content });
    left -= Math.max(size, 512);
  }
  const files = entries.filter((entry) => entry.type !== "symlink").map((entry) => entry.path);
  for (let index = 0; index < Math.floor(random() * 4); index++) {
    const path = fresh(pick(folders));
    const depth = path.split("/").length - 1;
    const target =
      random() < 0.3
        ? `/workspace/${pick(files)}`
        : random() < 0.8
          ? `${"../".repeat(depth)}${pick(files)}`
          : "missing-target";
    entries.push({ type: "symlink", path, target });
  }
  return entries;
}

async function tarOf(entries: readonly Entry[]): Promise<Buffer> {
  const { pack } = await import("tar-stream");
  const archive = pack();
  const mtime = new Date(1_700_000_000_000);
  for (const entry of entries) {
    if (entry.type === "directory")
      archive.entry({ name: `./${entry.path}/`, type: "directory", mode: entry.mode, mtime });
    else if (entry.type === "file")
      archive.entry({ name: `./${entry.path}`, mode: entry.mode, mtime }, entry.content);
    else
      archive.entry({
        name: `./${entry.path}`,
        type: "symlink",
        linkname: entry.target,
        mode: 0o777,
        mtime,
      });
  }
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The tree as the sandbox's description below prints it. */
function described(entries: readonly Entry[]): string[] {
  return entries
    .map((entry) =>
      entry.type === "directory"
        ? `d ${entry.mode.toString(8)} ${entry.path}`
        : entry.type === "file"
          ? `f ${entry.mode.toString(8)} ${entry.content.byteLength} ${createHash("sha256").update(entry.content).digest("hex")} ${entry.path}`
          : `l ${entry.path} -> ${entry.target}`,
    )
    .sort();
}

const DESCRIBE = [
  "cd /workspace && find . -mindepth 1 \\( -type d -printf 'd %m %P\\n' \\) -o \\( -type f -printf 'f %m %s %P\\n' \\)",
  "-o \\( -type l -printf 'l %P -> %l\\n' \\) -o -printf '? %P\\n'; echo ::; find . -type f -print0 | xargs -0 -r sha256sum",
].join(" ");

/** `/workspace` of the sandbox, described by find and sha256sum. */
async function describeSandbox(): Promise<string[]> {
  const result = await execCollect(client, sandboxId, {
    command: "sh",
    args: ["-c", DESCRIBE],
    maxOutputBytes: 4 * 1024 * 1024,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  const [listing = "", hashes = ""] = result.stdout.split("::\n");
  const sha = new Map(
    hashes
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(66).replace(/^\.\//, ""), line.slice(0, 64)]),
  );
  return listing
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const file = /^f (\d+) (\d+) (.*)$/.exec(line);
      return file
        ? `f ${file[1]} ${file[2]} ${sha.get(file[3] as string) ?? "unread"} ${file[3]}`
        : line;
    })
    .sort();
}

async function wipe(): Promise<void> {
  const result = await execCollect(client, sandboxId, {
    command: "sh",
    args: ["-c", "chmod -R u+rwX /workspace 2>/dev/null; find /workspace -mindepth 1 -delete"],
    maxOutputBytes: 64 * 1024,
  });
  expect(result.exitCode, result.stderr).toBe(0);
}

describe("restore chaos on the local stack with Cloudflare-like file writes", () => {
  it(`restores ${RESTORES} random trees exactly or refuses with a typed error`, async () => {
    const checkpointerWith = (compression: "auto" | "off") =>
      createBridgeCheckpointer({
        provider: "cloudflare-bridge",
        client,
        store,
        keyPrefix: "chaos",
        excludes: [],
        maxRequestBytes: 1024 * KIB,
        singleRequestBytes: SINGLE_REQUEST_BYTES,
        partBytes: PART_BYTES,
        maxCheckpointBytes: 64 * 1024 * KIB,
        archiveLimits: {
          maxEntries: 10_000,
          maxBytes: 64 * 1024 * KIB,
          maxEntryBytes: 64 * 1024 * KIB,
        },
        compression,
      });
    // Uncompressed, an archive's parts follow its size; compressed (zstd here), the sandbox decodes them too.
    const checkpointers = { off: checkpointerWith("off"), auto: checkpointerWith("auto") };
    const outcomes = {
      exact: 0,
      wrong: [] as string[],
      typed: [] as string[],
      untyped: [] as string[],
    };
    const partCounts = new Set<number>();
    const uncompressedPartCounts = new Set<number>();
    const started = Date.now();
    for (let round = 0; round < RESTORES; round++) {
      const seed = FIRST_SEED + round;
      const shape = SHAPES[round % SHAPES.length] as (typeof SHAPES)[number];
      const entries = randomTree(seed, shape.bytes);
      const tar = await tarOf(entries);
      const sha256 = createHash("sha256").update(tar).digest("hex");
      const blobKey = `chaos/${sandboxId}/round-${seed}-${sha256}.tar`;
      await store.put(blobKey, new Blob([tar]).stream(), { contentLength: tar.byteLength });
      const handle = createCheckpointHandle({
        provider: "cloudflare-bridge",
        sandboxId,
        sha256,
        blobKey,
        size: tar.byteLength,
      });
      await wipe();
      partsSent = 0;
      const compression = Math.floor(round / SHAPES.length) % 2 === 0 ? "off" : "auto";
      const failure = await checkpointers[compression].restore({ sandboxId, handle }).then(
        () => null,
        (error: unknown) => error,
      );
      partCounts.add(partsSent);
      if (compression === "off") uncompressedPartCounts.add(partsSent);
      if (failure === null) {
        const actual = await describeSandbox();
        const expected = described(entries);
        if (JSON.stringify(actual) === JSON.stringify(expected)) outcomes.exact += 1;
        else {
          const at = expected.findIndex((line, index) => actual[index] !== line);
          outcomes.wrong.push(
            `seed ${seed} (${shape.name}): expected ${JSON.stringify(expected[at])}, found ${JSON.stringify(actual[at])}`,
          );
        }
      } else if (ManagedRuntimeError.isInstance(failure))
        outcomes.typed.push(`seed ${seed}: ${failure.code}: ${failure.message}`);
      else outcomes.untyped.push(`seed ${seed}: ${String(failure)}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `restore chaos: ${RESTORES} restores in ${seconds} s: ${outcomes.exact} exact, ${outcomes.typed.length} typed refusals, ${outcomes.wrong.length} wrong trees; parts per restore seen: ${[...partCounts].sort((a, b) => a - b).join(", ")}`,
    );
    expect(outcomes.wrong).toEqual([]);
    expect(outcomes.untyped).toEqual([]);
    // Nothing in this stack is broken: a refusal here would be the protocol failing on sound parts.
    expect(outcomes.typed).toEqual([]);
    if (RESTORES >= SHAPES.length)
      for (const parts of [0, 1, 2, 6]) expect([...uncompressedPartCounts]).toContain(parts);
  }, 3_600_000);
});
