import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createLocalContainerServer } from "@open-managed-agents/local-container";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    containerServerUrl: string;
  }
}

/** Starts the local container server every Sandbox Durable Object of the test Worker runs on. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const rootDir = await mkdtemp(join("/var/tmp", "oma-sandbox-worker-"));
  const containers = await createLocalContainerServer({ rootDir });
  project.provide("containerServerUrl", containers.url);
  return async () => {
    await containers.close();
    await rm(rootDir, { recursive: true, force: true });
  };
}
