import { describe, expect, it } from "vitest";
import { SANDBOX_IMAGE, SANDBOX_RUNTIME_ENVIRONMENT } from "../../src/runtime/sandbox-image.js";
import { appFile, installedPackage } from "./artefacts.js";

/** The image references of the Dockerfile's `FROM` lines. */
function fromImages(dockerfile: string): string[] {
  return dockerfile
    .split("\n")
    .map((line) => /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)/i.exec(line)?.[1])
    .filter((image): image is string => image !== undefined);
}

describe("the container image", () => {
  it("is the SDK's own image at exactly the installed @cloudflare/sandbox version", async () => {
    const { version } = await installedPackage("@cloudflare/sandbox");
    const images = fromImages(await appFile("Dockerfile"));
    expect(images).toEqual([`docker.io/cloudflare/sandbox:${version}`]);
  });

  it("is what the driver reports as the runtime environment", async () => {
    const { version } = await installedPackage("@cloudflare/sandbox");
    expect(SANDBOX_IMAGE).toBe(`docker.io/cloudflare/sandbox:${version}`);
    expect(SANDBOX_RUNTIME_ENVIRONMENT).toEqual({
      kind: "base",
      artifact: { type: "image", reference: SANDBOX_IMAGE },
    });
  });

  it("is pinned in package.json to the version the lockfile installs", async () => {
    const manifest = JSON.parse(await appFile("package.json")) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies["@cloudflare/sandbox"]).toBe(
      (await installedPackage("@cloudflare/sandbox")).version,
    );
  });

  it("installs the AMA worker an ama_worker profile names, from the file the vendor script copies", async () => {
    const dockerfile = await appFile("Dockerfile");
    expect(dockerfile).toMatch(
      /^COPY vendor\/oma-ama-worker\.js \/usr\/local\/bin\/oma-ama-worker$/m,
    );
    expect(dockerfile).toMatch(
      /^RUN chmod 0755 \/usr\/local\/bin\/oma-ama-worker && oma-ama-worker --version$/m,
    );
    const script = await appFile("scripts/vendor-ama-worker.mjs");
    expect(script).toContain('join(packageDir, "dist", "bin", "oma-ama-worker.js")');
  });

  it("reads FROM lines the way Docker does", () => {
    expect(
      fromImages(
        "# FROM commented:1\nfrom --platform=linux/amd64 a/b:1 AS base\nRUN true\nFROM c:2\n",
      ),
    ).toEqual(["a/b:1", "c:2"]);
  });
});
