import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { readBoundedBytes, sha256Hex, stableJson, withDeadline } from "../../src/index.js";
import { bearerMatches, matchRoute } from "../../src/http.js";

// A plain Worker (no Node compatibility flag) that runs the helpers of `.` and `./http` and answers
// with what they returned, so the test in Node can compare them with the Node results.
export default {
  async fetch(request: Request): Promise<Response> {
    const timeout = await withDeadline(new Promise<never>(() => undefined), {
      ms: 5,
      operation: "probe",
    }).catch((error: unknown) => error);
    const body = await readBoundedBytes(request.body, { maxBytes: 4, overflow: "truncate" });
    const subtle = crypto.subtle as unknown as Parameters<typeof bearerMatches>[2];
    return Response.json({
      sha256: await sha256Hex("abc"),
      stable: stableJson({ b: 1, a: 2 }),
      timeoutCode: ManagedRuntimeError.hasCode(timeout, "timeout") ? timeout.code : null,
      body: [...body],
      bearer: [
        await bearerMatches("Bearer s3cret-token", "s3cret-token", subtle),
        await bearerMatches("Bearer other", "s3cret-token", subtle),
      ],
      route: matchRoute([{ method: "GET", pattern: "/v1/:id" }], "GET", "/v1/x").kind,
    });
  },
};
