import { packageTestConfig } from "../../vitest.base.js";

// Cases spawn real (confined) processes on a shared machine.
export default packageTestConfig(60_000);
