import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { validateBlobKey, validateBlobPrefix } from "./blob-key.js";
import type { BlobListOptions, BlobObject, BlobObjectInfo, BlobStore } from "./ports.js";

/** Options of {@link createPrefixedBlobStore}. */
export interface PrefixedBlobStoreOptions {
  /** The store that holds the objects. */
  readonly store: BlobStore;
  /** Key prefix, a valid key without a trailing slash (`team-a/ci`); every key is stored as `<prefix>/<key>`. */
  readonly prefix: string;
}

const optionsSchema = z.strictObject({
  store: z.custom<BlobStore>(
    (value) =>
      typeof (value as { put?: unknown } | null)?.put === "function" &&
      typeof (value as { list?: unknown }).list === "function",
    "must be a BlobStore",
  ),
  prefix: z.string().refine((prefix) => {
    try {
      validateBlobKey(prefix);
      return true;
    } catch {
      return false;
    }
  }, "must be a blob key: no leading or trailing '/', no empty, '.' or '..' segment"),
});

/**
 * A view of `store` under a key prefix, so several users share one bucket without seeing each other's
 * keys. Keys and list prefixes are the caller's; the prefix never shows in what the view returns.
 *
 * @throws InvalidConfigError naming the bad option.
 */
export function createPrefixedBlobStore(options: PrefixedBlobStoreOptions): BlobStore {
  const { store, prefix } = parseRecord(optionsSchema, options, {
    record: "prefixed blob store options",
    code: "invalid_config",
  });
  const base = `${prefix}/`;
  const inner = (key: string): string => `${base}${validateBlobKey(key)}`;
  const strip = (info: BlobObjectInfo): BlobObjectInfo => ({
    ...info,
    key: info.key.slice(base.length),
  });
  const stripObject = (object: BlobObject): BlobObject => ({
    ...strip(object),
    bytes: () => object.bytes(),
    text: () => object.text(),
    stream: () => object.stream(),
  });
  return {
    put: async (key, body, putOptions) => {
      const info = await store.put(inner(key), body, putOptions);
      return info === null ? null : strip(info);
    },
    get: async (key) => {
      const object = await store.get(inner(key));
      return object === null ? null : stripObject(object);
    },
    head: async (key) => {
      const info = await store.head(inner(key));
      return info === null ? null : strip(info);
    },
    delete: async (key) => store.delete(inner(key)),
    list: async (listOptions: BlobListOptions = {}) => {
      const result = await store.list({
        ...listOptions,
        prefix: `${base}${validateBlobPrefix(listOptions.prefix ?? "")}`,
      });
      return { ...result, objects: result.objects.map(strip) };
    },
  };
}
