import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import type { Spool } from "./spool.js";

/** Options of {@link fetchTarInParts}. */
export interface TarInPartsOptions {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly partBytes: number;
  readonly maxRequestBytes: number;
  /**
   * The `tar` invocation writing an archive to stdout, given the scratch folder (excluded from it). Stages
   * before the last one may record their exit status in `<folder>/<name>-status`; all are checked.
   */
  readonly tarCommand: (directory: string, directoryName: string) => string;
  /** Runs in the scratch folder before tar (to place a file list there); optional. */
  readonly prepare?: (directory: string) => Promise<void>;
  readonly spool: Spool;
  readonly signal?: AbortSignal;
}

/**
 * Has the sandbox write an archive in parts of `partBytes` into a scratch folder under `/workspace`,
 * fetches each part with a file GET into a fresh `spool`, and removes the folder, whatever happens.
 */
export async function fetchTarInParts(options: TarInPartsOptions): Promise<void> {
  const { client, sandboxId, spool, signal } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const directoryName = `.oma-checkpoint-${crypto.randomUUID()}`;
  const directory = `/workspace/${directoryName}`;
  try {
    await files.run(`mkdir -p ${directory}`, signal);
    await options.prepare?.(directory);
    // tar exits 1 when files change while read; that is still a consistent-enough snapshot of a live tree.
    const script = [
      `{ ${options.tarCommand(directory, directoryName)}; echo $? > ${directory}/status; } | split -b ${options.partBytes} -a 6 -d - ${directory}/part-`,
      // Every stage that records a status (tar, and a compressor behind it) must have succeeded.
      `for file in ${directory}/*status; do status=$(cat "$file"); [ "$status" -le 1 ] || { echo "archiving failed: $status" >&2; exit 1; }; done`,
      `cd ${directory} && stat -c '%n %s' part-*`,
    ].join(" && ");
    const listing = await files.run(script, signal);
    const parts = listing
      .split("\n")
      .map((line) => /^(part-\d{6}) (\d+)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null)
      .map(([, part = "", size = "0"]) => ({ part, size: Number(size) }))
      .sort((a, b) => (a.part < b.part ? -1 : 1));
    if (parts.length === 0) throw new SandboxFailedError({ message: "archiving the workspace produced no parts" });
    // The listing proves every part exists, so parts are fetched without a check each (an exec between
    // file GETs slows the GET after it); the listed sizes catch a part that reads short or empty.
    for (const { part } of parts) {
      await spool.append(await client.readFile(sandboxId, `${directory}/${part}`, signal), signal);
    }
    const expected = parts.reduce((sum, { size }) => sum + size, 0);
    const { size } = await spool.finish();
    if (size !== expected) {
      throw new SandboxFailedError({ message: `archive parts arrived with ${size} of ${expected} bytes`, context: { expected, received: size } });
    }
  } finally {
    await files.run(`rm -rf ${directory}`).catch(() => undefined);
  }
}
