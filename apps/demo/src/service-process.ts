import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

/** One JSON log line of the service (pino: `level` 20 debug, 30 info, 40 warn, 50 error). */
export interface ServiceLine {
  readonly level: number;
  readonly event?: string;
  readonly [field: string]: unknown;
}

/** The `oma-environment-worker` bin running as a child process, as a deployer runs it. */
export interface ServiceProcess {
  readonly pid: number | undefined;
  readonly bin: string;
  /** Resolves with the exit code (128 when a signal ended it). */
  readonly exited: Promise<number>;
  /** SIGTERM: the service stops claiming, lets running items finish, and exits 0. */
  stop(): void;
}

/** The path of the package's `oma-environment-worker` bin in this install. */
export function serviceBinPath(): string {
  const manifestPath = createRequire(import.meta.url).resolve(
    "@open-managed-agents/environment-worker-service/package.json",
  );
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    bin: Record<string, string>;
  };
  const bin = manifest.bin["oma-environment-worker"];
  if (!bin)
    throw new Error(
      "@open-managed-agents/environment-worker-service declares no oma-environment-worker bin",
    );
  return join(dirname(manifestPath), bin);
}

/**
 * Starts the bin with `env` as its whole configuration. It runs under this process's own Node flags (passed
 * in NODE_OPTIONS), so a module hook the demo was started with (the SDK matrix's) applies to the service too. Each JSON line it
 * logs goes to `onLine`; anything else it writes is passed through to stderr.
 */
export function startServiceProcess(options: {
  readonly env: NodeJS.ProcessEnv;
  readonly onLine: (line: ServiceLine) => void;
}): ServiceProcess {
  const bin = serviceBinPath();
  // The bin is its launcher (a shell script that starts Node with the service's process settings): run it
  // as a deployer does, on this process's Node, with this process's flags through NODE_OPTIONS.
  const inherited = process.execArgv.map((flag) => JSON.stringify(flag));
  const nodeOptions = [options.env.NODE_OPTIONS, ...inherited].filter(Boolean).join(" ");
  const child: ChildProcess = spawn(bin, [], {
    env: {
      ...options.env,
      OMA_NODE: process.execPath,
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    },
    stdio: ["ignore", "inherit", "pipe"],
  });
  if (child.stderr) {
    createInterface({ input: child.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on(
      "line",
      (text) => {
        const line = parseLine(text);
        if (line) options.onLine(line);
        else process.stderr.write(`${text}\n`);
      },
    );
  }
  const exited = new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  return {
    pid: child.pid,
    bin,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    },
  };
}

function parseLine(text: string): ServiceLine | null {
  if (!text.startsWith("{")) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" &&
      value !== null &&
      typeof (value as ServiceLine).level === "number"
      ? (value as ServiceLine)
      : null;
  } catch {
    return null;
  }
}
