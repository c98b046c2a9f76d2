/**
 * Stands in for the squashfs tooling of the `cloudflare/sandbox` image, which the local container server
 * lacks: the `/api/backup/create` route (mksquashfs), the `/usr/bin/unsquashfs` binary and the
 * `/var/backups` directory. Archives are tar files made and unpacked by the container's own `tar`, kept
 * in the container's `/tmp`. Everything else — the SDK's backup code in the real `Sandbox` Durable
 * Object, its R2 writes to `BACKUP_BUCKET`, meta.json, TTL checks and the restore lifecycle — runs as
 * published; only the container's side of the wire is emulated.
 */
import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";
import { shellQuote } from "@open-managed-agents/runtime-resource-contract";

const IMAGE_BACKUP_DIR = "/var/backups";
const LOCAL_BACKUP_DIR = "/tmp/.oma-var-backups";
const UNSQUASHFS = /^\/usr\/bin\/unsquashfs -f -d ('[^']*') ('[^']*')$/;
const PATH_ROUTES = new Set([
  "/api/read",
  "/api/read/stream",
  "/api/write",
  "/api/mkdir",
  "/api/delete",
  "/api/exists",
]);
const COMMAND_ROUTES = new Set(["/api/execute", "/api/execute/stream"]);

type Fetch = (input: string | URL | Request, init?: RequestInit | Request) => Promise<Response>;

const relocate = (text: string): string => text.split(IMAGE_BACKUP_DIR).join(LOCAL_BACKUP_DIR);

function rewriteCommand(command: string): string {
  const relocated = relocate(command);
  const extract = UNSQUASHFS.exec(relocated);
  return extract ? `mkdir -p ${extract[1]} && tar xf ${extract[2]} -C ${extract[1]}` : relocated;
}

async function createArchive(inner: Fetch, request: Request): Promise<Response> {
  const body = (await request.json()) as { dir: string; archivePath: string; sessionId?: string };
  const archive = shellQuote(relocate(body.archivePath));
  const command = `mkdir -p ${shellQuote(LOCAL_BACKUP_DIR)} && tar cf ${archive} -C ${shellQuote(body.dir)} . && wc -c < ${archive}`;
  const executed = await inner(
    new Request(new URL("/api/execute", request.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ command, sessionId: body.sessionId ?? "__DISABLE_SESSION__" }),
    }),
  );
  const result = (await executed.json()) as { exitCode?: number; stdout?: string; stderr?: string };
  if (!executed.ok || result.exitCode !== 0) {
    return Response.json(
      {
        code: "BACKUP_CREATE_FAILED",
        message: `tar exited ${result.exitCode}: ${result.stderr ?? ""}`,
        httpStatus: 500,
      },
      { status: 500 },
    );
  }
  return Response.json({
    success: true,
    sizeBytes: Number((result.stdout ?? "").trim()),
    archivePath: body.archivePath,
    timestamp: new Date().toISOString(),
  });
}

async function rewriteBody(request: Request, field: "path" | "command"): Promise<Request> {
  const body = (await request.json()) as Record<string, unknown>;
  const value = body[field];
  if (typeof value === "string")
    body[field] = field === "path" ? relocate(value) : rewriteCommand(value);
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: JSON.stringify(body),
  });
}

/** Wraps a local runtime so its control port also answers the image's backup calls. */
export function withBackupTooling(runtime: LocalContainerRuntime): LocalContainerRuntime {
  return {
    get running() {
      return runtime.running;
    },
    start: (options) => runtime.start(options),
    monitor: () => runtime.monitor(),
    destroy: () => runtime.destroy(),
    signal: (signo) => runtime.signal(signo),
    setInactivityTimeout: (durationMs) => runtime.setInactivityTimeout(durationMs),
    interceptOutboundHttp: (host, fetcher) => runtime.interceptOutboundHttp(host, fetcher),
    interceptOutboundHttps: (host, fetcher) => runtime.interceptOutboundHttps(host, fetcher),
    interceptAllOutboundHttp: (fetcher) => runtime.interceptAllOutboundHttp(fetcher),
    getTcpPort(port) {
      const inner: Fetch = (input, init) => runtime.getTcpPort(port).fetch(input, init);
      return {
        async fetch(input, init) {
          const request = new Request(input, init);
          const { pathname } = new URL(request.url);
          if (request.method !== "POST") return inner(request);
          if (pathname === "/api/backup/create") return createArchive(inner, request);
          if (PATH_ROUTES.has(pathname)) return inner(await rewriteBody(request, "path"));
          if (COMMAND_ROUTES.has(pathname)) return inner(await rewriteBody(request, "command"));
          return inner(request);
        },
      };
    },
  };
}
