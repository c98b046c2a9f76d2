import type { BetaManagedAgentsSession } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import {
  InvalidRequestError,
  type RuntimeSessionSnapshot,
  type SessionInputAccessPort,
  UpstreamProtocolError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedAgentsClient } from "./sdk-client.js";

/**
 * Checks that the retrieved session is the one the item names and belongs to this environment; a
 * mismatch is `invalid_request`: the item is not run.
 */
export function checkSessionBelongs(
  session: BetaManagedAgentsSession,
  expected: { sessionId: string; environmentId: string },
): void {
  if (session.id !== expected.sessionId) {
    throw new InvalidRequestError({
      message: "the retrieved session is not the one the work item names",
      context: { field: "session.id", sessionId: expected.sessionId },
    });
  }
  if (session.environment_id !== expected.environmentId) {
    throw new InvalidRequestError({
      message: "the session belongs to another environment",
      context: {
        field: "session.environment_id",
        sessionId: expected.sessionId,
        environmentId: expected.environmentId,
      },
    });
  }
}

/** The host's view of a session: id, environment, metadata and resources (files, repositories, memory). */
export function toSessionSnapshot(session: BetaManagedAgentsSession): RuntimeSessionSnapshot {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(session.metadata ?? {}))
    if (typeof value === "string") metadata[key] = value;
  const resources = (session.resources ?? []).map(
    (resource) => ({ ...resource }) as RuntimeSessionSnapshot["resources"][number],
  );
  return { id: session.id, environmentId: session.environment_id, metadata, resources };
}

/**
 * Session-input access for the host's materializer: downloads session files through `client`, which
 * carries the item's sessions token (or the environment key when the secret has none).
 */
export function createSessionInputAccess(client: ManagedAgentsClient): SessionInputAccessPort {
  return {
    async downloadFile({ fileId, signal }) {
      const response = await client.beta.files.download(fileId, {}, { signal });
      if (!response.body) {
        throw new UpstreamProtocolError({
          message: "file content response has no body",
          context: { fileId },
        });
      }
      return response.body as ReadableStream<Uint8Array>;
    },
  };
}
