import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sendRestoreArchive } from "../src/checkpoint/restore-send.js";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";
import { hostileBridgeForFile, json } from "./hostile-bridge.js";

// A scripted bridge: execs exit 0 at once (the extraction and the verification once their folder's `end` marker
// is written), the archive's parts and hydrates are kept in the order they arrive.
const scripted = hostileBridgeForFile();

const KIB = 1024;
const ID = "aaaaaaaaaaaaaaaaaaaaaaaaaa";

function scriptBridge() {
  const received = { parts: [] as Buffer[], hydrates: [] as Buffer[] };
  const waiting = new Map<string, () => void>();
  const exited = (response: import("node:http").ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(`event: exit\ndata: {"exit_code":0}\n\n`);
  };
  scripted().respond((request, response, body) => {
    const url = request.url ?? "";
    if (url.endsWith("/exec")) {
      const argv = (JSON.parse(body.toString("utf8")) as { argv: string[] }).argv;
      const mode = argv[4];
      if (argv[3] === "restore.sh" && (mode === "extract" || mode === "verify"))
        waiting.set(argv[5] as string, () => exited(response));
      else if (argv[3] === "restore.sh" && mode === "restore")
        waiting.set(argv[8] as string, () => exited(response));
      else exited(response);
      return;
    }
    if (url.endsWith("/hydrate")) {
      received.hydrates.push(body);
      return json(response, 200, { ok: true });
    }
    if (request.method === "PUT" && url.includes("/file/workspace/.oma-restore-")) {
      const path = decodeURIComponent(url.slice(url.indexOf("/file/") + "/file".length));
      if (path.endsWith("/end")) waiting.get(path.slice(0, -"/end".length))?.();
      else if (!path.includes("-listing/") && !path.endsWith(".sha256")) received.parts.push(body);
      return json(response, 200, { ok: true });
    }
    json(response, 404, { error: "no route", code: "invalid_request" });
  });
  return received;
}

/** A client that notes, for every part PUT and hydrate, whether its body lies in `scratch`'s memory. */
function clientNoting(scratch: Uint8Array) {
  const inScratch: boolean[] = [];
  const client = createBridgeClient({
    baseUrl: scripted().url,
    apiKey: "k".repeat(32),
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const noting: BridgeClient = {
    ...client,
    writeFile: (id, path, body, signal) => {
      if (/\/part-\d+$/.test(path)) inScratch.push(body.buffer === scratch.buffer);
      return client.writeFile(id, path, body, signal);
    },
    hydrate: (id, tar, signal) => {
      inScratch.push(tar.buffer === scratch.buffer);
      return client.hydrate(id, tar, signal);
    },
  };
  return { client: noting, inScratch };
}

/** `bytes` as a few segments of uneven sizes, as an assembled archive's spools give them. */
function segmentsOf(bytes: Buffer) {
  return async function* () {
    for (let at = 0; at < bytes.byteLength; at += 100 * KIB + 7)
      yield bytes.subarray(at, Math.min(bytes.byteLength, at + 100 * KIB + 7));
  };
}

const sendOptions = {
  sandboxId: ID,
  maxRequestBytes: 1024 * KIB,
  partBytes: 256 * KIB,
  singleRequestBytes: 512 * KIB,
  codecs: [],
  compressible: false,
  verify: false,
} as const;

describe("restore send", () => {
  it("builds its parts in the scratch it is given, in two alternating halves, and every byte arrives in order", async () => {
    const received = scriptBridge();
    const archive = randomBytes(1536 * KIB + 5);
    const scratch = Buffer.allocUnsafeSlow(2 * 256 * KIB);
    const { client, inScratch } = clientNoting(scratch);
    await sendRestoreArchive(segmentsOf(archive), archive.byteLength, {
      ...sendOptions,
      client,
      scratch,
    });
    expect(received.parts).toHaveLength(7);
    expect(inScratch).toEqual(Array.from({ length: 7 }, () => true));
    expect(Buffer.concat(received.parts).equals(archive)).toBe(true);
  });

  it("allocates parts of its own when the scratch holds fewer than two", async () => {
    const received = scriptBridge();
    const archive = randomBytes(1024 * KIB);
    const scratch = Buffer.allocUnsafeSlow(2 * 256 * KIB - 1);
    const { client, inScratch } = clientNoting(scratch);
    await sendRestoreArchive(segmentsOf(archive), archive.byteLength, {
      ...sendOptions,
      client,
      scratch,
    });
    expect(inScratch).toEqual([false, false, false, false]);
    expect(Buffer.concat(received.parts).equals(archive)).toBe(true);
  });

  it("sends a small archive as one hydrate built in the scratch when that holds it, in a buffer of its own when not", async () => {
    const received = scriptBridge();
    const archive = randomBytes(300 * KIB);
    const roomy = Buffer.allocUnsafeSlow(400 * KIB);
    const fits = clientNoting(roomy);
    await sendRestoreArchive(segmentsOf(archive), archive.byteLength, {
      ...sendOptions,
      client: fits.client,
      scratch: roomy,
    });
    const tight = Buffer.allocUnsafeSlow(300 * KIB - 1);
    const short = clientNoting(tight);
    await sendRestoreArchive(segmentsOf(archive), archive.byteLength, {
      ...sendOptions,
      client: short.client,
      scratch: tight,
    });
    expect(fits.inScratch).toEqual([true]);
    expect(short.inScratch).toEqual([false]);
    expect(received.hydrates).toHaveLength(2);
    for (const hydrate of received.hydrates) expect(hydrate.equals(archive)).toBe(true);
  });
});
