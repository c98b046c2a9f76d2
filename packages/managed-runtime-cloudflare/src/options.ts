import type { BlobStore } from "@open-managed-agents/blob-store";
import { createR2BindingBlobStore } from "@open-managed-agents/blob-store/r2";
import {
  type RuntimeEnvironment,
  type SessionInputMaterializerPort,
  type UsageRecorderPort,
  InvalidConfigError,
  nonEmptyString,
  parseRecord,
  runtimeEnvironmentSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { hasMethods, positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { CloudflareCredentialVault } from "./egress/credential-vault.js";
import type { MemoryMountSettings } from "./memory/memory-mount.js";
import type { CloudflareSandbox } from "./sandbox/cloudflare-sandbox.js";
import type { CloudflareUsageSettings } from "./usage/usage-recording.js";

/** The Worker environment the driver reads (any object; only the keys below are looked at). */
export type CloudflareManagedRuntimeEnv = object;

/** Default time-to-live sent with every lease renewal. */
export const DEFAULT_LEASE_TTL_MS = 90_000;
/** Default lifetime of workspace backups: 30 days. Expired backups cannot be restored. */
export const DEFAULT_BACKUP_TTL_SEC = 30 * 24 * 60 * 60;
/** Default key prefix of output blobs and manifests. */
export const DEFAULT_OUTPUT_KEY_PREFIX = "managed-runtime-outputs";

/** Environment keys `workspaceDurableMount` needs, in the order they are checked. */
export const WORKSPACE_MOUNT_ENV_KEYS = [
  "WORKSPACE_BUCKET",
  "WORKSPACE_BUCKET_NAME",
  "R2_ENDPOINT",
  "R2_ACCESS_KEY_ID",
  "R2_SECRET_ACCESS_KEY",
] as const;
/** Environment keys `memoryStoreMount` needs, in the order they are checked. */
export const MEMORY_MOUNT_ENV_KEYS = [
  "MEMORY_BUCKET",
  "MEMORY_BUCKET_NAME",
  "R2_ENDPOINT",
  "R2_ACCESS_KEY_ID",
  "R2_SECRET_ACCESS_KEY",
] as const;
/** Environment key of the optional R2 binding that stores session outputs. */
export const FILES_BUCKET_ENV_KEY = "FILES_BUCKET";

/** Options of the Cloudflare driver. Validated once, at factory time; a bad option is `invalid_config` naming it. */
export interface CloudflareManagedRuntimeOptions<
  Env extends CloudflareManagedRuntimeEnv = CloudflareManagedRuntimeEnv,
> {
  /**
   * The application's sandbox for a runtime id, e.g.
   * `(env, id) => createCloudflareSdkSandbox(getSandbox(env.SANDBOX, id))`. The package never imports the app.
   */
  readonly createSandbox: (
    env: Env,
    runtimeId: string,
  ) => CloudflareSandbox | Promise<CloudflareSandbox>;
  /**
   * What the container class boots: `base` (the documented image) or `custom`, with an explicit `image`
   * reference (the image wrangler deploys for the class) or a `preinstalled` description. Required.
   */
  readonly runtimeEnvironment: RuntimeEnvironment;
  /** Time-to-live sent with every lease renewal. @default 90_000 */
  readonly leaseTtlMs?: number;
  /** OpenMA origin the sandbox may always reach (hosted inference, MCP proxy). http or https, origin only. */
  readonly controlPlaneBaseUrl?: string;
  /** Mount `/workspace` from R2 per session (`durable_mount`); needs the {@link WORKSPACE_MOUNT_ENV_KEYS}. @default false */
  readonly workspaceDurableMount?: boolean;
  /**
   * Give runtimes `mountMemoryStore` (memory stores at `/mnt/memory/<name>` from the R2 bucket `MEMORY_BUCKET`,
   * read-only honoured by the mount); needs the {@link MEMORY_MOUNT_ENV_KEYS}. @default false
   */
  readonly memoryStoreMount?: boolean;
  /** Vault behind enforced credential egress; without it the driver advertises no credential egress. */
  readonly credentialVault?: CloudflareCredentialVault;
  /** Where collected outputs go. @default an R2 store over `env.FILES_BUCKET` when bound, else no outputs */
  readonly outputs?: { readonly store?: BlobStore; readonly keyPrefix?: string };
  /** Readiness probe; the executable defaults to the profile's harness command. */
  readonly readiness?: { readonly command?: string; readonly timeoutMs?: number };
  /** Lifetime of workspace backups in seconds. @default 2_592_000 (30 days) */
  readonly backupTtlSec?: number;
  /** Materializes session inputs (files, repositories, memory stores) into the sandbox. */
  readonly sessionInputs?: SessionInputMaterializerPort;
  /** Emits `sandbox_active_seconds` per container, best-effort. Absent: nothing is emitted. */
  readonly usage?: CloudflareUsageOptions;
}

/** Usage recording of the Cloudflare driver. */
export interface CloudflareUsageOptions {
  /** The deployer's recorder (a D1 table, a queue). Its failures never reach teardown. */
  readonly recorder: UsageRecorderPort;
  /** The container class's `instance_type` (e.g. `standard-1`), written into each record for pricing. */
  readonly instanceType?: string;
  /** Longest teardown waits for the recorder. @default 2000 */
  readonly recordTimeoutMs?: number;
  /** `ctx.waitUntil`, so a record still lands after the response. */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
}

/** Default longest wait of teardown for the usage recorder. */
export const DEFAULT_USAGE_RECORD_TIMEOUT_MS = 2_000;

/** The R2 settings of the durable workspace mount. Credentials stay in the Worker: the Sandbox DO reads them. */
export interface WorkspaceMountSettings {
  readonly bucket: R2BucketBinding;
  readonly bucketName: string;
  readonly endpoint: string;
}

/** The R2 binding members the driver uses. */
export interface R2BucketBinding {
  head(key: string): Promise<unknown>;
  put(key: string, value: string): Promise<unknown>;
  get(key: string): Promise<unknown>;
}

/** Options after validation, with defaults applied. */
export interface ResolvedCloudflareOptions<Env extends CloudflareManagedRuntimeEnv> {
  readonly env: Env;
  readonly createSandbox: CloudflareManagedRuntimeOptions<Env>["createSandbox"];
  readonly runtimeEnvironment: RuntimeEnvironment;
  readonly leaseTtlMs: number;
  readonly controlPlaneOrigin: string | null;
  readonly workspaceMount: WorkspaceMountSettings | null;
  readonly memoryMount: MemoryMountSettings | null;
  readonly credentialVault: CloudflareCredentialVault | null;
  readonly outputs: { readonly store: BlobStore; readonly keyPrefix: string } | null;
  readonly readiness: { readonly command?: string; readonly timeoutMs?: number } | undefined;
  readonly backupTtlSec: number;
  readonly sessionInputs: SessionInputMaterializerPort | undefined;
  readonly usage: CloudflareUsageSettings | null;
}

const positiveInteger = positiveSafeIntegerSchema;

/** An absolute http(s) URL; `rules` adds the checks of one use. */
function httpUrlSchema(rules: (url: URL, addIssue: (message: string) => void) => void) {
  return z.string().superRefine((value, context) => {
    const addIssue = (message: string): void => context.addIssue({ code: "custom", message });
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      addIssue("must be an absolute URL");
      return;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") addIssue("must use http or https");
    rules(url, addIssue);
  });
}

const originSchema = httpUrlSchema((url, addIssue) => {
  if (url.username !== "" || url.password !== "") addIssue("must not carry credentials");
  if (url.search !== "" || url.hash !== "") addIssue("must not carry a query or fragment");
});

const optionsSchema = z.object({
  createSandbox: z.custom(
    (value) => typeof value === "function",
    "must be a function (env, runtimeId) => CloudflareSandbox",
  ),
  runtimeEnvironment: runtimeEnvironmentSchema.refine(
    (environment) =>
      environment.artifact.type === "image" || environment.artifact.type === "preinstalled",
    "artifact must be an image or preinstalled: a Cloudflare container class boots the image wrangler deployed for it",
  ),
  leaseTtlMs: positiveInteger.optional(),
  controlPlaneBaseUrl: originSchema.optional(),
  workspaceDurableMount: z.boolean().optional(),
  memoryStoreMount: z.boolean().optional(),
  credentialVault: z
    .custom(
      (value) => hasMethods(value, ["open", "resolve", "revoke"]),
      "must be a CloudflareCredentialVault (open, resolve, revoke)",
    )
    .optional(),
  outputs: z
    .object({
      store: z
        .custom((value) => hasMethods(value, ["put", "get", "head"]), "must be a BlobStore")
        .optional(),
      keyPrefix: nonEmptyString.optional(),
    })
    .strict()
    .optional(),
  readiness: z
    .object({ command: nonEmptyString.optional(), timeoutMs: positiveInteger.optional() })
    .strict()
    .optional(),
  backupTtlSec: positiveInteger.optional(),
  sessionInputs: z
    .custom(
      (value) => hasMethods(value, ["materialize", "synchronize"]),
      "must be a SessionInputMaterializerPort",
    )
    .optional(),
  usage: z
    .object({
      recorder: z.custom(
        (value) => hasMethods(value, ["record"]),
        "must be a UsageRecorderPort (record)",
      ),
      instanceType: nonEmptyString.optional(),
      recordTimeoutMs: positiveInteger.optional(),
      waitUntil: z.custom((value) => typeof value === "function", "must be a function").optional(),
      now: z.custom((value) => typeof value === "function", "must be a function").optional(),
    })
    .strict()
    .optional(),
});

const bucketNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/,
    "must be an R2 bucket name (3-63 lowercase letters, digits, hyphens)",
  );
const endpointSchema = httpUrlSchema((url, addIssue) => {
  if (url.pathname !== "/" || url.search !== "" || url.username !== "")
    addIssue("must be an origin without path, query or credentials");
});

/**
 * Validates options and the Worker environment. Throws `invalid_config` naming the first failing option,
 * or the first missing or malformed environment key when `workspaceDurableMount` is on. Secret values
 * are never echoed.
 */
export function resolveCloudflareOptions<Env extends CloudflareManagedRuntimeEnv>(
  env: Env,
  options: CloudflareManagedRuntimeOptions<Env>,
): ResolvedCloudflareOptions<Env> {
  if (typeof env !== "object" || env === null) {
    throw new InvalidConfigError({
      message: "invalid Cloudflare driver env: must be the Worker environment object",
      context: { field: "env" },
    });
  }
  parseRecord(optionsSchema, options, {
    record: "Cloudflare driver options",
    code: "invalid_config",
  });
  const filesBucket = (env as Record<string, unknown>)[FILES_BUCKET_ENV_KEY];
  const store =
    options.outputs?.store ?? (isR2Binding(filesBucket) ? { r2: filesBucket } : undefined);
  return {
    env,
    createSandbox: options.createSandbox,
    runtimeEnvironment: options.runtimeEnvironment,
    leaseTtlMs: options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    controlPlaneOrigin:
      options.controlPlaneBaseUrl === undefined
        ? null
        : new URL(options.controlPlaneBaseUrl).origin,
    workspaceMount: options.workspaceDurableMount ? resolveWorkspaceMount(env) : null,
    memoryMount: options.memoryStoreMount ? resolveMemoryMount(env) : null,
    credentialVault: options.credentialVault ?? null,
    outputs:
      store === undefined
        ? null
        : {
            store: "r2" in store ? r2OutputStore(store.r2) : store,
            keyPrefix: options.outputs?.keyPrefix ?? DEFAULT_OUTPUT_KEY_PREFIX,
          },
    readiness: options.readiness,
    backupTtlSec: options.backupTtlSec ?? DEFAULT_BACKUP_TTL_SEC,
    sessionInputs: options.sessionInputs,
    usage: options.usage ? resolveUsage(options.usage) : null,
  };
}

function resolveUsage(usage: CloudflareUsageOptions): CloudflareUsageSettings {
  return {
    recorder: usage.recorder,
    instanceType: usage.instanceType ?? null,
    recordTimeoutMs: usage.recordTimeoutMs ?? DEFAULT_USAGE_RECORD_TIMEOUT_MS,
    waitUntil: usage.waitUntil ?? null,
    now: usage.now ?? Date.now,
  };
}

function resolveWorkspaceMount(env: CloudflareManagedRuntimeEnv): WorkspaceMountSettings {
  return resolveBucketMount(env, "workspaceDurableMount", WORKSPACE_MOUNT_ENV_KEYS);
}

function resolveMemoryMount(env: CloudflareManagedRuntimeEnv): MemoryMountSettings {
  const { bucketName, endpoint } = resolveBucketMount(
    env,
    "memoryStoreMount",
    MEMORY_MOUNT_ENV_KEYS,
  );
  return { bucketName, endpoint };
}

/** Checks the environment keys of a bucket mount: binding, bucket name, endpoint, then the two R2 keys. */
function resolveBucketMount(
  workerEnv: CloudflareManagedRuntimeEnv,
  option: string,
  keys: readonly [string, string, "R2_ENDPOINT", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"],
): WorkspaceMountSettings {
  const env = workerEnv as Record<string, unknown>;
  for (const key of keys) {
    const value = env[key];
    if (value === undefined || value === null || value === "") {
      throw new InvalidConfigError({
        message: `${option} needs ${key} in the Worker environment; it is missing`,
        context: { field: key },
      });
    }
  }
  const check = (key: string, valid: boolean, problem: string): void => {
    if (!valid)
      throw new InvalidConfigError({
        message: `${option}: ${key} ${problem}`,
        context: { field: key },
      });
  };
  const [bindingKey, nameKey] = keys;
  check(bindingKey, isR2Binding(env[bindingKey]), "must be an R2 bucket binding");
  const name = bucketNameSchema.safeParse(env[nameKey]);
  check(nameKey, name.success, name.success ? "" : (name.error.issues[0]?.message ?? "is invalid"));
  const endpoint = endpointSchema.safeParse(env.R2_ENDPOINT);
  check(
    "R2_ENDPOINT",
    endpoint.success,
    endpoint.success ? "" : (endpoint.error.issues[0]?.message ?? "is invalid"),
  );
  for (const key of ["R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"] as const)
    check(key, typeof env[key] === "string", "must be a string");
  return {
    bucket: env[bindingKey] as R2BucketBinding,
    bucketName: env[nameKey] as string,
    endpoint: new URL(env.R2_ENDPOINT as string).origin,
  };
}

function isR2Binding(value: unknown): value is R2BucketBinding & Record<string, unknown> {
  return hasMethods(value, ["head", "put", "get", "delete", "list", "createMultipartUpload"]);
}

function r2OutputStore(bucket: unknown): BlobStore {
  return createR2BindingBlobStore(bucket as Parameters<typeof createR2BindingBlobStore>[0]);
}
