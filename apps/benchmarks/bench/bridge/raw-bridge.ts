import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ArchiveSource, splitArchive } from "@open-managed-agents/workspace-archive";
import type { BridgeClient } from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { type CurlTransfer, curl } from "./curl.js";
import { sandboxShell, timed } from "./sandbox-shell.js";

/** The bridge's own figure for one kind of transfer: sequential curl requests, bodies not kept. */
export interface RawTransfers {
  readonly requests: number;
  readonly bytes: number;
  /** Sum of curl's per-request time. */
  readonly seconds: number;
  /** Requests that did not answer 200 with the expected size. */
  readonly failures: readonly string[];
}

/** Where the bench reaches the bridge. */
export interface BridgeEndpoint {
  readonly url: string;
  readonly apiKey: string;
}

const RAW_DIRECTORY = ".bench-raw-parts";

function collect(
  transfers: readonly { name: string; transfer: CurlTransfer; expected: number }[],
): RawTransfers {
  const failures = transfers
    .filter(
      ({ transfer, expected }) =>
        transfer.status !== 200 ||
        Math.max(transfer.downloadedBytes, transfer.uploadedBytes) !== expected,
    )
    .map(({ name, transfer }) =>
      `${name}: HTTP ${transfer.status}, exit ${transfer.exitCode} ${transfer.stderr}`.trim(),
    );
  return {
    requests: transfers.length,
    bytes: transfers.reduce(
      (sum, { transfer }) => sum + Math.max(transfer.downloadedBytes, transfer.uploadedBytes),
      0,
    ),
    seconds: transfers.reduce((sum, { transfer }) => sum + transfer.seconds, 0),
    failures,
  };
}

/**
 * Archives `/workspace` into parts inside the sandbox exactly as the driver does (`tar | split`), then
 * fetches the selected parts with one `curl` file GET each. Returns the GET figures and the in-sandbox time.
 */
export async function rawFileGets(
  client: BridgeClient,
  bridge: BridgeEndpoint,
  input: {
    readonly sandboxId: string;
    readonly partBytes: number;
    readonly select: (index: number) => boolean;
  },
): Promise<RawTransfers & { archiveMs: number }> {
  const { sandboxId, partBytes } = input;
  const directory = `/workspace/${RAW_DIRECTORY}`;
  const archive = await timed(() =>
    sandboxShell(
      client,
      sandboxId,
      `mkdir -p ${directory} && tar -cf - -C /workspace --exclude=${RAW_DIRECTORY} . | split -b ${partBytes} -a 6 -d - ${directory}/part- && cd ${directory} && for f in part-*; do echo "$f $(stat -c %s "$f")"; done`,
    ),
  );
  const parts = archive.value
    .trim()
    .split("\n")
    .map((line) => line.split(" "))
    .map(([name = "", size = "0"]) => ({ name, size: Number(size) }));
  const transfers = [];
  try {
    for (const part of parts.filter((_, index) => input.select(index))) {
      const transfer = await curl({
        url: `${bridge.url}/v1/sandbox/${sandboxId}/file/workspace/${RAW_DIRECTORY}/${part.name}`,
        apiKey: bridge.apiKey,
      });
      transfers.push({ name: part.name, transfer, expected: part.size });
    }
  } finally {
    await sandboxShell(client, sandboxId, `rm -rf ${directory}`);
  }
  return { ...collect(transfers), archiveMs: archive.ms };
}

/** Cuts the stored checkpoint into the same tar parts the driver sends, as host files (untimed). */
export async function writeHydrateParts(input: {
  readonly archive: ArchiveSource;
  readonly partBytes: number;
  readonly hostDirectory: string;
}): Promise<HostPart[]> {
  const files: HostPart[] = [];
  for await (const part of splitArchive(input.archive, {
    maxPartBytes: input.partBytes,
    allowSymlinksOutsideRoot: true,
  })) {
    const path = join(input.hostDirectory, `part-${String(files.length).padStart(6, "0")}.tar`);
    await writeFile(path, part.bytes);
    files.push({ path, size: part.bytes.byteLength });
  }
  return files;
}

/** A tar part on the host. */
export interface HostPart {
  readonly path: string;
  readonly size: number;
}

/** Posts each part to `/hydrate` of a fresh sandbox with one `curl` each. */
export async function rawHydrates(
  client: BridgeClient,
  bridge: BridgeEndpoint,
  parts: readonly HostPart[],
): Promise<RawTransfers> {
  const sandboxId = await client.create();
  const transfers = [];
  try {
    for (const part of parts) {
      const transfer = await curl({
        url: `${bridge.url}/v1/sandbox/${sandboxId}/hydrate`,
        apiKey: bridge.apiKey,
        method: "POST",
        bodyFile: part.path,
        contentType: "application/x-tar",
      });
      transfers.push({ name: part.path, transfer, expected: part.size });
    }
  } finally {
    await client.destroy(sandboxId).catch(() => undefined);
  }
  return collect(transfers);
}

/** Adds up the figures of runs taken before and after the driver's run. */
export function combineTransfers<T extends RawTransfers>(first: T, second: T): T {
  return {
    ...first,
    requests: first.requests + second.requests,
    bytes: first.bytes + second.bytes,
    seconds: first.seconds + second.seconds,
    failures: [...first.failures, ...second.failures],
  };
}

/** Outcome of one whole-workspace `/persist`. */
export interface PersistAttempt {
  readonly survived: boolean;
  readonly bytes: number;
  readonly seconds: number;
  readonly detail: string;
}

/** One `/persist` of the whole workspace with a time limit; it survives when it returns the whole archive. */
export async function rawPersist(
  bridge: BridgeEndpoint,
  sandboxId: string,
  input: { readonly expectedBytes: number; readonly maxSeconds: number },
): Promise<PersistAttempt> {
  const transfer = await curl({
    url: `${bridge.url}/v1/sandbox/${sandboxId}/persist`,
    apiKey: bridge.apiKey,
    method: "POST",
    maxSeconds: input.maxSeconds,
  });
  // The bridge's own tar may order or pad members differently; a whole archive is at least the workspace's tar size minus slack.
  const survived =
    transfer.exitCode === 0 &&
    transfer.status === 200 &&
    transfer.downloadedBytes >= input.expectedBytes * 0.95;
  const detail =
    transfer.exitCode === 28
      ? `timed out after ${input.maxSeconds} s with ${transfer.downloadedBytes} bytes`
      : `HTTP ${transfer.status}, curl exit ${transfer.exitCode}, ${transfer.downloadedBytes} bytes ${transfer.stderr}`.trim();
  return { survived, bytes: transfer.downloadedBytes, seconds: transfer.seconds, detail };
}
