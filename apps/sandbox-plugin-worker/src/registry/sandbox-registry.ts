import { DurableObject } from "cloudflare:workers";

/** One sandbox of an installation, as the registry keeps it. */
export interface RegistryEntry {
  readonly id: string;
  /** Durable Object binding of the sandbox's class; routes calls to the right namespace. */
  readonly binding: string;
  readonly createdAt: number;
}

/** A page of registry entries in id order; `nextCursor` is the last id when more may follow. */
export interface RegistryPage {
  readonly entries: readonly RegistryEntry[];
  readonly nextCursor: string | null;
}

interface EntryRow extends Record<string, SqlStorageValue> {
  id: string;
  binding: string;
  created_at: number;
}

/**
 * The sandboxes of one installation (one object per installation, addressed by name). A Durable Object
 * namespace cannot be enumerated, so listing reads this registry.
 */
export class SandboxRegistry extends DurableObject<Record<string, unknown>> {
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS sandboxes (id TEXT PRIMARY KEY, binding TEXT NOT NULL, created_at INTEGER NOT NULL)",
    );
  }

  /** Records a sandbox; a second add of the same id keeps the first entry. */
  add(entry: RegistryEntry): void {
    this.ctx.storage.sql.exec(
      "INSERT OR IGNORE INTO sandboxes (id, binding, created_at) VALUES (?, ?, ?)",
      entry.id,
      entry.binding,
      entry.createdAt,
    );
  }

  /** Forgets a sandbox; forgetting an unknown id does nothing. */
  remove(id: string): void {
    this.ctx.storage.sql.exec("DELETE FROM sandboxes WHERE id = ?", id);
  }

  /** The entry of `id`, or null. */
  lookup(id: string): RegistryEntry | null {
    const row = this.ctx.storage.sql
      .exec<EntryRow>("SELECT id, binding, created_at FROM sandboxes WHERE id = ?", id)
      .toArray()[0];
    return row === undefined
      ? null
      : { id: row.id, binding: row.binding, createdAt: row.created_at };
  }

  /** Up to `limit` entries with ids after `cursor`. */
  page(cursor: string | null, limit: number): RegistryPage {
    const rows = this.ctx.storage.sql
      .exec<EntryRow>(
        "SELECT id, binding, created_at FROM sandboxes WHERE id > ? ORDER BY id LIMIT ?",
        cursor ?? "",
        limit + 1,
      )
      .toArray();
    const entries = rows
      .slice(0, limit)
      .map((row) => ({ id: row.id, binding: row.binding, createdAt: row.created_at }));
    return { entries, nextCursor: rows.length > limit ? (entries.at(-1)?.id ?? null) : null };
  }
}
