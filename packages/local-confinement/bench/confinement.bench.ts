/**
 * Cost of one short command (`true`) started with mapped paths and in a bubblewrap confinement (as the
 * local container server runs every command), against a plain `spawn` of the same program in the same
 * process, and confined against unconfined (the kept mount namespace the unconfined server uses), and the
 * host's network against a network namespace of the container's own (the local container server's default).
 * Rounds interleave the variants so machine load hits them alike.
 * Run: `pnpm bench:confinement`.
 * `ROUNDS=N` changes the number of rounds (default 40).
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConfinedRoot,
  createConfinedRoot,
  createMountNamespace,
  isConfinementAvailable,
  detectPathMappingMode,
  releaseMountNamespace,
  spawnMapped,
} from "../src/index.js";

const rounds = Number(process.env.ROUNDS ?? 40);
const root = await mkdtemp(join(tmpdir(), "confinement-bench-"));
// Host directories under /tmp with /tmp mounted: the layout of the local container server.
const mounts = {
  "/workspace": join(root, "workspace"),
  "/mnt/session/outputs": join(root, "outputs"),
  "/tmp": join(root, "tmp"),
};
await Promise.all(Object.values(mounts).map((directory) => mkdir(directory, { recursive: true })));

const mode = detectPathMappingMode();
const namespace = mode === "namespace" ? await createMountNamespace(mounts) : undefined;
const confinedAvailable = isConfinementAvailable();
const setupStarted = process.hrtime.bigint();
const confined: ConfinedRoot | undefined = confinedAvailable
  ? await createConfinedRoot({ tree: join(root, "confined"), mounts, network: "shared" })
  : undefined;
const setupMs = Number(process.hrtime.bigint() - setupStarted) / 1e6;
const ownNetworkStarted = process.hrtime.bigint();
const ownNetwork: ConfinedRoot | undefined = confinedAvailable
  ? await createConfinedRoot({ tree: join(root, "confined-own-network"), mounts, network: "none" })
  : undefined;
const ownNetworkSetupMs = Number(process.hrtime.bigint() - ownNetworkStarted) / 1e6;
const waitClose = (child: ReturnType<typeof spawn>): Promise<unknown> =>
  new Promise((resolve) => child.once("close", resolve));

const variants: Record<string, () => Promise<unknown>> = {
  "plain spawn (baseline)": () => waitClose(spawn("true", [], { stdio: "pipe" })),
  rewrite: () => spawnMapped({ command: "true", mounts, mapping: "rewrite" }).exited,
};
if (namespace !== undefined) {
  variants["namespace, one per command"] = () =>
    spawnMapped({ command: "true", mounts, mapping: "namespace", reuseNamespace: false }).exited;
  variants["namespace, kept (spawnMapped)"] = () =>
    spawnMapped({ command: "true", mounts, mapping: "namespace" }).exited;
  variants["namespace, createMountNamespace"] = () => namespace.spawn({ command: "true" }).exited;
}
if (confined !== undefined)
  variants["confined (bubblewrap, entered)"] = () =>
    confined.spawn({ command: "true", cwd: "/" }).exited;
if (ownNetwork !== undefined)
  variants["confined, own network"] = () => ownNetwork.spawn({ command: "true", cwd: "/" }).exited;

const samples = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
for (const run of Object.values(variants)) await run(); // warm-up; also builds the kept namespace
await new Promise((resolve) => setTimeout(resolve, 200));
for (let round = 0; round < rounds; round += 1) {
  for (const [name, run] of Object.entries(variants)) {
    const started = process.hrtime.bigint();
    await run();
    samples.get(name)?.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}

const percentile = (values: number[], fraction: number): number => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
};
const baseline = percentile(samples.get("plain spawn (baseline)") ?? [], 0.5);
console.log(
  `confinement spawn cost — mode ${mode}, ${rounds} rounds, ${process.platform} ${process.arch}, node ${process.version}`,
);
console.log(
  `${"variant".padEnd(34)}${"median ms".padStart(11)}${"p90 ms".padStart(9)}${"× baseline".padStart(12)}`,
);
for (const [name, values] of samples) {
  const median = percentile(values, 0.5);
  console.log(
    `${name.padEnd(34)}${median.toFixed(2).padStart(11)}${percentile(values, 0.9).toFixed(2).padStart(9)}${(median / baseline).toFixed(2).padStart(12)}`,
  );
}
const perCommand = samples.get("namespace, one per command");
const keptTimes = samples.get("namespace, kept (spawnMapped)");
if (perCommand !== undefined && keptTimes !== undefined) {
  console.log(
    `kept namespace vs one per command: ${(percentile(perCommand, 0.5) / percentile(keptTimes, 0.5)).toFixed(2)}× faster (median)`,
  );
}

const confinedTimes = samples.get("confined (bubblewrap, entered)");
const unconfinedTimes = samples.get("namespace, createMountNamespace");
if (confinedTimes !== undefined) {
  console.log(
    `confined container start (overlay root + bubblewrap): ${setupMs.toFixed(1)} ms host network, ${ownNetworkSetupMs.toFixed(1)} ms own network`,
  );
  const ownTimes = samples.get("confined, own network");
  if (ownTimes !== undefined) {
    const extra = percentile(ownTimes, 0.5) - percentile(confinedTimes, 0.5);
    console.log(
      `own network vs host network per command: ${(percentile(ownTimes, 0.5) / percentile(confinedTimes, 0.5)).toFixed(2)}× (median, ${extra >= 0 ? "+" : ""}${extra.toFixed(2)} ms)`,
    );
  }
  if (unconfinedTimes !== undefined) {
    const extra = percentile(confinedTimes, 0.5) - percentile(unconfinedTimes, 0.5);
    console.log(
      `confined vs unconfined per command: ${(percentile(confinedTimes, 0.5) / percentile(unconfinedTimes, 0.5)).toFixed(2)}× (median, +${extra.toFixed(2)} ms)`,
    );
  }
} else console.log("confined: bubblewrap unavailable here, not measured");

confined?.dispose();
await confined?.ended;
ownNetwork?.dispose();
await ownNetwork?.ended;
namespace?.dispose();
releaseMountNamespace();
await rm(root, { recursive: true, force: true });
