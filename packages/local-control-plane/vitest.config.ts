import { packageTestConfig } from "../../vitest.base.js";

// Cases run the SDK's worker, which spawns bash, on a shared machine.
export default packageTestConfig(60_000);
