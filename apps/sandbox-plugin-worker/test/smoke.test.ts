import { afterAll, beforeAll, expect, it } from "vitest";
import { type Harness, IMAGE, startHarness } from "./support/harness.js";
import { createProtocolClient } from "./support/protocol-client.js";

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(() => harness?.stop());

it("smoke", async () => {
  const client = createProtocolClient({ baseUrl: harness.url, token: harness.token, installation: "inst-a" });
  console.log(await client.info());
  const created = await client.create({ id: "smoke-1", template: { image: IMAGE } });
  console.log(created);
  console.log(await client.exec("smoke-1", { argv: ["sh", "-c", "echo hi; pwd; echo $FOO"] }));
  console.log(await client.execStream("smoke-1", { argv: ["sh", "-c", "echo a; echo b >&2; exit 3"] }));
  console.log(await client.writeFile("smoke-1", "/workspace/x/y.txt", "hello"));
  console.log(new TextDecoder().decode(await client.readFile("smoke-1", "/workspace/x/y.txt")));
  console.log(await client.listDirectory("smoke-1", "/workspace/x"));
  console.log(await client.list());
  console.log(await client.delete("smoke-1"));
  expect(1).toBe(1);
});
