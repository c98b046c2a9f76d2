import type { HostLogger } from "@open-managed-agents/managed-runtime-host";

/**
 * One progress report of a driver's `onProgress` (the bridge driver's shape, which a driver may extend with
 * the entries it has walked, archived or restored so far).
 */
export interface DriverProgress {
  readonly phase: "checkpoint" | "restore";
  readonly sandboxId?: string;
  readonly bytes: number;
  readonly totalBytes?: number | null;
  /** Workspace entries (files, directories, links) done so far, when the driver counts them. */
  readonly entries?: number | null;
  /** Entries the whole transfer holds, when the driver knows it. */
  readonly totalEntries?: number | null;
}

interface Snapshot {
  /** Bytes moved so far: the driver's own count, or the checkpoint store's, whichever is larger. */
  readonly bytes: number;
  readonly totalBytes: number | null;
  /** Objects stored (checkpoint) or read (restore) in the checkpoint store. */
  readonly objects: number;
  /** Entries done so far; present only once the driver reported some. */
  readonly entries?: number;
  readonly totalEntries?: number;
}

interface State {
  driverBytes: number;
  storeBytes: number;
  totalBytes: number | null;
  objects: number;
  entries: number | null;
  totalEntries: number | null;
  logged: number;
  loggedEntries: number;
}

/** A count a report may carry: a non-negative safe integer, or nothing (anything else is ignored). */
function countOf(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * Joins a driver's progress reports with the checkpoint or restore the host is running. A report names a
 * sandbox, not a session; with one transfer of that phase running it belongs to it, with several it is
 * attributed to the one that started first (counted bytes stay right in total).
 */
export interface TransferProgress {
  begin(
    phase: "checkpoint" | "restore",
    sessionId: string | null,
  ): { snapshot(): Snapshot; end(): void };
  /** The driver factory's `onProgress`. */
  report(progress: DriverProgress): void;
  /** One object a checkpoint stored or a restore read (see `countingBlobStore`). */
  storeObject(phase: "checkpoint" | "restore", bytes: number): void;
}

/**
 * Logs a progress line at most once per `stepBytes` moved or `stepEntries` entries done (default 10,000),
 * besides the periodic line of the running call.
 */
export function createTransferProgress(
  logger: HostLogger,
  options: { readonly stepBytes: number; readonly stepEntries?: number },
): TransferProgress {
  const stepEntries = options.stepEntries ?? 10_000;
  const running: { phase: "checkpoint" | "restore"; sessionId: string | null; state: State }[] = [];
  const snapshotOf = (state: State): Snapshot => ({
    bytes: Math.max(state.driverBytes, state.storeBytes),
    totalBytes: state.totalBytes,
    objects: state.objects,
    ...(state.entries === null ? {} : { entries: state.entries }),
    ...(state.totalEntries === null ? {} : { totalEntries: state.totalEntries }),
  });
  const maybeLog = (
    phase: "checkpoint" | "restore",
    entry: (typeof running)[number] | undefined,
  ) => {
    if (!entry) return;
    const snapshot = snapshotOf(entry.state);
    const entries = entry.state.entries ?? 0;
    const byBytes = snapshot.bytes - entry.state.logged >= options.stepBytes;
    if (!byBytes && entries - entry.state.loggedEntries < stepEntries) return;
    entry.state.logged = snapshot.bytes;
    entry.state.loggedEntries = entries;
    logger.info(`${phase}.transfer`, { sessionId: entry.sessionId, ...snapshot });
  };
  return {
    begin(phase, sessionId) {
      const entry = {
        phase,
        sessionId,
        state: {
          driverBytes: 0,
          storeBytes: 0,
          totalBytes: null,
          objects: 0,
          entries: null,
          totalEntries: null,
          logged: 0,
          loggedEntries: 0,
        } as State,
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
      const entries = countOf(progress.entries);
      if (entries !== null) entry.state.entries = Math.max(entry.state.entries ?? 0, entries);
      entry.state.totalEntries = countOf(progress.totalEntries) ?? entry.state.totalEntries;
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
