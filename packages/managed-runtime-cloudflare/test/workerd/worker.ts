import { Sandbox } from "@cloudflare/sandbox";

export { ContainerProxy } from "@cloudflare/sandbox";

export class TestSandbox extends Sandbox {}

export default {
  async fetch(): Promise<Response> {
    return new Response("test worker");
  },
};
