import * as z from "zod";
import type { RuntimeResourceFence } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";

/** Package managers an environment may list, in the order setup runs them. */
export const ENVIRONMENT_PACKAGE_MANAGERS = ["apt", "pip", "npm", "cargo", "go", "gem"] as const;

/** One of {@link ENVIRONMENT_PACKAGE_MANAGERS}. */
export type EnvironmentPackageManager = (typeof ENVIRONMENT_PACKAGE_MANAGERS)[number];

/**
 * `Environment.config.packages`: package specs per manager. Every spec is checked against its manager's
 * grammar ({@link environmentPackagesSchema}); nothing else reaches a shell.
 */
export type EnvironmentPackages = { readonly [M in EnvironmentPackageManager]?: readonly string[] };

/** Most specs one manager may list. */
export const MAX_PACKAGES_PER_MANAGER = 256;
/** Longest accepted spec. */
export const MAX_PACKAGE_SPEC_LENGTH = 256;

// An absolute path with no `.`/`..` segment and no shell metacharacter, ending in one of the extensions.
const localFile = (extensions: string) =>
  new RegExp(`^/(?!.*(?:^|/)\\.{1,2}(?:/|$))[A-Za-z0-9._+/-]+\\.(?:${extensions})$`);
const pipVersion = "(?:===|==|>=|<=|~=|!=|>|<)[A-Za-z0-9.*+!_-]+";

/** The grammar of one spec per manager. No pattern admits a leading `-`, whitespace or a shell metacharacter. */
export const ENVIRONMENT_PACKAGE_SPEC_PATTERNS: Readonly<
  Record<EnvironmentPackageManager, readonly RegExp[]>
> = {
  apt: [/^[a-z0-9][a-z0-9+.-]*(?::[a-z0-9]+)?(?:=[A-Za-z0-9.+~:-]+)?$/, localFile("deb")],
  pip: [
    new RegExp(
      `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\\])?(?:${pipVersion}(?:,${pipVersion})*)?$`,
    ),
    localFile("whl|tar\\.gz|zip"),
  ],
  npm: [
    /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(?:@[A-Za-z0-9.^~<>=|*+_-]+)?$/,
    localFile("tgz|tar\\.gz"),
  ],
  cargo: [/^[A-Za-z0-9][A-Za-z0-9_-]*(?:@[A-Za-z0-9.^~<>=*+_-]+)?$/],
  go: [/^[a-z0-9][a-z0-9.-]*(?:\/[A-Za-z0-9][A-Za-z0-9._~-]*)+@[A-Za-z0-9][A-Za-z0-9.+_-]*$/],
  gem: [/^[A-Za-z0-9][A-Za-z0-9._-]*(?::[A-Za-z0-9.~<>=]+)?$/],
};

/** True when `spec` is a valid spec for `manager`. */
export function isEnvironmentPackageSpec(
  manager: EnvironmentPackageManager,
  spec: string,
): boolean {
  return (
    spec.length <= MAX_PACKAGE_SPEC_LENGTH &&
    ENVIRONMENT_PACKAGE_SPEC_PATTERNS[manager].some((pattern) => pattern.test(spec))
  );
}

const specList = (manager: EnvironmentPackageManager) =>
  z
    .array(
      z.string().refine((spec) => isEnvironmentPackageSpec(manager, spec), {
        message: `is not a valid ${manager} package spec (a name with an optional version, or an absolute path to a local package file)`,
      }),
    )
    .max(MAX_PACKAGES_PER_MANAGER);

/** Schema for {@link EnvironmentPackages}; unknown managers are refused. */
export const environmentPackagesSchema = z
  .object(
    Object.fromEntries(
      ENVIRONMENT_PACKAGE_MANAGERS.map((manager) => [manager, specList(manager).optional()]),
    ) as {
      [M in EnvironmentPackageManager]: z.ZodOptional<ReturnType<typeof specList>>;
    },
  )
  .strict();

/** Catalog sandbox image aliases: part of both setup markers when one is selected. */
export const sandboxImageAliasSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, "must be a catalog image alias");

/** True when at least one manager lists a spec. */
export function hasEnvironmentPackages(packages: EnvironmentPackages | undefined): boolean {
  return (
    packages !== undefined &&
    ENVIRONMENT_PACKAGE_MANAGERS.some((manager) => (packages[manager]?.length ?? 0) > 0)
  );
}

/**
 * How setup treated the sandbox: `warm` (the warm marker matched; nothing ran), `restored` (only the
 * workspace marker matched; apt re-ran, language packages came back with the workspace), `full`.
 */
export type EnvironmentSetupMode = "warm" | "restored" | "full";

/** A spec setup accepted and did not install (`gem`), with the reason; the host logs it. */
export interface SkippedEnvironmentPackage {
  readonly manager: EnvironmentPackageManager;
  readonly spec: string;
  readonly reason: string;
}

/** What environment setup left for the harness. */
export interface EnvironmentSetupResult {
  readonly mode: EnvironmentSetupMode;
  readonly skipped: readonly SkippedEnvironmentPackage[];
  /** Installed tool directories, to put in front of the harness's `PATH`. */
  readonly pathEntries: readonly string[];
  /** The sandbox's `PATH` with {@link pathEntries} in front, as read at setup; null when it could not be read. */
  readonly path: string | null;
}

/** Input of {@link EnvironmentPackagesPort.install}. */
export interface EnvironmentPackagesInstallInput extends Abortable {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly sandbox: ManagedSandboxLease;
  readonly packages: EnvironmentPackages;
  /** The catalog image alias the sandbox runs, when one was selected. */
  readonly imageAlias: string | null;
}

/**
 * Installs an environment's packages into an acquired sandbox, after the workspace is attached and before
 * the harness starts. Throws `sandbox_failed` naming the manager, the spec and a tail of the output when
 * an install fails; `invalid_request` for a spec outside its manager's grammar.
 */
export interface EnvironmentPackagesPort {
  install(input: EnvironmentPackagesInstallInput): Promise<EnvironmentSetupResult>;
}
