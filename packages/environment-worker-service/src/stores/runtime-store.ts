import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type SqlClient,
  applyMigrations,
  createBetterSqliteClient,
  createPostgresSqlClient,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import Database from "better-sqlite3";

/** The durable ports of one store URL, and its SQL for the operator CLI and the metrics. */
export interface RuntimeStore {
  /** Says which store this is, without its credentials (`postgres://user@host:port/db`). */
  readonly description: string;
  readonly client: SqlClient;
  readonly fences: ReturnType<typeof createSqlFencePort>;
  readonly orphans: ReturnType<typeof createSqlOrphanPort>;
  readonly journal: ReturnType<typeof createSqlSandboxJournal>;
  /** Proves the store takes a write (a write that changes nothing, inside a transaction). */
  probeWritable(): Promise<void>;
  close(): Promise<void>;
}

/** Opens a store of one URL scheme. A build adds a scheme by adding an opener here. */
type StoreOpener = (url: URL) => Promise<RuntimeStore>;

const OPENERS: Readonly<Record<string, StoreOpener>> = {
  "sqlite:": openSqliteStore,
  "postgres:": openPostgresStore,
  "postgresql:": openPostgresStore,
};

/**
 * Opens the fence, orphan and journal store a URL names and applies the shipped migrations (in the store's
 * dialect). `sqlite:///absolute/path.sqlite` (or `sqlite:relative/path.sqlite`) for workers that share one
 * machine's disk; `postgres://user:password@host:port/database` (or `postgresql://`) for workers on many
 * machines. No message of this function carries the URL's password.
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
      message: `invalid config store: unsupported scheme ${parsed.protocol}; use sqlite: or postgres:`,
      context: { key: "store", scheme: parsed.protocol },
    });
  }
  return opener(parsed);
}

/**
 * The secrets a store URL carries (its password, as written and decoded), for the logger to redact;
 * none for a URL that does not parse or has no password.
 */
export function storeUrlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  if (parsed.password === "") return [];
  const decoded = safeDecode(parsed.password);
  return decoded === parsed.password ? [decoded] : [parsed.password, decoded];
}

/** The URL as an operator may see it: the password left out, the rest (user, host, database) kept. */
export function redactStoreUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(not a URL)";
  }
  if (parsed.password !== "") parsed.password = "";
  return parsed.toString();
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
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
    close: async () => {
      database.close();
    },
  };
}

// Postgres: one pool per worker, sized for its items' fence heartbeats and the reconciler; statements that
// hang past the timeout fail `timeout` rather than holding a lease's renewal.
const POSTGRES_POOL = { maxConnections: 8, statementTimeoutMs: 10_000, connectTimeoutMs: 10_000 };

async function openPostgresStore(url: URL): Promise<RuntimeStore> {
  if (url.hostname === "" && !url.searchParams.has("host"))
    throw new InvalidConfigError({
      message:
        "invalid config store: a postgres: URL names its server (postgres://user@host:5432/database)",
      context: { key: "store" },
    });
  const description = `Postgres ${redactStoreUrl(url.href)}`;
  const client = createPostgresSqlClient({
    connectionString: url.href,
    applicationName: "oma-environment-worker",
    ...POSTGRES_POOL,
  });
  try {
    await applyMigrations(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  return {
    description,
    client,
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    journal: createSqlSandboxJournal({ client }),
    async probeWritable() {
      // A write the server must allow (a read-only database, a standby or a missing privilege refuses it)
      // and that changes no row, committed as one transaction.
      await client.batch([
        {
          sql: "UPDATE runtime_resource_migrations SET applied_at = applied_at WHERE name = ?",
          params: [""],
        },
      ]);
    },
    close: () => client.close(),
  };
}
