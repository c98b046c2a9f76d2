import { VERSION as SDK_VERSION } from "@anthropic-ai/sdk/version";
import manifest from "../package.json" with { type: "json" };

/** The harness version the host records for this lane (the host's `AMA_WORKER_HARNESS_VERSION`). */
const HARNESS_VERSION = "ama-worker-v1";

/**
 * What `oma-ama-worker --version` prints: this package's version, the harness version and the version of the
 * SDK inlined in the bin, e.g. `oma-ama-worker 0.1.0 (ama-worker-v1) @anthropic-ai/sdk 1.17.0`.
 */
export function versionLine(): string {
  return `oma-ama-worker ${manifest.version} (${HARNESS_VERSION}) @anthropic-ai/sdk ${SDK_VERSION}`;
}
