import { readFileSync } from "node:fs";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import { CONFIG_KEYS, type ConfigKey, type ConfigKeyName } from "./config-keys.js";
import * as z from "zod";
import { type ServiceConfig, serviceConfigSchema, serviceConfigShape } from "./schema.js";
import { storeUrlSecrets } from "../stores/runtime-store.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where the settings come from; flags win over the environment, the environment over the file. */
export interface ConfigSources {
  /** Flag values by flag name (without `--`), as `parseArgs` gives them. */
  readonly flags?: Readonly<Record<string, string | boolean | undefined>>;
  readonly env?: Env;
  /** Path of a JSON config file whose keys are the camelCase names (never secrets). */
  readonly configFile?: string;
}

/** A loaded config, and where each key came from (for messages that name the key as the operator wrote it). */
export interface LoadedConfig {
  readonly config: ServiceConfig;
  /** Every secret value, for redaction. */
  readonly secrets: readonly string[];
}

const invalid = (key: string, origin: string, message: string) =>
  new InvalidConfigError({
    message: `invalid config ${key} (${origin}): ${message}`,
    context: { key, origin },
  });

/**
 * Merges flags, environment and config file, reads secrets from the environment or files, and validates
 * once. A bad or missing setting throws `invalid_config` naming the key and where it came from, never
 * its value.
 */
export function loadServiceConfig(sources: ConfigSources): LoadedConfig {
  const { raw, origins, secrets } = mergeSources(sources);
  return validate(serviceConfigSchema, raw, origins, secrets);
}
function mergeSources(sources: ConfigSources) {
  const env = sources.env ?? {};
  const flags = sources.flags ?? {};
  const file = sources.configFile ? readConfigFile(sources.configFile) : {};
  const raw: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  const secrets: string[] = [];
  for (const name of Object.keys(CONFIG_KEYS) as ConfigKeyName[]) {
    const key: ConfigKey = CONFIG_KEYS[name];
    if (key.secret) {
      if (name in file)
        throw invalid(
          name,
          `config file ${sources.configFile}`,
          `is a secret: set ${key.env} or ${key.env}_FILE, never the config file`,
        );
      const read = readSecret(name, key, flags, env);
      if (read) {
        raw[name] = read.value;
        origins[name] = read.origin;
        secrets.push(read.value);
      } else {
        origins[name] = key.env;
      }
      continue;
    }
    const flag = flags[key.flag];
    if (typeof flag === "string") {
      raw[name] = coerce(name, `--${key.flag}`, key, flag);
      origins[name] = `--${key.flag}`;
    } else if (env[key.env] !== undefined && env[key.env] !== "") {
      raw[name] = coerce(name, key.env, key, env[key.env] as string);
      origins[name] = key.env;
    } else if (name in file) {
      raw[name] = file[name];
      origins[name] = `config file ${sources.configFile}`;
    } else {
      origins[name] = key.env;
    }
  }
  // A store URL may carry its database's password: redacted like every other secret.
  if (typeof raw.store === "string") secrets.push(...storeUrlSecrets(raw.store));
  for (const name of Object.keys(file)) {
    if (!(name in CONFIG_KEYS))
      throw invalid(name, `config file ${sources.configFile}`, "is not a setting of this service");
  }
  return { raw, origins, secrets };
}

/** The store URL alone, from the same sources (the operator CLI's listings need nothing else). */
export function loadStoreUrl(sources: ConfigSources): string {
  const { raw, origins } = mergeSources(sources);
  return validate(storeOnlySchema, { store: raw.store }, origins, []).config.store;
}

const storeOnlySchema = z.object({ store: serviceConfigShape.shape.store });

function validate<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  origins: Record<string, string>,
  secrets: string[],
): { config: z.output<S>; secrets: string[] } {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? "config");
    throw invalid(name, origins[name] ?? "config", issue?.message ?? "is invalid");
  }
  return { config: parsed.data, secrets };
}

function readSecret(
  name: string,
  key: ConfigKey,
  flags: ConfigSources["flags"] & object,
  env: Env,
): { value: string; origin: string } | null {
  const fileFlag = flags[key.flag];
  const filePath = typeof fileFlag === "string" ? fileFlag : env[`${key.env}_FILE`];
  const origin = typeof fileFlag === "string" ? `--${key.flag}` : `${key.env}_FILE`;
  if (filePath) {
    let text: string;
    try {
      text = readFileSync(filePath, "utf8");
    } catch (cause) {
      throw new InvalidConfigError({
        message: `invalid config ${name} (${origin}): cannot read the file (${
          (cause as NodeJS.ErrnoException).code ?? "error"
        })`,
        context: { key: name, origin },
      });
    }
    const value = text.trim();
    if (value === "") throw invalid(name, origin, "the file is empty");
    return { value, origin };
  }
  const value = env[key.env];
  return value ? { value, origin: key.env } : null;
}

function coerce(name: string, origin: string, key: ConfigKey, text: string): unknown {
  switch (key.kind) {
    case "string":
      return text;
    case "integer": {
      if (!/^\d+$/.test(text.trim())) throw invalid(name, origin, "must be a whole number");
      return Number.parseInt(text, 10);
    }
    case "boolean":
      if (text === "true" || text === "1") return true;
      if (text === "false" || text === "0") return false;
      throw invalid(name, origin, "must be true or false");
    case "json":
      try {
        return JSON.parse(text.startsWith("@") ? readFileSync(text.slice(1), "utf8") : text);
      } catch {
        throw invalid(name, origin, "must be JSON, or @path of a JSON file");
      }
  }
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new InvalidConfigError({
      message: `config file ${path} cannot be read (${(cause as NodeJS.ErrnoException).code ?? "error"})`,
      context: { key: "config" },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidConfigError({
      message: `config file ${path} is not JSON`,
      context: { key: "config" },
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidConfigError({
      message: `config file ${path} must hold a JSON object`,
      context: { key: "config" },
    });
  }
  return value as Record<string, unknown>;
}
