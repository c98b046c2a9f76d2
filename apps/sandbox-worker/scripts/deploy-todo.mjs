// What a dry run cannot prove: the settings in wrangler.jsonc that are still the repository's placeholders,
// and what only the Cloudflare account holds (secrets, buckets, the remote migrations, a Docker build).
// `pnpm deploy:check` prints this list after the dry run; `deployTodo` is pure so tests call it directly.

/** `database_id` of the repository's wrangler.jsonc: `wrangler d1 create` prints the real one. */
export const PLACEHOLDER_DATABASE_ID = "00000000-0000-4000-8000-000000000000";

/** Secrets the Worker reads; a dry run cannot see them (`wrangler secret list` needs the account). */
export const SECRETS = [
  ["API_TOKEN", "bearer token of every route, at least 16 characters"],
  ["ENVIRONMENT_KEY", "the self-hosted environment's key; without it the Worker claims no work"],
  ["WEBHOOK_SECRET", "the environment webhook's whsec_ signing secret"],
  ["R2_ACCESS_KEY_ID", "presigned workspace backups"],
  ["R2_SECRET_ACCESS_KEY", "presigned workspace backups"],
];

/**
 * What stands between this config (as wrangler read it, `unstable_readConfig`) and a real deploy, each
 * `{what, how}`: `todo` is what the config or this machine shows is not done yet; `confirm` is what only
 * the account holds, which a dry run cannot see. `dockerOnPath`: whether `wrangler deploy` could build
 * ./Dockerfile here.
 */
export function deployTodo(config, { dockerOnPath }) {
  const todo = [];
  const confirm = [];
  const vars = config.vars ?? {};
  for (const database of config.d1_databases ?? []) {
    if (database.database_id === PLACEHOLDER_DATABASE_ID || !database.database_id) {
      todo.push({
        what: `d1_databases ${database.binding}: database_id is the placeholder ${PLACEHOLDER_DATABASE_ID}`,
        how: `wrangler d1 create ${database.database_name}, paste the printed id into wrangler.jsonc, then pnpm migrate:remote`,
      });
    }
  }
  if (vars.SANDBOX_LOCAL_BACKUPS !== "true" && !vars.CLOUDFLARE_ACCOUNT_ID) {
    todo.push({
      what: "vars.CLOUDFLARE_ACCOUNT_ID is empty: presigned workspace backups need it",
      how: "set it in wrangler.jsonc (wrangler whoami prints it)",
    });
  }
  if (typeof vars.ENVIRONMENT_ID !== "string" || !vars.ENVIRONMENT_ID.startsWith("env_")) {
    todo.push({
      what: `vars.ENVIRONMENT_ID is ${JSON.stringify(vars.ENVIRONMENT_ID ?? null)}, not a Managed Agents environment id (env_…)`,
      how: "create the self-hosted environment in the console and set its id",
    });
  }
  for (const [name, purpose] of SECRETS) {
    confirm.push({ what: `secret ${name} (${purpose})`, how: `wrangler secret put ${name}` });
  }
  for (const bucket of config.r2_buckets ?? []) {
    confirm.push({
      what: `R2 bucket ${bucket.bucket_name} (${bucket.binding}) exists`,
      how: `wrangler r2 bucket create ${bucket.bucket_name}`,
    });
  }
  if (!dockerOnPath) {
    todo.push({
      what: "no docker on PATH: wrangler deploy builds ./Dockerfile with Docker",
      how: "deploy from a machine with Docker",
    });
  }
  confirm.push({
    what: "the D1 migrations are applied to the remote database",
    how: "pnpm migrate:remote",
  });
  return { todo, confirm };
}

/** Both lists as lines for the terminal. */
export function formatDeployTodo({ todo, confirm }) {
  const list = (items) =>
    items.map((item, index) => `  ${index + 1}. ${item.what}\n     ${item.how}`).join("\n");
  const head =
    todo.length === 0
      ? "deploy:check: nothing in wrangler.jsonc or on this machine is left to do before a real deploy\n"
      : `deploy:check: still to do before a real deploy (${todo.length}):\n${list(todo)}\n`;
  return `${head}deploy:check: confirm in the Cloudflare account (a dry run cannot see these):\n${list(confirm)}\n`;
}
