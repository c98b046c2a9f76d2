export { createCloudflareSdkSandbox, type CloudflareSdkSandboxOptions } from "./sdk/sdk-sandbox.js";
export type { CloudflareSandboxStub } from "./sdk/sandbox-stub.js";
export { parseProcessLogStream } from "./sdk/process-log-stream.js";
export { sdkFailure } from "./sdk/sdk-errors.js";
