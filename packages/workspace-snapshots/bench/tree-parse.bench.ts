// Parses the same tree chunks with the zod schema (the baseline) and with the reader's own check, in one run.
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { type TreeEntry, encodeObject, parseTree } from "../src/objects.js";
import { TREE_CHUNK_ENTRIES } from "../src/stored-objects.js";
import { treeSchema } from "../test/tree-schema.js";

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const hex = (seed: string, length: number) =>
  createHash("sha256").update(seed).digest("hex").slice(0, length);

/** A source-like chunk: mostly packed files, some empty, linked and large ones, folders and symlinks. */
function chunk(index: number): Buffer {
  const entries: TreeEntry[] = [];
  for (let n = 0; n < TREE_CHUNK_ENTRIES; n += 1) {
    const name = `${String(index).padStart(4, "0")}-${String(n).padStart(5, "0")}.ts`;
    const mtime = `${1_700_000_000 + n}.${String(n * 7919).padStart(9, "0")}`;
    if (n % 50 === 0) entries.push({ name, type: "dir", mode: 0o755, mtime, tree: hex(name, 64) });
    else if (n % 97 === 0) entries.push({ name, type: "symlink", mtime, target: `../lib/${name}` });
    else if (n % 89 === 0) entries.push({ name, type: "file", mode: 0o644, mtime, size: 0 });
    else {
      const size = 500 + ((n * 131) % 7000);
      const pack = n % 31 === 0 ? {} : { pack: hex(`p${index}`, 32), offset: n * 4096 };
      const link = n % 83 === 0 ? { link: String(1000 + n) } : {};
      entries.push({
        name,
        type: "file",
        mode: 0o644,
        mtime,
        size,
        hash: hex(name, 64),
        ...pack,
        ...link,
      });
    }
  }
  return encodeObject({ version: 1, entries }).bytes;
}

/** Milliseconds a chunk for one pass of `parse` over every chunk. */
function pass(chunks: readonly Buffer[], parse: (value: unknown) => unknown): number {
  const start = performance.now();
  for (const bytes of chunks) {
    if (parse(JSON.parse(bytes.toString())) === undefined) throw new Error("a chunk was refused");
  }
  return (performance.now() - start) / chunks.length;
}

const median = (runs: number[]) =>
  runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)] as number;

const chunks = Array.from({ length: CHUNKS }, (_, index) => chunk(index));
const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
console.log(
  `${CHUNKS} chunks of ${TREE_CHUNK_ENTRIES} entries, ${(bytes / CHUNKS / 1024).toFixed(0)} KiB each;` +
    ` load ${loadavg()[0]?.toFixed(2)}`,
);
const parsers = {
  "JSON.parse alone": (value: unknown) => value,
  "JSON.parse + treeSchema (zod)": (value: unknown) => treeSchema.safeParse(value).data,
  "JSON.parse + parseTree": parseTree,
};
// Rounds take turns, so load and heap state fall on all three alike; the first round warms up.
const runs = new Map(Object.keys(parsers).map((label) => [label, [] as number[]]));
for (let round = 0; round <= ROUNDS; round += 1)
  for (const [label, parse] of Object.entries(parsers)) {
    const ms = pass(chunks, parse);
    if (round > 0) runs.get(label)?.push(ms);
  }
const [json, zod, own] = [...runs.values()].map(median) as [number, number, number];
for (const [label, ms] of [...runs.keys()].map(
  (label, index) => [label, [json, zod, own][index]] as const,
))
  console.log(`${label.padEnd(30)} ${(ms as number).toFixed(3)} ms a chunk (median of ${ROUNDS})`);
console.log(
  `the check alone: zod ${(zod - json).toFixed(3)} ms, parseTree ${(own - json).toFixed(3)} ms a chunk;` +
    ` with JSON.parse, parseTree takes ${(own / zod).toFixed(2)} of zod's time`,
);
