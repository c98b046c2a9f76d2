import type { RuntimeEnvironment } from "@open-managed-agents/runtime-resource-contract";

/** The image the `Sandbox` container class boots: the Dockerfile's `FROM`, at the installed SDK's version. */
export const SANDBOX_IMAGE = "docker.io/cloudflare/sandbox:0.12.10";

/** What the driver reports it boots: the SDK's documented image, unmodified. */
export const SANDBOX_RUNTIME_ENVIRONMENT: RuntimeEnvironment = {
  kind: "base",
  artifact: { type: "image", reference: SANDBOX_IMAGE },
};
