import type {
  RuntimeResourceFencePort,
  RuntimeResourcePublication,
} from "@open-managed-agents/runtime-resource-contract";

/** The session's current publication, read by taking and releasing the fence as an observer. */
export async function publicationOf(
  fences: RuntimeResourceFencePort,
  scope: { workspaceId: string; environmentId: string; sessionId: string },
): Promise<RuntimeResourcePublication | null> {
  const acquired = await fences.acquire({
    scope: { ...scope, workId: "observer" },
    ownerId: "observer",
    ttlMs: 1_000,
  });
  if (acquired.type !== "acquired") throw new Error("the session fence is still held");
  await fences.release({ fence: acquired.fence, reason: "completed" });
  return acquired.publication;
}
