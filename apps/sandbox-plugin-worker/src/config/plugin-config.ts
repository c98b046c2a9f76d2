import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { reportableIssue } from "../protocol/issues.js";
import { customSizeSchema } from "../protocol/schemas.js";
import { INSTANCE_TYPE_NAMES, type InstanceType } from "./instance-types.js";

/** Binding of the registry Durable Object (one object per installation). */
export const REGISTRY_BINDING = "SANDBOX_REGISTRY";
/** Workers secret holding the bearer token callers must present. */
export const TOKEN_SECRET = "PLUGIN_TOKEN";

/** One container application: a Durable Object binding whose class runs `image` on `instanceType`. */
export interface SandboxClass {
  readonly binding: string;
  readonly image: string;
  readonly instanceType: InstanceType;
}

/** The Worker's validated configuration. */
export interface PluginConfig {
  readonly token: string;
  readonly classes: readonly SandboxClass[];
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
  /** How long a create waits for Cloudflare to hand out an instance before answering insufficient_capacity. */
  readonly instanceStartTimeoutMs: number;
  /** How long a create waits for the started instance's control server to listen. */
  readonly portReadyTimeoutMs: number;
  readonly maxFileBytes: number;
}

const integerVar = (fallback: number, min: number, max: number) =>
  z.preprocess(
    (value) => (typeof value === "string" && value.trim() !== "" ? Number(value) : value),
    z.number().int().min(min).max(max).default(fallback),
  );

const jsonVar = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }, schema);

const sandboxClassSchema = z
  .object({
    binding: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a binding name is letters, digits and '_'"),
    image: z.string().min(1),
    instanceType: z.union([z.enum(INSTANCE_TYPE_NAMES), customSizeSchema]),
  })
  .strict();

const configSchema = z.object({
  [TOKEN_SECRET]: z.string().min(16, "the token must be at least 16 characters"),
  SANDBOX_CLASSES: jsonVar(
    z.array(sandboxClassSchema).min(1, "configure at least one sandbox class"),
  ),
  DEFAULT_TTL_SECONDS: integerVar(3_600, 1, 30 * 86_400),
  MAX_TTL_SECONDS: integerVar(86_400, 1, 30 * 86_400),
  INSTANCE_START_TIMEOUT_MS: integerVar(30_000, 100, 300_000),
  PORT_READY_TIMEOUT_MS: integerVar(90_000, 100, 600_000),
  MAX_FILE_BYTES: integerVar(16 * 1_024 * 1_024, 1, 24 * 1_024 * 1_024),
});

function isNamespace(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { idFromName?: unknown }).idFromName === "function"
  );
}

function configError(field: string, message: string, cause?: unknown): InvalidConfigError {
  return new InvalidConfigError({
    message: `invalid Worker configuration ${field}: ${message}`,
    context: { field },
    cause,
  });
}

/**
 * Validates the Worker's environment once. Failure → `invalid_config` naming the field; the secret's value
 * never appears in a message.
 */
export function parsePluginConfig(env: Readonly<Record<string, unknown>>): PluginConfig {
  if (typeof env[TOKEN_SECRET] !== "string" || env[TOKEN_SECRET] === "") {
    throw configError(
      TOKEN_SECRET,
      `the secret is not set; set it with \`wrangler secret put ${TOKEN_SECRET}\`. Every request is refused until it is`,
    );
  }
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const { field, message } = reportableIssue(result.error, "(environment)");
    throw configError(field, message, result.error);
  }
  const parsed = result.data;
  if (parsed.DEFAULT_TTL_SECONDS > parsed.MAX_TTL_SECONDS)
    throw configError("DEFAULT_TTL_SECONDS", "must not exceed MAX_TTL_SECONDS");
  if (!isNamespace(env[REGISTRY_BINDING]))
    throw configError(REGISTRY_BINDING, "the registry Durable Object binding is missing");
  const bindings = new Set<string>();
  parsed.SANDBOX_CLASSES.forEach((entry, index) => {
    if (!isNamespace(env[entry.binding]))
      throw configError(
        `SANDBOX_CLASSES.${index}.binding`,
        `no Durable Object binding named ${entry.binding}`,
      );
    if (bindings.has(entry.binding))
      throw configError(`SANDBOX_CLASSES.${index}.binding`, `${entry.binding} is listed twice`);
    bindings.add(entry.binding);
  });
  return {
    token: parsed[TOKEN_SECRET],
    classes: parsed.SANDBOX_CLASSES,
    defaultTtlSeconds: parsed.DEFAULT_TTL_SECONDS,
    maxTtlSeconds: parsed.MAX_TTL_SECONDS,
    instanceStartTimeoutMs: parsed.INSTANCE_START_TIMEOUT_MS,
    portReadyTimeoutMs: parsed.PORT_READY_TIMEOUT_MS,
    maxFileBytes: parsed.MAX_FILE_BYTES,
  };
}

const cache = new WeakMap<object, PluginConfig | InvalidConfigError>();

/** {@link parsePluginConfig}, remembered per environment object (workerd reuses it across requests). */
export function loadPluginConfig(env: object): PluginConfig {
  let entry = cache.get(env);
  if (entry === undefined) {
    try {
      entry = parsePluginConfig(env as Record<string, unknown>);
    } catch (error) {
      if (!InvalidConfigError.isInstance(error)) throw error;
      entry = error;
    }
    cache.set(env, entry);
  }
  if (InvalidConfigError.isInstance(entry)) throw entry;
  return entry;
}
