/**
 * Hostile commands through the plugin Worker in workerd over the local container runtime: exec and the
 * file routes (recursive delete included). Each probe plants host sentinels first and checks them after;
 * writes the container may make land in its own copy-on-write tree, and the host stays as it was.
 */
import { existsSync } from "node:fs";
import {
  type HostSentinels,
  plantHostSentinels,
} from "@open-managed-agents/local-container/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, IMAGE, startHarness } from "./support/harness.js";
import { type ProtocolClient, createProtocolClient } from "./support/protocol-client.js";

const ID = "hostile";
let harness: Harness;
let client: ProtocolClient;
let host: HostSentinels;
let tag: string;
let sentinels: { etc: string; root: string; hostDir: string; secret: string };
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8");

beforeAll(async () => {
  host = plantHostSentinels();
  tag = host.tag;
  sentinels = {
    etc: host.etcFile,
    root: host.rootFile,
    hostDir: host.hostOnlyDir,
    secret: host.secret,
  };
  harness = await startHarness();
  client = createProtocolClient({
    baseUrl: harness.url,
    token: harness.token,
    installation: "hostile",
  });
  await client.create({ id: ID, template: { image: IMAGE } });
}, 60_000);
afterAll(async () => {
  await harness?.stop();
  host?.remove();
});

async function expectHostUntouched(): Promise<void> {
  expect(host.changes()).toEqual([]);
  expect(harness.containers.confinement).toBe("bubblewrap");
  expect((await client.exec(ID, { argv: ["echo", "still-serving"] })).stdout).toBe(
    "still-serving\n",
  );
}

describe("hostile file routes through the plugin Worker", () => {
  it("a recursive delete of /etc removes the container's copy; the host's /etc keeps every file", async () => {
    // Files of users the container does not map (a host service's config) resist even the container's
    // root, which holds no capability, so the delete may report a partial failure.
    await client.removePath(ID, "/etc", true).catch(() => undefined);
    const after = await client.exec(ID, {
      argv: [
        "sh",
        "-c",
        `test -e /etc/passwd || echo passwd-gone-inside; test -e ${sentinels.etc} || echo sentinel-gone-inside`,
      ],
    });
    expect(after.stdout).toBe("passwd-gone-inside\nsentinel-gone-inside\n");
    expect(existsSync("/etc/passwd")).toBe(true);
    await expectHostUntouched();
  });

  it("writes to /etc and /root land in the container's tree", async () => {
    await client.writeFile(ID, `/etc/oma-plugin-write-${tag}`, "inside");
    await client.writeFile(ID, sentinels.root, "overwritten inside");
    expect(text(await client.readFile(ID, sentinels.root))).toBe("overwritten inside");
    expect(existsSync(`/etc/oma-plugin-write-${tag}`)).toBe(false);
    await expectHostUntouched();
  });

  it("symlinks planted by a command never lead a file route out of the container's root", async () => {
    await client.exec(ID, {
      argv: [
        "sh",
        "-c",
        `ln -s ${sentinels.hostDir} /workspace/away; ln -s / /workspace/top; ln -s /root /workspace/home`,
      ],
    });
    const leaked = await client
      .readFile(ID, "/workspace/away/secret")
      .then(text, (error: unknown) => String(error));
    expect(leaked).not.toContain(sentinels.secret);
    await client.writeFile(ID, `/workspace/top/etc/oma-plugin-link-${tag}`, "through a link");
    await client.writeFile(ID, `/workspace/home/oma-plugin-link-${tag}`, "through a link");
    await client.removePath(ID, "/workspace/home", true).catch(() => undefined);
    expect(existsSync(`/etc/oma-plugin-link-${tag}`)).toBe(false);
    expect(existsSync(`/root/oma-plugin-link-${tag}`)).toBe(false);
    const listing = await client.listDirectory(ID, "/workspace/top/home");
    expect(JSON.stringify(listing)).not.toContain(`oma-host-only-${tag}`);
    await expectHostUntouched();
  });
});

describe("hostile exec through the plugin Worker", () => {
  it("cannot read host-only files, signal host processes, create devices or mount", async () => {
    const result = await client.exec(ID, {
      argv: [
        "sh",
        "-c",
        `cat ${sentinels.hostDir}/secret; kill -9 ${host.hostPid}; echo "kill=$?"; mknod /tmp/m c 1 1; echo "mknod=$?"; mount -t tmpfs none /mnt; echo "mount=$?"`,
      ],
    });
    expect(result.stdout + result.stderr).not.toContain(sentinels.secret);
    expect(result.stdout).toContain("kill=1");
    expect(result.stdout).toContain("mknod=1");
    expect(result.stdout).not.toContain("mount=0");
    await expectHostUntouched();
  });

  it("a fork bomb stops at the container's process limit", async () => {
    // A sandbox of its own: what the bomb leaves running is its own sandbox's problem, not the next probe's.
    await client.create({ id: "bomb", template: { image: IMAGE } });
    // The bomb keeps churning at its bound, so it writes to a file rather than to the exec's pipes.
    await client.exec("bomb", {
      argv: [
        "sh",
        "-c",
        "(bomb() { bomb | bomb & }; bomb) >/dev/null 2>/workspace/bomb.err & sleep 3",
      ],
      timeoutMs: 60_000,
    });
    expect(text(await client.readFile("bomb", "/workspace/bomb.err"))).toContain("Cannot fork");
    await client.delete("bomb");
    await expectHostUntouched();
  }, 120_000);
});
