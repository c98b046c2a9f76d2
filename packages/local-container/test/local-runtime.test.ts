/**
 * The shim's runtime object (what `ctx.container` becomes in workerd), driven from Node against a real
 * local container server. It only uses fetch, Request and URL, so it runs the same here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalContainerRuntime, heldContainerState } from "../src/shim/local-runtime.js";
import { type TestServer, startTestServer, waitFor } from "./helpers.js";

let harness: TestServer;
beforeAll(async () => {
  harness = await startTestServer({ maxContainers: 2 });
});
afterAll(() => harness.stop());

describe("local container runtime", () => {
  it("starts a container, forwards port 3000 with the container header, and destroys it", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "rt-1", {
      controlToken: harness.server.controlToken,
    });
    expect(runtime.running).toBe(false);
    runtime.start({ env: { FROM_START: "yes" } });
    const monitor = runtime.monitor();
    expect(runtime.running).toBe(true);
    const response = await runtime.getTcpPort(3000).fetch("http://localhost:3000/api/execute", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ command: 'echo "$FROM_START"', sessionId: "__DISABLE_SESSION__" }),
    });
    expect(((await response.json()) as Record<string, unknown>).stdout).toBe("yes\n");
    expect(harness.server.containers.get("rt-1")).toBeDefined();
    await runtime.destroy();
    await expect(monitor).resolves.toBeUndefined();
    expect(runtime.running).toBe(false);
    expect(harness.server.containers.get("rt-1")).toBeUndefined();
  });

  it("keeps a container running when a caller aborts its request, as a health check past its deadline does", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "rt-abort", {
      controlToken: harness.server.controlToken,
    });
    runtime.start();
    const controller = new AbortController();
    controller.abort(new Error("health check deadline"));
    await expect(
      runtime.getTcpPort(3000).fetch("http://ping/", { signal: controller.signal }),
    ).rejects.toThrow();
    // Reporting it exited would leave it running on the server with nothing that stops it.
    expect(runtime.running).toBe(true);
    expect(harness.server.containers.get("rt-abort")).toBeDefined();
    expect(await (await runtime.getTcpPort(3000).fetch("http://ping/")).text()).toBe("ready");
    await runtime.destroy();
    expect(harness.server.containers.get("rt-abort")).toBeUndefined();
  });

  it("serves only the control port and refuses outbound interception of a container started without it", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "rt-2", {
      controlToken: harness.server.controlToken,
    });
    runtime.start();
    await expect(runtime.getTcpPort(8080).fetch("http://localhost:8080/")).rejects.toThrow(
      /not listening on port 8080/,
    );
    await expect(runtime.interceptOutboundHttp("example.com", { fetch })).rejects.toThrow(
      /started without Worker-routed egress/,
    );
    await expect(runtime.interceptAllOutboundHttp({ fetch })).rejects.toThrow(
      /started without Worker-routed egress/,
    );
    await expect(runtime.interceptOutboundHttps("*", { fetch })).rejects.toThrow(
      /started without Worker-routed egress/,
    );
    const refusing = createLocalContainerRuntime(harness.server.url, "rt-2", {
      controlToken: harness.server.controlToken,
      outbound: "refuse",
    });
    await expect(refusing.interceptOutboundHttp("example.com", { fetch })).rejects.toThrow(
      /not supported/,
    );
    await expect(refusing.interceptAllOutboundHttp({ fetch })).rejects.toThrow(/not supported/);
    await expect(refusing.interceptOutboundHttps("*", { fetch })).rejects.toThrow(/not supported/);
    runtime.signal(15);
    await runtime.monitor();
    expect(await waitFor(() => harness.server.containers.get("rt-2") === undefined)).toBe(true);
  });

  it("reports a start refused for capacity as Cloudflare's max-instances error, which fails the start at once", async () => {
    const first = createLocalContainerRuntime(harness.server.url, "cap-1", {
      controlToken: harness.server.controlToken,
    });
    const second = createLocalContainerRuntime(harness.server.url, "cap-2", {
      controlToken: harness.server.controlToken,
    });
    const third = createLocalContainerRuntime(harness.server.url, "cap-3", {
      controlToken: harness.server.controlToken,
    });
    first.start();
    second.start();
    await first.getTcpPort(3000).fetch("http://ping/");
    await second.getTcpPort(3000).fetch("http://ping/");
    third.start();
    await expect(third.monitor()).rejects.toThrow(
      /Maximum number of running container instances exceeded/,
    );
    expect(third.running).toBe(false);
    await expect(third.getTcpPort(3000).fetch("http://ping/")).rejects.toThrow(
      /the container is not listening/,
    );
    await first.destroy();
    await second.destroy();
  });

  it("notices a container the server lost and reports it as exited", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "lost", {
      controlToken: harness.server.controlToken,
    });
    runtime.start();
    await runtime.getTcpPort(3000).fetch("http://ping/");
    await harness.server.containers.destroy("lost");
    const response = await runtime.getTcpPort(3000).fetch("http://localhost/api/exists", {
      method: "POST",
      body: JSON.stringify({ path: "/workspace", sessionId: "__DISABLE_SESSION__" }),
    });
    expect(response.status).toBe(404);
    await expect(runtime.monitor()).rejects.toThrow(
      /container exited with unexpected exit code: 137/,
    );
    expect(runtime.running).toBe(false);
    runtime.start();
    expect((await runtime.getTcpPort(3000).fetch("http://ping/")).status).toBe(200);
    await runtime.destroy();
  });

  it("holds no state for a container once it is destroyed, interception included", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "held-1", {
      controlToken: harness.server.controlToken,
    });
    // Registered before the start, as the Container class does for a Worker-routed container.
    await runtime.interceptOutboundHttp("example.com", { fetch });
    runtime.start();
    await runtime.getTcpPort(3000).fetch("http://ping/");
    expect(heldContainerState().runs).toContain("held-1");
    expect(heldContainerState().interceptions).toContain("held-1");
    await runtime.destroy();
    expect(heldContainerState().runs).not.toContain("held-1");
    expect(heldContainerState().interceptions).not.toContain("held-1");
  });

  it("holds no run for a container a signal stopped, and starts it again on request", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "held-2", {
      controlToken: harness.server.controlToken,
    });
    runtime.start();
    await runtime.getTcpPort(3000).fetch("http://ping/");
    runtime.signal(15);
    await runtime.monitor();
    expect(await waitFor(() => !heldContainerState().runs.includes("held-2"))).toBe(true);
    expect(runtime.running).toBe(false);
    await expect(runtime.monitor()).resolves.toBeUndefined();
    runtime.start();
    expect((await runtime.getTcpPort(3000).fetch("http://ping/")).status).toBe(200);
    await runtime.destroy();
    expect(heldContainerState().runs).not.toContain("held-2");
  });

  it("reports an unreachable server as a failed start", async () => {
    const runtime = createLocalContainerRuntime("http://127.0.0.1:9", "nowhere");
    runtime.start();
    await expect(runtime.monitor()).rejects.toThrow(/local container server unreachable/);
    expect(runtime.running).toBe(false);
  });
});
