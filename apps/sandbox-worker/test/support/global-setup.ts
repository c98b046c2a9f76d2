import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createLocalContainerServer } from "@open-managed-agents/local-container";
import type { TestProject } from "vitest/node";
import { type TestEnvironment, startTestEnvironment } from "./environment-setup.js";

declare module "vitest" {
  export interface ProvidedContext {
    containerServerUrl: string;
    containerControlToken: string;
    environment: TestEnvironment;
  }
}

/**
 * Starts the local control plane (with `oma-ama-worker` installed) and then the local container server
 * every Sandbox Durable Object of the test Worker runs on, which inherits the bin's PATH.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const environment = await startTestEnvironment();
  const rootDir = await mkdtemp(join("/var/tmp", "oma-sandbox-worker-"));
  // The host's network by name: the containers reach the local control plane as Cloudflare's reach Managed Agents.
  const containers = await createLocalContainerServer({ rootDir, network: "host-unsafe" });
  project.provide("containerServerUrl", containers.url);
  project.provide("containerControlToken", containers.controlToken);
  project.provide("environment", environment.environment);
  return async () => {
    await containers.close();
    await environment.close();
    await rm(rootDir, { recursive: true, force: true });
  };
}
