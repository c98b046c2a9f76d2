import * as z from "zod";

/** Session id the bridge sends for calls that run outside any session. */
export const SESSIONLESS_ID = "__DISABLE_SESSION__";

const sessionId = z.string().min(1).max(256).optional();
const envRecord = z.record(z.string(), z.string());
const path = z.string().min(1).max(4096);

export const executeRequestSchema = z.object({
  command: z.string().min(1),
  sessionId,
  cwd: z.string().min(1).max(4096).optional(),
  env: envRecord.optional(),
  timeoutMs: z.number().int().positive().optional(),
  origin: z.enum(["user", "internal"]).optional(),
});
export type ExecuteRequest = z.output<typeof executeRequestSchema>;

export const processStartRequestSchema = executeRequestSchema.extend({
  processId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,128}$/)
    .optional(),
});

export const sessionCreateRequestSchema = z.object({
  id: z.string().min(1).max(256).optional(),
  env: envRecord.optional(),
  cwd: z.string().min(1).max(4096).optional(),
  commandTimeoutMs: z.number().int().positive().optional(),
});

export const sessionDeleteRequestSchema = z.object({ sessionId: z.string().min(1).max(256) });

export const pathRequestSchema = z.object({ path, sessionId });

export const readRequestSchema = pathRequestSchema.extend({
  encoding: z.enum(["utf-8", "utf8", "base64"]).optional(),
});

export const writeRequestSchema = pathRequestSchema.extend({
  content: z.string(),
  encoding: z.enum(["utf-8", "utf8", "base64"]).optional(),
});

export const mkdirRequestSchema = pathRequestSchema.extend({ recursive: z.boolean().optional() });

export const listFilesRequestSchema = pathRequestSchema.extend({
  options: z
    .object({ recursive: z.boolean().optional(), includeHidden: z.boolean().optional() })
    .optional(),
});

export const renameRequestSchema = z.object({ oldPath: path, newPath: path, sessionId });

export const moveRequestSchema = z.object({ sourcePath: path, destinationPath: path, sessionId });

/** Hosts a Worker intercepts HTTPS for (`*` = all): names only, at most 1000. */
export const httpsHostsSchema = z
  .array(z.string().regex(/^(\*|[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+)$/))
  .max(1000);

/** `PUT …/outbound/https`: the hosts the Worker intercepts HTTPS for from now on. */
export const httpsHostsRequestSchema = z.object({ hosts: httpsHostsSchema }).strict();

/** `outbound: "worker"`: the container has no network but a proxy whose requests its Worker answers (a Cloudflare container with `enableInternet: false`). */
export const containerStartRequestSchema = z.object({
  env: envRecord.optional(),
  outbound: z.enum(["worker"]).optional(),
  interceptHttps: httpsHostsSchema.optional(),
});
