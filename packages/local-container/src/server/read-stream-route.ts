import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { classifyContent } from "./file-info.js";
import { resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import { pathRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { openSse } from "./wire.js";

/** Raw bytes per chunk frame; a multiple of 3 so every base64 chunk decodes on its own. */
const CHUNK_BYTES = 3 * 64 * 1024;
/** Bytes sampled to decide between UTF-8 and base64. */
const SAMPLE_BYTES = 64 * 1024;

/**
 * `POST /api/read/stream`: `metadata`, then `chunk` frames, then `complete`. A missing file is a 200 with
 * one `error` frame, as on the published server.
 */
export async function handleReadStream(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const sse = openSse(context.response);
  const handle = await open(target.host, "r").catch(() => undefined);
  if (handle === undefined) {
    await sse.send({ type: "error", error: `File not found: ${target.path}` });
    sse.end();
    return;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await sse.send({ type: "error", error: `Not a regular file: ${target.path}` });
      return;
    }
    const sample = Buffer.alloc(Math.min(SAMPLE_BYTES, info.size));
    await handle.read(sample, 0, sample.length, 0);
    const kind = classifyContent(target.path, sample);
    await sse.send({ type: "metadata", mimeType: kind.mimeType, size: info.size, isBinary: kind.isBinary, encoding: kind.isBinary ? "base64" : "utf-8" });
    const stream = handle.createReadStream({ start: 0, highWaterMark: CHUNK_BYTES, autoClose: false });
    context.response.once("close", () => stream.destroy());
    const decoder = new StringDecoder("utf8");
    let carry: Buffer = Buffer.alloc(0);
    let bytesRead = 0;
    for await (const piece of stream) {
      if (sse.closed) return;
      const bytes = piece as Buffer;
      bytesRead += bytes.length;
      if (!kind.isBinary) {
        const text = decoder.write(bytes);
        if (text.length > 0) await sse.send({ type: "chunk", data: text });
        continue;
      }
      const joined = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
      const whole = joined.length - (joined.length % 3);
      carry = joined.subarray(whole);
      if (whole > 0) await sse.send({ type: "chunk", data: joined.subarray(0, whole).toString("base64") });
    }
    const rest = kind.isBinary ? carry.toString("base64") : decoder.end();
    if (rest.length > 0) await sse.send({ type: "chunk", data: rest });
    await sse.send({ type: "complete", bytesRead });
  } finally {
    await handle.close();
    sse.end();
  }
}
