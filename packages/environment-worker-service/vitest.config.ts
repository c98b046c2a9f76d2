import { packageTestConfig } from "../../vitest.base.js";

// Cases start the bin as a child process against the local control plane and the local stack. The Postgres
// store's cases share the run's own Postgres server, started first: it must not take the run's temporary folder.
const config = packageTestConfig(180_000);
config.test = {
  ...config.test,
  globalSetup: ["../../vitest.postgres.ts", ...[config.test?.globalSetup ?? []].flat()],
};

export default config;
