import type {
  FenceAcquireResult,
  FencePublishResult,
  FenceRenewResult,
  RuntimeResourceFence,
  RuntimeResourceFencePort,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import {
  createFenceToken,
  parseAcquireInput,
  parseFence,
  parseGenerationInput,
  parsePublishIfLatestInput,
  parsePublishInput,
  parseReleaseInput,
  parseRenewInput,
} from "../stores/fence-inputs.js";
import { isoTime } from "../stores/store-options.js";
import type { SqlValue } from "./sql-client.js";
import { type SqlStoreOptions, parseSqlStoreOptions } from "./sql-store-options.js";
import { type PublicationRow, readPublication } from "./sql-fence-rows.js";
import { tokenDigest } from "./token-digest.js";

/** Options of {@link createSqlFencePort}. */
export type SqlFencePortOptions = SqlStoreOptions;

const KEY = "workspace_id = ? AND environment_id = ? AND session_id = ?";
const HELD_BY = `${KEY} AND generation = ? AND work_id = ? AND owner_id = ? AND token_sha256 = ?`;

// One upsert decides the acquire: it creates the session row at generation 1, or takes the existing row
// with the next generation only while it is free, expired, or held by the same owner and work item.
const ACQUIRE = `INSERT INTO runtime_resource_fences
  (workspace_id, environment_id, session_id, generation, work_id, owner_id, token_sha256, expires_at, updated_at)
  VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)
  ON CONFLICT (workspace_id, environment_id, session_id) DO UPDATE SET
    generation = runtime_resource_fences.generation + 1,
    work_id = excluded.work_id, owner_id = excluded.owner_id, token_sha256 = excluded.token_sha256,
    expires_at = excluded.expires_at, updated_at = excluded.updated_at
  WHERE runtime_resource_fences.token_sha256 IS NULL OR runtime_resource_fences.expires_at <= ?
    OR (runtime_resource_fences.owner_id = excluded.owner_id AND runtime_resource_fences.work_id = excluded.work_id)
  RETURNING generation, published_generation, revision, publication`;
const HOLDER = `SELECT expires_at, token_sha256 FROM runtime_resource_fences WHERE ${KEY}`;
const RENEW = `UPDATE runtime_resource_fences SET expires_at = ?, updated_at = ? WHERE ${HELD_BY} AND expires_at > ?`;
const IS_CURRENT = `SELECT 1 AS held FROM runtime_resource_fences WHERE ${HELD_BY} AND expires_at > ?`;
// Held by the owner and work item that took `generation`, at it or at a later generation (a live
// checkpoint's rotation): owner, work item, generation and expiry are read in one statement.
const GENERATION_CURRENT = `SELECT 1 AS held FROM runtime_resource_fences
  WHERE ${KEY} AND generation >= ? AND work_id = ? AND owner_id = ? AND token_sha256 IS NOT NULL
    AND expires_at > ?`;
// The compare (generation, token, expiry, not yet published) and the write are one statement.
const PUBLISH = `UPDATE runtime_resource_fences
  SET published_generation = generation, revision = revision + 1, publication = ?, updated_at = ?
  WHERE ${HELD_BY} AND expires_at > ? AND published_generation < generation
  RETURNING revision`;
// The same statement with the session's revision in its WHERE: nothing newer was published meanwhile.
const PUBLISH_IF_LATEST = `UPDATE runtime_resource_fences
  SET published_generation = generation, revision = revision + 1, publication = ?, updated_at = ?
  WHERE ${HELD_BY} AND expires_at > ? AND published_generation < generation AND revision = ?
  RETURNING revision`;
const RELEASE = `UPDATE runtime_resource_fences
  SET work_id = NULL, owner_id = NULL, token_sha256 = NULL, expires_at = 0, updated_at = ? WHERE ${HELD_BY}`;

/** Acquire attempts when the holder disappears between the refused upsert and the read of its expiry. */
const ACQUIRE_ATTEMPTS = 3;

/**
 * A {@link RuntimeResourceFencePort} over a {@link SqlClient} (SQLite, Cloudflare D1). Every operation
 * is a single SQL statement whose `WHERE` clause is the whole check, so the check and the write cannot
 * be separated: SQLite runs each statement atomically under its write lock, and D1 runs it on the
 * database's single writer. Times come from `clock`, bound as parameters, so hosts agree on expiry only
 * as far as their clocks agree; keep the skew well below the gap between renew interval and TTL.
 */
export function createSqlFencePort(options: SqlFencePortOptions): RuntimeResourceFencePort {
  const { client, clock } = parseSqlStoreOptions(options, "SQL fence port options");

  const heldBy = async (fence: RuntimeResourceFence): Promise<SqlValue[]> => [
    ...keyOf(fence),
    fence.generation,
    fence.workId,
    fence.ownerId,
    await tokenDigest(fence.token),
  ];

  return {
    async acquire(input): Promise<FenceAcquireResult> {
      const { scope, ownerId, ttlMs } = parseAcquireInput(input);
      const token = createFenceToken();
      const digest = await tokenDigest(token);
      for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt += 1) {
        const now = clock.now();
        const expiresAt = now + ttlMs;
        const [row] = await client.all<PublicationRow & { generation: number }>(ACQUIRE, [
          ...keyOf(scope),
          scope.workId,
          ownerId,
          digest,
          expiresAt,
          now,
          now,
        ]);
        if (row) {
          const fence: RuntimeResourceFence = {
            ...scopeOf(scope),
            ownerId,
            generation: row.generation,
            token,
            expiresAt: isoTime(expiresAt),
          };
          return { type: "acquired", fence, publication: readPublication(row) };
        }
        const [holder] = await client.all<{ expires_at: number; token_sha256: string | null }>(
          HOLDER,
          keyOf(scope),
        );
        if (holder && holder.token_sha256 !== null && holder.expires_at > now)
          return { type: "conflict", expiresAt: isoTime(holder.expires_at) };
      }
      return { type: "conflict", expiresAt: null };
    },

    async renew(input): Promise<FenceRenewResult> {
      const { fence, ttlMs } = parseRenewInput(input);
      const now = clock.now();
      const { changes } = await client.run(RENEW, [
        now + ttlMs,
        now,
        ...(await heldBy(fence)),
        now,
      ]);
      return changes === 1
        ? { type: "renewed", fence: { ...fence, expiresAt: isoTime(now + ttlMs) } }
        : { type: "lost" };
    },

    async isCurrent(input): Promise<boolean> {
      const fence = parseFence(input);
      const rows = await client.all(IS_CURRENT, [...(await heldBy(fence)), clock.now()]);
      return rows.length === 1;
    },

    async isGenerationCurrent(input): Promise<boolean> {
      const { scope, generation, ownerId } = parseGenerationInput(input);
      const values = [...keyOf(scope), generation, scope.workId, ownerId, clock.now()];
      const rows = await client.all(GENERATION_CURRENT, values);
      return rows.length === 1;
    },

    async publish(input): Promise<FencePublishResult> {
      const { fence, body } = parsePublishInput(input);
      const now = clock.now();
      const [row] = await client.all<{ revision: number }>(PUBLISH, [
        JSON.stringify(body),
        now,
        ...(await heldBy(fence)),
        now,
      ]);
      return row ? { type: "published", revision: row.revision } : { type: "lost" };
    },

    async publishIfLatest(input): Promise<FencePublishResult> {
      const { fence, expectedRevision, body } = parsePublishIfLatestInput(input);
      const now = clock.now();
      const params = [JSON.stringify(body), now, ...(await heldBy(fence)), now, expectedRevision];
      const [row] = await client.all<{ revision: number }>(PUBLISH_IF_LATEST, params);
      return row ? { type: "published", revision: row.revision } : { type: "lost" };
    },

    async release(input): Promise<void> {
      const { fence } = parseReleaseInput(input);
      await client.run(RELEASE, [clock.now(), ...(await heldBy(fence))]);
    },
  };
}

function keyOf(scope: RuntimeResourceScope): SqlValue[] {
  return [scope.workspaceId, scope.environmentId, scope.sessionId];
}

function scopeOf(scope: RuntimeResourceScope): RuntimeResourceScope {
  return {
    workspaceId: scope.workspaceId,
    environmentId: scope.environmentId,
    sessionId: scope.sessionId,
    workId: scope.workId,
  };
}
