import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { createError } from "@open-managed-agents/runtime-resource-contract";
import { transcriptToWire, adminRoutes, turnToWire } from "./http/admin-routes.js";
import { sendAdminError, sendPlatformError } from "./http/respond.js";
import { bearerToken, createRouter } from "./http/router.js";
import { sessionRoutes } from "./http/session-routes.js";
import { skillRoutes } from "./http/skill-routes.js";
import { workRoutes } from "./http/work-routes.js";
import { type LocalControlPlaneOptions, resolveOptions } from "./options.js";
import { createControlPlaneState } from "./state/control-plane-state.js";
import { toWire } from "./state/work-wire.js";
import { type ToolCall, type ToolCallGate, toolCallSchema } from "./wire/admin-schemas.js";
import type { WebhookDelivery } from "./webhooks.js";

/** A running local control plane. Its methods mirror the admin API. */
export interface LocalControlPlane {
  /** Base URL to pass as the SDK client's `baseURL`. */
  readonly url: string;
  /** Bearer token of the admin API; also accepted as the platform API key (work retrieve). */
  readonly adminToken: string;
  /** Creates a self-hosted environment; the only place its key is handed out. */
  createEnvironment(input?: {
    readonly name?: string;
    readonly metadata?: Record<string, string>;
  }): { readonly id: string; readonly environmentKey: string };
  /** Creates an idle session bound to an environment. */
  createSession(input: {
    readonly environmentId: string;
    readonly title?: string;
    readonly metadata?: Record<string, string>;
    readonly files?: readonly { readonly fileId: string; readonly mountPath: string }[];
    /** Skills of the session's agent; `version` defaults to `latest`. */
    readonly skills?: readonly { readonly skillId: string; readonly version?: string }[];
  }): { readonly id: string };
  /** Stores a skill version (a zip or tar archive); without `skillId`, a new skill. */
  uploadSkill(input: {
    readonly name: string;
    readonly archive: Uint8Array;
    readonly description?: string;
    readonly skillId?: string;
  }): { readonly skillId: string; readonly version: string };
  /**
   * Queues a scripted user turn; it starts (queues its work item) once the session is idle with no live item.
   * `gate` (default `evaluated_permission`) is how the session shows the worker which calls it waits on.
   */
  queueTurn(
    sessionId: string,
    turn: {
      readonly message?: string;
      readonly toolCalls: readonly ToolCall[];
      readonly finalMessage?: string;
      readonly gate?: ToolCallGate;
    },
  ): ReturnType<typeof turnToWire>;
  /** Queues a health-check work item. */
  queueHealthcheck(environmentId: string): { readonly workId: string };
  /** Stores a file sessions may mount; served at `GET /v1/files/{id}/content`. */
  uploadFile(input: {
    readonly filename: string;
    readonly bytes: Uint8Array;
    readonly mimeType?: string;
  }): { readonly id: string };
  /** Terminates a session. */
  terminateSession(sessionId: string): void;
  /** The session's tool calls and results. */
  transcript(sessionId: string): ReturnType<typeof transcriptToWire>;
  /** An operator's stop: graceful (`stopping` until the holder ends it) unless `force`. */
  stopWork(workId: string, options?: { readonly force?: boolean }): ReturnType<typeof toWire>;
  /** Fault injection: another holder renews the item's lease, so its holder's next heartbeat gets 412. */
  takeOverLease(workId: string): ReturnType<typeof toWire>;
  /** Fault injection: the item's lease expires now (as if its holder crashed); the item is queued again. */
  expireLease(workId: string): ReturnType<typeof toWire>;
  /** Every work item (no secrets), oldest first. */
  workItems(environmentId?: string): ReturnType<typeof toWire>[];
  /** Webhook deliveries so far, after waiting for those under way. */
  webhookDeliveries(): Promise<readonly WebhookDelivery[]>;
  /** Waits until the turn is done (its agent went idle), or throws `timeout`. */
  waitForTurn(
    sessionId: string,
    turnId: string,
    options?: { readonly timeoutMs?: number },
  ): Promise<ReturnType<typeof turnToWire>>;
  /** Closes streams and the server. */
  stop(): Promise<void>;
}

/** Starts the server. Options are validated first (`invalid_config`). */
export async function startLocalControlPlane(
  options: LocalControlPlaneOptions = {},
): Promise<LocalControlPlane> {
  const resolved = resolveOptions(options);
  const adminToken = resolved.adminToken ?? `oma-admin-${randomBytes(24).toString("base64url")}`;
  let url = "";
  const state = createControlPlaneState({
    ...resolved,
    adminToken,
    apiBaseUrl: () => resolved.publicUrl ?? url,
  });
  const limits = { maxBodyBytes: resolved.maxBodyBytes };
  const router = createRouter([
    ...workRoutes(state, limits),
    ...sessionRoutes(state, limits),
    ...skillRoutes(state),
    ...adminRoutes(state, limits),
  ]);

  const server: Server = createServer((request, response) => {
    const requestUrl = new URL(request.url ?? "/", "http://local");
    const isAdmin = requestUrl.pathname.startsWith("/admin/");
    const fail = (error: unknown) =>
      isAdmin ? sendAdminError(response, error) : sendPlatformError(response, error);
    try {
      const { route, params } = router.match(request.method ?? "GET", requestUrl.pathname);
      Promise.resolve(
        route.handler({ request, response, url: requestUrl, params, token: bearerToken(request) }),
      ).catch(fail);
    } catch (error) {
      fail(error);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  // Leases also expire when no request touches the item, so a webhook-driven worker hears of the re-queue.
  const sweep = setInterval(() => state.work.list(), resolved.sweepIntervalMs);
  sweep.unref();
  url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;

  return {
    url,
    adminToken,
    createEnvironment(input = {}) {
      const environment = state.createEnvironment({
        name: input.name ?? "local",
        metadata: { ...input.metadata },
      });
      return { id: environment.id, environmentKey: environment.key };
    },
    createSession(input) {
      const session = state.createSession({
        environmentId: input.environmentId,
        title: input.title ?? null,
        metadata: { ...input.metadata },
        files: input.files ?? [],
        skills: (input.skills ?? []).map((skill) => ({
          skillId: skill.skillId,
          version: skill.version ?? "latest",
        })),
      });
      return { id: session.id };
    },
    queueTurn(sessionId, turn) {
      const session = state.sessions.get(sessionId);
      const queued = state.sessions.queueTurn(sessionId, {
        message: turn.message ?? "(scripted turn)",
        toolCalls: turn.toolCalls.map((call) => toolCallSchema.parse(call)),
        ...(turn.finalMessage !== undefined ? { finalMessage: turn.finalMessage } : {}),
        ...(turn.gate !== undefined ? { gate: turn.gate } : {}),
      });
      return turnToWire(session, queued);
    },
    queueHealthcheck(environmentId) {
      return { workId: state.queueHealthcheck(environmentId).id };
    },
    uploadSkill(input) {
      const version = state.skills.upload({
        ...(input.skillId !== undefined ? { skillId: input.skillId } : {}),
        name: input.name,
        description: input.description ?? "",
        archive: Buffer.from(input.archive),
      });
      return { skillId: version.skillId, version: version.id };
    },
    uploadFile(input) {
      return {
        id: state.uploadFile({
          filename: input.filename,
          mimeType: input.mimeType ?? "application/octet-stream",
          bytes: Buffer.from(input.bytes),
        }).id,
      };
    },
    terminateSession: (sessionId) => state.sessions.terminate(sessionId),
    transcript: (sessionId) => transcriptToWire(state.sessions.get(sessionId)),
    stopWork(workId, stopOptions = {}) {
      const work = state.work.find(workId);
      return toWire(
        state.work.stop(work.environmentId, work.id, {
          force: stopOptions.force ?? false,
          by: "operator",
        }),
        false,
      );
    },
    takeOverLease(workId) {
      const work = state.work.find(workId);
      return toWire(state.work.takeOverLease(work.environmentId, work.id), false);
    },
    expireLease(workId) {
      const work = state.work.find(workId);
      return toWire(state.work.expireLease(work.environmentId, work.id), false);
    },
    workItems: (environmentId) => state.work.list(environmentId).map((work) => toWire(work, false)),
    async webhookDeliveries() {
      await state.webhooks?.settle();
      return state.webhooks?.deliveries() ?? [];
    },
    async waitForTurn(sessionId, turnId, waitOptions = {}) {
      const session = state.sessions.get(sessionId);
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 60_000);
      for (;;) {
        const turn = session.turns.find((candidate) => candidate.id === turnId);
        if (!turn)
          throw createError("not_found", {
            message: `turn ${turnId} not found in session ${sessionId}`,
            context: { sessionId, turnId },
          });
        if (turn.state === "done") return turnToWire(session, turn);
        if (Date.now() > deadline)
          throw createError("timeout", {
            message: `turn ${turnId} did not finish in time`,
            context: { sessionId, turnId, state: turn.state },
          });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      clearInterval(sweep);
      for (const session of state.sessions.all())
        for (const subscriber of session.subscribers) session.subscribers.delete(subscriber);
      state.work.wakeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
