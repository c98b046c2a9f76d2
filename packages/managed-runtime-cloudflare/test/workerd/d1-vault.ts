/**
 * A credential vault over real D1, as an application would keep one: bindings opened by the driver,
 * per-host credentials and an allowlist of hosts reachable without credentials. Test fixture only.
 */
import type { CloudflareCredentialVault } from "../../src/worker.js";

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS egress_bindings (binding_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0)",
  "CREATE TABLE IF NOT EXISTS egress_credentials (host TEXT PRIMARY KEY, header TEXT NOT NULL, value TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS egress_open_hosts (host TEXT PRIMARY KEY)",
];

export async function ensureVaultSchema(db: D1Database): Promise<void> {
  for (const statement of SCHEMA) await db.prepare(statement).run();
}

export function createD1Vault(
  db: D1Database,
): CloudflareCredentialVault & { readonly resolveCalls: () => number } {
  let resolveCalls = 0;
  return {
    resolveCalls: () => resolveCalls,
    async open({ bindingId, scope }) {
      await ensureVaultSchema(db);
      await db
        .prepare("INSERT OR IGNORE INTO egress_bindings (binding_id, session_id) VALUES (?, ?)")
        .bind(bindingId, scope.sessionId)
        .run();
    },
    async resolve({ bindingId, url }) {
      resolveCalls += 1;
      await ensureVaultSchema(db);
      const binding = await db
        .prepare("SELECT revoked FROM egress_bindings WHERE binding_id = ?")
        .bind(bindingId)
        .first<{ revoked: number }>();
      if (binding?.revoked !== 0) return { type: "deny", reason: "binding revoked or unknown" };
      const credential = await db
        .prepare("SELECT header, value FROM egress_credentials WHERE host = ?")
        .bind(url.host)
        .first<{ header: string; value: string }>();
      if (credential)
        return { type: "forward", headers: { [credential.header]: credential.value } };
      const open = await db
        .prepare("SELECT host FROM egress_open_hosts WHERE host = ?")
        .bind(url.host)
        .first();
      return open ? { type: "forward", headers: {} } : { type: "deny", reason: "host not allowed" };
    },
    async revoke({ bindingId }) {
      await ensureVaultSchema(db);
      await db
        .prepare("UPDATE egress_bindings SET revoked = 1 WHERE binding_id = ?")
        .bind(bindingId)
        .run();
    },
  };
}
