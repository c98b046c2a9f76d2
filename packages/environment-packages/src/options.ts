import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** Where setup writes its markers and tools; the defaults are the seed's paths. */
export const WARM_MARKER_PATH = "/tmp/.oma-setup-warm";
/** Lives in the workspace, so a workspace restore brings it back (and with it the language packages). */
export const RESTORED_MARKER_PATH = "/workspace/.oma-setup-restored";
/** Language packages install below this directory, inside the workspace. */
export const DEFAULT_TOOL_ROOT = "/workspace/.oma/tools";

/** Package-index settings of pip. */
export interface PipIndexOptions {
  /** `--index-url`: a mirror. Must not carry credentials. */
  readonly indexUrl?: string;
  /** `--find-links`: directories or URLs holding wheels and sdists. */
  readonly findLinks?: readonly string[];
  /** `--no-index`: use only `findLinks`. @default false */
  readonly noIndex?: boolean;
}

/** Registry settings of npm. */
export interface NpmRegistryOptions {
  /** `--registry`: a mirror. Must not carry credentials. */
  readonly registry?: string;
  /** `--offline`: use only the local cache and local tarballs. @default false */
  readonly offline?: boolean;
}

/** Options of {@link createEnvironmentPackagesInstaller}. */
export interface EnvironmentPackagesInstallerOptions {
  /** @default "/workspace/.oma/tools" */
  readonly toolRoot?: string;
  /** @default "/tmp/.oma-setup-warm" */
  readonly warmMarkerPath?: string;
  /** @default "/workspace/.oma-setup-restored" */
  readonly restoredMarkerPath?: string;
  /** Deadline of one package install. @default 900000 */
  readonly installTimeoutMs?: number;
  /** Most characters of output kept in a failure's message. @default 2000 */
  readonly outputTailChars?: number;
  /** Python interpreter that creates the tool venv. @default "python3" */
  readonly python?: string;
  readonly pip?: PipIndexOptions;
  readonly npm?: NpmRegistryOptions;
}

/** Options after validation, with defaults applied. */
export type ResolvedInstallerOptions = Required<
  Omit<EnvironmentPackagesInstallerOptions, "pip" | "npm">
> & {
  readonly pip: PipIndexOptions;
  readonly npm: NpmRegistryOptions;
};

const sandboxPath = z
  .string()
  .regex(
    /^\/(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._+/-]+$/,
    "must be an absolute sandbox path without . or .. segments",
  );
// Credentials would end up on a command line; a URL with userinfo is refused.
const mirrorUrl = z
  .url({ protocol: /^https?$/ })
  .refine((value) => !/^[a-z]+:\/\/[^/]*@/i.test(value), "must not carry credentials")
  .refine((value) => !/['\s]/.test(value), "must not contain quotes or whitespace");

const optionsSchema = z
  .object({
    toolRoot: sandboxPath.optional(),
    warmMarkerPath: sandboxPath.optional(),
    restoredMarkerPath: sandboxPath.optional(),
    installTimeoutMs: z.number().int().positive().optional(),
    outputTailChars: z.number().int().min(100).max(100_000).optional(),
    python: z
      .string()
      .regex(/^[A-Za-z0-9._/-]+$/, "must be an executable name or path")
      .optional(),
    pip: z
      .object({
        indexUrl: mirrorUrl.optional(),
        findLinks: z.array(z.union([sandboxPath, mirrorUrl])).optional(),
        noIndex: z.boolean().optional(),
      })
      .strict()
      .optional(),
    npm: z
      .object({ registry: mirrorUrl.optional(), offline: z.boolean().optional() })
      .strict()
      .optional(),
  })
  .strict();

/** Validates options once; a bad option throws `invalid_config` naming the field. */
export function resolveInstallerOptions(
  options: EnvironmentPackagesInstallerOptions = {},
): ResolvedInstallerOptions {
  parseRecord(optionsSchema, options, {
    record: "environment-packages options",
    code: "invalid_config",
  });
  return {
    toolRoot: options.toolRoot ?? DEFAULT_TOOL_ROOT,
    warmMarkerPath: options.warmMarkerPath ?? WARM_MARKER_PATH,
    restoredMarkerPath: options.restoredMarkerPath ?? RESTORED_MARKER_PATH,
    installTimeoutMs: options.installTimeoutMs ?? 900_000,
    outputTailChars: options.outputTailChars ?? 2000,
    python: options.python ?? "python3",
    pip: options.pip ?? {},
    npm: options.npm ?? {},
  };
}
