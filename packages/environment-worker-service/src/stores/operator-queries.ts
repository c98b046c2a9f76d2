import type { SqlClient } from "@open-managed-agents/managed-runtime-host";
import { CHECKPOINT_METADATA_KEY } from "@open-managed-agents/managed-runtime-sandbox";
import {
  IntegrityError,
  type SandboxCheckpointHandle,
  parseRuntimeResourcePublication,
  parseSandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";

/** One session's fence row, token-free. */
export interface FenceRow {
  readonly workspaceId: string;
  readonly environmentId: string;
  readonly sessionId: string;
  readonly generation: number;
  readonly workId: string | null;
  readonly ownerId: string | null;
  readonly held: boolean;
  readonly expiresAt: string | null;
  readonly publishedGeneration: number;
  readonly revision: number;
  readonly checkpointId: string | null;
  readonly updatedAt: string;
}

interface RawFence {
  workspace_id: string;
  environment_id: string;
  session_id: string;
  generation: number;
  work_id: string | null;
  owner_id: string | null;
  expires_at: number;
  published_generation: number;
  revision: number;
  publication: string | null;
  updated_at: number;
}

const FENCE_COLUMNS =
  "workspace_id, environment_id, session_id, generation, work_id, owner_id, expires_at, published_generation, revision, publication, updated_at";

/** Read-only queries the operator CLI, the metrics and the sweep make over the store's tables. */
export function createOperatorQueries(client: SqlClient, clock: () => number = Date.now) {
  const toFence = (row: RawFence): FenceRow => {
    const held = row.owner_id !== null && row.expires_at > clock();
    return {
      workspaceId: row.workspace_id,
      environmentId: row.environment_id,
      sessionId: row.session_id,
      generation: row.generation,
      workId: held ? row.work_id : null,
      ownerId: held ? row.owner_id : null,
      held,
      expiresAt: held ? new Date(row.expires_at).toISOString() : null,
      publishedGeneration: row.published_generation,
      revision: row.revision,
      checkpointId: publishedHandle(row)?.checkpointId ?? null,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  };
  return {
    /** Sessions whose fence is held and unexpired: work in flight. */
    async inFlight(): Promise<FenceRow[]> {
      const rows = await client.all<RawFence>(
        `SELECT ${FENCE_COLUMNS} FROM runtime_resource_fences WHERE owner_id IS NOT NULL AND expires_at > ? ORDER BY updated_at`,
        [clock()],
      );
      return rows.map(toFence);
    },
    /** The fence rows of one session (one per workspace and environment). */
    async fencesOf(sessionId: string): Promise<FenceRow[]> {
      const rows = await client.all<RawFence>(
        `SELECT ${FENCE_COLUMNS} FROM runtime_resource_fences WHERE session_id = ? ORDER BY updated_at`,
        [sessionId],
      );
      return rows.map(toFence);
    },
    /** The published checkpoint handles of a session (what a sweep must keep). */
    async publishedHandles(sessionId: string): Promise<SandboxCheckpointHandle[]> {
      const rows = await client.all<RawFence>(
        `SELECT ${FENCE_COLUMNS} FROM runtime_resource_fences WHERE session_id = ?`,
        [sessionId],
      );
      return rows
        .map(publishedHandle)
        .filter((handle): handle is SandboxCheckpointHandle => handle !== null);
    },
    /** Sessions that published since `sinceMs` (epoch ms), for the periodic sweep. */
    async sessionsPublishedSince(sinceMs: number): Promise<string[]> {
      const rows = await client.all<{ session_id: string }>(
        "SELECT DISTINCT session_id FROM runtime_resource_fences WHERE publication IS NOT NULL AND updated_at >= ? ORDER BY session_id",
        [sinceMs],
      );
      return rows.map((row) => row.session_id);
    },
    async pendingCounts(): Promise<{ orphans: number; journal: number }> {
      const [orphans] = await client.all<{ n: number }>(
        "SELECT COUNT(*) AS n FROM runtime_orphans",
        [],
      );
      const [journal] = await client.all<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sandbox_journal",
        [],
      );
      return { orphans: orphans?.n ?? 0, journal: journal?.n ?? 0 };
    },
  };
}

export type OperatorQueries = ReturnType<typeof createOperatorQueries>;

/** The workspace checkpoint handle a fence row's publication carries, or null. */
function publishedHandle(row: RawFence): SandboxCheckpointHandle | null {
  if (row.publication === null) return null;
  let body: unknown;
  try {
    body = JSON.parse(row.publication);
  } catch (cause) {
    throw new IntegrityError({
      message: "stored publication is not valid JSON",
      context: { record: "publication", sessionId: row.session_id },
      cause,
    });
  }
  const publication = parseRuntimeResourcePublication(
    { ...(body as object), generation: row.published_generation, revision: row.revision },
    { code: "integrity_failed" },
  );
  const handleJson = publication.workspaceCandidate.metadata?.[CHECKPOINT_METADATA_KEY];
  if (typeof handleJson !== "string") return null;
  return parseSandboxCheckpointHandle(JSON.parse(handleJson), { code: "integrity_failed" });
}
