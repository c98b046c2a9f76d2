import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type {
  BlobBody,
  BlobListOptions,
  BlobListResult,
  BlobObject,
  BlobObjectInfo,
  BlobPutOptions,
  BlobStore,
} from "../../src/index.js";
import { checkBodyStream } from "../../src/blob-body.js";
import { createBlobObject } from "../../src/blob-object.js";
import {
  CALL_HEADER,
  RESULT_HEADER,
  type WorkerCall,
  decodeHeaderJson,
  encodeHeaderJson,
  infoFromJson,
  listJsonSchema,
} from "./worker-protocol.js";

/** Sends one request to the Worker (Miniflare's `dispatchFetch`). */
export type WorkerDispatch = (
  url: string,
  init: RequestInit & { duplex?: "half" },
) => Promise<Response>;

/**
 * A {@link BlobStore} in this process that forwards every call to the R2 binding adapter running in
 * workerd. It validates nothing itself, so the errors the suite sees come from the adapter, rebuilt
 * from their wire form. The one exception is the chunk type of a stream body: HTTP can carry only
 * bytes, so the shared body check runs here before the stream is sent.
 */
export function createWorkerBlobStoreClient(dispatch: WorkerDispatch): BlobStore {
  async function send(
    method: string,
    call: WorkerCall,
    body?: string | Uint8Array | ReadableStream<Uint8Array>,
  ): Promise<Response> {
    const response = await dispatch(`http://blob-store.test/${method}`, {
      method: "POST",
      headers: { [CALL_HEADER]: encodeHeaderJson(call) },
      ...(body === undefined ? {} : { body, duplex: "half" }),
    });
    if (response.ok) return response;
    const json = (await response.json()) as { error?: unknown };
    throw ManagedRuntimeError.fromJSON(json.error);
  }

  const infoOrNull = async (response: Response): Promise<BlobObjectInfo | null> => {
    const { info } = (await response.json()) as { info: unknown };
    return info === null ? null : infoFromJson(info);
  };

  return {
    async put(
      key: string,
      body: BlobBody,
      options?: BlobPutOptions,
    ): Promise<BlobObjectInfo | null> {
      if (typeof body === "string")
        return infoOrNull(await send("put", { key, options, bodyKind: "string" }, body));
      if (body instanceof Uint8Array)
        return infoOrNull(await send("put", { key, options, bodyKind: "bytes" }, body));
      if (typeof (body as { getReader?: unknown } | null)?.getReader !== "function") {
        return infoOrNull(await send("put", { key, options, bodyKind: "value", body }));
      }
      const checked = checkBodyStream(body as ReadableStream<Uint8Array>);
      try {
        return infoOrNull(await send("put", { key, options, bodyKind: "stream" }, checked.stream));
      } catch (error) {
        throw checked.failure() ?? error;
      }
    },

    async get(key: string): Promise<BlobObject | null> {
      const response = await send("get", { key });
      const info = decodeHeaderJson(response.headers.get(RESULT_HEADER));
      if (info === null) return null;
      return createBlobObject(
        infoFromJson(info),
        () => response.body ?? new ReadableStream({ start: (controller) => controller.close() }),
      );
    },

    async head(key: string): Promise<BlobObjectInfo | null> {
      return infoOrNull(await send("head", { key }));
    },

    async delete(key: string): Promise<void> {
      await send("delete", { key });
    },

    async list(options?: BlobListOptions): Promise<BlobListResult> {
      const page = listJsonSchema.parse(await (await send("list", { options })).json());
      const objects = page.objects.map(infoFromJson);
      return page.cursor === undefined ? { objects } : { objects, cursor: page.cursor };
    },
  };
}
