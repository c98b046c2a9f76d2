import type { D1Migration } from "cloudflare:test";
import type { WorkerEnv } from "../../src/env.js";
import type { TestEnvironment } from "./environment-types.js";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      readonly TEST_MIGRATIONS: D1Migration[];
      readonly OMA_TEST_CONTAINER_URL: string;
      readonly OMA_TEST_CONTAINER_TOKEN: string;
      readonly TEST_ENVIRONMENT: TestEnvironment;
      readonly TEST_SDK_VERSION: string;
    }
  }
}
