import { spawn } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

describe("oma-local-control-plane (built bin)", () => {
  it("serves the admin API with a token it writes to a mode-0600 file, not to stdout", async () => {
    const dir = await tempDir();
    const tokenFile = join(dir.path, "admin.token");
    const child = spawn(process.execPath, [BIN, "--port", "0", "--admin-token-file", tokenFile], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OMA_LOCAL_CONTROL_PLANE_ADMIN_TOKEN: "" },
    });
    try {
      let stdout = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString("utf8");
          if (stdout.includes("admin token written"))
            resolve(/listening on (\S+)/.exec(stdout)![1]!);
        });
        child.once("exit", (code) => reject(new Error(`bin exited with ${code}`)));
      });
      const token = (await readFile(tokenFile, "utf8")).trim();
      expect(((await stat(tokenFile)).mode & 0o777).toString(8)).toBe("600");
      expect(stdout).not.toContain(token);
      const response = await fetch(`${url}/admin/v1/environments`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: "{}",
      });
      expect(response.status).toBe(201);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await dir.remove();
    }
  });

  it("exits non-zero with a typed message on a bad option", async () => {
    const child = spawn(process.execPath, [BIN, "--port", "99999"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("invalid_config");
  });
});
