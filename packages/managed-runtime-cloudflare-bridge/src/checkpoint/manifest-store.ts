import { createHash } from "node:crypto";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError, NotFoundError } from "@open-managed-agents/runtime-resource-contract";
import { type WorkspaceManifest, decodeManifest } from "./manifest.js";
import type { ManifestHandleMetadata } from "./manifest-handle.js";

/** Reads a manifest named by a validated handle; its size and hash must match before it is parsed. */
export async function loadManifest(store: BlobStore, metadata: ManifestHandleMetadata): Promise<WorkspaceManifest> {
  const object = await store.get(metadata.manifestKey);
  if (!object) throw new NotFoundError({ message: "checkpoint manifest is missing from the store", context: { manifestKey: metadata.manifestKey } });
  if (object.size !== metadata.size) {
    await object.stream().cancel().catch(() => undefined);
    throw new IntegrityError({ message: "checkpoint manifest size does not match its handle", context: { manifestKey: metadata.manifestKey } });
  }
  const bytes = new Uint8Array(await new Response(object.stream()).arrayBuffer());
  if (`sha256:${createHash("sha256").update(bytes).digest("hex")}` !== metadata.contentHash) {
    throw new IntegrityError({ message: "checkpoint manifest hash does not match its handle", context: { manifestKey: metadata.manifestKey } });
  }
  return decodeManifest(bytes);
}
