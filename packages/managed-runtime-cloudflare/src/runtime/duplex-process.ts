import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "@open-managed-agents/runtime-utils";
import {
  type SandboxDuplexProcess,
  type SandboxDuplexProcessSpec,
  type SandboxProcessExit,
  shellQuote,
} from "@open-managed-agents/sandbox";
import { bytesToBase64 } from "../base64.js";
import type { CloudflareSandbox } from "../sandbox/cloudflare-sandbox.js";
import DUPLEX_PUT from "./duplex-put.sh";
import DUPLEX_WRAPPER from "./duplex-wrapper.sh";

/** Directory holding the stdin chunks of duplex processes inside the container. */
export const DUPLEX_ROOT = "/tmp/.oma-duplex";
/** Largest stdin chunk sent in one command; bigger writes are split. */
const STDIN_CHUNK_BYTES = 48 * 1024;
/** Deadline of one stdin write. */
const STDIN_WRITE_TIMEOUT_MS = 30_000;
/** Longest a process's exit waits for a kill still in flight. */
const KILL_SETTLE_MS = 10_000;

/** `sh -c` of a program file, with its `$0` and arguments quoted for the SDK's command line. */
const shellCommand = (program: string, ...words: string[]): string =>
  ["sh", "-c", program, ...words].map(shellQuote).join(" ");

/** Writes a chunk (base64) to `target` in a stdin folder; a folder already removed is not a failure. */
const putCommand = (directory: string, target: string, base64: string): string =>
  shellCommand(DUPLEX_PUT, "oma-duplex-put", directory, target, base64);

// SDK 0.12 processes have no stdin: the host appends numbered chunk files (duplex-put.sh) that the
// wrapper (duplex-wrapper.sh) feeds, in order, into the command; stdout and stderr come back through the
// SDK's log stream.

/** Spawns `spec` as an SDK background process with live stdin, stdout and stderr. */
export async function spawnCloudflareDuplexProcess(
  sandbox: CloudflareSandbox,
  spec: SandboxDuplexProcessSpec,
): Promise<SandboxDuplexProcess> {
  const directory = `${DUPLEX_ROOT}/${crypto.randomUUID()}`;
  // Created before the process starts, so a write never races the wrapper; once the wrapper removed it
  // (the process ended), later writes and the close are dropped instead of leaving files behind.
  await runChecked(sandbox, `mkdir -p ${shellQuote(directory)}`, "preparing a duplex process");
  const started = await sandbox.startProcess(
    shellCommand(DUPLEX_WRAPPER, "oma-duplex", directory, spec.command, ...(spec.args ?? [])),
    {
      ...(spec.cwd ? { cwd: spec.cwd } : {}),
      ...(spec.env ? { env: spec.env } : {}),
    },
  );
  const logs = new AbortController();
  const stdout = createOutputChannel();
  const stderr = createOutputChannel();
  const encoder = new TextEncoder();
  let killedWith: "SIGTERM" | "SIGKILL" | null = null;

  const finalStatus = async (): Promise<number | null> =>
    (await sandbox.processStatus(started.id).catch(() => null))?.exitCode ?? null;
  const pump = async (): Promise<SandboxProcessExit> => {
    let exitCode: number | null | undefined;
    try {
      for await (const event of sandbox.processLogs(started.id, logs.signal)) {
        if (event.type === "exit") exitCode = event.exitCode;
        else (event.type === "stdout" ? stdout : stderr).push(encoder.encode(event.data));
      }
    } catch (error) {
      const failure = new SandboxFailedError({
        message: `output of process ${started.id} was lost: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
      });
      stdout.fail(failure);
      stderr.fail(failure);
      return { code: await finalStatus(), signal: null };
    }
    stdout.end();
    stderr.end();
    if (exitCode === undefined) exitCode = await finalStatus();
    return {
      code: exitCode,
      signal: killedWith !== null && (exitCode === null || exitCode > 128) ? killedWith : null,
    };
  };
  // A kill still in flight when the process ends holds its exit back: the caller's next step may be
  // destroying the sandbox, and a kill that reaches the Sandbox Durable Object after the destroy starts the
  // container again (`containerFetch` starts a stopped one), with nothing left to track it.
  let ended = false;
  let killing: Promise<unknown> = Promise.resolve();
  // The exit always resolves: a broken log stream is reported through the output streams instead.
  const exited = pump()
    .catch((): SandboxProcessExit => ({ code: null, signal: null }))
    .then(async (end) => {
      ended = true;
      await withDeadline(killing, { ms: KILL_SETTLE_MS, operation: "a kill" }).catch(
        () => undefined,
      );
      return end;
    });

  let written = 0;
  let writing: Promise<void> = Promise.resolve();
  const append = (chunk: Uint8Array): Promise<void> => {
    const sequence = written;
    written += 1;
    const command = putCommand(directory, `${directory}/${sequence}`, bytesToBase64(chunk));
    return runChecked(sandbox, command, `writing stdin of process ${started.id}`);
  };

  const stdin = new WritableStream<Uint8Array>({
    write(chunk) {
      const pieces: Uint8Array[] = [];
      for (let offset = 0; offset < chunk.byteLength; offset += STDIN_CHUNK_BYTES)
        pieces.push(chunk.subarray(offset, offset + STDIN_CHUNK_BYTES));
      writing = pieces.reduce((previous, piece) => previous.then(() => append(piece)), writing);
      return writing;
    },
    async close() {
      await writing;
      await runChecked(
        sandbox,
        putCommand(
          directory,
          `${directory}/eof`,
          bytesToBase64(new TextEncoder().encode(`${written}`)),
        ),
        `closing stdin of process ${started.id}`,
      );
    },
  });

  return {
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    kill(signal = "SIGTERM") {
      // Once it ended there is nothing to stop, and a call now would only race the sandbox's destroy.
      if (ended) return;
      killedWith = signal;
      const kill = sandbox.killProcess(started.id, signal).catch(() => undefined);
      killing = Promise.all([killing, kill]);
    },
    exited,
  };
}

async function runChecked(
  sandbox: CloudflareSandbox,
  command: string,
  what: string,
): Promise<void> {
  const result = await sandbox.exec(command, { timeoutMs: STDIN_WRITE_TIMEOUT_MS });
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `${what} failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 512)}`,
      context: { exitCode: result.exitCode },
    });
  }
}

/** One output stream of a process; pushing after the reader cancelled it drops the data instead of throwing. */
interface OutputChannel {
  readonly stream: ReadableStream<Uint8Array>;
  push(chunk: Uint8Array): void;
  end(): void;
  fail(error: Error): void;
}

function createOutputChannel(): OutputChannel {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start: (value) => void (controller = value),
    cancel: () => void (open = false),
  });
  const settle = (action: () => void): void => {
    if (!open) return;
    open = false;
    action();
  };
  return {
    stream,
    push: (chunk) => open && controller.enqueue(chunk),
    end: () => settle(() => controller.close()),
    fail: (error) => settle(() => controller.error(error)),
  };
}
