import { packageTestConfig } from "../../vitest.base.js";

// Cases run the official SDK against a local HTTP server on a shared machine.
export default packageTestConfig(60_000);
