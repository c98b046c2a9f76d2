import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shellFiles, shellcheck, shellcheckInstalled } from "../../../vitest.shellcheck.js";

const folder = join(import.meta.dirname, "../src/scripts");
const scripts = shellFiles(folder);

describe("programs run in the sandbox", () => {
  it("are shell files", () => {
    expect(scripts).toEqual([
      "capture.sh",
      "hash-files.sh",
      "listing-cache.sh",
      "receive.sh",
      "restore.sh",
    ]);
  });

  it.runIf(shellcheckInstalled).each(scripts)("%s passes shellcheck", (name) =>
    shellcheck(join(folder, name)),
  );
});
