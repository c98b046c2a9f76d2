/** The container limit holds under concurrent creates: the check and the reservation are one step. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, authorizedFetch } from "./helpers.js";

let harness: TestServer;
beforeAll(async () => {
  harness = await startTestServer({ maxContainers: 4 });
});
afterAll(() => harness.stop());

describe("container limit under concurrency", () => {
  it("creates exactly maxContainers of 20 concurrent starts and refuses the rest with 503 CONTAINER_LIMIT_REACHED", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/burst-${index}`, {
          method: "PUT",
          body: "{}",
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as {
      code?: string;
    }[];
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(statuses.filter((status) => status === 503)).toHaveLength(16);
    expect(bodies.filter((body) => body.code === "CONTAINER_LIMIT_REACHED")).toHaveLength(16);
    expect(harness.server.containers.list()).toHaveLength(4);
    // Capacity frees with a destroy.
    const [first] = harness.server.containers.list();
    await harness.server.containers.destroy(first?.id ?? "");
    expect(
      (
        await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/after`, {
          method: "PUT",
          body: "{}",
        })
      ).status,
    ).toBe(200);
  });
});
