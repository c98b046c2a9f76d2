/**
 * Hostile commands through the Cloudflare SDK driver in workerd over the local container runtime: each
 * probe runs as an agent command in a container the driver's sandbox port leased (the SDK's exec and
 * file calls on that runtime id). The sentinels live on the host, planted by the Node global setup, which
 * answers what changed since (workerd cannot look at host files). Writes a confined container may make
 * (its copy-on-write `/etc`, its own `/root`) land in its own tree; the host's files, processes and
 * devices stay untouched, and the stack serves the next command.
 */
import { getSandbox } from "@cloudflare/sandbox";
import { resolveManagedRuntimePlan } from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceFence,
} from "@open-managed-agents/runtime-resource-contract";
import { afterEach, describe, expect, it } from "vitest";
import { type CloudflareSandbox, createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import { createCloudflareSdkSandbox } from "../../src/sdk.js";
import { TEST_RUNTIME_ENVIRONMENT, newScope, testEnv } from "./fixtures.js";

const signal = new AbortController().signal;
const host = testEnv.OMA_TEST_HOST_SENTINELS;
const tag = host.tag;
const MAX_FILE_BYTES = testEnv.OMA_TEST_CONTAINER_MAX_FILE_BYTES;
const HOST_ROOT_CONTENT = "host root sentinel";
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** The application's `createSandbox` over the confined class: no network, as on Cloudflare. */
function createConfinedSandbox(_env: unknown, runtimeId: string): CloudflareSandbox {
  return createCloudflareSdkSandbox(getSandbox(testEnv.CONFINED_SANDBOX, runtimeId));
}

// The process does nothing: the probes are commands an agent would run in its container.
const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh", args: ["-c", "true"] } },
};
const driver = createCloudflareManagedRuntimeDriver(testEnv, {
  createSandbox: createConfinedSandbox,
  runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
});
const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);

/** A leased container; the SDK's exec trims the output's trailing newline. */
interface Guest {
  readonly sandbox: CloudflareSandbox;
  run(
    script: string,
    timeoutMs?: number,
  ): Promise<{ stdout: string; stderr: string; exitCode: number }>;
}

const leases: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(leases.splice(0).map((terminate) => terminate().catch(() => undefined)));
});

/** A container leased through the driver's sandbox port, and the SDK sandbox of its runtime id. */
async function leaseGuest(): Promise<Guest> {
  const scope = newScope();
  const fence: RuntimeResourceFence = {
    ...scope,
    ownerId: "owner",
    generation: 1,
    token: `fence-${crypto.randomUUID()}`,
    expiresAt: new Date(Date.now() + 120_000).toISOString(),
  };
  const resources = await driver.create({
    environmentId: scope.environmentId,
    placement: "in_process",
    profile,
    plan,
    providerConfig: {},
  });
  const workspace = await resources.workspace.materialize({
    scope,
    fence,
    strategy: plan.workspaceStrategy,
    activeCheckpoint: null,
    idempotencyKey: "w",
    signal,
  });
  const lease = await resources.sandbox.acquire({
    scope,
    fence,
    plan,
    workspace,
    outputs: null,
    credentialEgress: null,
    signal,
  });
  leases.push(() => resources.sandbox.terminate({ scope, fence, lease, reason: "completed" }));
  const sandbox = createConfinedSandbox(testEnv, lease.runtimeId);
  return {
    sandbox,
    async run(script, timeoutMs = 60_000) {
      const { stdout, stderr, exitCode } = await sandbox.exec(script, { timeoutMs });
      return { stdout, stderr, exitCode };
    },
  };
}

/** The host as the probes found it (sentinels, `/etc/passwd`, the host process, no strays), and the stack serving. */
async function expectHostUntouched(guest: Guest): Promise<void> {
  const response = await fetch(testEnv.OMA_TEST_HOST_CHANGES_URL);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual([]);
  expect(testEnv.OMA_TEST_CONTAINER_CONFINEMENT).toBe("bubblewrap");
  expect(await guest.run("echo still-serving")).toMatchObject({
    exitCode: 0,
    stdout: "still-serving",
  });
}

describe("hostile commands through the Cloudflare driver's exec", () => {
  it("writes and deletes under /etc land in the container's copy-on-write /etc, never the host's", async () => {
    const guest = await leaseGuest();
    const result = await guest.run(
      `echo pwned > ${host.etcFile} && rm -f /etc/passwd && echo new > /etc/oma-new-${tag} && test ! -e /etc/passwd && cat ${host.etcFile} /etc/oma-new-${tag}`,
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: "pwned\nnew" });
    await expectHostUntouched(guest);
  });

  it("writes to /root and / land in the container's own root", async () => {
    const guest = await leaseGuest();
    const result = await guest.run(
      `echo mine > /root/oma-probe-${tag} && echo top > /oma-top-${tag} && cat ${host.rootFile} 2>&1; ls /root /`,
    );
    expect(result.stdout).toContain(`oma-probe-${tag}`);
    expect(result.stdout).toContain(`oma-top-${tag}`);
    expect(result.stdout).not.toContain(HOST_ROOT_CONTENT);
    await expectHostUntouched(guest);
  });

  it("cannot read host-only files, by exec or through the SDK's file read", async () => {
    const guest = await leaseGuest();
    const hostOnlyName = host.hostOnlyDir.split("/").at(-1) as string;
    const result = await guest.run(
      // Contents are searched where the container's own files live; `/usr`, `/etc`, `/opt` and `/var` (but its
      // `tmp`) are the host's system tree shown copy-on-write, gigabytes a full read would spend the timeout on.
      // The host-only directory's name is searched everywhere.
      `cat ${host.hostOnlyDir}/secret ${host.rootFile}; ls /home /mnt /var/tmp /tmp 2>&1; ` +
        `{ grep -rls -D skip ${host.secret} /root /home /mnt /tmp /var/tmp /workspace /srv; ` +
        `find / -path /proc -prune -o -path /sys -prune -o -name ${hostOnlyName} -print; } 2>/dev/null | head -3 | sed 's/^/found /'`,
      120_000,
    );
    expect(result.stdout + result.stderr).not.toContain(host.secret);
    expect(result.stdout).not.toMatch(/^found /m);
    expect(result.stdout + result.stderr).not.toContain(HOST_ROOT_CONTENT);
    expect(result.stderr).toContain(`${host.hostOnlyDir}/secret: No such file or directory`);
    const read = await guest.sandbox
      .readFile(`${host.hostOnlyDir}/secret`)
      .then(text, (error: unknown) => `refused: ${String(error)}`);
    expect(read).toMatch(/^refused: /);
    expect(read).not.toContain(host.secret);
    await expectHostUntouched(guest);
  }, 180_000);

  it("cannot signal a host process and sees only its own processes", async () => {
    const guest = await leaseGuest();
    const result = await guest.run(
      `kill -9 ${host.hostPid}; echo "kill=$?"; ls /proc | grep -cE '^[0-9]+$'`,
    );
    expect(result.stdout).toContain("kill=1");
    expect(Number(result.stdout.split("\n")[1])).toBeLessThan(10);
    await expectHostUntouched(guest);
  });

  it("cannot create device nodes or mount file systems: no capability is left", async () => {
    const guest = await leaseGuest();
    const result = await guest.run(
      'mknod /tmp/mem c 1 1; echo "mknod=$?"; mount -t tmpfs none /mnt; echo "mount=$?"; grep CapEff /proc/self/status',
    );
    expect(result.stdout).toContain("mknod=1");
    expect(result.stdout).toMatch(/mount=(1|32)/);
    expect(result.stdout).toContain("CapEff:\t0000000000000000");
    await expectHostUntouched(guest);
  });

  it("a disk fill stops at the file size limit", async () => {
    const guest = await leaseGuest();
    const result = await guest.run(
      `head -c ${MAX_FILE_BYTES * 2} /dev/zero > /workspace/fill; echo "exit=$?"; stat -c %s /workspace/fill; rm -f /workspace/fill`,
    );
    // head dies of SIGXFSZ (128 + 25) with the file at the bound exactly.
    expect(result.stdout.split("\n")).toEqual(["exit=153", String(MAX_FILE_BYTES)]);
    await expectHostUntouched(guest);
  });
});

describe("hostile paths through the SDK's file calls", () => {
  it("symlinks planted in /workspace resolve inside the container's root, never to the host", async () => {
    const guest = await leaseGuest();
    const linked = await guest.run(
      `ln -s ${host.hostOnlyDir}/secret /workspace/leak && ln -s / /workspace/top && ln -s /root /workspace/home && ln -s ../../../../../..${host.hostOnlyDir} /workspace/climb && ln -s ${host.hostOnlyDir} /workspace/away`,
    );
    expect(linked.exitCode).toBe(0);
    const read = (path: string): Promise<string> =>
      guest.sandbox.readFile(path).then(text, (error: unknown) => `refused: ${String(error)}`);
    expect(await read("/workspace/leak")).not.toContain(host.secret);
    expect(await read("/workspace/climb/secret")).not.toContain(host.secret);
    expect(await read(`/workspace/away/secret`)).not.toContain(host.secret);
    expect(await read(`/workspace/top${host.rootFile}`)).not.toContain(HOST_ROOT_CONTENT);
    const bytes = (content: string): Uint8Array => new TextEncoder().encode(content);
    await guest.sandbox.writeFile(`/workspace/top/etc/oma-put-${tag}`, bytes("via route"));
    await guest.sandbox.writeFile(`/workspace/home/oma-put-${tag}`, bytes("via route"));
    await guest.sandbox.writeFile(`/workspace/top${host.etcFile}`, bytes("overwritten"));
    // The host-only directory does not exist in the container, so this write has nowhere to go but may fail.
    await guest.sandbox
      .writeFile(`/workspace/away/oma-put-${tag}`, bytes("via route"))
      .catch(() => undefined);
    // What the calls wrote is where a process in the container sees it.
    const seen = await guest.run(`cat /etc/oma-put-${tag} /root/oma-put-${tag} ${host.etcFile}`);
    expect(seen.stdout).toBe("via routevia routeoverwritten");
    await expectHostUntouched(guest);
  });
});
