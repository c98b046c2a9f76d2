import { Sandbox } from "@cloudflare/sandbox";
import {
  InvalidRequestError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "@open-managed-agents/runtime-utils";
import { REGISTRY_BINDING, loadPluginConfig } from "../config/plugin-config.js";
import { errorResponse, wireErrorResponse } from "../http/responses.js";
import type {
  DirectoryEntry,
  ExecRequest,
  ExecResponse,
  SandboxView,
} from "../protocol/schemas.js";
import type { SandboxRegistry } from "../registry/sandbox-registry.js";
import { runBuffered, runStreaming } from "./command-runner.js";
import { listDirectory, makeDirectory, readPath, removePath, writePath } from "./file-access.js";
import { classifyOperationFailure, instanceLostError } from "./operation-failures.js";
import { type Outcome, settle } from "./outcome.js";
import { CONTROL_PORT, readForwarding } from "./port-forward.js";
import {
  type ProvisionSpec,
  RECORD_KEY,
  type SandboxRecord,
  sandboxRecordSchema,
  toView,
} from "./sandbox-record.js";
import { classifyStartFailure } from "./start-failures.js";

/** Which sandbox a call is about, and for whom; a call for another installation sees no sandbox. */
export interface SandboxRef {
  readonly id: string;
  readonly installation: string;
}

/** Name of the scheduled callback that wakes the object when the sandbox's TTL passes. */
const TTL_CALLBACK = "ttlCheckpoint";
/** Deadline of `destroy()`, which can hang when the platform's control plane does. */
const DESTROY_TIMEOUT_MS = 30_000;

type PluginEnv = Record<string, unknown>;

/**
 * The sandbox Durable Object: the real `Sandbox` of `@cloudflare/sandbox` 0.12.10, one object (and one
 * container) per sandbox id, plus what the adapter protocol needs. It keeps the sandbox's record (id,
 * installation, env, TTL), starts the instance on create and maps start failures, keeps the instance
 * alive until the TTL (keepAlive plus a scheduled wake-up), never restarts a stopped instance (its files
 * are gone: the sandbox is lost), and destroys everything on delete or expiry.
 */
export class PluginSandbox extends Sandbox<PluginEnv> {
  private record: SandboxRecord | undefined;
  private starting = false;
  private lifecycleTail: Promise<unknown> = Promise.resolve();

  // biome-ignore lint/complexity/noBannedTypes: the signature of the Sandbox SDK's own constructor.
  constructor(ctx: DurableObjectState<{}>, env: PluginEnv) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const stored = sandboxRecordSchema.safeParse(await ctx.storage.get(RECORD_KEY));
      this.record = stored.success ? stored.data : undefined;
    });
  }

  /** Creates the sandbox, or answers the existing one for a replay of the same request. */
  async provision(
    spec: ProvisionSpec,
  ): Promise<Outcome<{ sandbox: SandboxView; created: boolean }>> {
    return settle(() =>
      this.exclusive(async () => {
        const existing = await this.currentRecord();
        if (existing !== undefined) {
          if (
            existing.installation !== spec.installation ||
            existing.fingerprint !== spec.fingerprint
          ) {
            throw new InvalidRequestError({
              message: `sandbox ${spec.id} already exists with a different installation, template, size or env`,
              context: { sandboxId: spec.id },
            });
          }
          return { sandbox: this.view(existing), created: false };
        }
        return { sandbox: this.view(await this.startInstance(spec)), created: true };
      }),
    );
  }

  /** The sandbox's view; a lost instance is reported as stopped and lost, not as an error. */
  async describeSandbox(ref: SandboxRef): Promise<Outcome<SandboxView>> {
    return settle(async () => {
      // A start in progress is reported as such rather than waited for.
      if (this.starting && this.record !== undefined) return this.view(matching(this.record, ref));
      return this.view(matching(await this.exclusive(() => this.currentRecord()), ref));
    });
  }

  /** Moves the sandbox's expiry to `ttlSeconds` from now. */
  async setTtl(ref: SandboxRef, ttlSeconds: number): Promise<Outcome<SandboxView>> {
    return settle(() =>
      this.exclusive(async () => {
        const record = matching(await this.currentRecord(), ref);
        if (!this.running) throw instanceLostError(ref.id);
        const updated = { ...record, expiresAt: Date.now() + ttlSeconds * 1_000 };
        await this.saveRecord(updated);
        await this.scheduleWakeUp(updated.expiresAt);
        return this.view(updated);
      }),
    );
  }

  /** Destroys the instance and the object's state and forgets the registry entry; a missing sandbox is no error. */
  async teardown(ref: SandboxRef): Promise<Outcome<{ deleted: boolean }>> {
    return settle(() =>
      this.exclusive(async () => {
        const record = this.record;
        if (
          record === undefined ||
          record.id !== ref.id ||
          record.installation !== ref.installation
        )
          return { deleted: false };
        await this.discard(record, true);
        return { deleted: true };
      }),
    );
  }

  async runCommand(ref: SandboxRef, request: ExecRequest): Promise<Outcome<ExecResponse>> {
    return this.operate(ref, "exec", () => runBuffered(this, request));
  }

  async streamCommand(
    ref: SandboxRef,
    request: ExecRequest,
  ): Promise<Outcome<ReadableStream<Uint8Array>>> {
    return this.operate(ref, "exec.stream", () =>
      runStreaming(this, request, (error) => this.failureOf(ref, error, "exec.stream")),
    );
  }

  async readPath(ref: SandboxRef, path: string): Promise<Outcome<ReadableStream<Uint8Array>>> {
    return this.operate(ref, "read", () => readPath(this, path));
  }

  async writePath(
    ref: SandboxRef,
    path: string,
    content: Uint8Array,
  ): Promise<Outcome<{ path: string; size: number }>> {
    return this.operate(ref, "write", async () => {
      await writePath(this, path, content);
      return { path, size: content.byteLength };
    });
  }

  async makeDirectory(
    ref: SandboxRef,
    path: string,
    recursive: boolean,
  ): Promise<Outcome<{ path: string }>> {
    return this.operate(ref, "mkdir", async () => {
      await makeDirectory(this, path, recursive);
      return { path };
    });
  }

  async listDirectory(
    ref: SandboxRef,
    path: string,
    recursive: boolean,
  ): Promise<Outcome<{ path: string; entries: DirectoryEntry[] }>> {
    return this.operate(ref, "list", async () => ({
      path,
      entries: await listDirectory(this, path, recursive),
    }));
  }

  async removePath(
    ref: SandboxRef,
    path: string,
    recursive: boolean,
  ): Promise<Outcome<{ path: string }>> {
    return this.operate(ref, "remove", async () => {
      await removePath(this, path, recursive);
      return { path };
    });
  }

  /** Forwards a port route's request (see port-forward.ts) to a port of the instance. */
  override async fetch(request: Request): Promise<Response> {
    const forwarding = readForwarding(request);
    if (forwarding === undefined)
      return errorResponse(
        new NotFoundError({ message: "a sandbox object answers only forwarded port requests" }),
      );
    const ref = { id: forwarding.sandboxId, installation: forwarding.installation };
    const outcome = await this.operate(ref, "port", async () => {
      if (forwarding.upstream.headers.get("Upgrade")?.toLowerCase() === "websocket")
        return super.containerFetch(forwarding.upstream, forwarding.port);
      try {
        return await this.instance().getTcpPort(forwarding.port).fetch(forwarding.upstream);
      } catch (error) {
        throw new SandboxFailedError({
          message: `nothing answered on port ${forwarding.port}: ${error instanceof Error ? error.message : String(error)}`,
          context: { port: forwarding.port },
        });
      }
    });
    return outcome.ok ? outcome.value : wireErrorResponse(outcome.error);
  }

  /** A stopped instance is never restarted behind the caller's back: its files are gone. */
  override async containerFetch(
    requestOrUrl: Request | string | URL,
    portOrInit?: number | RequestInit,
    portParam?: number,
  ): Promise<Response> {
    if (this.record?.startedAt !== undefined && !this.starting && !this.running)
      throw instanceLostError(this.record.id);
    return super.containerFetch(requestOrUrl, portOrInit, portParam);
  }

  /** Expires the sandbox when its TTL has passed; the container library's alarm keeps the object alive until then. */
  override async alarm(alarmInfo?: AlarmInvocationInfo): Promise<void> {
    await this.expireIfDue();
    await super.alarm(alarmInfo);
  }

  /** Scheduled at the TTL; a later TTL leaves it with nothing to do. */
  async ttlCheckpoint(): Promise<void> {
    await this.expireIfDue();
  }

  private get running(): boolean {
    return this.ctx.container?.running === true;
  }

  private instance(): Container {
    const container = this.ctx.container;
    if (container === undefined)
      throw new SandboxFailedError({
        message: "containers are not enabled for this Durable Object class",
      });
    return container;
  }

  private view(record: SandboxRecord): SandboxView {
    return toView(record, this.running, this.starting);
  }

  private registry(installation: string): DurableObjectStub<SandboxRegistry> {
    return (this.env[REGISTRY_BINDING] as DurableObjectNamespace<SandboxRegistry>).getByName(
      installation,
    );
  }

  /** Lifecycle changes (create, TTL, delete, expiry) run one at a time; concurrent replays queue here. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lifecycleTail.then(work, work);
    this.lifecycleTail = run.catch(() => undefined);
    return run;
  }

  /**
   * The record, run inside {@link exclusive}. A sandbox past its TTL is expired first; a record whose start
   * never finished (the object was reset mid-create) is discarded so that a replay starts it again.
   */
  private async currentRecord(): Promise<SandboxRecord | undefined> {
    const record = this.record;
    if (
      record !== undefined &&
      (Date.now() >= record.expiresAt || (record.startedAt === undefined && !this.starting))
    )
      await this.discard(record, false);
    return this.record;
  }

  private failureOf(ref: SandboxRef, error: unknown, operation: string) {
    return this.running ? classifyOperationFailure(error, operation) : instanceLostError(ref.id);
  }

  /** Runs an operation on a live instance; a stopped one answers `sandbox_failed` (lost). */
  private operate<T>(
    ref: SandboxRef,
    operation: string,
    work: () => Promise<T>,
  ): Promise<Outcome<T>> {
    return settle(async () => {
      matching(await this.exclusive(() => this.currentRecord()), ref);
      if (!this.running) throw instanceLostError(ref.id);
      try {
        return await work();
      } catch (error) {
        throw this.failureOf(ref, error, operation);
      }
    });
  }

  private async saveRecord(record: SandboxRecord): Promise<void> {
    await this.ctx.storage.put(RECORD_KEY, record);
    this.record = record;
  }

  private async startInstance(spec: ProvisionSpec): Promise<SandboxRecord> {
    const config = loadPluginConfig(this.env);
    const now = Date.now();
    const record: SandboxRecord = {
      id: spec.id,
      installation: spec.installation,
      image: spec.image,
      instanceType: spec.instanceType,
      binding: spec.binding,
      env: { ...spec.env },
      fingerprint: spec.fingerprint,
      createdAt: now,
      expiresAt: now + spec.ttlSeconds * 1_000,
    };
    // Registered first: a sandbox whose start is cut short is still found, listed and deletable.
    await this.registry(spec.installation).add({
      id: spec.id,
      binding: spec.binding,
      createdAt: now,
    });
    await this.saveRecord(record);
    this.starting = true;
    try {
      await this.setKeepAlive(true);
      await this.startAndWaitForPorts({
        ports: CONTROL_PORT,
        startOptions: { envVars: { ...spec.env } },
        cancellationOptions: {
          instanceGetTimeoutMS: config.instanceStartTimeoutMs,
          portReadyTimeoutMS: config.portReadyTimeoutMs,
        },
      });
    } catch (error) {
      this.starting = false;
      await this.discard(record, false).catch(() => undefined);
      throw classifyStartFailure(error, spec.image);
    }
    this.starting = false;
    const started = { ...record, startedAt: Date.now() };
    await this.saveRecord(started);
    await this.scheduleWakeUp(started.expiresAt);
    return started;
  }

  private async scheduleWakeUp(expiresAt: number): Promise<void> {
    this.deleteSchedules(TTL_CALLBACK);
    // Schedules have one-second resolution; rounding up never wakes the object before the TTL.
    await this.schedule(new Date(Math.ceil(expiresAt / 1_000) * 1_000), TTL_CALLBACK);
  }

  private async expireIfDue(): Promise<void> {
    await this.exclusive(async () => {
      if (this.record !== undefined && !this.starting && Date.now() >= this.record.expiresAt)
        await this.discard(this.record, false);
    });
  }

  /**
   * Destroys the instance, forgets the registry entry and deletes the record and the TTL schedule.
   * With `strict`, a destroy that fails or hangs is reported and the sandbox is kept for a retry.
   */
  private async discard(record: SandboxRecord, strict: boolean): Promise<void> {
    try {
      await withDeadline(this.destroy(), { ms: DESTROY_TIMEOUT_MS, operation: "destroy" });
    } catch (error) {
      if (strict)
        throw new SandboxFailedError({
          message: `destroying the instance of ${record.id} failed: ${error instanceof Error ? error.message : String(error)}`,
          context: { sandboxId: record.id },
          cause: error,
        });
    }
    await this.registry(record.installation).remove(record.id);
    this.deleteSchedules(TTL_CALLBACK);
    await this.ctx.storage.delete(RECORD_KEY);
    this.record = undefined;
  }
}

/** The record when it is the one `ref` names; otherwise `not_found` (another installation sees no sandbox). */
function matching(record: SandboxRecord | undefined, ref: SandboxRef): SandboxRecord {
  if (record === undefined || record.id !== ref.id || record.installation !== ref.installation) {
    throw new NotFoundError({
      message: `no sandbox ${ref.id} in installation ${ref.installation}`,
      context: { sandboxId: ref.id },
    });
  }
  return record;
}
