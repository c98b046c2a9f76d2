import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { UsageLedgerTotal } from "./ports.js";

const totalsSchema = z.array(
  z.object({
    day: z.iso.date(),
    workspaceId: z.string().min(1),
    environmentId: z.string().min(1),
    sessionId: z.string().min(1),
    instanceType: z.string().min(1).nullable(),
    seconds: z.number().int().nonnegative().refine(Number.isSafeInteger, "must be a safe integer"),
  }),
);

/** Checks what a ledger returned before it is priced; a malformed answer is `internal`. */
export function parseLedgerTotals(value: unknown): readonly UsageLedgerTotal[] {
  return parseRecord(totalsSchema, value, { record: "usage ledger totals", code: "internal" });
}
