import { randomUUID } from "node:crypto";
import { projectHostedInferenceEnv } from "@open-managed-agents/sandbox";
import { check, checkNoSecrets } from "./assertions.js";
import { type ConformanceCaseImplementation, always } from "./case-definition.js";
import { CANARY_PREFIX } from "./harness-scripts.js";
import { checkCompleted } from "./run-checks.js";

const GATEWAY = "https://openma-conformance.invalid";
/** Host-side variables the guest must never see: two provider keys and one unrelated secret. */
const HOST_CANARY_KEYS = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENMA_CONFORMANCE_HOST_SECRET",
] as const;

/** `credentials.guest-env`. */
export const guestEnvironmentCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const scope = context.scope();
    const canary = `${CANARY_PREFIX}-${randomUUID()}`;
    // The control plane hands the driver an already projected environment; the driver's host process
    // still holds provider keys, which must not leak into the guest.
    const env = projectHostedInferenceEnv(
      { OPENAI_API_KEY: canary, ANTHROPIC_API_KEY: canary },
      { gatewayBaseUrl: GATEWAY, sessionId: scope.sessionId, token: `proxy-${randomUUID()}` },
    );
    const saved = new Map(HOST_CANARY_KEYS.map((key) => [key, process.env[key]]));
    for (const key of HOST_CANARY_KEYS) process.env[key] = canary;
    try {
      checkCompleted(
        await context.run(context.profile("guestEnvironment", { env }), { scope }),
        "the guest environment check",
      );
    } finally {
      for (const [key, value] of saved) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  },
};

/** `credentials.token-redaction`. */
export const tokenRedactionCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const scope = context.scope();
    const token = `openma-conformance-proxy-${randomUUID()}`;
    const env = projectHostedInferenceEnv<string>(
      {},
      { gatewayBaseUrl: GATEWAY, sessionId: scope.sessionId, token },
    );
    const outputs = context.subject.descriptor.capabilities.outputs.strategies.length > 0;
    const profile = outputs
      ? context.profile("writeOutputs", { env, outputs: { requirement: "best_effort" } })
      : context.profile("writeWorkspace", {
          env: { ...env, OPENMA_CONFORMANCE_NONCE: "redaction" },
        });
    const run = await context.run(profile, { scope });
    checkCompleted(run, "the run holding an inference proxy token");
    const { observations } = run;
    check(
      observations.workspaceCandidates.length > 0,
      "the run produced no workspace checkpoint to inspect",
    );
    const secrets = [token, ...context.subject.secrets];
    checkNoSecrets(observations.leases, secrets, "the leases");
    checkNoSecrets(observations.workspaceCandidates, secrets, "the workspace checkpoints");
    checkNoSecrets(observations.collected, secrets, "the collected outputs");
    checkNoSecrets(observations.manifests, secrets, "the output manifests");
    checkNoSecrets(observations.logs, secrets, "the host log fields");
    checkNoSecrets(await context.publication(scope), secrets, "the publication");
    checkNoSecrets(await context.orphans.list({ limit: 100 }), secrets, "the orphan records");
  },
};
