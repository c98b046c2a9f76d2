import {
  DriverLoadFailedError,
  type ManagedRuntimeProviderDriverPort,
  ProviderMismatchError,
  parseManagedRuntimeProviderDriverDescriptor,
  parseRecord,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { assertSpecificationVersion } from "./specification-version.js";

/** Options of {@link loadManagedRuntimeProviderDriver}. */
export interface LoadManagedRuntimeProviderDriverOptions {
  /** The provider id the deployment configured; must equal the loaded descriptor's `provider`. */
  readonly provider: string;
  /** Package (or path) that exports `createManagedRuntimeProviderDriver`. */
  readonly moduleSpecifier: string;
  /** Adapter-owned options passed to the factory untouched. */
  readonly factoryOptions: unknown;
  /** Imports the module; defaults to a dynamic `import()`. Bundled deployments pass their own. */
  readonly importModule?: (moduleSpecifier: string) => Promise<unknown>;
}

const named = z
  .string()
  .refine((value) => value.trim().length > 0, "must not be empty or whitespace");

const optionsSchema = z.object({
  provider: named,
  moduleSpecifier: named,
  importModule: z
    .custom<(specifier: string) => Promise<unknown>>(
      (value) => typeof value === "function",
      "must be a function",
    )
    .optional(),
});

/**
 * Loads a driver package by module specifier: imports it, calls its `createManagedRuntimeProviderDriver`
 * export (sync or async) with `factoryOptions`, checks the result is a driver and its validated
 * descriptor names `provider` and this host's contract revision (`specificationVersion`). An empty or whitespace-only `provider` or `moduleSpecifier` is
 * `invalid_config` before anything is imported. Fails with `driver_load_failed` (an import failure
 * carries an install hint; a factory that throws says so, with the factory's error as `cause`; a driver of
 * another contract revision, or of none, names both revisions) or `provider_mismatch`.
 */
export async function loadManagedRuntimeProviderDriver(
  options: LoadManagedRuntimeProviderDriverOptions,
): Promise<ManagedRuntimeProviderDriverPort> {
  const { provider, moduleSpecifier } = parseRecord(optionsSchema, options, {
    record: "driver loader options",
    code: "invalid_config",
  });
  const importModule =
    options.importModule ?? ((specifier: string) => import(/* @vite-ignore */ specifier));
  const context = { provider, moduleSpecifier };

  let loaded: unknown;
  try {
    loaded = await importModule(moduleSpecifier);
  } catch (error) {
    // Only a module that cannot be imported is plausibly a missing installation.
    const hint = `install ${moduleSpecifier} or pass importModule`;
    throw new DriverLoadFailedError({
      message: `cannot import ${moduleSpecifier} for provider ${provider}: ${hint}`,
      context: { ...context, hint },
      cause: error,
    });
  }
  const factory = (loaded as Record<string, unknown> | null)?.createManagedRuntimeProviderDriver;
  if (typeof factory !== "function") {
    throw new DriverLoadFailedError({
      message: `${moduleSpecifier} does not export createManagedRuntimeProviderDriver`,
      context,
    });
  }

  let driver: unknown;
  try {
    driver = await factory(options.factoryOptions);
  } catch (error) {
    // The factory's options may hold credentials its message echoes; those never reach our message.
    const reason = redactSecrets(
      error instanceof Error ? error.message : String(error),
      optionStrings(options.factoryOptions),
    );
    throw new DriverLoadFailedError({
      message: `createManagedRuntimeProviderDriver of ${moduleSpecifier} threw: ${reason}`,
      context,
      cause: error,
    });
  }
  const candidate = driver as Partial<ManagedRuntimeProviderDriverPort> | null;
  if (typeof candidate?.descriptor !== "function" || typeof candidate.create !== "function") {
    throw new DriverLoadFailedError({
      message: `createManagedRuntimeProviderDriver of ${moduleSpecifier} did not return a driver with descriptor() and create()`,
      context,
    });
  }

  let descriptor: unknown;
  try {
    descriptor = candidate.descriptor();
  } catch (error) {
    throw new DriverLoadFailedError({
      message: `${moduleSpecifier} returned an invalid driver descriptor`,
      context,
      cause: error,
    });
  }
  assertSpecificationVersion(descriptor, {
    driver: moduleSpecifier,
    code: "driver_load_failed",
    context,
  });
  let actual: string;
  try {
    actual = parseManagedRuntimeProviderDriverDescriptor(descriptor).provider;
  } catch (error) {
    throw new DriverLoadFailedError({
      message: `${moduleSpecifier} returned an invalid driver descriptor`,
      context,
      cause: error,
    });
  }
  if (actual !== provider) {
    throw new ProviderMismatchError({
      message: `${moduleSpecifier} provides ${actual}, not the configured provider ${provider}`,
      context: { expected: provider, actual, moduleSpecifier },
    });
  }
  return candidate as ManagedRuntimeProviderDriverPort;
}

/** String values in factory options long enough to be a credential (short ones are names, not secrets). */
function optionStrings(value: unknown, found: string[] = [], depth = 0): string[] {
  if (typeof value === "string") {
    if (value.length >= 8) found.push(value);
  } else if (value !== null && typeof value === "object" && depth < 8) {
    for (const entry of Object.values(value)) optionStrings(entry, found, depth + 1);
  }
  return found;
}
