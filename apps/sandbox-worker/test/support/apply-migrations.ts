import { applyD1Migrations, env } from "cloudflare:test";

// The app's migrations/ directory, read by wrangler's own reader in vitest.config.ts, applied to the real D1.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
