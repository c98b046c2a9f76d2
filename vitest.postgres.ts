import type { TestProject } from "vitest/node";
import { startPostgresCluster } from "./vitest.postgres-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test Postgres server's superuser URL, or why there is none. */
    postgres: { readonly url: string } | { readonly error: string };
  }
}

/**
 * Vitest global setup: one Postgres server for the package's test run, started in a temporary folder and removed
 * when the run ends. `OMA_TEST_POSTGRES_URL` names a running server to use instead. When Postgres cannot start,
 * the other tests still run and the Postgres tests fail with the reason. A package references it as
 * `globalSetup: ["../../vitest.postgres.ts"]` (before the temporary folder, whose TMPDIR the server must not
 * take) and its tests read the URL with `inject("postgres")`; a test that stops or restarts a server starts
 * one of its own with `startPostgresCluster` (vitest.postgres-cluster.ts).
 */
export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  const external = process.env.OMA_TEST_POSTGRES_URL;
  if (external) {
    project.provide("postgres", { url: external });
    return undefined;
  }
  try {
    const cluster = await startPostgresCluster();
    project.provide("postgres", { url: cluster.url });
    return () => cluster.remove();
  } catch (error) {
    project.provide("postgres", { error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
}
