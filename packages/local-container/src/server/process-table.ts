import { randomBytes } from "node:crypto";
import type { MappedProcess } from "@open-managed-agents/local-confinement";
import { exitCodeOf } from "./command-runner.js";
import { type OutputBuffer, createOutputBuffer } from "./output-buffer.js";
import { ControlApiError } from "./control-api-error.js";

/** How long a process has after SIGTERM before SIGKILL, as on the published container. */
export const KILL_GRACE_MS = 5_000;

/** Finished process records kept for `list`/`logs`; older ones are forgotten first. */
const MAX_FINISHED_RECORDS = 256;

export type ProcessStatus = "running" | "completed" | "failed" | "killed" | "error";

/** Output and exit events a log stream follows. */
export type ProcessEvent =
  | { readonly type: "stdout" | "stderr"; readonly data: string }
  | { readonly type: "exit" };

/** A command listed by `/api/process/*`. */
export interface ProcessRecord {
  readonly id: string;
  readonly pid: number | null;
  readonly command: string;
  readonly startTime: Date;
  status: ProcessStatus;
  endTime?: Date;
  exitCode?: number;
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  readonly listeners: Set<(event: ProcessEvent) => void>;
  readonly mapped: MappedProcess;
}

/** Running processes of one container, bounded, plus a bounded history. */
export interface ProcessTable {
  /** Starts a process through `start` unless the container is at its limit (429 `PROCESS_LIMIT_REACHED`). */
  launch(start: () => MappedProcess): MappedProcess;
  /** Lists a launched process under `id` (or a generated `proc_<ms>_<rand>`) and records its output. */
  register(mapped: MappedProcess, command: string, id?: string): ProcessRecord;
  get(id: string): ProcessRecord | undefined;
  list(): ProcessRecord[];
  /**
   * Signals one process group, also one whose leader already finished. SIGTERM is followed by SIGKILL
   * after {@link KILL_GRACE_MS}; a running process reads `killed` once it is dead, not before.
   */
  kill(record: ProcessRecord, signal?: NodeJS.Signals): void;
  /** {@link kill} for every process group, finished listed ones included; returns how many were running. */
  killAll(signal?: NodeJS.Signals): number;
  /** Resolves once every launched process exited. */
  drain(): Promise<void>;
}

/** Generates an id in the published server's `proc_<ms>_<rand>` form. */
export function generateProcessId(): string {
  return `proc_${Date.now()}_${randomBytes(4).toString("hex")}`;
}

/** Creates the process table of one container. */
export function createProcessTable(limits: {
  maxProcessesPerContainer: number;
  maxOutputBytes: number;
}): ProcessTable {
  const active = new Set<MappedProcess>();
  const killRequested = new WeakSet<ProcessRecord>();
  // Processes still running when the grace ended: SIGKILL ended them. The leader a confined container
  // reports is the `nsenter` that entered it, which SIGTERM ends at once while the command lives on; the
  // command's own end is the SIGKILL, so that is the status to report.
  const forced = new WeakSet<ProcessRecord>();
  const signalGroup = (record: ProcessRecord, signal: NodeJS.Signals): void => {
    if (record.status === "running") killRequested.add(record);
    record.mapped.kill(signal);
    if (signal !== "SIGTERM") return;
    // A group that ignores SIGTERM gets SIGKILL after the grace period, members left behind included.
    const timer = setTimeout(() => {
      if (record.status === "running") forced.add(record);
      record.mapped.kill("SIGKILL");
    }, KILL_GRACE_MS);
    timer.unref();
    if (active.has(record.mapped)) void record.mapped.exited.then(() => clearTimeout(timer));
  };
  const records = new Map<string, ProcessRecord>();
  const forgetOldFinished = (): void => {
    const finished = [...records.values()].filter((record) => record.status !== "running");
    for (const record of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_RECORDS)))
      records.delete(record.id);
  };
  return {
    launch(start) {
      if (active.size >= limits.maxProcessesPerContainer) {
        throw new ControlApiError(
          "PROCESS_LIMIT_REACHED",
          429,
          `The container already runs ${active.size} processes, its limit`,
          {
            maxProcessesPerContainer: limits.maxProcessesPerContainer,
          },
        );
      }
      const mapped = start();
      active.add(mapped);
      void mapped.exited.then(() => active.delete(mapped));
      return mapped;
    },
    register(mapped, command, id) {
      const processId = id ?? generateProcessId();
      const existing = records.get(processId);
      if (existing !== undefined && existing.status === "running") {
        mapped.kill("SIGKILL");
        throw new ControlApiError(
          "PROCESS_ALREADY_EXISTS",
          409,
          `Process '${processId}' is already running`,
          { processId },
        );
      }
      const record: ProcessRecord = {
        id: processId,
        pid: mapped.pid,
        command,
        startTime: new Date(),
        status: "running",
        stdout: createOutputBuffer(limits.maxOutputBytes),
        stderr: createOutputBuffer(limits.maxOutputBytes),
        listeners: new Set(),
        mapped,
      };
      const emit = (event: ProcessEvent): void => {
        for (const listener of record.listeners) listener(event);
      };
      mapped.child.stdout?.on("data", (chunk: Buffer) =>
        emit({ type: "stdout", data: record.stdout.append(chunk) }),
      );
      mapped.child.stderr?.on("data", (chunk: Buffer) =>
        emit({ type: "stderr", data: record.stderr.append(chunk) }),
      );
      void mapped.exited.then((exit) => {
        record.stdout.finish();
        record.stderr.finish();
        record.exitCode = forced.has(record)
          ? exitCodeOf({ code: null, signal: "SIGKILL" })
          : exitCodeOf(exit);
        record.endTime = new Date();
        if (record.status === "running")
          record.status = killRequested.has(record)
            ? "killed"
            : record.exitCode === 0
              ? "completed"
              : "failed";
        emit({ type: "exit" });
        record.listeners.clear();
        forgetOldFinished();
      });
      records.set(processId, record);
      return record;
    },
    get(id) {
      return records.get(id);
    },
    list() {
      return [...records.values()];
    },
    kill(record, signal = "SIGTERM") {
      // A finished command may have left members running in its group (`cmd &`); they go too.
      signalGroup(record, signal);
    },
    killAll(signal = "SIGTERM") {
      let count = 0;
      const listed = new Set<MappedProcess>();
      for (const record of records.values()) {
        if (record.status === "running") count += 1;
        listed.add(record.mapped);
        signalGroup(record, signal);
      }
      for (const mapped of active) if (!listed.has(mapped)) mapped.kill(signal);
      return count;
    },
    async drain() {
      await Promise.all([...active].map((mapped) => mapped.exited));
    },
  };
}
