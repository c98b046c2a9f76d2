import * as z from "zod";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";

const memberName = z
  .string()
  .min(3)
  .max(4096)
  .refine(
    (name) => name.startsWith("./") && !name.endsWith("/"),
    "must start with './' and name a file",
  )
  .refine(
    (name) =>
      !name
        .slice(2)
        .split("/")
        .some((segment) => segment === "" || segment === "." || segment === ".."),
    "must not contain empty, '.' or '..' segments",
  )
  .refine((name) => !/[\0\n]/.test(name), "must not contain NUL or newline");

/** Schema of {@link JoinPlan}: a wire payload, parsed before use. */
export const joinPlanSchema = z
  .object({
    version: z.literal(1),
    target: memberName,
    mode: z.number().int().min(0).max(0o7777),
    mtime: z.number().int().min(0).max(0o77777777777),
    size: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    chunkDirectory: memberName,
    chunks: z.array(z.object({ name: memberName, size: z.number().int().min(0) }).strict()).min(1),
    links: z.array(memberName),
  })
  .strict()
  .superRefine((plan, context) => {
    const prefix = `${plan.chunkDirectory}/`;
    if (plan.target.startsWith(prefix) || plan.links.some((name) => name.startsWith(prefix))) {
      context.addIssue({
        code: "custom",
        path: ["target"],
        message: "the target and links must lie outside the chunk directory",
      });
    }
    plan.chunks.forEach((chunk, index) => {
      if (!chunk.name.startsWith(prefix) || chunk.name.slice(prefix.length).includes("/")) {
        context.addIssue({
          code: "custom",
          path: ["chunks", index, "name"],
          message: "a chunk must sit directly in the chunk directory",
        });
      }
    });
    if (plan.chunks.reduce((sum, chunk) => sum + chunk.size, 0) !== plan.size) {
      context.addIssue({
        code: "custom",
        path: ["size"],
        message: "must equal the sum of the chunk sizes",
      });
    }
  });

/**
 * How to rebuild one file that was too large for a split part: concatenate `chunks` in order into
 * `target`, check `size` and `sha256`, set `mode` and `mtime`, hardlink `links` to it, then delete
 * `chunkDirectory`. Every path is an archive member name relative to the extraction root (`./…`).
 */
export interface JoinPlan {
  readonly version: 1;
  readonly target: string;
  /** Permission bits. */
  readonly mode: number;
  /** Modification time, seconds since the epoch. */
  readonly mtime: number;
  readonly size: number;
  /** Lowercase hex sha256 of the joined file. */
  readonly sha256: string;
  /** Folder holding only this file's chunks; removed after the join. */
  readonly chunkDirectory: string;
  readonly chunks: readonly { readonly name: string; readonly size: number }[];
  /** Hardlinks of the archive that point at `target`. */
  readonly links: readonly string[];
}

/** Parses a join plan received from elsewhere; throws `invalid_request` naming the bad field. */
export function parseJoinPlan(input: unknown): JoinPlan {
  return parseRecord(joinPlanSchema, input, { record: "join plan" });
}
