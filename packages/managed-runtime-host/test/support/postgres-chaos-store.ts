import type { PostgresSqlClient } from "../../src/sql/postgres-client.js";
import type { SqlClient } from "../../src/sql/sql-client.js";
import type { ChaosStore } from "./chaos-world.js";
import type { FenceStoreEvent } from "./sqlite-observer.js";

/**
 * The store's own history of fence acquires and publishes, kept by the server: a trigger on the fence table
 * appends one row per acquire (the generation moved) and per publish (the published generation moved), numbered
 * by a sequence inside the statement's own transaction. Each fence statement is one statement on one row, and a
 * second statement on that row waits for the first's row lock until it commits, so per session the numbers
 * follow the order Postgres applied the statements, whatever order the awaiting callers resume in.
 */
const EVENT_LOG = [
  `CREATE TABLE fence_events (
    seq BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, session_id TEXT NOT NULL, generation BIGINT NOT NULL, owner_id TEXT
  )`,
  `CREATE FUNCTION log_fence_event() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' OR NEW.generation <> OLD.generation THEN
      INSERT INTO fence_events (kind, session_id, generation, owner_id)
        VALUES ('acquire', NEW.session_id, NEW.generation, NEW.owner_id);
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.published_generation <> OLD.published_generation THEN
      INSERT INTO fence_events (kind, session_id, generation, owner_id)
        VALUES ('publish', NEW.session_id, NEW.published_generation, NEW.owner_id);
    END IF;
    RETURN NEW;
  END $$`,
  `CREATE TRIGGER fence_events AFTER INSERT OR UPDATE ON runtime_resource_fences
    FOR EACH ROW EXECUTE FUNCTION log_fence_event()`,
];

/** A chaos store on a migrated Postgres client of a schema of its own, with the server-side event log. */
export async function postgresChaosStore(client: PostgresSqlClient): Promise<ChaosStore> {
  for (const sql of EVENT_LOG) await client.run(sql, []);
  let inFlight = 0;
  const idle: (() => void)[] = [];
  const track = async <T>(call: () => Promise<T>): Promise<T> => {
    inFlight += 1;
    try {
      return await call();
    } finally {
      inFlight -= 1;
      if (inFlight === 0) for (const wake of idle.splice(0)) wake();
    }
  };
  const counted: SqlClient = {
    dialect: "postgres",
    all: (sql, params) => track(() => client.all(sql, params)),
    run: (sql, params) => track(() => client.run(sql, params)),
    batch: (statements) => track(() => client.batch(statements)),
  };
  return {
    client: counted,
    async events() {
      const rows = await client.all<{
        kind: "acquire" | "publish";
        session_id: string;
        generation: number;
        owner_id: string | null;
      }>("SELECT kind, session_id, generation, owner_id FROM fence_events ORDER BY seq", []);
      return rows.map(
        (row): FenceStoreEvent => ({
          kind: row.kind,
          session: row.session_id,
          generation: row.generation,
          owner: row.owner_id ?? "",
        }),
      );
    },
    close: () => client.close(),
    async settle() {
      // A call answered may let a run make the next one at once: settled when none is in flight after a turn.
      for (;;) {
        if (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (inFlight === 0) return;
      }
    },
  };
}
