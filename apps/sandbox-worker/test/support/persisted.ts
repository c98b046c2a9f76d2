import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { testEnv } from "./api.js";
import type { TestEnvironment } from "./environment-types.js";

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });

async function d1Text(): Promise<string[]> {
  const tables = await testEnv.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  const dumps: string[] = [];
  for (const { name } of tables.results)
    dumps.push(JSON.stringify((await testEnv.DB.prepare(`SELECT * FROM "${name}"`).all()).results));
  return dumps;
}

async function r2Text(bucket: R2Bucket): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const object of page.objects) {
      const body = await bucket.get(object.key);
      texts.push(
        object.key,
        JSON.stringify(body?.customMetadata ?? {}),
        decoder.decode(await body?.arrayBuffer()),
      );
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return texts;
}

type StorageReader = (
  stub: DurableObjectStub,
  read: (instance: unknown, state: DurableObjectState) => Promise<unknown>,
) => Promise<unknown>;
// The Worker's Durable Object classes differ in type; storage is read the same way for each.
const readStorage = runInDurableObject as unknown as StorageReader;

async function durableObjectText(namespace: DurableObjectNamespace): Promise<string[]> {
  const texts: string[] = [];
  for (const id of await listDurableObjectIds(namespace)) {
    const entries = await readStorage(namespace.get(id), async (_instance, state) => [
      ...(await state.storage.list()).entries(),
    ]);
    texts.push(JSON.stringify(entries));
  }
  return texts;
}

/**
 * Every byte the Worker persisted in this test file's storage, as text: each D1 table, each R2 object
 * (key, metadata and body) and each Durable Object's storage (Sandbox, WorkRunner, EnvironmentRunner).
 */
export async function persistedText(_environment: TestEnvironment): Promise<string> {
  const parts = [
    ...(await d1Text()),
    ...(await r2Text(testEnv.OUTPUTS_BUCKET)),
    ...(await r2Text(testEnv.BACKUP_BUCKET)),
    ...(await durableObjectText(testEnv.Sandbox as unknown as DurableObjectNamespace)),
    ...(await durableObjectText(testEnv.WORK_RUNNER as unknown as DurableObjectNamespace)),
    ...(await durableObjectText(testEnv.ENVIRONMENT_RUNNER as unknown as DurableObjectNamespace)),
  ];
  return parts.join("\n");
}
