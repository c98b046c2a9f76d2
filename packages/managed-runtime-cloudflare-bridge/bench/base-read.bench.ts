/**
 * `pnpm bench:base-read`: the read of a base manifest that a later checkpoint's delta waits for, once the
 * sandbox's pass is done. Before read-ahead it was the whole read (`scanBase`: hash, count, merge); now the
 * base is read while the sandbox walks (`prescanBase`) and only the second read of the driver's copy waits.
 * Both run here, alternately, over one manifest in a filesystem store, in this process; the figures are
 * the best of the rounds, the ratio is the second read's time to the one read's.
 *
 * Env: OMA_BENCH_BASE_ENTRIES (default 788000, the source-like 1 GiB workspace's count), OMA_BENCH_ROUNDS
 * (default 3), OMA_BENCH_CHANGED_PERCENT (default 1), OMA_BENCH_STORE_MBPS (a store read this fast, as a
 * remote store might serve; default unthrottled), OMA_BENCH_SCRATCH (default /dev/shm when present).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { prescanBase } from "../src/checkpoint/base-prescan.js";
import { type BaseVisitor, scanBase } from "../src/checkpoint/base-scan.js";
import {
  MANIFEST_HANDLE_FORMAT,
  type ManifestHandleMetadata,
} from "../src/checkpoint/manifest-handle.js";
import { MANIFEST_V3_HEADER, packLine, wireLine } from "../src/checkpoint/manifest-lines.js";
import { compareKeys } from "../src/checkpoint/split-records.js";
import { wrapStoreBodies } from "./instrument.js";

const entries = Number(process.env.OMA_BENCH_BASE_ENTRIES ?? "788000");
const rounds = Number(process.env.OMA_BENCH_ROUNDS ?? "3");
const changedPercent = Number(process.env.OMA_BENCH_CHANGED_PERCENT ?? "1");
const storeMbps = process.env.OMA_BENCH_STORE_MBPS
  ? Number(process.env.OMA_BENCH_STORE_MBPS)
  : undefined;
const scratch = process.env.OMA_BENCH_SCRATCH ?? (existsSync("/dev/shm") ? "/dev/shm" : "/var/tmp");
const FILES_PER_PACK = 3000;
const log = (message: string) => process.stderr.write(`[bench:base-read] ${message}\n`);

const sha = (seed: string) => createHash("sha256").update(seed).digest("hex");

/** A source-like tree's manifest: folders of 400 small files, packed 3,000 to a pack. */
function manifestOf(count: number): { readonly bytes: Buffer; readonly paths: readonly Buffer[] } {
  const paths = Array.from({ length: count }, (_, index) =>
    Buffer.from(
      `packages/p${Math.floor(index / 20_000)}/src/m${Math.floor(index / 400) % 50}/file-${index % 400}.ts`,
    ),
  );
  paths.sort((a, b) => compareKeys(a, 0, a.length, b, 0, b.length));
  const lines = [MANIFEST_V3_HEADER.slice(0, -1)];
  let packs = 0;
  paths.forEach((path, index) => {
    if (index % FILES_PER_PACK === 0)
      lines.push(packLine({ sha256: sha(`pack${packs++}`), size: 4 << 20 }));
    const entry = {
      type: "file",
      path: path.toString(),
      mode: 0o644,
      mtime: 1_700_000_000 + index,
      size: 1_400,
      sha256: sha(`content${index}`),
    } as const;
    lines.push(wireLine(entry, { pack: packs - 1, offset: (index % FILES_PER_PACK) * 1_400 }));
  });
  return { bytes: Buffer.from(`${lines.join("\n")}\n`), paths };
}

/** `store` whose reads pass at most `mbps` MB/s. */
function throttled(store: BlobStore, mbps: number): BlobStore {
  return wrapStoreBodies(store, (open) => {
    const started = performance.now();
    let sent = 0;
    return open().pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          sent += chunk.byteLength;
          const due = started + (sent / (mbps * 1e6)) * 1000;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          controller.enqueue(chunk);
        },
      }),
    );
  });
}

function visitorOf(wanted: readonly Buffer[]): BaseVisitor & { readonly met: () => number } {
  let index = 0;
  return {
    next: () => wanted[index] ?? null,
    take: async () => void (index += 1),
    met: () => index,
  };
}

async function main(): Promise<void> {
  const directory = await mkdtemp(join(scratch, "oma-bench-base-read-"));
  try {
    const fsStore = createFsBlobStore({ rootDir: join(directory, "store") });
    const store = storeMbps === undefined ? fsStore : throttled(fsStore, storeMbps);
    const { bytes, paths } = manifestOf(entries);
    const digest = createHash("sha256").update(bytes).digest("hex");
    const manifestKey = `s/manifests/${digest}.json`;
    await fsStore.put(manifestKey, bytes);
    const base: ManifestHandleMetadata = {
      format: MANIFEST_HANDLE_FORMAT,
      session: "0".repeat(32),
      contentHash: `sha256:${digest}`,
      size: bytes.byteLength,
      manifestKey,
    };
    const step = Math.max(1, Math.round(100 / changedPercent));
    const wanted = paths.filter((_, index) => index % step === 7);
    const contents = new Set(wanted.map((_, index) => sha(`changed${index}`)));
    log(
      `${entries} entries, ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB manifest, ${wanted.length} changed paths, store ${storeMbps === undefined ? "unthrottled" : `at ${storeMbps} MB/s`}`,
    );
    const once: number[] = [];
    const ahead: number[] = [];
    const second: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      let started = performance.now();
      const visitor = visitorOf(wanted);
      const scan = await scanBase(store, base, contents, visitor);
      once.push(performance.now() - started);
      started = performance.now();
      const prescanned = await prescanBase(store, base, { directory });
      ahead.push(performance.now() - started);
      try {
        started = performance.now();
        const light = visitorOf(wanted);
        const again = await prescanned.scan(contents, light);
        second.push(performance.now() - started);
        if (again.count !== scan.count || light.met() !== visitor.met() || !prescanned.placed)
          throw new Error("the two reads disagree");
      } finally {
        await prescanned.dispose();
      }
    }
    const best = (values: readonly number[]) => Math.min(...values);
    const figures = (values: readonly number[]) =>
      `${(best(values) / 1000).toFixed(2)} s (rounds: ${values.map((value) => (value / 1000).toFixed(2)).join(", ")})`;
    console.log(
      `base read a later checkpoint's delta waits for (${entries} entries, ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB, ${wanted.length} changed paths, store ${storeMbps === undefined ? "unthrottled" : `at ${storeMbps} MB/s`}):`,
    );
    console.log(`  one read after the sandbox's pass (before):   ${figures(once)}`);
    console.log(`  read ahead, during the sandbox's pass:       ${figures(ahead)}`);
    console.log(`  second read after the pass (now):            ${figures(second)}`);
    console.log(`  ratio now / before: ${(best(second) / best(once)).toFixed(2)}`);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:base-read failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
