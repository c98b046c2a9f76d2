/** One recorded port call. */
export interface CallRecord {
  /** Global order of the call across every instrumented port. */
  readonly seq: number;
  readonly port: string;
  readonly method: string;
  /** 1-based count of calls to this port method so far. */
  readonly occurrence: number;
  /** The first argument as passed (it may contain a fence token: inspect it, never log it). */
  readonly input: unknown;
  status: "pending" | "resolved" | "rejected";
  value?: unknown;
  error?: unknown;
}

/** The shared, ordered record of every instrumented call. */
export interface CallJournal {
  readonly calls: readonly CallRecord[];
  begin(port: string, method: string, input: unknown): CallRecord;
  settle(record: CallRecord, status: "resolved" | "rejected", result: unknown): void;
  /** Calls of one method (`port.method`), in order. */
  of(name: `${string}.${string}`): readonly CallRecord[];
  /** Called after every `begin`. */
  onCall(listener: (record: CallRecord) => void): () => void;
  clear(): void;
}

/** Creates an empty journal. */
export function createCallJournal(): CallJournal {
  const calls: CallRecord[] = [];
  const counts = new Map<string, number>();
  const listeners = new Set<(record: CallRecord) => void>();
  let seq = 0;
  return {
    calls,
    begin(port, method, input) {
      const key = `${port}.${method}`;
      const occurrence = (counts.get(key) ?? 0) + 1;
      counts.set(key, occurrence);
      const record: CallRecord = { seq: seq++, port, method, occurrence, input, status: "pending" };
      calls.push(record);
      for (const listener of listeners) listener(record);
      return record;
    },
    settle(record, status, result) {
      record.status = status;
      if (status === "resolved") record.value = result;
      else record.error = result;
    },
    of: (name) => calls.filter((record) => `${record.port}.${record.method}` === name),
    onCall(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    clear() {
      calls.length = 0;
      counts.clear();
    },
  };
}
