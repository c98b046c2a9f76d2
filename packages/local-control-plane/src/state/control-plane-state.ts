import { createError } from "@open-managed-agents/runtime-resource-contract";
import { safeObserver } from "../events.js";
import type { ResolvedOptions } from "../options.js";
import type { WebhookTarget } from "../webhooks.js";
import { createWebhookSender } from "../webhooks.js";
import { newId, newToken } from "./ids.js";
import { type SessionRecord, createSessions } from "./sessions.js";
import { createSkills } from "./skills.js";
import { type WorkRecord, createWorkQueue } from "./work-queue.js";

/** A self-hosted environment and its standing credential. */
export interface EnvironmentRecord {
  readonly id: string;
  readonly name: string;
  readonly metadata: Record<string, string>;
  readonly key: string;
  readonly createdAt: number;
}

/** An uploaded file a session may mount. */
export interface FileRecord {
  readonly id: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly bytes: Buffer;
  readonly createdAt: number;
}

/** Who a bearer credential is. */
export type Principal =
  | { readonly kind: "api_key" }
  | { readonly kind: "environment"; readonly environment: EnvironmentRecord }
  | { readonly kind: "work"; readonly work: WorkRecord };

/** Everything the control plane holds, in memory: environments, files, the work queue, sessions and turns. */
export function createControlPlaneState(
  options: ResolvedOptions & {
    readonly adminToken: string;
    readonly apiBaseUrl: () => string;
    readonly webhook?: WebhookTarget;
  },
) {
  const environments = new Map<string, EnvironmentRecord>();
  const files = new Map<string, FileRecord>();
  const skills = createSkills(options.clock);
  const observe = safeObserver(options.onEvent);
  const webhooks = options.webhook
    ? createWebhookSender(options.webhook, {
        clock: options.clock,
        fetch: options.fetch ?? globalThis.fetch,
        attempts: options.webhookAttempts,
      })
    : null;

  const work = createWorkQueue({
    clock: options.clock,
    apiBaseUrl: options.apiBaseUrl,
    defaultTtlSeconds: options.defaultTtlSeconds,
    maxTtlSeconds: options.maxTtlSeconds,
    defaultReclaimMs: options.reclaimOlderThanMs,
    observe,
    onQueued: (item) => {
      if (item.data.type === "session") webhooks?.send(item.data.id, item.id);
    },
    onStopped: (item) => {
      if (item.data.type === "session") queueMicrotask(() => sessions.workStopped(item.data.id));
    },
  });

  const liveWork = (session: SessionRecord) =>
    work
      .list(session.environmentId)
      .some(
        (item) =>
          item.data.type === "session" && item.data.id === session.id && item.state !== "stopped",
      );

  const sessions = createSessions({
    clock: options.clock,
    queueWork: (session) =>
      work.enqueue({
        environmentId: session.environmentId,
        data: { type: "session", id: session.id },
      }).id,
    hasLiveWork: liveWork,
    observe,
  });

  const environment = (environmentId: string): EnvironmentRecord => {
    const found = environments.get(environmentId);
    if (!found)
      throw createError("not_found", {
        message: `environment ${environmentId} not found`,
        context: { environmentId },
      });
    return found;
  };

  return {
    work,
    sessions,
    skills,
    webhooks,
    environment,
    createEnvironment(input: {
      name: string;
      metadata: Record<string, string>;
    }): EnvironmentRecord {
      const record: EnvironmentRecord = {
        id: newId("env"),
        name: input.name,
        metadata: { ...input.metadata },
        key: newToken("sk-ant-env-local-"),
        createdAt: options.clock(),
      };
      environments.set(record.id, record);
      return record;
    },
    createSession(input: {
      environmentId: string;
      title: string | null;
      metadata: Record<string, string>;
      files: readonly { fileId: string; mountPath: string }[];
      skills: readonly { skillId: string; version: string }[];
    }): SessionRecord {
      environment(input.environmentId);
      for (const file of input.files) this.file(file.fileId);
      for (const skill of input.skills) skills.get(skill.skillId, skill.version);
      return sessions.create(input);
    },
    /** Queues a health-check item, which a worker is expected to stop. */
    queueHealthcheck(environmentId: string): WorkRecord {
      environment(environmentId);
      return work.enqueue({ environmentId, data: { type: "healthcheck", id: newId("hc") } });
    },
    uploadFile(input: { filename: string; mimeType: string; bytes: Buffer }): FileRecord {
      const record: FileRecord = {
        id: newId("file"),
        filename: input.filename,
        mimeType: input.mimeType,
        bytes: input.bytes,
        createdAt: options.clock(),
      };
      files.set(record.id, record);
      return record;
    },
    file(fileId: string): FileRecord {
      const found = files.get(fileId);
      if (!found)
        throw createError("not_found", {
          message: `file ${fileId} not found`,
          context: { fileId },
        });
      return found;
    },
    /** Resolves a bearer credential; null when it is none of ours. */
    principal(token: string | null): Principal | null {
      if (!token) return null;
      if (token === options.adminToken) return { kind: "api_key" };
      for (const record of environments.values())
        if (record.key === token) return { kind: "environment", environment: record };
      const item = work.byToken(token);
      return item ? { kind: "work", work: item } : null;
    },
  };
}

/** The state's type. */
export type ControlPlaneState = ReturnType<typeof createControlPlaneState>;
