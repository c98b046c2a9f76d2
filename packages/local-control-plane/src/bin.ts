#!/usr/bin/env node
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { startLocalControlPlane } from "./server.js";

const USAGE = `oma-local-control-plane [--port N] [--host H] [--public-url URL] [--admin-token-file PATH] [--webhook-url URL]

Serves a local stand-in for the Managed Agents Work API and session events.
The admin token is read from OMA_LOCAL_CONTROL_PLANE_ADMIN_TOKEN; when unset, a fresh one is written to
--admin-token-file (mode 0600). The webhook signing secret is read from OMA_LOCAL_CONTROL_PLANE_WEBHOOK_SECRET.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8787" },
      host: { type: "string", default: "127.0.0.1" },
      "public-url": { type: "string" },
      "admin-token-file": { type: "string" },
      "webhook-url": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const webhookSecret = process.env.OMA_LOCAL_CONTROL_PLANE_WEBHOOK_SECRET;
  const plane = await startLocalControlPlane({
    port: Number(values.port),
    host: values.host,
    ...(process.env.OMA_LOCAL_CONTROL_PLANE_ADMIN_TOKEN
      ? { adminToken: process.env.OMA_LOCAL_CONTROL_PLANE_ADMIN_TOKEN }
      : {}),
    ...(values["public-url"] ? { publicUrl: values["public-url"] } : {}),
    ...(values["webhook-url"]
      ? { webhook: { url: values["webhook-url"], secret: webhookSecret ?? "" } }
      : {}),
  });
  process.stdout.write(`local control plane listening on ${plane.url}\n`);
  if (!process.env.OMA_LOCAL_CONTROL_PLANE_ADMIN_TOKEN) {
    const tokenFile =
      values["admin-token-file"] ??
      join(tmpdir(), `oma-local-control-plane-${new URL(plane.url).port}.token`);
    await writeFile(tokenFile, `${plane.adminToken}\n`, { mode: 0o600 });
    process.stdout.write(`admin token written to ${tokenFile}\n`);
  }
  const shutdown = () => void plane.stop().then(() => process.exit(0));
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

main().catch((error: unknown) => {
  const message = ManagedRuntimeError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
  process.stderr.write(`oma-local-control-plane: ${message}\n`);
  process.exit(1);
});
