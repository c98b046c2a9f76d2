import { createCloudflareManagedRuntimeDriver } from "@open-managed-agents/managed-runtime-cloudflare";
import {
  CONFORMANCE_CASE_IDS,
  type ConformanceCaseId,
  type ConformanceReport,
  runManagedRuntimeConformance,
} from "@open-managed-agents/managed-runtime-conformance";
import {
  InvalidRequestError,
  LimitExceededError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { WorkerContext } from "../config.js";
import { json } from "../http/responses.js";
import { cloudflareDriverOptions } from "../runtime/driver-options.js";

/** The certification build's conformance route (bearer-protected, like every route but the webhook). */
export const CONFORMANCE_PATH = "/v1/certification/conformance";

/** Largest request body accepted: a list of case ids. */
export const MAX_CONFORMANCE_BODY_BYTES = 16 * 1024;

/**
 * Deadlines of the suite on Cloudflare: a case may start several real containers, and each fence
 * renewal and container heartbeat crosses the network, so both get more room than the suite's defaults.
 */
export const CERTIFICATION_TIMEOUTS = {
  caseMs: 180_000,
  heartbeatIntervalMs: 5_000,
  leaseTtlMs: 60_000,
} as const;

const bodySchema = z
  .object({
    cases: z
      .array(z.enum(CONFORMANCE_CASE_IDS as [ConformanceCaseId, ...ConformanceCaseId[]]))
      .min(1)
      .max(CONFORMANCE_CASE_IDS.length)
      .optional(),
  })
  .strict();

/**
 * `POST /v1/certification/conformance` `{cases?}`: runs the managed-runtime conformance suite inside
 * the Worker against the driver exactly as this Worker composes it (`Sandbox` containers, R2 outputs
 * and workspace backups, D1 usage ledger), and answers 200 with the report (`passed` says whether every
 * selected case passed). Only a certification build serves it; elsewhere the path is unknown (404).
 */
export async function runConformanceRoute(
  request: Request,
  context: WorkerContext,
): Promise<Response> {
  if (request.method !== "POST") {
    const error = new InvalidRequestError({
      message: "method not allowed; use POST",
      context: { allowed: "POST" },
    });
    return json(405, { error: error.toJSON() }, { allow: "POST" });
  }
  const text = await request.text();
  if (text.length > MAX_CONFORMANCE_BODY_BYTES) {
    throw new LimitExceededError({
      message: `conformance request is larger than ${MAX_CONFORMANCE_BODY_BYTES} bytes`,
      context: { limit: MAX_CONFORMANCE_BODY_BYTES },
    });
  }
  let raw: unknown = {};
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch (cause) {
      throw new InvalidRequestError({ message: "conformance request body is not JSON", cause });
    }
  }
  const body = parseRecord(bodySchema, raw, {
    record: "conformance request",
    code: "invalid_request",
  });
  const { bindings } = context;
  const report: ConformanceReport = await runManagedRuntimeConformance({
    name: "sandbox-worker (certification build)",
    driver: createCloudflareManagedRuntimeDriver(
      bindings,
      cloudflareDriverOptions(bindings, context.config()),
    ),
    timeouts: CERTIFICATION_TIMEOUTS,
    ...(body.cases ? { cases: body.cases } : {}),
  });
  return json(200, report);
}
