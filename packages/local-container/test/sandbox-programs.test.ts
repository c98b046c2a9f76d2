import { join } from "node:path";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { shellFiles, shellcheck, shellcheckInstalled } from "../../../vitest.shellcheck.js";
import FILE_HELPER_PROGRAM from "../src/programs/file-helper.ts?program";

const folder = join(import.meta.dirname, "../src/server/scripts");
const scripts = shellFiles(folder);
/** Linux's bound on one argument (MAX_ARG_STRLEN): the program travels as `node -e <text>`. */
const MAX_ARGUMENT_BYTES = 128 * 1024;

describe("programs run in a container", () => {
  it("are shell files", () => {
    expect(scripts).toEqual(["probe-http.sh", "probe-tcp.sh", "run-with-snapshot.sh"]);
  });

  it.runIf(shellcheckInstalled).each(scripts)("%s passes shellcheck", (name) =>
    shellcheck(join(folder, name)),
  );

  it("the file helper is one CommonJS program that needs nothing but Node's builtins", () => {
    expect(() => new Script(FILE_HELPER_PROGRAM)).not.toThrow();
    const required = [...FILE_HELPER_PROGRAM.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map(
      (match) => match[1],
    );
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !name?.startsWith("node:"))).toEqual([]);
    expect(FILE_HELPER_PROGRAM).not.toMatch(/\bimport\s*\(|^import\s/m);
    expect(FILE_HELPER_PROGRAM).toContain("OMA_FILE_HELPER");
    expect(Buffer.byteLength(FILE_HELPER_PROGRAM)).toBeLessThan(MAX_ARGUMENT_BYTES);
  });
});
