import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { bundleTestWorker } from "./bundle-worker.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of the Worker bundled with the test container runtime. */
    workerBundle: string;
  }
}

/** Bundles the Worker once for every test file. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), "oma-plugin-worker-"));
  const bundle = join(directory, "worker.js");
  await bundleTestWorker(bundle);
  project.provide("workerBundle", bundle);
  return () => rm(directory, { recursive: true, force: true });
}
