import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type SqlClient,
  applyMigrations,
  createBetterSqliteClient,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import {
  InvalidConfigError,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import Database from "better-sqlite3";

/** The durable ports of one store URL, and its SQL for the operator CLI and the metrics. */
export interface RuntimeStore {
  readonly description: string;
  readonly client: SqlClient;
  readonly fences: ReturnType<typeof createSqlFencePort>;
  readonly orphans: ReturnType<typeof createSqlOrphanPort>;
  readonly journal: ReturnType<typeof createSqlSandboxJournal>;
  /** Proves the store takes a write (a write that changes nothing, inside a transaction). */
  probeWritable(): Promise<void>;
  close(): void;
}

/** Opens a store of one URL scheme. A build adds a scheme by adding an opener here. */
type StoreOpener = (url: URL) => Promise<RuntimeStore>;

const OPENERS: Readonly<Record<string, StoreOpener>> = {
  "sqlite:": openSqliteStore,
  "postgres:": unavailable("postgres:"),
  "postgresql:": unavailable("postgresql:"),
};

/**
 * Opens the fence, orphan and journal store a URL names and applies the shipped migrations.
 * `sqlite:///absolute/path.sqlite` (or `sqlite:relative/path.sqlite`). `postgres:` is refused with
 * `unsupported_operation`: this build has no Postgres store.
 */
export async function openRuntimeStore(url: string): Promise<RuntimeStore> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidConfigError({
      message: "invalid config store: not a URL (sqlite:///var/lib/oma/runtime.sqlite)",
      context: { key: "store" },
    });
  }
  const opener = OPENERS[parsed.protocol];
  if (!opener) {
    throw new InvalidConfigError({
      message: `invalid config store: unsupported scheme ${parsed.protocol}; use sqlite:`,
      context: { key: "store", scheme: parsed.protocol },
    });
  }
  return opener(parsed);
}

function unavailable(scheme: string): StoreOpener {
  return async () => {
    throw new UnsupportedOperationError({
      message: `store ${scheme} is not available in this build of oma-environment-worker; use sqlite:`,
      context: { key: "store", scheme },
    });
  };
}

/** The SQLite file of a `sqlite:` URL. */
export function sqlitePathOf(url: URL): string {
  if (url.search !== "" || url.hash !== "")
    throw new InvalidConfigError({
      message: "invalid config store: a sqlite: URL takes no query or fragment",
      context: { key: "store" },
    });
  if (url.host !== "")
    throw new InvalidConfigError({
      message: "invalid config store: a sqlite: URL is sqlite:///absolute/path",
      context: { key: "store" },
    });
  const path = url.pathname.startsWith("/")
    ? fileURLToPath(`file://${url.pathname}`)
    : decodeURIComponent(url.pathname);
  if (path === "" || path === "/")
    throw new InvalidConfigError({
      message: "invalid config store: the sqlite: URL names no file",
      context: { key: "store" },
    });
  return path;
}

async function openSqliteStore(url: URL): Promise<RuntimeStore> {
  const path = sqlitePathOf(url);
  mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  database.pragma("journal_mode = WAL");
  database.pragma("busy_timeout = 5000");
  const client = createBetterSqliteClient(database);
  await applyMigrations(client);
  return {
    description: `SQLite ${path}`,
    client,
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    journal: createSqlSandboxJournal({ client }),
    async probeWritable() {
      // The file is opened for writing afresh (SQLite's own connections keep the descriptors they opened,
      // so a file made read-only since start would go unseen), then the store takes its write lock.
      for (const file of [path, `${path}-wal`]) {
        if (file !== path && !existsSync(file)) continue;
        closeSync(openSync(file, "r+"));
      }
      database.exec("BEGIN IMMEDIATE");
      database.exec("ROLLBACK");
    },
    close: () => database.close(),
  };
}
