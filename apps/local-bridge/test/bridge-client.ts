import { Readable } from "node:stream";
import { extract } from "tar-stream";

/** One bridge exec SSE frame: `event: <name>` and its joined `data:` lines. */
export interface BridgeFrame {
  readonly event: string;
  readonly data: string;
}

/** Parses the bridge's `event: …\ndata: …\n\n` exec stream. */
export function parseBridgeFrames(text: string): BridgeFrame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const lines = block.split("\n");
      const event =
        lines.find((line) => line.startsWith("event: "))?.slice("event: ".length) ?? "message";
      const data = lines
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice("data: ".length))
        .join("\n");
      return { event, data };
    });
}

/** Decodes the base64 stdout (or stderr) frames of an exec stream into text. */
export function decodeOutput(frames: readonly BridgeFrame[], stream: "stdout" | "stderr"): string {
  return frames
    .filter((frame) => frame.event === stream)
    .map((frame) => Buffer.from(frame.data, "base64").toString("utf8"))
    .join("");
}

/** Lists a tar's members as name → content (files) or null (other entries). */
export async function readTar(bytes: Uint8Array): Promise<Map<string, string | null>> {
  const members = new Map<string, string | null>();
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      members.set(
        entry.header.name,
        entry.header.type === "file" ? Buffer.concat(chunks).toString("utf8") : null,
      );
    }
  })();
  Readable.from([Buffer.from(bytes)]).pipe(reader);
  await done;
  return members;
}

/** A small client for the bridge's HTTP API. */
export function bridgeClient(url: string, apiKey: string) {
  const auth = { Authorization: `Bearer ${apiKey}` };
  return {
    async create(): Promise<string> {
      const response = await fetch(`${url}/v1/sandbox`, { method: "POST", headers: auth });
      return ((await response.json()) as { id: string }).id;
    },
    async exec(
      id: string,
      argv: string[],
      extra: Record<string, unknown> = {},
      headers: Record<string, string> = {},
    ): Promise<{ status: number; frames: BridgeFrame[]; contentType: string | null }> {
      const response = await fetch(`${url}/v1/sandbox/${id}/exec`, {
        method: "POST",
        headers: { ...auth, ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({ argv, ...extra }),
      });
      return {
        status: response.status,
        contentType: response.headers.get("content-type"),
        frames: parseBridgeFrames(await response.text()),
      };
    },
    put(id: string, path: string, body: Uint8Array | string): Promise<Response> {
      return fetch(`${url}/v1/sandbox/${id}/file/${path}`, { method: "PUT", headers: auth, body });
    },
    get(id: string, path: string): Promise<Response> {
      return fetch(`${url}/v1/sandbox/${id}/file/${path}`, { headers: auth });
    },
    request(method: string, path: string, init: RequestInit = {}): Promise<Response> {
      return fetch(`${url}${path}`, {
        ...init,
        method,
        headers: { ...auth, ...(init.headers as Record<string, string> | undefined) },
      });
    },
  };
}
