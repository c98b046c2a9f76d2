/**
 * Wire shapes of the adapter protocol. Requests are parsed with these schemas; responses are built to
 * match them, and the OpenAPI document is generated from them.
 */
import { ERROR_CODES } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { INSTANCE_TYPE_NAMES, customSizeProblem } from "../config/instance-types.js";

/** Names `getSandbox` refuses (DNS labels Cloudflare reserves). */
const RESERVED_SANDBOX_IDS = ["www", "api", "admin", "root", "system", "cloudflare", "workers"];

/** A caller-chosen sandbox id: 1–63 letters, digits, `_` or `-`, not starting or ending with `-`. */
export const sandboxIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/,
    "a sandbox id is 1-63 letters, digits, '_' or '-', and does not start or end with '-'",
  )
  .refine((id) => !RESERVED_SANDBOX_IDS.includes(id.toLowerCase()), "this sandbox id is reserved");

/** The installation a sandbox belongs to. */
export const installationSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    "an installation is 1-128 letters, digits, '.', '_', ':' or '-'",
  );

/** An absolute path inside the sandbox. */
export const sandboxPathSchema = z
  .string()
  .min(1)
  .max(4_096)
  .refine((path) => path.startsWith("/"), "the path must be absolute")
  .refine((path) => !path.includes("\0"), "the path must not contain NUL");

const environmentSchema = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are letters, digits and '_'"),
    z.string().max(128 * 1_024),
  )
  .refine((env) => Object.keys(env).length <= 256, "at most 256 environment variables");

/** A custom size within Cloudflare's custom instance rules. */
export const customSizeSchema = z
  .object({
    vcpu: z.number().positive(),
    memoryMib: z.number().int().positive(),
    diskMb: z.number().int().positive(),
  })
  .strict()
  .superRefine((size, context) => {
    const problem = customSizeProblem(size);
    if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
  });

/** A predefined instance type name or a custom size. */
export const sizeSchema = z.union([z.enum(INSTANCE_TYPE_NAMES), customSizeSchema]);

/** `POST /sandboxes`. */
export const createSandboxRequestSchema = z
  .object({
    id: sandboxIdSchema,
    template: z.object({ image: z.string().min(1).max(512) }).strict(),
    size: sizeSchema.default("standard-1"),
    env: environmentSchema.default({}),
    ttlSeconds: z.number().int().positive().optional(),
    fromSnapshot: z.string().min(1).optional(),
  })
  .strict();
export type CreateSandboxRequest = z.infer<typeof createSandboxRequestSchema>;

/** `PUT /sandboxes/{id}/ttl`. */
export const ttlRequestSchema = z.object({ ttlSeconds: z.number().int().positive() }).strict();

/** `POST /sandboxes/{id}/exec` and `/exec/stream`. */
export const execRequestSchema = z
  .object({
    argv: z
      .array(z.string().refine((arg) => !arg.includes("\0"), "arguments must not contain NUL"))
      .min(1)
      .max(4_096),
    cwd: sandboxPathSchema.optional(),
    env: environmentSchema.optional(),
    timeoutMs: z.number().int().positive().max(86_400_000).optional(),
  })
  .strict();
export type ExecRequest = z.infer<typeof execRequestSchema>;

/** A sandbox as the Worker reports it. `lost` means the instance stopped and its files are gone. */
export const sandboxViewSchema = z
  .object({
    id: z.string(),
    installation: z.string(),
    image: z.string(),
    instanceType: z.string(),
    state: z.enum(["starting", "running", "stopped"]),
    lost: z.boolean(),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .strict();
export type SandboxView = z.infer<typeof sandboxViewSchema>;

/** `POST /sandboxes` answer: 201 when this call created the sandbox, 200 for a replay. */
export const createSandboxResponseSchema = z
  .object({ sandbox: sandboxViewSchema, created: z.boolean() })
  .strict();

/** `GET /sandboxes`. */
export const sandboxListSchema = z
  .object({ sandboxes: z.array(sandboxViewSchema), nextCursor: z.string().nullable() })
  .strict();

/** `DELETE /sandboxes/{id}`: `deleted` is false when there was nothing to delete. */
export const deleteResponseSchema = z.object({ id: z.string(), deleted: z.boolean() }).strict();

/** `POST /sandboxes/{id}/exec`. Exit code 124 after a `timeoutMs` means the deadline stopped the command. */
export const execResponseSchema = z
  .object({
    exitCode: z.number().int(),
    stdout: z.string(),
    stderr: z.string(),
    timedOut: z.boolean(),
    durationMs: z.number().nonnegative(),
  })
  .strict();
export type ExecResponse = z.infer<typeof execResponseSchema>;

/** One NDJSON line of `POST /sandboxes/{id}/exec/stream`; `exit` or `error` is always the last line. */
export const streamLineSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("stdout"), data: z.string() }).strict(),
  z.object({ type: z.literal("stderr"), data: z.string() }).strict(),
  z.object({ type: z.literal("exit"), exitCode: z.number().int(), timedOut: z.boolean() }).strict(),
  z.object({ type: z.literal("error"), code: z.enum(ERROR_CODES), message: z.string() }).strict(),
]);
export type StreamLine = z.infer<typeof streamLineSchema>;

/** An entry of a directory listing. */
export const directoryEntrySchema = z
  .object({
    name: z.string(),
    path: z.string(),
    type: z.enum(["file", "directory", "symlink", "other"]),
    size: z.number().nonnegative(),
    modifiedAt: z.string(),
    mode: z.string(),
  })
  .strict();
export type DirectoryEntry = z.infer<typeof directoryEntrySchema>;

/** `GET /sandboxes/{id}/directories`. */
export const directoryListingSchema = z
  .object({ path: z.string(), entries: z.array(directoryEntrySchema) })
  .strict();

/** Answer of file writes, directory creation and removal. */
export const pathResultSchema = z
  .object({ path: z.string(), size: z.number().int().nonnegative().optional() })
  .strict();

/** `GET /info`. */
export const infoSchema = z
  .object({
    protocol: z.literal(1),
    adapter: z.string(),
    sdk: z.string(),
    isolation: z.literal("microvm"),
    capabilities: z.array(z.string()),
    unsupported: z.array(z.string()),
    templates: z.array(
      z
        .object({
          image: z.string(),
          instanceTypes: z.array(
            z
              .object({
                name: z.string(),
                vcpu: z.number(),
                memoryMib: z.number(),
                diskMb: z.number(),
              })
              .strict(),
          ),
        })
        .strict(),
    ),
    limits: z
      .object({
        defaultTtlSeconds: z.number().int(),
        maxTtlSeconds: z.number().int(),
        maxFileBytes: z.number().int(),
      })
      .strict(),
    ports: z.object({ route: z.string() }).strict(),
  })
  .strict();
export type Info = z.infer<typeof infoSchema>;

/** Every error answer: a contract error code, a message and optional safe context. */
export const errorBodySchema = z
  .object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
