import { randomBytes } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { startLocalControlPlane } from "../src/index.js";
import { tempDir } from "./helpers.js";

interface Exchange {
  readonly url: string;
  readonly status: number;
  readonly body: string;
}

/** fetch that records every URL and every non-2xx body the SDK sees. */
function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const body = response.ok ? "" : await response.clone().text();
    exchanges.push({ url, status: response.status, body });
    return response;
  };
}

describe("secrets", () => {
  it("keep out of URLs, error bodies, work listings, transcripts and webhook bodies", async () => {
    const webhookBodies: string[] = [];
    const observed: unknown[] = [];
    const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
    const plane = await startLocalControlPlane({
      webhook: { url: "http://127.0.0.1:9/hook", secret: webhookSecret },
      webhookAttempts: 1,
      onEvent: (event) => {
        observed.push(event);
        throw new Error("a failing observer changes nothing");
      },
      fetch: async (_input, init) => {
        webhookBodies.push(String(init?.body));
        return new Response(null, { status: 204 });
      },
    });
    const workdir = await tempDir();
    const exchanges: Exchange[] = [];
    try {
      const environment = plane.createEnvironment();
      const session = plane.createSession({ environmentId: environment.id });
      const turn = plane.queueTurn(session.id, {
        toolCalls: [
          { name: "bash", input: { command: "echo ok" } },
          { name: "glob", input: { pattern: "*" } },
        ],
      });
      const client = new Anthropic({
        baseURL: plane.url,
        apiKey: null,
        authToken: null,
        logLevel: "off",
        maxRetries: 0,
        fetch: recordingFetch(exchanges),
      });

      const secrets: string[] = [environment.environmentKey, plane.adminToken, webhookSecret];
      const poller = client.beta.environments.work.poller({
        environmentId: environment.id,
        environmentKey: environment.environmentKey,
        autoStop: false,
      });
      for await (const work of poller) {
        poller.abort();
        secrets.push(
          work.secret!,
          (
            JSON.parse(Buffer.from(work.secret!, "base64url").toString("utf8")) as {
              sessions_token: string;
            }
          ).sessions_token,
        );
        await client.beta.environments.work
          .worker({ workdir: workdir.path, maxIdleMs: 300 })
          .handleItem({
            workId: work.id,
            environmentId: environment.id,
            sessionId: session.id,
            workSecret: work.secret!,
          });
        // Refusals made with each secret: a stale heartbeat, a stopped item's session read, a bad poll.
        const withToken = client.withOptions({ authToken: secrets.at(-1)! });
        await withToken.beta.environments.work
          .heartbeat(work.id, { environment_id: environment.id, expected_last_heartbeat: "stale" })
          .catch(() => undefined);
        await withToken.beta.sessions.retrieve(session.id).catch(() => undefined);
        await client
          .withOptions({ authToken: `${environment.environmentKey}x` })
          .beta.environments.work.poll(environment.id)
          .catch(() => undefined);
        await client
          .withOptions({ authToken: environment.environmentKey })
          .beta.environments.work.poll(environment.id, { block_ms: 0 })
          .catch(() => undefined);
      }
      await plane.waitForTurn(session.id, turn.id);

      expect(exchanges.filter((exchange) => exchange.status >= 400).length).toBeGreaterThanOrEqual(
        3,
      );
      const persisted = [
        ...exchanges.map((exchange) => `${exchange.url}\n${exchange.body}`),
        JSON.stringify(plane.workItems()),
        JSON.stringify(plane.transcript(session.id)),
        JSON.stringify(await plane.webhookDeliveries()),
        ...webhookBodies,
        JSON.stringify(observed),
      ].join("\n");
      expect(observed.length).toBeGreaterThan(5);
      for (const secret of secrets)
        expect(persisted.includes(secret), "a secret leaked").toBe(false);
      expect(webhookBodies).toHaveLength(1);
    } finally {
      await plane.stop();
      await workdir.remove();
    }
  });
});
