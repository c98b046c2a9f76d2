import { spawn } from "node:child_process";

/** The fields of a claimed work item that the in-sandbox worker reads from its environment. */
export interface ClaimedWork {
  id: string;
  environment_id: string;
  data: { id: string };
  secret?: string | null;
}

/**
 * The baseline both the worker and the service benchmarks measure against: `oma-ama-worker` run for one claimed
 * item as a plain child process, in `workdir`, with no host, no sandbox and no workspace kept.
 */
export function runPlainWorker(options: {
  bin: string;
  work: ClaimedWork;
  baseUrl: string;
  workdir: string;
  idleMs: number;
}): Promise<void> {
  const { work } = options;
  return new Promise<void>((resolve, reject) => {
    const child = spawn(options.bin, [], {
      stdio: "ignore",
      env: {
        PATH: "/usr/bin:/bin",
        ANTHROPIC_WORK_ID: work.id,
        ANTHROPIC_ENVIRONMENT_ID: work.environment_id,
        ANTHROPIC_SESSION_ID: work.data.id,
        ANTHROPIC_WORK_SECRET: work.secret ?? "",
        ANTHROPIC_BASE_URL: options.baseUrl,
        OMA_AMA_WORKDIR: options.workdir,
        OMA_AMA_MAX_IDLE_MS: String(options.idleMs),
      },
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`oma-ama-worker exited ${code}`)),
    );
  });
}
