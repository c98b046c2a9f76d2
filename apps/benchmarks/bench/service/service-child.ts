/**
 * What the service benchmarks share: the profile their items run, the bin's settings over the local control
 * plane and the local stack, and a reader of a child's JSON lines.
 */
import type { ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** A durable workspace and the in-sandbox AMA worker, found on the sandbox's PATH. */
export function amaWorkerProfile(binDirectory: string, idleMs: number) {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: {
        command: "oma-ama-worker",
        env: { PATH: `${binDirectory}:/usr/bin:/bin`, OMA_AMA_MAX_IDLE_MS: String(idleMs) },
      },
    },
  };
}

export interface ServiceTargets {
  environment: { id: string; environmentKey: string };
  planeUrl: string;
  bridge: { url: string; apiKey: string };
  /** SQLite store file and `file://` checkpoint folder. */
  storePath: string;
  blobsDirectory: string;
  profile: unknown;
}

/** The bin's environment for one benchmark, JSON logs on stderr; `extra` adds or overrides settings. */
export function serviceEnvironment(
  targets: ServiceTargets,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    OMA_ENVIRONMENT_ID: targets.environment.id,
    OMA_ENVIRONMENT_KEY: targets.environment.environmentKey,
    OMA_API_BASE_URL: targets.planeUrl,
    OMA_STORE: `sqlite://${targets.storePath}`,
    OMA_CHECKPOINT_STORE: `file://${targets.blobsDirectory}`,
    OMA_CLOUDFLARE_BRIDGE_URL: targets.bridge.url,
    OMA_CLOUDFLARE_BRIDGE_API_KEY: targets.bridge.apiKey,
    OMA_PROFILE: JSON.stringify(targets.profile),
    OMA_LOG_FORMAT: "json",
    ...extra,
  };
}

/**
 * A child's JSON lines as they come: `all` of them, `next()` in turn, and `until(test)`; both waits fail once
 * the child has exited. Lines that are not JSON are passed to this process's stderr. With
 * `OMA_BENCH_LOG_FILE` set, every line is also appended to that file, so a long run can be followed.
 */
export function jsonLines(child: ChildProcess, stream: NodeJS.ReadableStream) {
  const queue: Record<string, unknown>[] = [];
  const all: Record<string, unknown>[] = [];
  const waiter: { wake: (() => void) | null; ended: boolean } = { wake: null, ended: false };
  void (async () => {
    const logFile = process.env.OMA_BENCH_LOG_FILE;
    for await (const line of createInterface({ input: stream })) {
      if (logFile) appendFileSync(logFile, `${line}\n`);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        queue.push(parsed);
        all.push(parsed);
      } catch {
        process.stderr.write(`${line}\n`);
      }
      waiter.wake?.();
    }
    waiter.ended = true;
    waiter.wake?.();
  })();
  const wait = async () => {
    if (waiter.ended || child.exitCode !== null) {
      throw new Error(`child ended (exit code ${child.exitCode})`);
    }
    await new Promise<void>((resolve) => (waiter.wake = resolve));
  };
  return {
    all,
    async next(): Promise<Record<string, unknown>> {
      while (queue.length === 0) await wait();
      return queue.shift() as Record<string, unknown>;
    },
    async until(test: () => boolean): Promise<void> {
      while (!test()) await wait();
    },
  };
}
