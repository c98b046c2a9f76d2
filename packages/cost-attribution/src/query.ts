import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { CostReportQuery } from "./ports.js";

/** Longest range one report may cover, in days. */
export const MAX_REPORT_DAYS = 366;

const DAY_MS = 86_400_000;
const day = z.iso.date();

const querySchema = z
  .object({ from: day, to: day })
  .strict()
  .refine((query) => query.from <= query.to, { message: "from must not be after to", path: ["to"] })
  .refine((query) => (Date.parse(query.to) - Date.parse(query.from)) / DAY_MS < MAX_REPORT_DAYS, {
    message: `must cover at most ${MAX_REPORT_DAYS} days`,
    path: ["to"],
  });

/** A validated query as instants: `[fromInclusive, toExclusive)`. */
export interface ReportWindow extends CostReportQuery {
  readonly fromInclusive: string;
  readonly toExclusive: string;
}

/** Validates a query; `invalid_request` names the field. */
export function reportWindow(query: CostReportQuery): ReportWindow {
  const parsed = parseRecord(querySchema, query, { record: "cost report query" });
  return {
    from: parsed.from,
    to: parsed.to,
    fromInclusive: `${parsed.from}T00:00:00.000Z`,
    toExclusive: nextDay(parsed.to),
  };
}

/** Start of the UTC day after `day`, ISO 8601. */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString();
}
