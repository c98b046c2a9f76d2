// A Worker that hosts the R2 binding adapter inside workerd and serves the test protocol of
// worker-protocol.ts. It is bundled with esbuild for a plain Worker (no Node compatibility).
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { BlobBody } from "../../src/index.js";
import { type R2BucketLike, createR2BindingBlobStore } from "../../src/r2/index.js";
import {
  CALL_HEADER,
  RESULT_HEADER,
  type WorkerCall,
  decodeHeaderJson,
  encodeHeaderJson,
  infoToJson,
} from "./worker-protocol.js";

interface Env {
  readonly BUCKET: R2BucketLike;
}

/** Part size the adapter uses here: the smallest R2 allows, so multipart runs with small bodies. */
const PART_SIZE_BYTES = 5 * 1024 * 1024;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const store = createR2BindingBlobStore(env.BUCKET, { partSizeBytes: PART_SIZE_BYTES });
    const call = (decodeHeaderJson(request.headers.get(CALL_HEADER)) ?? {}) as WorkerCall;
    const key = call.key as string;
    const options = call.options as undefined;
    try {
      switch (new URL(request.url).pathname) {
        case "/put": {
          const info = await store.put(key, await readBody(request, call), options);
          return Response.json({ info: info && infoToJson(info) });
        }
        case "/get": {
          const object = await store.get(key);
          if (!object)
            return new Response(null, { headers: { [RESULT_HEADER]: encodeHeaderJson(null) } });
          return new Response(object.stream(), {
            headers: { [RESULT_HEADER]: encodeHeaderJson(infoToJson(object)) },
          });
        }
        case "/head": {
          const info = await store.head(key);
          return Response.json({ info: info && infoToJson(info) });
        }
        case "/delete":
          await store.delete(key);
          return Response.json({});
        case "/list": {
          const page = await store.list(options);
          return Response.json({
            objects: page.objects.map(infoToJson),
            ...(page.cursor ? { cursor: page.cursor } : {}),
          });
        }
        case "/reset":
          for (
            let page = await env.BUCKET.list();
            page.objects.length > 0;
            page = await env.BUCKET.list()
          ) {
            await env.BUCKET.delete(page.objects.map((object) => object.key));
          }
          return Response.json({});
        default:
          return new Response("unknown route", { status: 404 });
      }
    } catch (error) {
      const typed = ManagedRuntimeError.isInstance(error) ? error : null;
      return Response.json(
        { error: typed ? typed.toJSON() : { code: "internal", message: String(error) } },
        { status: typed?.httpStatus ?? 500 },
      );
    }
  },
};

async function readBody(request: Request, call: WorkerCall): Promise<BlobBody> {
  if (call.bodyKind === "value") return call.body as BlobBody;
  if (call.bodyKind === "string") return request.text();
  if (call.bodyKind === "bytes") return new Uint8Array(await request.arrayBuffer());
  return (
    request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })
  );
}
