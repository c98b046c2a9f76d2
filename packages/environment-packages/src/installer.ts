import {
  ENVIRONMENT_PACKAGE_MANAGERS,
  type EnvironmentPackageManager,
  type EnvironmentPackages,
  type EnvironmentSetupMode,
  type EnvironmentSetupResult,
  SandboxFailedError,
  type SkippedEnvironmentPackage,
  environmentPackagesSchema,
  parseRecord,
  sandboxImageAliasSchema,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import type { SandboxPort } from "@open-managed-agents/sandbox";
import { managerPlan, toolDir } from "./managers.js";
import { restoredMarker, setupFingerprint, warmMarker } from "./markers.js";
import {
  type EnvironmentPackagesInstallerOptions,
  type ResolvedInstallerOptions,
  resolveInstallerOptions,
} from "./options.js";

/** Input of {@link EnvironmentPackagesInstaller.setup}. */
export interface EnvironmentSetupInput {
  /** Only `exec` is used. */
  readonly sandbox: Pick<SandboxPort, "exec">;
  readonly packages: EnvironmentPackages;
  /** The catalog image alias, when one is selected; part of both markers. */
  readonly imageAlias?: string | null;
  /** The provider's runtime id; part of the warm marker. */
  readonly runtimeId?: string | null;
  readonly signal?: AbortSignal;
}

/** What {@link EnvironmentPackagesInstaller.setup} did. */
export interface EnvironmentSetupReport extends EnvironmentSetupResult {
  readonly installed: readonly {
    readonly manager: EnvironmentPackageManager;
    readonly spec: string;
  }[];
}

/** Installs environment packages into a sandbox through its `exec`. */
export interface EnvironmentPackagesInstaller {
  /**
   * Runs setup: nothing when the warm marker matches, apt only when just the restored marker matches,
   * everything otherwise; then writes both markers. Throws `invalid_request` for a bad spec (before
   * anything runs) and `sandbox_failed` naming the manager, the spec and the output's tail when an
   * install fails.
   */
  setup(input: EnvironmentSetupInput): Promise<EnvironmentSetupReport>;
}

/** Creates the installer. Options are validated here; a bad option throws `invalid_config`. */
export function createEnvironmentPackagesInstaller(
  options: EnvironmentPackagesInstallerOptions = {},
): EnvironmentPackagesInstaller {
  const settings = resolveInstallerOptions(options);

  return {
    async setup(input) {
      const packages = parseRecord(environmentPackagesSchema, input.packages, {
        record: "environment packages",
      });
      const imageAlias =
        input.imageAlias == null
          ? null
          : parseRecord(sandboxImageAliasSchema, input.imageAlias, {
              record: "sandbox image alias",
            });
      const { sandbox, signal } = input;
      const exec = async (command: string, timeoutMs = 60_000) => {
        signal?.throwIfAborted();
        return sandbox.exec(command, { timeoutMs, ...(signal ? { signal } : {}) });
      };

      const fingerprint = await setupFingerprint(packages, imageAlias, settings.toolRoot);
      const warm = warmMarker(fingerprint, input.runtimeId ?? null);
      const restored = restoredMarker(fingerprint);
      const marked = await currentMode(
        exec,
        settings.warmMarkerPath,
        settings.restoredMarkerPath,
        warm,
        restored,
      );
      // A restore that left a tool directory out (a checkpoint exclude, a partial restore) is not a restore of the setup.
      const mode =
        marked === "restored" && !(await toolDirsPresent(exec, settings, packages))
          ? "full"
          : marked;

      const installed: { manager: EnvironmentPackageManager; spec: string }[] = [];
      const skipped: SkippedEnvironmentPackage[] = [];
      const pathEntries: string[] = [];
      for (const manager of ENVIRONMENT_PACKAGE_MANAGERS) {
        const specs = packages[manager] ?? [];
        if (specs.length === 0) continue;
        const plan = managerPlan(settings, manager);
        if (plan.type === "skip") {
          skipped.push(...specs.map((spec) => ({ manager, spec, reason: plan.reason })));
          continue;
        }
        if (plan.binDir) pathEntries.push(plan.binDir);
        // Language packages live in the workspace: a restore brought them back. Apt lives in /usr: it did not.
        const runs = mode === "full" || (mode === "restored" && manager === "apt");
        if (!runs) continue;
        for (const spec of specs) {
          const result = await exec(plan.command(spec), settings.installTimeoutMs);
          if (result.exitCode !== 0)
            throw installFailure(
              manager,
              spec,
              result.exitCode,
              result.output,
              settings.outputTailChars,
            );
          installed.push({ manager, spec });
        }
      }

      if (mode !== "warm")
        await writeMarkers(
          exec,
          settings.warmMarkerPath,
          warm,
          settings.restoredMarkerPath,
          restored,
        );
      const base = await exec(`printf '%s' "$PATH"`);
      const path =
        base.exitCode === 0
          ? [...pathEntries, ...(base.stdout ? [base.stdout] : [])].join(":")
          : null;
      return { mode, pathEntries, path, installed, skipped };
    },
  };
}

type Exec = (command: string, timeoutMs?: number) => ReturnType<SandboxPort["exec"]>;

async function currentMode(
  exec: Exec,
  warmPath: string,
  restoredPath: string,
  warm: string,
  restored: string,
): Promise<EnvironmentSetupMode> {
  // Read through exec: the markers sit outside any file API's root on some providers (`/tmp`).
  const read = async (path: string) => {
    const result = await exec(`cat ${shellQuote(path)} 2>/dev/null || true`);
    return result.stdout;
  };
  if ((await read(warmPath)) === warm) return "warm";
  if ((await read(restoredPath)) === restored) return "restored";
  return "full";
}

async function toolDirsPresent(
  exec: Exec,
  settings: ResolvedInstallerOptions,
  packages: EnvironmentPackages,
): Promise<boolean> {
  const dirs = ENVIRONMENT_PACKAGE_MANAGERS.filter(
    (manager) => (packages[manager]?.length ?? 0) > 0,
  )
    .filter((manager) => managerPlan(settings, manager).type === "install" && manager !== "apt")
    .map((manager) => toolDir(settings, manager));
  if (dirs.length === 0) return true;
  const result = await exec(dirs.map((dir) => `test -d ${shellQuote(dir)}`).join(" && "));
  return result.exitCode === 0;
}

async function writeMarkers(
  exec: Exec,
  warmPath: string,
  warm: string,
  restoredPath: string,
  restored: string,
): Promise<void> {
  const write = (path: string, content: string) =>
    `mkdir -p "$(dirname ${shellQuote(path)})" && printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`;
  const result = await exec(`${write(restoredPath, restored)} && ${write(warmPath, warm)}`);
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `environment setup could not write its markers: ${tail(result.output, 500) || "(no output)"}`,
      context: { stage: "environment-packages", exitCode: result.exitCode },
    });
  }
}

function installFailure(
  manager: EnvironmentPackageManager,
  spec: string,
  exitCode: number,
  output: string,
  tailChars: number,
): SandboxFailedError {
  const outputTail = tail(output, tailChars);
  return new SandboxFailedError({
    message: `${manager} install of ${spec} failed with exit code ${exitCode}: ${outputTail || "(no output)"}`,
    context: { stage: "environment-packages", manager, package: spec, exitCode, outputTail },
  });
}

function tail(text: string, chars: number): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= chars ? trimmed : `…${trimmed.slice(-chars)}`;
}
