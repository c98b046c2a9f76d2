import { SandboxFailedError, shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { SandboxPort } from "./ports.js";

/**
 * Environment variable naming the file that carries a harness process's credentials. The process reads
 * the file and deletes it before it runs anything else, and keeps the values in its own memory: no
 * credential is ever in the initial environment (`/proc/<pid>/environ`) of a process in the sandbox,
 * where any tool call could read it. `oma-ama-worker` reads this variable.
 */
export const CREDENTIAL_HANDOFF_ENV = "OMA_CREDENTIALS_FILE";

/** The variables of a harness declaration that travel in the handoff file instead of the environment. */
export const HANDED_OFF_CREDENTIAL_KEYS: readonly string[] = [
  "ANTHROPIC_WORK_SECRET",
  "ANTHROPIC_ENVIRONMENT_KEY",
];

/** Exit codes of a command the shell could not run: the process may never have read (and deleted) its file. */
const NOT_RUN_EXIT_CODES = new Set([126, 127]);

/** Credentials staged for one harness process. */
export interface CredentialHandoff {
  /** The environment to start the process with: the declaration's, less its credentials, plus the file's path. */
  readonly env: Record<string, string> | undefined;
  /** Deletes the file (when there is one) unless the exit shows the process started and so deleted it itself. */
  discardUnlessRead(exitCode: number | null): Promise<void>;
}

/**
 * Moves the credentials out of `env` into a mode-0600 file under `/tmp` in the sandbox. The file is
 * written under `/workspace` (the one place every provider's file route writes) and moved out at once,
 * before the process starts, so no checkpoint or output collection sees it. Without a credential in
 * `env` nothing is written and `env` comes back unchanged.
 */
export async function stageCredentialHandoff(
  sandbox: Pick<SandboxPort, "exec" | "writeFile">,
  env: Readonly<Record<string, string>> | undefined,
): Promise<CredentialHandoff> {
  const credentials: Record<string, string> = {};
  const rest: Record<string, string> = {};
  for (const [name, value] of Object.entries(env ?? {})) {
    if (HANDED_OFF_CREDENTIAL_KEYS.includes(name)) credentials[name] = value;
    else if (name !== CREDENTIAL_HANDOFF_ENV) rest[name] = value;
  }
  if (Object.keys(credentials).length === 0)
    return {
      env: env === undefined ? undefined : { ...env },
      discardUnlessRead: async () => undefined,
    };
  const name = `.oma-credentials-${crypto.randomUUID()}`;
  const staged = `/workspace/${name}`;
  const path = `/tmp/${name}`;
  const discard = async (): Promise<void> => {
    await sandbox.exec(`rm -f ${shellQuote(staged)} ${shellQuote(path)}`).catch(() => undefined);
  };
  try {
    await sandbox.writeFile(staged, JSON.stringify(credentials));
    const moved = await sandbox.exec(
      `chmod 600 ${shellQuote(staged)} && mkdir -p /tmp && mv -f ${shellQuote(staged)} ${shellQuote(path)}`,
    );
    if (moved.exitCode !== 0) {
      throw new SandboxFailedError({
        message: `moving the credentials file out of /workspace failed with exit code ${moved.exitCode}`,
        context: { exitCode: moved.exitCode },
      });
    }
  } catch (error) {
    await discard();
    throw error;
  }
  return {
    env: { ...rest, [CREDENTIAL_HANDOFF_ENV]: path },
    async discardUnlessRead(exitCode) {
      // A call to the sandbox right as its process ends races the host's delete of the sandbox (a bridge
      // then starts its container again), so only a process that never ran gets one.
      if (exitCode === null || NOT_RUN_EXIT_CODES.has(exitCode)) await discard();
    },
  };
}
