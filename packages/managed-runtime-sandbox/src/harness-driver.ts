import {
  CapabilityUnsupportedError,
  type EnvironmentSetupResult,
  type HarnessDriverType,
  type RuntimeProcessDeclaration,
  SandboxFailedError,
  type SandboxHarnessDriverPort,
  WORKSPACE_MOUNT_PATH,
  redactSecrets,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type CredentialHandoff,
  type ManagedSandboxRuntime,
  type SandboxDuplexProcessSpec,
  stageCredentialHandoff,
} from "@open-managed-agents/sandbox";
import END_HARNESS_SCRIPT from "./scripts/end-harness.sh";
import { closeStdin, onAbort, stopProcessUnlessLeaseLost } from "./process-control.js";
import { createByteTail, drainStream } from "./process-output.js";
import { type RuntimeRegistry, providerFailure } from "./runtime-registry.js";

/** Environment values shorter than this are not redacted from output tails: they are flags, not secrets. */
const MIN_REDACTED_VALUE_LENGTH = 6;

/** Dependencies of {@link createAmaWorkerHarnessDriver}. */
export interface AmaWorkerHarnessDriverDependencies<R extends ManagedSandboxRuntime> {
  readonly registry: RuntimeRegistry<R>;
  /** Lanes the composition advertises; this port runs only `ama_worker`. */
  readonly drivers: readonly HarnessDriverType[];
}

/**
 * Variable every harness process starts with, naming its runtime: `endAbandoned` finds the harness (and,
 * through parent ids, what it started) by it. A runtime id, never a secret.
 */
export const HARNESS_RUNTIME_ENV = "OMA_HARNESS_RUNTIME";

/** Used when setup could not read the sandbox's `PATH` and the declaration names none. */
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The duplex-process spec of a declared harness process; the working directory defaults to `/workspace`.
 * With an environment setup, its tool directories go in front of `PATH` (the declared one, else the sandbox's).
 */
export function processSpec(
  declaration: RuntimeProcessDeclaration,
  setup?: EnvironmentSetupResult,
): SandboxDuplexProcessSpec {
  const env =
    setup && setup.pathEntries.length > 0
      ? { ...declaration.env, PATH: harnessPath(setup, declaration.env?.PATH) }
      : declaration.env;
  return {
    command: declaration.command,
    cwd: declaration.cwd ?? WORKSPACE_MOUNT_PATH,
    ...(declaration.args ? { args: declaration.args } : {}),
    ...(env ? { env } : {}),
  };
}

function harnessPath(setup: EnvironmentSetupResult, declared: string | undefined): string {
  if (declared !== undefined) return [...setup.pathEntries, declared].join(":");
  return setup.path ?? [...setup.pathEntries, FALLBACK_PATH].join(":");
}

/**
 * Runs an unmodified AMA worker as one duplex process: stdin is closed, stdout and stderr are drained
 * (only a bounded tail is kept), the signal stops the process and yields `aborted`, and a non-zero exit
 * throws `sandbox_failed` with the exit code and a redacted tail of its output.
 */
export function createAmaWorkerHarnessDriver<R extends ManagedSandboxRuntime>(
  dependencies: AmaWorkerHarnessDriverDependencies<R>,
): SandboxHarnessDriverPort {
  const { registry } = dependencies;
  const drivers = dependencies.drivers.filter((driver) => driver === "ama_worker");
  return {
    driverCapabilities: async () => ({ drivers }),

    async run({ scope, fence, sandbox, driver, environmentSetup, signal }) {
      if (driver.type !== "ama_worker" || drivers.length === 0) {
        throw new CapabilityUnsupportedError({
          message: `this harness port cannot run the ${driver.type} driver`,
          context: { driver: driver.type },
        });
      }
      if (signal.aborted) return { type: "aborted" };
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      let handoff: CredentialHandoff;
      let process;
      try {
        // The worker's credentials go in a file the bin reads and deletes, never in its environment.
        handoff = await stageCredentialHandoff(runtime, driver.process.env);
      } catch (error) {
        throw providerFailure(error, `handing the ama_worker process its credentials failed`);
      }
      try {
        const env = {
          ...(handoff.env ?? driver.process.env),
          [HARNESS_RUNTIME_ENV]: runtime.runtimeHandle().runtimeId,
        };
        process = await runtime.spawnDuplexProcess(
          processSpec({ ...driver.process, env }, environmentSetup),
        );
      } catch (error) {
        await handoff.discardUnlessRead(null);
        throw providerFailure(
          error,
          `starting the ama_worker process ${driver.process.command} failed`,
        );
      }
      const started = process;
      const tail = createByteTail();
      let detach = (): void => undefined;
      // Resolves once an abort stopped the process (or gave up waiting), so a wedged process cannot hang the run.
      const stopped = new Promise<"aborted">((resolve) => {
        detach = onAbort(signal, () => {
          void stopProcessUnlessLeaseLost(started, signal).finally(() => resolve("aborted"));
        });
      });
      try {
        await closeStdin(started);
        // Output only feeds the error message; a broken stream must not hide the exit status.
        const finished = Promise.all([
          drainStream(started.stdout, (chunk) => tail.push(chunk)).catch(() => undefined),
          drainStream(started.stderr, (chunk) => tail.push(chunk)).catch(() => undefined),
        ]).then(() => started.exited);
        const exit = await Promise.race([finished, stopped]);
        if (exit !== "aborted") await handoff.discardUnlessRead(exit.code);
        if (exit === "aborted" || signal.aborted) return { type: "aborted" };
        if (exit.code === 0) return { type: "completed" };
        const secrets = [
          fence.token,
          ...Object.values(driver.process.env ?? {}).filter(
            (value) => value.length >= MIN_REDACTED_VALUE_LENGTH,
          ),
        ];
        const output = redactSecrets(tail.text(), secrets);
        throw new SandboxFailedError({
          message: `ama_worker exited with ${exit.code === null ? `signal ${exit.signal}` : `code ${exit.code}`}: ${output || "(no output)"}`,
          context: { exitCode: exit.code, signal: exit.signal },
        });
      } finally {
        detach();
      }
    },

    async endAbandoned({ scope, sandbox, signal }) {
      const lease = registry.ownLease(sandbox);
      const runtime = await registry.resolve(scope, lease);
      const command = `sh -c ${shellQuote(END_HARNESS_SCRIPT)} end-harness.sh ${shellQuote(lease.runtimeId)}`;
      let ended;
      try {
        ended = await runtime.exec(command, {
          timeoutMs: END_HARNESS_TIMEOUT_MS,
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        throw providerFailure(
          error,
          `ending the abandoned harness of runtime ${lease.runtimeId} failed`,
          { runtimeId: lease.runtimeId },
        );
      }
      if (ended.exitCode !== 0) {
        throw new SandboxFailedError({
          message: `ending the abandoned harness of runtime ${lease.runtimeId} failed with exit code ${ended.exitCode}: ${ended.stderr.slice(-500) || "(no output)"}`,
          context: { runtimeId: lease.runtimeId, exitCode: ended.exitCode },
        });
      }
    },
  };
}

/**
 * Deadline of the script that ends an abandoned harness (20 rounds of stop-and-kill at most). The script
 * exits 0 only once a re-scan after a settle finds no marked process and the harness's entered process
 * was reaped; any other exit is `sandbox_failed`, so success never hides a harness still running.
 */
const END_HARNESS_TIMEOUT_MS = 60_000;
