/** The test Postgres server helper the repository's packages share (vitest.postgres-cluster.ts at its root). */
export {
  type PostgresCluster,
  type PostgresClusterOptions,
  startPostgresCluster,
} from "../../../../vitest.postgres-cluster.js";
