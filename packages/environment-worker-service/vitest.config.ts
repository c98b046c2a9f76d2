import { packageTestConfig } from "../../vitest.base.js";

// Cases start the bin as a child process against the local control plane and the local stack.
export default packageTestConfig(180_000);
