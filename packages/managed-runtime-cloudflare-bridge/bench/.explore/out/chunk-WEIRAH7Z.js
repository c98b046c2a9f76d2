// src/wire/bridge-client.ts
import {
  AbortedError as AbortedError2,
  SandboxFailedError,
  UpstreamProtocolError as UpstreamProtocolError3,
  parseRecord
} from "@open-managed-agents/runtime-resource-contract";
import { z as z2 } from "zod";

// src/wire/bridge-errors.ts
import {
  UpstreamProtocolError,
  createError
} from "@open-managed-agents/runtime-resource-contract";
import { z } from "zod";
var bridgeErrorBodySchema = z.object({ error: z.string(), code: z.string().optional() });
var BRIDGE_CODE_MAP = {
  invalid_request: "invalid_request",
  unauthorized: "unauthorized",
  capacity_exceeded: "insufficient_capacity",
  payload_too_large: "limit_exceeded",
  workspace_read_not_found: "not_found",
  exec_error: "sandbox_failed",
  exec_transport_error: "sandbox_failed",
  workspace_archive_write_error: "sandbox_failed",
  workspace_archive_read_error: "sandbox_failed",
  pool_error: "sandbox_failed",
  session_error: "sandbox_failed",
  mount_error: "sandbox_failed",
  unmount_error: "sandbox_failed",
  tunnel_error: "sandbox_failed"
};
function codeForStatus(status) {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 404) return "not_found";
  if (status === 413) return "limit_exceeded";
  if (status === 429 || status === 503) return "insufficient_capacity";
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 504) return "timeout";
  return "sandbox_failed";
}
var MAX_MESSAGE_CHARS = 500;
function bridgeErrorFromPayload(operation, status, payload) {
  const parsed = bridgeErrorBodySchema.safeParse(payload);
  if (!parsed.success) {
    return new UpstreamProtocolError({
      message: `bridge ${operation} failed with HTTP ${status ?? "stream"} and a body that is not a bridge error`,
      context: { operation, status }
    });
  }
  const bridgeCode = parsed.data.code ?? null;
  const code = bridgeCode && BRIDGE_CODE_MAP[bridgeCode] || (status === null ? "sandbox_failed" : codeForStatus(status));
  return createError(code, {
    message: `bridge ${operation} failed: ${parsed.data.error.slice(0, MAX_MESSAGE_CHARS)}`,
    context: { operation, status, bridgeCode }
  });
}
async function bridgeErrorFromResponse(operation, response) {
  const text = await readBoundedText(response, 64 * 1024);
  let payload = null;
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.includes("json")) {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = null;
    }
  }
  if (payload === null) {
    return createError(codeForStatus(response.status), {
      message: `bridge ${operation} failed with HTTP ${response.status}: ${text.slice(0, 200) || "(empty body)"}`,
      context: { operation, status: response.status }
    });
  }
  return bridgeErrorFromPayload(operation, response.status, payload);
}
async function readBoundedText(response, maxBytes) {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => void 0);
  }
  return new TextDecoder().decode(concatBytes(chunks)).slice(0, maxBytes);
}
function concatBytes(chunks) {
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const result = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    result.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return result;
}

// src/wire/retry.ts
import { AbortedError } from "@open-managed-agents/runtime-resource-contract";
var DEFAULT_RETRY_POLICY = { attempts: 4, baseDelayMs: 100, maxDelayMs: 2e3 };
function backoffDelay(policy, attempt, random = Math.random) {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}
function delay(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError({ message: "bridge call aborted" }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError({ message: "bridge call aborted" }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// src/wire/sse-parser.ts
import { LimitExceededError, UpstreamProtocolError as UpstreamProtocolError2 } from "@open-managed-agents/runtime-resource-contract";
async function* parseSseStream(body, options) {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let event = "";
  let data = [];
  let dataSize = 0;
  let pendingCr = false;
  let finished = false;
  const takeLine = (line) => {
    if (line === "") {
      if (data.length === 0) {
        event = "";
        return null;
      }
      const frame = { event: event || "message", data: data.join("\n") };
      event = "";
      data = [];
      dataSize = 0;
      return frame;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") {
      dataSize += value.length + 1;
      if (dataSize > options.maxFrameBytes) {
        throw new LimitExceededError({
          message: `event-stream frame exceeds ${options.maxFrameBytes} bytes`,
          context: { limit: "maxFrameBytes", maxFrameBytes: options.maxFrameBytes }
        });
      }
      data.push(value);
    }
    return null;
  };
  let partial = [];
  let partialLength = 0;
  const lineLimit = options.maxFrameBytes + 64;
  try {
    for (; ; ) {
      if (options.signal?.aborted) throw options.signal.reason;
      const { value, done } = await reader.read();
      let text;
      try {
        text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      } catch (error) {
        throw new UpstreamProtocolError2({ message: "event stream is not valid UTF-8", cause: error });
      }
      if (pendingCr && text.startsWith("\n")) text = text.slice(1);
      pendingCr = false;
      let start = 0;
      for (let index = 0; index < text.length; index++) {
        const char = text.charCodeAt(index);
        if (char !== 10 && char !== 13) continue;
        partial.push(text.slice(start, index));
        const line = partial.join("");
        partial = [];
        partialLength = 0;
        const frame = takeLine(line);
        if (char === 13) {
          if (index + 1 < text.length) {
            if (text.charCodeAt(index + 1) === 10) index++;
          } else {
            pendingCr = true;
          }
        }
        start = index + 1;
        if (frame) yield frame;
      }
      if (start < text.length) {
        partial.push(text.slice(start));
        partialLength += text.length - start;
        if (partialLength > lineLimit) {
          throw new LimitExceededError({
            message: `event-stream frame exceeds ${options.maxFrameBytes} bytes`,
            context: { limit: "maxFrameBytes", maxFrameBytes: options.maxFrameBytes }
          });
        }
      }
      if (done) {
        if (partialLength > 0) takeLine(partial.join(""));
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => void 0);
    reader.releaseLock();
  }
}

// src/wire/bridge-client.ts
var BRIDGE_SANDBOX_ID_PATTERN = /^[a-z2-7]{1,128}$/;
var createResponseSchema = z2.object({ id: z2.string().regex(BRIDGE_SANDBOX_ID_PATTERN, "not a bridge sandbox id") });
var runningResponseSchema = z2.object({ running: z2.boolean() });
var exitPayloadSchema = z2.object({ exit_code: z2.number().int().refine(Number.isSafeInteger) });
var BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;
function createBridgeClient(options) {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const maxFrameBytes = options.maxFrameBytes ?? 8 * 1024 * 1024;
  const deletes = /* @__PURE__ */ new Map();
  const sandboxUrl = (id, suffix = "") => {
    if (!BRIDGE_SANDBOX_ID_PATTERN.test(id)) {
      throw new UpstreamProtocolError3({ message: "sandbox id is not in the bridge's id alphabet", context: { operation: "address" } });
    }
    return `${baseUrl}/v1/sandbox/${id}${suffix}`;
  };
  const send = async (operation, url, init, idempotent) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${options.apiKey}`);
    const attempts = idempotent ? retry.attempts : 1;
    for (let attempt = 0; ; attempt++) {
      let response = null;
      let failure = null;
      try {
        response = await fetchImpl(url, { ...init, headers });
      } catch (error) {
        if (init.signal?.aborted) throw new AbortedError2({ message: `bridge ${operation} aborted`, cause: error });
        failure = error;
      }
      const transient = response === null || [429, 502, 503, 504].includes(response.status);
      if (!transient || attempt + 1 >= attempts) {
        if (response === null) {
          throw new SandboxFailedError({ message: `bridge ${operation} unreachable`, context: { operation }, cause: failure });
        }
        return response;
      }
      await response?.body?.cancel().catch(() => void 0);
      await delay(backoffDelay(retry, attempt, options.random), init.signal ?? void 0);
    }
  };
  const expectOk = async (operation, response) => {
    if (response.ok) return response;
    throw await bridgeErrorFromResponse(operation, response);
  };
  const readJson = async (operation, response, schema) => {
    let payload;
    try {
      payload = await response.json();
    } catch (error) {
      throw new UpstreamProtocolError3({ message: `bridge ${operation} answered with a body that is not JSON`, context: { operation }, cause: error });
    }
    return parseRecord(schema, payload, { record: `bridge ${operation} response`, code: "upstream_protocol" });
  };
  const fileUrl = (id, workspacePath) => {
    const relative = workspacePath.replace(/^\/+/, "");
    return sandboxUrl(id, `/file/${relative.split("/").map(encodeURIComponent).join("/")}`);
  };
  return {
    async create(signal) {
      const response = await expectOk("create", await send("create", `${baseUrl}/v1/sandbox`, { method: "POST", signal }, false));
      return (await readJson("create", response, createResponseSchema)).id;
    },
    async running(id, signal) {
      const response = await expectOk("running", await send("running", sandboxUrl(id, "/running"), { method: "GET", signal }, true));
      return (await readJson("running", response, runningResponseSchema)).running;
    },
    async *exec(id, input) {
      const body = JSON.stringify({ argv: input.argv, ...input.cwd ? { cwd: input.cwd } : {}, ...input.timeoutMs ? { timeout_ms: input.timeoutMs } : {} });
      const response = await expectOk(
        "exec",
        await send("exec", sandboxUrl(id, "/exec"), { method: "POST", body, headers: { "content-type": "application/json" }, signal: input.signal }, false)
      );
      const contentType = response.headers.get("content-type") ?? "";
      if (!contentType.startsWith("text/event-stream") || !response.body) {
        await response.body?.cancel().catch(() => void 0);
        throw new UpstreamProtocolError3({ message: `bridge exec answered ${contentType || "no content type"} instead of an event stream`, context: { operation: "exec" } });
      }
      for await (const frame of parseSseStream(response.body, { maxFrameBytes, signal: input.signal })) {
        if (frame.event === "stdout" || frame.event === "stderr") {
          const compact = frame.data.replace(/\s+/g, "");
          if (!BASE64_PATTERN.test(compact) || compact.length % 4 !== 0) {
            throw new UpstreamProtocolError3({ message: `bridge exec ${frame.event} frame is not base64`, context: { operation: "exec" } });
          }
          yield { type: frame.event, data: Buffer.from(compact, "base64") };
        } else if (frame.event === "exit") {
          const payload = parseJsonFrame(frame.data);
          const exit = parseRecord(exitPayloadSchema, payload, { record: "bridge exec exit frame", code: "upstream_protocol" });
          yield { type: "exit", exitCode: exit.exit_code };
          return;
        } else if (frame.event === "error") {
          throw bridgeErrorFromPayload("exec", null, parseJsonFrame(frame.data));
        }
      }
      throw new UpstreamProtocolError3({ message: "bridge exec stream ended without an exit event", context: { operation: "exec" } });
    },
    async readFile(id, workspacePath, signal) {
      const response = await expectOk("file.read", await send("file.read", fileUrl(id, workspacePath), { method: "GET", signal }, true));
      return response.body ?? new ReadableStream({ start: (controller) => controller.close() });
    },
    async writeFile(id, workspacePath, body, signal) {
      const response = await send(
        "file.write",
        fileUrl(id, workspacePath),
        { method: "PUT", body, headers: { "content-type": "application/octet-stream" }, signal },
        false
      );
      await expectOk("file.write", response);
      await response.body?.cancel().catch(() => void 0);
    },
    async persist(id, excludes, signal) {
      const query = excludes.length > 0 ? `?excludes=${excludes.map(encodeURIComponent).join(",")}` : "";
      const response = await expectOk("persist", await send("persist", sandboxUrl(id, `/persist${query}`), { method: "POST", signal }, false));
      if (!response.body) throw new UpstreamProtocolError3({ message: "bridge persist answered without a body", context: { operation: "persist" } });
      return response.body;
    },
    async hydrate(id, tar, signal) {
      const response = await send(
        "hydrate",
        sandboxUrl(id, "/hydrate"),
        { method: "POST", body: tar, headers: { "content-type": "application/x-tar" }, signal },
        false
      );
      await expectOk("hydrate", response);
      await response.body?.cancel().catch(() => void 0);
    },
    destroy(id) {
      const inFlight = deletes.get(id);
      if (inFlight) return inFlight;
      const attempt = (async () => {
        const response = await send("delete", sandboxUrl(id), { method: "DELETE" }, true);
        if (!response.ok && response.status !== 404) throw await bridgeErrorFromResponse("delete", response);
        await response.body?.cancel().catch(() => void 0);
      })().finally(() => deletes.delete(id));
      deletes.set(id, attempt);
      return attempt;
    }
  };
}
function parseJsonFrame(data) {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new UpstreamProtocolError3({ message: "bridge exec frame is not JSON", context: { operation: "exec" }, cause: error });
  }
}

export {
  BRIDGE_SANDBOX_ID_PATTERN,
  createBridgeClient
};
