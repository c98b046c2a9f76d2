import type { BetterSqliteDatabaseLike } from "../../src/sql/better-sqlite-client.js";

/** A fence-store statement that changed state, in the exact order SQLite executed it. */
export type FenceStoreEvent =
  | {
      readonly kind: "acquire";
      readonly session: string;
      readonly generation: number;
      readonly owner: string;
    }
  | {
      readonly kind: "publish";
      readonly session: string;
      readonly generation: number;
      readonly owner: string;
    };

/**
 * Wraps a better-sqlite3 database so every successful fence acquire and publish is recorded the moment
 * its statement runs. better-sqlite3 is synchronous, so this order is the database's own order, whatever
 * order the awaiting callers resume in. Parameter positions follow the SQL fence port's statements.
 */
export function observeFenceStatements(
  db: BetterSqliteDatabaseLike,
  events: FenceStoreEvent[],
): BetterSqliteDatabaseLike {
  return {
    exec: (sql) => db.exec(sql),
    get inTransaction() {
      return db.inTransaction;
    },
    prepare(sql) {
      const statement = db.prepare(sql);
      const acquire = sql.startsWith("INSERT INTO runtime_resource_fences");
      const publish = sql.includes("SET published_generation = generation");
      if (!acquire && !publish) return statement;
      return {
        run: (...params) => statement.run(...params),
        all(...params) {
          const rows = statement.all(...params) as { generation?: number }[];
          const row = rows[0];
          if (row && acquire)
            events.push({
              kind: "acquire",
              session: String(params[2]),
              generation: Number(row.generation),
              owner: String(params[4]),
            });
          if (row && publish)
            events.push({
              kind: "publish",
              session: String(params[4]),
              generation: Number(params[5]),
              owner: String(params[7]),
            });
          return rows;
        },
      };
    },
  };
}

/** Violations of fencing in the store's own history: stale or repeated publishes. */
export function fencingViolations(events: readonly FenceStoreEvent[]): string[] {
  const latest = new Map<string, number>();
  const published = new Map<string, string>();
  const problems: string[] = [];
  for (const event of events) {
    const key = `${event.session}#${event.generation}`;
    if (event.kind === "acquire") {
      latest.set(event.session, Math.max(latest.get(event.session) ?? 0, event.generation));
      continue;
    }
    if (latest.get(event.session) !== event.generation)
      problems.push(
        `${event.owner} published ${key} after generation ${latest.get(event.session)} was acquired`,
      );
    const earlier = published.get(key);
    if (earlier) problems.push(`${key} published twice (${earlier}, ${event.owner})`);
    published.set(key, event.owner);
  }
  return problems;
}
