import { StringDecoder } from "node:string_decoder";
import { classifyContent } from "./file-info.js";
import { MAX_CHUNK_BYTES } from "./file-helper-protocol.js";
import { FileOperationError } from "./file-helper.js";
import { openForRead } from "./file-ops.js";
import { resolveFilePath } from "./file-paths.js";
import { readJson } from "./request-body.js";
import { pathRequestSchema } from "./request-schemas.js";
import type { RouteContext } from "./route-context.js";
import { openSse } from "./control-api-responses.js";

/** Raw bytes per chunk frame; a multiple of 3 so every base64 chunk decodes on its own. */
const CHUNK_BYTES = 3 * 64 * 1024;
/** Bytes sampled to decide between UTF-8 and base64. */
const SAMPLE_BYTES = 64 * 1024;

/**
 * `POST /api/read/stream`: `metadata`, then `chunk` frames, then `complete`. A missing file is a 200 with
 * one `error` frame, as on the published server. The file is read in chunks through the container's file
 * helper, one chunk ahead of the client, so memory stays bounded whatever the file's size.
 */
export async function handleReadStream(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, pathRequestSchema, context.limits.maxBodyBytes);
  const target = resolveFilePath(context.container, body.path, body.sessionId);
  const sse = openSse(context.response);
  const opened = await openForRead(context.container.files, target.target).then(
    (file) => ({ file }),
    (error: unknown) => ({ error }),
  );
  if ("error" in opened) {
    // Only a missing file reads "not found"; a helper that failed says why.
    const { error } = opened;
    const missing =
      FileOperationError.isInstance(error) && (error.code === "ENOENT" || error.code === "ENOTDIR");
    await sse.send({
      type: "error",
      error: missing
        ? `File not found: ${target.path}`
        : `File streaming error: ${error instanceof Error ? error.message : String(error)}`,
    });
    sse.end();
    return;
  }
  const { file } = opened;
  try {
    if (file.stat.type !== "file") {
      await sse.send({ type: "error", error: `Not a regular file: ${target.path}` });
      return;
    }
    let piece = await file.read(MAX_CHUNK_BYTES);
    const kind = classifyContent(target.path, piece.subarray(0, SAMPLE_BYTES));
    await sse.send({
      type: "metadata",
      mimeType: kind.mimeType,
      size: file.stat.size,
      isBinary: kind.isBinary,
      encoding: kind.isBinary ? "base64" : "utf-8",
    });
    const decoder = new StringDecoder("utf8");
    let carry: Buffer = Buffer.alloc(0);
    let bytesRead = 0;
    while (piece.length > 0) {
      if (sse.closed) return;
      // The next chunk is read while this one goes to the client.
      const next = file.read(MAX_CHUNK_BYTES);
      next.catch(() => undefined);
      bytesRead += piece.length;
      // The helper reads large pieces; the client gets frames of the published chunk size.
      for (let offset = 0; offset < piece.length; offset += CHUNK_BYTES) {
        const bytes = piece.subarray(offset, offset + CHUNK_BYTES);
        if (kind.isBinary) {
          const joined = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
          const whole = joined.length - (joined.length % 3);
          carry = joined.subarray(whole);
          if (whole > 0)
            await sse.send({ type: "chunk", data: joined.subarray(0, whole).toString("base64") });
        } else {
          const text = decoder.write(bytes);
          if (text.length > 0) await sse.send({ type: "chunk", data: text });
        }
      }
      piece = await next;
    }
    const rest = kind.isBinary ? carry.toString("base64") : decoder.end();
    if (rest.length > 0) await sse.send({ type: "chunk", data: rest });
    await sse.send({ type: "complete", bytesRead });
  } finally {
    await file.close().catch(() => undefined);
    sse.end();
  }
}
