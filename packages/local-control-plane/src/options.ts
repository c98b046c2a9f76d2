import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { isFunction, positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { ControlPlaneObserver } from "./events.js";
import type { WebhookTarget } from "./webhooks.js";

const MIB = 1024 * 1024;

/** Options of {@link startLocalControlPlane}. Validated once, at start. */
export interface LocalControlPlaneOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  readonly host?: string;
  /** Bearer token of the admin API (and the platform API key the stand-in accepts). @default a random token */
  readonly adminToken?: string;
  /** Base URL written into each work secret's `api_base_url` (when the sandbox reaches the server by another name). @default the listening URL */
  readonly publicUrl?: string;
  /** Sign and POST a `session.pending` event here whenever a work item is queued. */
  readonly webhook?: WebhookTarget;
  /** Lease TTL from ack until the first heartbeat, and when a heartbeat asks for none. @default 90 */
  readonly defaultTtlSeconds?: number;
  /** Largest TTL a heartbeat gets. @default 600 */
  readonly maxTtlSeconds?: number;
  /** Default `reclaim_older_than_ms` of a poll. @default 5000 */
  readonly reclaimOlderThanMs?: number;
  /** Largest request body. @default 32 MiB */
  readonly maxBodyBytes?: number;
  /** Where the time comes from (tests advance it). @default Date.now */
  readonly clock?: () => number;
  /** fetch used for webhook deliveries. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Webhook delivery attempts. @default 3 */
  readonly webhookAttempts?: number;
  /** How often expired leases are applied without a request touching the item (so webhooks announce re-queued items). @default 1000 */
  readonly sweepIntervalMs?: number;
  /** Receives what the control plane does (work queued, claimed, stopped; turns; tool calls), for logs. Never secrets. */
  readonly onEvent?: ControlPlaneObserver;
}

const positive = positiveSafeIntegerSchema;

const optionsSchema = z
  .object({
    port: z.number().int().min(0).max(65_535).default(0),
    host: z.string().min(1).default("127.0.0.1"),
    adminToken: z.string().min(16, "must be at least 16 characters").optional(),
    publicUrl: z.url({ protocol: /^https?$/ }).optional(),
    webhook: z
      .object({
        url: z.url({ protocol: /^https?$/ }),
        secret: z
          .string()
          .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, "must be whsec_ followed by a base64 key"),
      })
      .strict()
      .optional(),
    defaultTtlSeconds: positive.default(90),
    maxTtlSeconds: positive.default(600),
    reclaimOlderThanMs: z.number().int().nonnegative().default(5000),
    maxBodyBytes: positive.default(32 * MIB),
    clock: z.custom<() => number>(isFunction, "must be a function").default(() => Date.now),
    fetch: z.custom<typeof fetch>(isFunction, "must be a function").optional(),
    webhookAttempts: positive.max(10).default(3),
    sweepIntervalMs: positive.default(1000),
    onEvent: z.custom<ControlPlaneObserver>(isFunction, "must be a function").optional(),
  })
  .strict()
  .refine((options) => options.defaultTtlSeconds <= options.maxTtlSeconds, {
    message: "defaultTtlSeconds must not exceed maxTtlSeconds",
    path: ["defaultTtlSeconds"],
  });

/** Options after defaults. */
export type ResolvedOptions = z.output<typeof optionsSchema>;

/** Validates options; a bad one throws `invalid_config` naming the field. */
export function resolveOptions(options: LocalControlPlaneOptions): ResolvedOptions {
  return parseRecord(optionsSchema, options, {
    record: "local control plane options",
    code: "invalid_config",
  });
}
