import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

const run = promisify(execFile);

describe("agent skills", () => {
  let plane: LocalControlPlane;
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    plane = await startLocalControlPlane();
    scratch = await tempDir();
  });
  afterEach(async () => {
    await plane.stop();
    await scratch.remove();
  });

  it("serves a session's skills to the SDK's worker, which unpacks them under <workdir>/skills for the turn", async () => {
    await mkdir(join(scratch.path, "src/greeter"), { recursive: true });
    await writeFile(
      join(scratch.path, "src/greeter/SKILL.md"),
      "---\nname: greeter\n---\nSay hello.\n",
    );
    await run("tar", [
      "-czf",
      join(scratch.path, "greeter.tar.gz"),
      "-C",
      join(scratch.path, "src"),
      "greeter",
    ]);
    const skill = plane.uploadSkill({
      name: "greeter",
      description: "greets",
      archive: await readFile(join(scratch.path, "greeter.tar.gz")),
    });

    const environment = plane.createEnvironment();
    const session = plane.createSession({
      environmentId: environment.id,
      skills: [{ skillId: skill.skillId }],
    });
    const workdir = join(scratch.path, "workdir");
    await mkdir(workdir);
    plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "cat skills/greeter/SKILL.md" } }],
    });

    const client = sdkClient(plane.url);
    const work = await claimOne(client, environment.id, environment.environmentKey);
    const token = (
      JSON.parse(Buffer.from(work.secret!, "base64url").toString("utf8")) as {
        sessions_token: string;
      }
    ).sessions_token;
    expect(
      await sdkClient(plane.url, token).beta.skills.versions.retrieve("latest", {
        skill_id: skill.skillId,
      }),
    ).toEqual({
      type: "skill_version",
      id: skill.version,
      skill_id: skill.skillId,
      name: "greeter",
      description: "greets",
      created_at: expect.any(String),
    });
    await client.beta.environments.work.worker({ workdir, maxIdleMs: 300 }).handleItem({
      workId: work.id,
      environmentId: environment.id,
      sessionId: session.id,
      workSecret: work.secret!,
    });

    const [entry] = plane.transcript(session.id).entries;
    expect(entry?.result?.is_error).toBe(false);
    expect(JSON.stringify(entry?.result?.content)).toContain("Say hello.");
  });

  it("refuses a skill to a sessions token whose agent does not carry it, and an unknown skill at session creation", async () => {
    const skill = plane.uploadSkill({ name: "private", archive: Buffer.from("not read") });
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const token = (
      JSON.parse(Buffer.from(work.secret!, "base64url").toString("utf8")) as {
        sessions_token: string;
      }
    ).sessions_token;
    await expect(
      sdkClient(plane.url, token).beta.skills.versions.download(skill.version, {
        skill_id: skill.skillId,
      }),
    ).rejects.toMatchObject({ status: 401 });
    expect(() =>
      plane.createSession({
        environmentId: environment.id,
        skills: [{ skillId: "skill_missing" }],
      }),
    ).toThrow(expect.objectContaining({ code: "not_found" }));
  });
});
