import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";

/** The `pg` module (node-postgres). */
export type PgModule = typeof import("pg");

let loading: Promise<PgModule> | undefined;

/**
 * `pg`, imported once, on the first call of a Postgres client rather than with this package: a host on
 * SQLite or D1 neither installs nor loads it. Without the package installed, every call fails with
 * `invalid_config` naming it.
 */
export function loadPg(): Promise<PgModule> {
  loading ??= import("pg")
    // pg's ESM entry has named exports; older versions only a CommonJS default.
    .then(
      (module: unknown) =>
        ((module as { Pool?: unknown }).Pool
          ? module
          : (module as { default: unknown }).default) as PgModule,
    )
    .catch((cause: unknown) => {
      const message = "the Postgres SQL client needs the pg package";
      throw new InvalidConfigError({ message, cause, context: { package: "pg" } });
    });
  return loading;
}
