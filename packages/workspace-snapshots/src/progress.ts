/** What a checkpoint or a restore is doing when it reports. */
export type SnapshotStep =
  | "list"
  | "trees"
  | "contents"
  | "publish"
  | "assemble"
  | "send"
  | "verify"
  | "done";

/**
 * One progress report. `entries` counts workspace entries (files, folders, links) done so far and never goes
 * back: a checkpoint counts an unchanged entry done once the listing found it unchanged and a changed one once
 * its content is stored; a restore counts entries read and checked. `bytes` are file contents stored
 * (checkpoint) or archive bytes sent to the sandbox (restore), of `totalBytes` once known.
 */
export interface SnapshotProgress {
  readonly step: SnapshotStep;
  readonly entries: number;
  readonly totalEntries: number | null;
  readonly bytes: number;
  readonly totalBytes: number | null;
}

/** How a run is stopped and watched. */
export interface RunInput {
  readonly signal?: AbortSignal;
  /** Told the step, entries and bytes done now and then (see {@link SnapshotProgress}). */
  readonly onProgress?: (progress: SnapshotProgress) => void;
}

/** What a step knows when it starts: its totals, and entries it finds done already. */
type StepTotals = Partial<Pick<SnapshotProgress, "totalEntries" | "totalBytes">> & {
  readonly doneEntries?: number;
};

/** Entries between two reports within a step; every step's start and end is reported too. */
const ENTRIES_PER_REPORT = 1000;
/** Bytes between two reports within a step. */
const BYTES_PER_REPORT = 1024 * 1024;

/**
 * Counts a run's progress and reports it to `onProgress` now and then; a failing callback stops nothing.
 * `from` is where a run that continues another (a restore's send after its assembly) starts.
 */
export function createProgress(
  onProgress: ((progress: SnapshotProgress) => void) | undefined,
  from?: Pick<SnapshotProgress, "step" | "entries" | "totalEntries">,
) {
  const state = {
    step: from?.step ?? ("list" as SnapshotStep),
    entries: from?.entries ?? 0,
    totalEntries: from?.totalEntries ?? (null as number | null),
    bytes: 0,
    totalBytes: null as number | null,
  };
  let reportedEntries = 0;
  let reportedBytes = 0;
  const report = () => {
    reportedEntries = state.entries;
    reportedBytes = state.bytes;
    try {
      onProgress?.({ ...state });
    } catch {
      // Progress is for people watching; it never fails the run.
    }
  };
  return {
    /** Starts `step`, with the totals it knows and the entries it finds done already. */
    step(step: SnapshotStep, totals: StepTotals = {}) {
      state.step = step;
      state.entries += totals.doneEntries ?? 0;
      if (totals.totalEntries !== undefined) state.totalEntries = totals.totalEntries;
      if (totals.totalBytes !== undefined) state.totalBytes = totals.totalBytes;
      report();
    },
    /** Counts entries and bytes done. */
    add(entries: number, bytes = 0) {
      state.entries += entries;
      state.bytes += bytes;
      if (
        state.entries - reportedEntries >= ENTRIES_PER_REPORT ||
        state.bytes - reportedBytes >= BYTES_PER_REPORT
      )
        report();
    },
    /** The run is done: everything it counted towards is. */
    finish() {
      state.step = "done";
      state.entries = Math.max(state.entries, state.totalEntries ?? 0);
      state.bytes = Math.max(state.bytes, state.totalBytes ?? 0);
      report();
    },
  };
}

export type Progress = ReturnType<typeof createProgress>;
