import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import {
  confinementOptionFields,
  partialLimitsSchema,
} from "../server/container-options-schema.js";
import type {
  ConfinementMode,
  LocalContainerLimits,
  LocalContainerNetwork,
} from "../server/options.js";

const launcherOptionsSchema = z
  .object({
    transport: z
      .enum(["http", "websocket"], {
        message:
          'must be "http" or "websocket": the local container server does not speak the rpc transport',
      })
      .default("http"),
    warmPoolTarget: z.number().int().min(0).max(64).default(0),
    apiKey: z
      .string()
      .min(16, { message: "must be at least 16 characters" })
      .regex(/^[\x21-\x7e]+$/, { message: "must be printable ASCII without spaces" })
      .optional(),
    host: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65_535).default(0),
    rootDir: z.string().min(1).optional(),
    stateDir: z.string().min(1).optional(),
    workerScriptPath: z.string().min(1).optional(),
    ...confinementOptionFields,
    limits: partialLimitsSchema.default({}),
    verbose: z.boolean().default(false),
    inspectorPort: z.number().int().min(1).max(65_535).optional(),
  })
  .strict();

/** Options of {@link startLocalBridge}. */
export interface StartLocalBridgeOptions {
  /** `SANDBOX_TRANSPORT` of the bridge: `http` or `websocket` (the `rpc` transport is not served locally). @default "http" */
  readonly transport?: "http" | "websocket";
  /** `WARM_POOL_TARGET`: containers the bridge keeps started ahead of use; the pool is primed at start. @default 0 */
  readonly warmPoolTarget?: number;
  /** `SANDBOX_API_KEY`; a random 256-bit key when omitted. The bridge never runs without one. */
  readonly apiKey?: string;
  /** Interface the Worker listens on. @default "127.0.0.1" */
  readonly host?: string;
  /** Port of the Worker; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Container trees; a fresh temporary directory when omitted (removed on stop). Must not lie under /workspace or /mnt/session/outputs. */
  readonly rootDir?: string;
  /** Durable Object state of the Worker; a fresh temporary directory when omitted (removed on stop). */
  readonly stateDir?: string;
  /** A pre-bundled ES module Worker exporting `Sandbox`, `WarmPool` and the bridge; the packaged bundle when omitted. */
  readonly workerScriptPath?: string;
  /**
   * Confinement of the local containers (see `LocalContainerServerOptions.confinement`): `bubblewrap`, or
   * `unconfined-unsafe` to run commands on the host with the server's rights. Read the mode in force from
   * `bridge.containerServer.confinement`. @default "bubblewrap"
   */
  readonly confinement?: ConfinementMode;
  /**
   * Network of the containers (see `LocalContainerServerOptions.network`): `none`, their own loopback only
   * with Worker-routed egress, or `host-unsafe`, which lets every container reach the host's services and
   * the other containers. @default "none" ("host-unsafe" when unconfined)
   */
  readonly network?: LocalContainerNetwork;
  /** With `network: "none"`: destinations the containers may reach through the host's filtering proxy (see `LocalContainerServerOptions.egressAllowList`). */
  readonly egressAllowList?: readonly string[];
  /** Refuse to start unless `bun` is on the containers' PATH, as in the image (see `LocalContainerServerOptions.requireBun`). @default false */
  readonly requireBun?: boolean;
  /** Limits of the local container server. */
  readonly limits?: Partial<LocalContainerLimits>;
  /** Shows workerd's log lines. @default false */
  readonly verbose?: boolean;
  /**
   * Opens workerd's V8 inspector (Chrome DevTools protocol) on this loopback port: heap snapshots and
   * collections of the Worker's isolate, for debugging and the soak benchmark. Off when omitted.
   */
  readonly inspectorPort?: number;
}

export type ResolvedLauncherOptions = z.output<typeof launcherOptionsSchema>;

/** Validates launcher options once; failure → InvalidConfigError naming the field (never echoing values). */
export function resolveLauncherOptions(options: StartLocalBridgeOptions): ResolvedLauncherOptions {
  const result = launcherOptionsSchema.safeParse(options);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(options)";
  throw new InvalidConfigError({
    message: `invalid local bridge option ${field}: ${issue?.message ?? "invalid"}`,
    context: { field },
    cause: result.error,
  });
}
