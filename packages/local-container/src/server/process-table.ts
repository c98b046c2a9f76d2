import { randomBytes } from "node:crypto";
import type { MappedProcess } from "@open-managed-agents/sandbox/local-process";
import { exitCodeOf } from "./command-runner.js";
import { type OutputBuffer, createOutputBuffer } from "./output-buffer.js";
import { ControlApiError } from "./wire.js";

/** Finished process records kept for `list`/`logs`; older ones are forgotten first. */
const MAX_FINISHED_RECORDS = 256;

export type ProcessStatus = "running" | "completed" | "failed" | "killed" | "error";

/** Output and exit events a log stream follows. */
export type ProcessEvent = { readonly type: "stdout" | "stderr"; readonly data: string } | { readonly type: "exit" };

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
  /** Signals one process group, also one whose leader already finished, and marks a running one killed. */
  kill(record: ProcessRecord, signal?: NodeJS.Signals): void;
  /** Signals every process group, finished listed ones included; returns how many were running. */
  killAll(signal?: NodeJS.Signals): number;
  /** Resolves once every launched process exited. */
  drain(): Promise<void>;
}

/** Generates an id in the published server's `proc_<ms>_<rand>` form. */
export function generateProcessId(): string {
  return `proc_${Date.now()}_${randomBytes(4).toString("hex")}`;
}

/** Creates the process table of one container. */
export function createProcessTable(limits: { maxProcessesPerContainer: number; maxOutputBytes: number }): ProcessTable {
  const active = new Set<MappedProcess>();
  const records = new Map<string, ProcessRecord>();
  const forgetOldFinished = (): void => {
    const finished = [...records.values()].filter((record) => record.status !== "running");
    for (const record of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_RECORDS))) records.delete(record.id);
  };
  return {
    launch(start) {
      if (active.size >= limits.maxProcessesPerContainer) {
        throw new ControlApiError("PROCESS_LIMIT_REACHED", 429, `The container already runs ${active.size} processes, its limit`, {
          maxProcessesPerContainer: limits.maxProcessesPerContainer,
        });
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
        throw new ControlApiError("PROCESS_ALREADY_EXISTS", 409, `Process '${processId}' is already running`, { processId });
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
      mapped.child.stdout?.on("data", (chunk: Buffer) => emit({ type: "stdout", data: record.stdout.append(chunk) }));
      mapped.child.stderr?.on("data", (chunk: Buffer) => emit({ type: "stderr", data: record.stderr.append(chunk) }));
      void mapped.exited.then((exit) => {
        record.stdout.finish();
        record.stderr.finish();
        record.exitCode = exitCodeOf(exit);
        record.endTime = new Date();
        if (record.status === "running") record.status = record.exitCode === 0 ? "completed" : "failed";
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
      if (record.status === "running") record.status = "killed";
      // A finished command may have left members running in its group (`cmd &`); they go too.
      record.mapped.kill(signal);
    },
    killAll(signal = "SIGTERM") {
      let count = 0;
      for (const record of records.values()) {
        if (record.status === "running") {
          record.status = "killed";
          count += 1;
        }
        if (!active.has(record.mapped)) record.mapped.kill(signal);
      }
      for (const mapped of active) mapped.kill(signal);
      return count;
    },
    async drain() {
      await Promise.all([...active].map((mapped) => mapped.exited));
    },
  };
}
