import * as z from "zod";

/** States of a work item, as the Work API names them. */
export const workStateSchema = z.enum(["queued", "starting", "active", "stopping", "stopped"]);
/** A work item state. */
export type WorkState = z.output<typeof workStateSchema>;

const timestamp = z.string();

/** `BetaSelfHostedWork`: a unit of work in a self-hosted environment. */
export const workItemSchema = z
  .object({
    id: z.string(),
    type: z.literal("work"),
    environment_id: z.string(),
    state: workStateSchema,
    data: z.union([
      z.object({ type: z.literal("session"), id: z.string() }).strict(),
      z.object({ type: z.literal("healthcheck"), id: z.string() }).strict(),
    ]),
    metadata: z.record(z.string(), z.string()),
    secret: z.string().nullable(),
    created_at: timestamp,
    acknowledged_at: timestamp.nullable(),
    started_at: timestamp.nullable(),
    latest_heartbeat_at: timestamp.nullable(),
    stop_requested_at: timestamp.nullable(),
    stopped_at: timestamp.nullable(),
  })
  .strict();
/** Wire form of a work item. */
export type WorkItemWire = z.output<typeof workItemSchema>;

/** `BetaSelfHostedWorkHeartbeatResponse`. */
export const heartbeatResponseSchema = z
  .object({
    type: z.literal("work_heartbeat"),
    last_heartbeat: z.string(),
    lease_extended: z.boolean(),
    state: workStateSchema,
    ttl_seconds: z.number().int().nonnegative(),
  })
  .strict();

/** `BetaWorkLeaseState`: the lease as the server holds it, carried by a 412. */
export const leaseStateSchema = z
  .object({
    last_heartbeat: z.string().nullable(),
    lease_extended: z.boolean(),
    state: workStateSchema,
    ttl_seconds: z.number().int().nonnegative(),
  })
  .strict();

/** `BetaSelfHostedWorkQueueStats`. */
export const queueStatsSchema = z
  .object({
    type: z.literal("work_queue_stats"),
    depth: z.number().int().nonnegative(),
    pending: z.number().int().nonnegative(),
    oldest_queued_at: timestamp.nullable(),
    workers_polling: z.number().int().nonnegative().nullable(),
  })
  .strict();

/** `BetaSelfHostedWorkListResponse`. */
export const workListSchema = z
  .object({ data: z.array(workItemSchema), next_page: z.string().nullable() })
  .strict();

/** `BetaWorkSecret`: the decoded per-item secret. */
export const workSecretSchema = z
  .object({ sessions_token: z.string().min(1), api_base_url: z.string().optional() })
  .strict();

const integerParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** A parameter the SDK's types allow to be `null`, which it sends as `key=`: the same as leaving it out. */
const nullable = <S extends z.ZodType>(schema: S) =>
  z.union([z.literal("").transform(() => undefined), schema]).optional();

/** Query of `GET /v1/environments/{id}/work/poll`. */
export const pollQuerySchema = z
  .object({
    block_ms: nullable(integerParam(1, 999)),
    reclaim_older_than_ms: nullable(integerParam(0, 86_400_000)),
  })
  .strict();

/** Query of `POST …/work/{id}/heartbeat`. */
export const heartbeatQuerySchema = z
  .object({
    desired_ttl_seconds: nullable(integerParam(1, 86_400)),
    expected_last_heartbeat: nullable(z.string().min(1)),
  })
  .strict();

/** Body of `POST …/work/{id}/stop` (`BetaSelfHostedWorkStopRequest`). */
export const stopBodySchema = z.object({ force: z.boolean().optional() }).strict();

/** Query of `GET …/work` (list). */
export const listQuerySchema = z
  .object({ limit: integerParam(1, 1000).optional(), page: nullable(z.string()) })
  .strict();

/** Most metadata keys a work item holds, and the longest key and value (limits of the local control plane). */
export const WORK_METADATA_LIMITS = { keys: 16, keyLength: 64, valueLength: 512 } as const;

/**
 * Body of `POST …/work/{id}` (`BetaSelfHostedWorkUpdateRequest`): a metadata patch. A string upserts its key,
 * `null` deletes it, and a missing `metadata` keeps the item's metadata as it is.
 */
export const updateBodySchema = z
  .object({
    metadata: z
      .record(
        z.string().min(1).max(WORK_METADATA_LIMITS.keyLength),
        z.string().max(WORK_METADATA_LIMITS.valueLength).nullable(),
      )
      .optional(),
  })
  .strict();

/** A body that must be empty or `{}` (ack, heartbeat). */
export const emptyBodySchema = z.object({}).strict();
