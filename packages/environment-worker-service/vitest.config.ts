import { configDefaults } from "vitest/config";
import { packageTestConfig } from "../../vitest.base.js";

// Cases start the bin as a child process against the local control plane and the local stack. The Postgres
// store's cases share the run's own Postgres server, started first: it must not take the run's temporary folder.
// The fleet's fault cases (six minutes on a shared 2-core machine) run with OMA_FLEET_FAULTS=1 (`pnpm test:fleet`).
const config = packageTestConfig(180_000);
config.test = {
  ...config.test,
  globalSetup: ["../../vitest.postgres.ts", ...[config.test?.globalSetup ?? []].flat()],
  exclude: [
    ...configDefaults.exclude,
    ...(process.env.OMA_FLEET_FAULTS === "1" ? [] : ["test/fleet-faults.test.ts"]),
  ],
};

export default config;
