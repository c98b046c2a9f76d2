import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createLocalContainerServer } from "@open-managed-agents/local-container";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    containerServerUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const rootDir = await mkdtemp(join("/var/tmp", "oma-cf-containers-"));
  const server = await createLocalContainerServer({ rootDir });
  project.provide("containerServerUrl", server.url);
  return async () => {
    await server.close();
    await rm(rootDir, { recursive: true, force: true });
  };
}
