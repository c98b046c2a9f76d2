import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ControlPlaneEvent,
  type LocalControlPlane,
  startLocalControlPlane,
} from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

describe("the SDK's EnvironmentWorker.handleItem against the local control plane", () => {
  let plane: LocalControlPlane;
  let workdir: Awaited<ReturnType<typeof tempDir>>;
  let events: ControlPlaneEvent[];
  beforeEach(async () => {
    events = [];
    plane = await startLocalControlPlane({ onEvent: (event) => events.push(event) });
    workdir = await tempDir();
  });
  afterEach(async () => {
    await plane.stop();
    await workdir.remove();
  });

  it("runs a scripted turn (bash, write, read) in the workdir, posts each result and force-stops the item", async () => {
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    const turn = plane.queueTurn(session.id, {
      toolCalls: [
        { name: "bash", input: { command: "echo from-bash > made-by-bash.txt && pwd" } },
        {
          name: "write",
          input: {
            file_path: join(workdir.path, "notes.md"),
            content: "written by the write tool\n",
          },
        },
        { name: "read", input: { file_path: "made-by-bash.txt" } },
      ],
      finalMessage: "done",
    });
    expect(turn.state).toBe("running");

    const client = sdkClient(plane.url);
    const work = await claimOne(client, environment.id, environment.environmentKey);
    expect(work).toMatchObject({
      environment_id: environment.id,
      data: { type: "session", id: session.id },
      state: "queued",
    });
    expect(work.secret).toEqual(expect.any(String));

    await client.beta.environments.work
      .worker({ workdir: workdir.path, maxIdleMs: 300 })
      .handleItem({
        workId: work.id,
        environmentId: environment.id,
        sessionId: session.id,
        workSecret: work.secret!,
      });

    expect(await readFile(join(workdir.path, "made-by-bash.txt"), "utf8")).toBe("from-bash\n");
    expect(await readFile(join(workdir.path, "notes.md"), "utf8")).toBe(
      "written by the write tool\n",
    );
    const transcript = plane.transcript(session.id);
    expect(transcript.status).toBe("idle");
    expect(transcript.entries.map((entry) => [entry.name, entry.result?.is_error])).toEqual([
      ["bash", false],
      ["write", false],
      ["read", false],
    ]);
    const texts = transcript.entries.map((entry) => JSON.stringify(entry.result?.content));
    expect(texts[0]).toContain(workdir.path);
    expect(texts[2]).toContain("from-bash");
    expect(plane.workItems(environment.id)).toEqual([
      expect.objectContaining({ id: work.id, state: "stopped", secret: null }),
    ]);
    expect((await plane.waitForTurn(session.id, turn.id)).state).toBe("done");
    expect(events.map((event) => event.type)).toEqual([
      "work_queued",
      "turn_started",
      "tool_use",
      "work_claimed",
      "work_acknowledged",
      "tool_result",
      "tool_use",
      "tool_result",
      "tool_use",
      "tool_result",
      "turn_ended",
      "work_stopped",
    ]);
  });
});
