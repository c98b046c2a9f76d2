/**
 * Cost of the file routes of the local container server: per-operation latency of `/api/write`, `/api/read`,
 * `/api/exists` and `/api/list-files` on a confined (bubblewrap) container against an unconfined one, and
 * against the same operation done with `node:fs` in this process (the floor), plus MB/s for a large write
 * (`/api/write`, base64) and a large streamed read (`/api/read/stream`). Rounds interleave the variants so
 * machine load hits them alike.
 * Run: `pnpm --filter @open-managed-agents/local-container bench` (needs root and bubblewrap for the
 * confined figures). `ROUNDS=N` (default 60), `LARGE_MIB=N` (default 32) change the run.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isConfinementAvailable } from "@open-managed-agents/local-confinement";
import { type LocalContainerServer, createLocalContainerServer } from "../src/server/server.js";
import { authorizedFetch } from "../test/helpers.js";

const rounds = Number(process.env.ROUNDS ?? 60);
const largeBytes = Number(process.env.LARGE_MIB ?? 32) * 1024 * 1024;
const scratch = await mkdtemp(join(tmpdir(), "file-routes-bench-"));
const floorDir = join(scratch, "floor");
await mkdir(floorDir, { recursive: true });

interface Target {
  readonly server: LocalContainerServer;
  call(path: string, body: unknown): Promise<Response>;
}

async function startTarget(
  name: string,
  confinement: "bubblewrap" | "unconfined-unsafe",
): Promise<Target> {
  const rootDir = join(scratch, name);
  await mkdir(rootDir, { recursive: true });
  const server = await createLocalContainerServer({
    rootDir,
    confinement,
    ...(confinement === "bubblewrap" ? {} : { pathMapping: "namespace" as const }),
    limits: { maxBodyBytes: largeBytes * 2, maxOutputBytes: largeBytes * 2 },
  });
  await authorizedFetch(server, `${server.url}/__oma/containers/bench`, {
    method: "PUT",
    body: JSON.stringify({ env: {} }),
  });
  const call = (path: string, body: unknown): Promise<Response> =>
    authorizedFetch(server, `${server.url}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "bench" },
      body: JSON.stringify(body),
    });
  return { server, call };
}

const targets: Record<string, Target> = {
  unconfined: await startTarget("unconfined", "unconfined-unsafe"),
};
if (isConfinementAvailable()) targets.confined = await startTarget("confined", "bubblewrap");

const ok = async (response: Promise<Response>): Promise<string> => {
  const answer = await response;
  const text = await answer.text();
  if (!answer.ok) throw new Error(`route failed: ${answer.status} ${text.slice(0, 300)}`);
  return text;
};

const small = "x".repeat(1024);
const operations: Record<
  string,
  { floor: () => Promise<unknown>; route: (target: Target) => Promise<unknown> }
> = {
  "write 1 KiB": {
    floor: () => writeFile(join(floorDir, "small.txt"), small),
    route: (target) =>
      ok(target.call("/api/write", { path: "/workspace/small.txt", content: small })),
  },
  "read 1 KiB": {
    floor: () => readFile(join(floorDir, "small.txt")),
    route: (target) => ok(target.call("/api/read", { path: "/workspace/small.txt" })),
  },
  exists: {
    floor: () => stat(join(floorDir, "small.txt")),
    route: (target) => ok(target.call("/api/exists", { path: "/workspace/small.txt" })),
  },
  "list 50 entries": {
    floor: async () => undefined,
    route: (target) => ok(target.call("/api/list-files", { path: "/workspace/listing" })),
  },
};

for (const target of Object.values(targets)) {
  for (let index = 0; index < 50; index += 1)
    await ok(
      target.call("/api/write", { path: `/workspace/listing/file-${index}.txt`, content: "entry" }),
    );
}

const elapsed = async (run: () => Promise<unknown>): Promise<number> => {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
};
const samples = new Map<string, number[]>();
const record = (name: string, value: number): void => {
  samples.set(name, [...(samples.get(name) ?? []), value]);
};
for (const operation of Object.values(operations)) {
  await operation.floor();
  for (const target of Object.values(targets)) await operation.route(target); // warm-up
}
for (let round = 0; round < rounds; round += 1) {
  for (const [name, operation] of Object.entries(operations)) {
    record(`${name} | node:fs (floor)`, await elapsed(operation.floor));
    for (const [targetName, target] of Object.entries(targets))
      record(`${name} | ${targetName}`, await elapsed(() => operation.route(target)));
  }
}

const percentile = (values: number[], fraction: number): number => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
};
console.log(
  `local container file routes — ${rounds} rounds, ${process.platform} ${process.arch}, node ${process.version}`,
);
console.log(
  `${"operation | variant".padEnd(34)}${"median ms".padStart(11)}${"p90 ms".padStart(9)}${"× unconfined".padStart(14)}`,
);
for (const [name, values] of samples) {
  if (name.startsWith("list") && name.endsWith("(floor)")) continue;
  const unconfined = percentile(samples.get(name.replace(/\| .*$/, "| unconfined")) ?? [], 0.5);
  const median = percentile(values, 0.5);
  console.log(
    `${name.padEnd(34)}${median.toFixed(2).padStart(11)}${percentile(values, 0.9).toFixed(2).padStart(9)}${(median / unconfined).toFixed(2).padStart(14)}`,
  );
}

// Throughput: one large write through /api/write (base64 in a JSON body) and one streamed read.
const large = Buffer.alloc(largeBytes);
for (let offset = 0; offset < large.length; offset += 4)
  large.writeUInt32LE((offset * 2654435761) >>> 0, offset);
const encoded = large.toString("base64");
const mib = largeBytes / (1024 * 1024);
console.log(`\nlarge file, ${mib} MiB (binary)`);
console.log(
  `${"variant".padEnd(34)}${"write MB/s".padStart(11)}${"stream MB/s".padStart(13)}${"stream RSS growth MiB".padStart(23)}`,
);
{
  const write = await elapsed(() => writeFile(join(floorDir, "large.bin"), large));
  const read = await elapsed(() => readFile(join(floorDir, "large.bin")));
  console.log(
    `${"node:fs (floor)".padEnd(34)}${(mib / (write / 1000)).toFixed(1).padStart(11)}${(mib / (read / 1000)).toFixed(1).padStart(13)}`,
  );
}
for (const [targetName, target] of Object.entries(targets)) {
  const write = await elapsed(() =>
    ok(
      target.call("/api/write", {
        path: "/workspace/large.bin",
        content: encoded,
        encoding: "base64",
      }),
    ),
  );
  let streamed = 0;
  // Peak resident memory of this process (server and client) while the stream runs: it stays far below the file's size.
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 10);
  const read = await elapsed(async () => {
    const response = await target.call("/api/read/stream", { path: "/workspace/large.bin" });
    for await (const chunk of response.body ?? []) streamed += (chunk as Uint8Array).length;
  });
  clearInterval(sampler);
  if (streamed < largeBytes)
    throw new Error(`the stream carried ${streamed} bytes, fewer than the file's ${largeBytes}`);
  const growth = (rssPeak - rssBefore) / (1024 * 1024);
  console.log(
    `${targetName.padEnd(34)}${(mib / (write / 1000)).toFixed(1).padStart(11)}${(mib / (read / 1000)).toFixed(1).padStart(13)}${growth.toFixed(1).padStart(23)}`,
  );
}

await Promise.all(Object.values(targets).map((target) => target.server.close()));
await rm(scratch, { recursive: true, force: true });
