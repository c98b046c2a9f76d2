/**
 * Hostile commands through Cloudflare's bridge Worker over the local container runtime (bridge exec and
 * file routes, via `startLocalBridge`): each probe plants host sentinels first and checks them after.
 * Writes a confined container may make (its copy-on-write `/etc`, its own `/root`) succeed inside and
 * land in its own tree; the host's files, processes and devices stay untouched, and the stack serves the
 * next request.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  type HostSentinels,
  plantHostSentinels,
} from "@open-managed-agents/local-container/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeClient, decodeOutput } from "./bridge-client.js";

const MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_PROCESSES = 64;
let bridge: LocalBridge;
let client: ReturnType<typeof bridgeClient>;
let host: HostSentinels;
let tag: string;
let sentinels: { etc: string; root: string; hostDir: string; secret: string };

beforeAll(async () => {
  host = plantHostSentinels({ hostOnlyParent: "/var/tmp" });
  tag = host.tag;
  sentinels = {
    etc: host.etcFile,
    root: host.rootFile,
    hostDir: host.hostOnlyDir,
    secret: host.secret,
  };
  bridge = await startLocalBridge({
    limits: {
      maxContainers: 40,
      maxFileBytes: MAX_FILE_BYTES,
      maxContainerProcesses: MAX_PROCESSES,
    },
  });
  client = bridgeClient(bridge.url, bridge.apiKey);
}, 60_000);

afterAll(async () => {
  await bridge?.stop();
  host?.remove();
});

/** Runs `script` with `sh -c` in sandbox `id`; stdout, stderr and the exit code. */
async function run(
  id: string,
  script: string,
): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const { frames } = await client.exec(id, ["sh", "-c", script], { timeout_ms: 120_000 });
  const exit = frames.find((frame) => frame.event === "exit");
  return {
    stdout: decodeOutput(frames, "stdout"),
    stderr: decodeOutput(frames, "stderr"),
    exitCode: exit === undefined ? -1 : (JSON.parse(exit.data) as { exit_code: number }).exit_code,
  };
}

/**
 * A script that prints `found <path>` for files holding `content` in every directory of the container's own
 * (its home directories, temporary directories, mounts and workspace) and for any path anywhere named `name`.
 * The rest (`/usr`, `/etc`, `/opt`, `/var` but its `tmp`) is the host's system tree shown copy-on-write, where
 * the sentinels never were; reading all of it (gigabytes on a build machine) would time the probe by the disk.
 */
function searchEverywhere(content: string, name: string): string {
  const holders = `grep -rls -D skip ${content} /root /home /mnt /tmp /var/tmp /workspace /srv`;
  const named = `find / -path /proc -prune -o -path /sys -prune -o -name ${name} -print`;
  return `{ ${holders}; ${named}; } 2>/dev/null | head -3 | sed 's/^/found /'`;
}

/** The host as the probes found it: every sentinel as planted, the host process alive, and the stack serving. */
async function expectHostUntouched(): Promise<void> {
  expect(host.changes()).toEqual([]);
  expect(bridge.containerServer.confinement).toBe("bubblewrap");
  const next = await run(await client.create(), "echo still-serving");
  expect(next.stdout).toBe("still-serving\n");
}

describe("hostile commands through bridge exec", () => {
  it("writes and deletes under /etc land in the container's copy-on-write /etc, never the host's", async () => {
    const id = await client.create();
    const result = await run(
      id,
      `echo pwned > ${sentinels.etc} && rm -f /etc/passwd && echo new > /etc/oma-new-${tag} && test ! -e /etc/passwd && cat ${sentinels.etc}`,
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: "pwned\n" });
    expect(existsSync(`/etc/oma-new-${tag}`)).toBe(false);
    await expectHostUntouched();
  });

  it("writes to /root and / land in the container's own root", async () => {
    const id = await client.create();
    const result = await run(
      id,
      `echo mine > /root/oma-probe-${tag} && echo top > /oma-top-${tag} && cat ${sentinels.root} 2>&1; ls /root`,
    );
    expect(result.stdout).toContain(`oma-probe-${tag}`);
    expect(result.stdout).not.toContain("host root sentinel");
    expect(existsSync(`/root/oma-probe-${tag}`)).toBe(false);
    expect(existsSync(`/oma-top-${tag}`)).toBe(false);
    await expectHostUntouched();
  });

  it("cannot read host-only files: the host's /root, /home, /var/tmp, /tmp, /mnt and the checkout are not there", async () => {
    const id = await client.create();
    const result = await run(
      id,
      `cat ${sentinels.hostDir}/secret ${sentinels.root}; ls /home /mnt /var/tmp /tmp ${process.cwd()} 2>&1; ${searchEverywhere(sentinels.secret, basename(sentinels.hostDir))}`,
    );
    expect(result.stdout + result.stderr).not.toContain(sentinels.secret);
    expect(result.stdout).not.toMatch(/^found /m);
    expect(result.stdout + result.stderr).not.toContain("host root sentinel");
    expect(result.stdout).toContain(`${process.cwd()}': No such file or directory`);
    await expectHostUntouched();
  }, 120_000);

  it("cannot signal a host process, sees only its own processes, and kill -9 -1 harms only itself", async () => {
    const id = await client.create();
    const result = await run(
      id,
      `kill -9 ${host.hostPid}; echo "kill=$?"; ls /proc | grep -cE '^[0-9]+$'; kill -9 -1; echo after`,
    );
    expect(result.stdout).toContain("kill=1");
    expect(Number(result.stdout.split("\n")[1])).toBeLessThan(10);
    await expectHostUntouched();
  });

  it("cannot create device nodes or mount file systems: no capability is left", async () => {
    const id = await client.create();
    const result = await run(
      id,
      'mknod /tmp/mem c 1 1; echo "mknod=$?"; mount -t tmpfs none /mnt; echo "mount=$?"; grep CapEff /proc/self/status',
    );
    expect(result.stdout).toContain("mknod=1");
    expect(result.stdout).toMatch(/mount=(1|32)/);
    expect(result.stdout).toContain("CapEff:\t0000000000000000");
    await expectHostUntouched();
  });

  it("cannot read another container's files, by path or through the host tree", async () => {
    const [mine, theirs] = [await client.create(), await client.create()];
    await run(theirs, `echo their-secret-${tag} > /workspace/secret.txt`);
    const theirTree = join(
      bridge.containerServer.containers
        .list()
        .find((container) => existsSync(join(container.directory, "workspace", "secret.txt")))
        ?.directory ?? "/nonexistent",
      "workspace",
      "secret.txt",
    );
    expect(readFileSync(theirTree, "utf8")).toBe(`their-secret-${tag}\n`);
    const theirDirectory = basename(dirname(dirname(theirTree)));
    const result = await run(
      mine,
      `cat /workspace/secret.txt ${theirTree} 2>&1; ${searchEverywhere(`their-secret-${tag}`, theirDirectory)}`,
    );
    expect(result.stdout).not.toContain(`their-secret-${tag}`);
    expect(result.stdout).not.toMatch(/^found /m);
    await expectHostUntouched();
  }, 120_000);

  it("a fork bomb stops at the container's process limit", async () => {
    const id = await client.create();
    // The bomb keeps churning at its bound, so it writes to a file rather than to the exec's pipes, and the
    // sandbox is deleted afterwards (which ends its PID namespace).
    await run(id, "(bomb() { bomb | bomb & }; bomb) >/dev/null 2>/workspace/bomb.err & sleep 3");
    expect(await (await client.get(id, "workspace/bomb.err")).text()).toContain("Cannot fork");
    expect((await client.request("DELETE", `/v1/sandbox/${id}`)).status).toBe(204);
    await expectHostUntouched();
  }, 120_000);

  it("a disk fill stops at the file size limit", async () => {
    const id = await client.create();
    const result = await run(
      id,
      `head -c ${MAX_FILE_BYTES * 4} /dev/zero > /workspace/fill; echo "exit=$?"; stat -c %s /workspace/fill`,
    );
    expect(result.stdout).toContain(`${MAX_FILE_BYTES}\n`);
    expect(result.stdout).not.toContain("exit=0");
    await expectHostUntouched();
  });
});

describe("hostile paths through the bridge's file routes", () => {
  it("symlinks planted in /workspace resolve inside the container's root, never to the host", async () => {
    const id = await client.create();
    await run(
      id,
      `ln -s ${sentinels.hostDir}/secret /workspace/leak; ln -s / /workspace/top; ln -s /root /workspace/home; ln -s ../../../../../../${sentinels.hostDir} /workspace/climb`,
    );
    expect(await (await client.get(id, "workspace/leak")).text()).not.toContain(sentinels.secret);
    expect(await (await client.get(id, "workspace/climb/secret")).text()).not.toContain(
      sentinels.secret,
    );
    expect(await (await client.get(id, `workspace/top${sentinels.root}`)).text()).not.toContain(
      "host root sentinel",
    );
    await client.put(id, `workspace/top/etc/oma-put-${tag}`, "via route");
    await client.put(id, `workspace/home/oma-put-${tag}`, "via route");
    await client.put(id, `workspace/top${sentinels.etc}`, "overwritten");
    expect(existsSync(`/etc/oma-put-${tag}`)).toBe(false);
    expect(existsSync(`/root/oma-put-${tag}`)).toBe(false);
    // What the routes wrote is where a process in the container sees it.
    const seen = await run(id, `cat /etc/oma-put-${tag} /root/oma-put-${tag} ${sentinels.etc}`);
    expect(seen.stdout).toBe("via routevia routeoverwritten");
    await expectHostUntouched();
  });
});
