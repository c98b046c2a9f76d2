import { InvalidRequestError, shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeFiles } from "./files.js";

/** Variable names a POSIX shell can export. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The launcher that turns an env file into the process environment: it sources the file with `set -a`
 * (every assignment exported), deletes it, and execs the program. `$0` is the env file.
 */
export const ENV_FILE_LAUNCHER = 'set -a; . "$0" || exit 126; rm -f "$0"; set +a; exec "$@"';

/** An env file written into the sandbox for one command. */
export interface StagedEnvFile {
  /** Sandbox path of the file; the launcher deletes it once read. */
  readonly path: string;
  /** Deletes the file when the command never started (the launcher did not get to it). */
  discard(): Promise<void>;
  /**
   * Deletes the file unless the command's end shows the launcher read it (and so deleted it): after an exit
   * code other than 126 or 127 (the shell could not run it) nothing is sent, since a call to the sandbox
   * right as a command ends races the host's delete of the sandbox (a bridge then starts its container again).
   */
  discardUnlessRead(exitCode: number | null): Promise<void>;
}

/** Exit codes of a command the shell could not run: its launcher may never have read the env file. */
const NOT_RUN_EXIT_CODES = new Set([126, 127]);

/**
 * Writes `env` into a mode-0600 file under `/tmp` in the sandbox, so values (secrets among them) never
 * appear in a process command line: the bridge's exec takes argv only and ignores per-call env, and
 * `env K=V` argv is visible to every `ps` in the sandbox and on the host.
 */
export async function stageEnvFile(
  files: BridgeFiles,
  env: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<StagedEnvFile> {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) {
      throw new InvalidRequestError({
        message: "an environment variable name is not a shell identifier",
        context: { field: "env", name: name.slice(0, 64) },
      });
    }
    lines.push(`${name}=${shellQuote(value)}`);
  }
  const name = `.oma-env-${crypto.randomUUID()}`;
  const path = `/tmp/${name}`;
  // The bridge's file route writes only under /workspace; the file moves out at once, before any
  // command runs, so no checkpoint or output collection can see it.
  const staged = `/workspace/${name}`;
  await files.writeBytes(staged, new TextEncoder().encode(`${lines.join("\n")}\n`), signal);
  await files.run(
    `chmod 600 ${shellQuote(staged)} && mkdir -p /tmp && mv -f ${shellQuote(staged)} ${shellQuote(path)}`,
    signal,
  );
  const discard = async () => {
    await files.run(`rm -f ${shellQuote(path)}`).catch(() => undefined);
  };
  return {
    path,
    discard,
    discardUnlessRead: async (exitCode) => {
      if (exitCode === null || NOT_RUN_EXIT_CODES.has(exitCode)) await discard();
    },
  };
}
