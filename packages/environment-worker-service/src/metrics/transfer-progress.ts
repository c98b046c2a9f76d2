import type { HostLogger } from "@open-managed-agents/managed-runtime-host";

/** One progress report of a driver (the bridge driver's `onProgress` shape). */
export interface DriverProgress {
  readonly phase: "checkpoint" | "restore";
  readonly sandboxId?: string;
  readonly bytes: number;
  readonly totalBytes?: number | null;
}

interface Snapshot {
  /** Bytes moved so far: the driver's own count, or the checkpoint store's, whichever is larger. */
  readonly bytes: number;
  readonly totalBytes: number | null;
  /** Objects stored (checkpoint) or read (restore) in the checkpoint store. */
  readonly objects: number;
}

interface State {
  driverBytes: number;
  storeBytes: number;
  totalBytes: number | null;
  objects: number;
  logged: number;
}

/**
 * Joins a driver's progress reports with the checkpoint or restore the host is running. A report names a
 * sandbox, not a session; with one transfer of that phase running it belongs to it, with several it is
 * attributed to the one that started first (counted bytes stay right in total).
 */
export interface TransferProgress {
  begin(phase: "checkpoint" | "restore", sessionId: string | null): { snapshot(): Snapshot; end(): void };
  /** The driver factory's `onProgress`. */
  report(progress: DriverProgress): void;
  /** One object a checkpoint stored or a restore read (see `countingBlobStore`). */
  storeObject(phase: "checkpoint" | "restore", bytes: number): void;
}

/** Logs a progress line at most once per `stepBytes` moved, besides the periodic line of the running call. */
export function createTransferProgress(
  logger: HostLogger,
  options: { readonly stepBytes: number }
): TransferProgress {
  const running: { phase: "checkpoint" | "restore"; sessionId: string | null; state: State }[] = [];
  const snapshotOf = (state: State): Snapshot => ({
    bytes: Math.max(state.driverBytes, state.storeBytes),
    totalBytes: state.totalBytes,
    objects: state.objects,
  });
  const maybeLog = (phase: "checkpoint" | "restore", entry: (typeof running)[number] | undefined) => {
    if (!entry) return;
    const snapshot = snapshotOf(entry.state);
    if (snapshot.bytes - entry.state.logged < options.stepBytes) return;
    entry.state.logged = snapshot.bytes;
    logger.info(`${phase}.transfer`, { sessionId: entry.sessionId, ...snapshot });
  };
  return {
    begin(phase, sessionId) {
      const entry = {
        phase,
        sessionId,
        state: { driverBytes: 0, storeBytes: 0, totalBytes: null, objects: 0, logged: 0 },
      };
      running.push(entry);
      return {
        snapshot: () => snapshotOf(entry.state),
        end() {
          const index = running.indexOf(entry);
          if (index >= 0) running.splice(index, 1);
        },
      };
    },
    report(progress) {
      const entry = running.find((candidate) => candidate.phase === progress.phase);
      if (!entry) return;
      entry.state.driverBytes = Math.max(entry.state.driverBytes, progress.bytes);
      entry.state.totalBytes = progress.totalBytes ?? entry.state.totalBytes;
      maybeLog(progress.phase, entry);
    },
    storeObject(phase, bytes) {
      const entry = running.find((candidate) => candidate.phase === phase);
      if (!entry) return;
      entry.state.storeBytes += bytes;
      entry.state.objects += 1;
      maybeLog(phase, entry);
    },
  };
}
