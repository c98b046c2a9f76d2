/** Response header every answer of the Worker carries, with the protocol version it speaks. */
export const PROTOCOL_HEADER = "Differently-Adapter-Protocol";
/** Version of the adapter protocol this Worker serves. */
export const PROTOCOL_VERSION = 1;
/** Request header naming the installation a sandbox belongs to; required on every `/sandboxes` route. */
export const INSTALLATION_HEADER = "Differently-Installation";
/** Path prefix of every route. */
export const API_PREFIX = "/adapter/v1";
/** Name under which the plugin reports itself in `GET /info`. */
export const ADAPTER_NAME = "cloudflare-sandbox";
/** Sandbox SDK the Worker is built on. */
export const SDK_PACKAGE = "@cloudflare/sandbox@0.12.10";
/** Capabilities `GET /info` declares. Snapshots and fork are absent on purpose (see docs/adapter-protocol.md). */
export const CAPABILITIES = ["exec", "exec.stream", "files", "isolation.microvm"] as const;
/** Capabilities the Worker refuses with `unsupported_operation`. */
export const UNSUPPORTED_CAPABILITIES = [
  "lifecycle.stop-start",
  "lifecycle.pause-resume",
  "snapshots.disk",
  "snapshots.memory",
  "fork",
] as const;
