import type { ChildProcess } from "node:child_process";
import * as z from "zod";
import { MAX_FRAME_BYTES, createFrameReader, encodeFrame } from "./file-helper-protocol.js";
import { ControlApiError } from "./control-api-error.js";

/** What a file helper request answers: its header (without `ok`) and the data that came with it. */
export interface FileHelperReply {
  readonly header: Readonly<Record<string, unknown>>;
  readonly data: Buffer;
}

const FILE_OPERATION_ERROR_MARKER = Symbol.for(
  "@open-managed-agents/local-container/FileOperationError",
);

/** A failed file operation as the helper reported it: the errno code (`ENOENT`, `EISDIR`, …) and message. */
export class FileOperationError extends Error {
  readonly code: string;
  readonly [FILE_OPERATION_ERROR_MARKER] = true;

  constructor(code: string, message: string) {
    super(message);
    this.name = "FileOperationError";
    this.code = code;
  }

  /** True for a file operation error from any copy of this module (a marker, not `instanceof`). */
  static isInstance(error: unknown): error is FileOperationError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[FILE_OPERATION_ERROR_MARKER] === true
    );
  }
}

/** The client side of one container's file helper. */
export interface FileHelper {
  /**
   * Sends one request (`{op, ...}`, optional data) and resolves with the answer; a failed operation
   * rejects with a {@link FileOperationError}, a helper that stopped with a 500 `FILESYSTEM_ERROR`.
   * Starts the helper on first use, and again after it stopped.
   */
  request(header: Readonly<Record<string, unknown>>, data?: Uint8Array): Promise<FileHelperReply>;
  /** Stops the helper and fails what is pending; later requests fail. Idempotent. */
  dispose(): void;
}

/** Options of {@link createFileHelper}. */
export interface FileHelperOptions {
  /** Starts the helper program; its stdin and stdout carry the frames. */
  readonly start: () => { readonly child: ChildProcess; kill(signal?: NodeJS.Signals): void };
}

const answerSchema = z.union([
  z.object({ ok: z.literal(true) }).catchall(z.unknown()),
  z.object({ ok: z.literal(false), code: z.string().max(64), message: z.string().max(4096) }),
]);

const STDERR_KEEP = 2_048;

/** Operations that do the same when sent twice (a handle dies with the helper, so `read`, `write`, `close` are not). */
const REPEATABLE = new Set(["stat", "list", "openRead", "openWrite", "mkdir"]);

interface Pending {
  resolve(reply: FileHelperReply): void;
  reject(error: unknown): void;
}

interface Running {
  readonly process: ReturnType<FileHelperOptions["start"]>;
  readonly pending: Map<number, Pending>;
}

/**
 * Creates the client of a file helper started with `options.start`. Its answers are data from inside the
 * container, so each frame is size-bounded and parsed with a schema; a frame that breaks the protocol
 * stops the helper.
 */
export function createFileHelper(options: FileHelperOptions): FileHelper {
  let running: Running | undefined;
  let disposed = false;
  let nextId = 1;

  // Answers lost because the helper stopped; a request that can run twice is sent once more to a fresh one.
  const lost = new WeakSet<object>();
  const stopped = (reason: string): ControlApiError => {
    const error = new ControlApiError(
      "FILESYSTEM_ERROR",
      500,
      `The container's file helper stopped: ${reason}`,
      { reason },
    );
    lost.add(error);
    return error;
  };

  const launch = (): Running => {
    const started = options.start();
    const state: Running = { process: started, pending: new Map() };
    const { child } = started;
    let stderr = "";
    const end = (reason: string): void => {
      if (running === state) running = undefined;
      for (const entry of state.pending.values()) entry.reject(stopped(reason));
      state.pending.clear();
      child.stdout?.removeAllListeners("data");
      started.kill("SIGKILL");
    };
    child.stdin?.on("error", () => undefined);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP)
        stderr += chunk.toString("utf8").slice(0, STDERR_KEEP - stderr.length);
    });
    const answer = (frame: Buffer): void => {
      const id = frame.readUInt32BE(0);
      const headerLength = frame.readUInt32BE(4);
      if (8 + headerLength > frame.length) {
        end("it sent a malformed frame");
        return;
      }
      const entry = state.pending.get(id);
      if (entry === undefined) {
        end("it answered a request it was not sent");
        return;
      }
      state.pending.delete(id);
      let parsed: z.infer<typeof answerSchema>;
      try {
        parsed = answerSchema.parse(
          JSON.parse(frame.subarray(8, 8 + headerLength).toString("utf8")),
        );
      } catch {
        entry.reject(stopped("it sent an unreadable answer"));
        end("it sent an unreadable answer");
        return;
      }
      if (!parsed.ok) {
        entry.reject(new FileOperationError(parsed.code, parsed.message));
        return;
      }
      const { ok: _ok, ...header } = parsed;
      entry.resolve({ header, data: Buffer.from(frame.subarray(8 + headerLength)) });
    };
    child.stdout?.on(
      "data",
      createFrameReader(answer, () => end("it sent a malformed frame")),
    );
    child.once("error", (error) => end(error.message));
    child.once("close", (code, signal) =>
      end(`exit ${code ?? signal}${stderr.trim() === "" ? "" : `: ${stderr.trim()}`}`),
    );
    return state;
  };

  const send = (
    header: Readonly<Record<string, unknown>>,
    data: Uint8Array | undefined,
  ): Promise<FileHelperReply> => {
    if (disposed) return Promise.reject(stopped("the container was destroyed"));
    running ??= launch();
    const state = running;
    const id = nextId;
    nextId = nextId >= 0xffff_ffff ? 1 : nextId + 1;
    const frame = encodeFrame(id, header, data);
    if (frame.length > MAX_FRAME_BYTES) {
      return Promise.reject(
        new ControlApiError(
          "FILESYSTEM_ERROR",
          500,
          "A file helper request exceeds the frame limit",
          { limit: MAX_FRAME_BYTES },
        ),
      );
    }
    return new Promise<FileHelperReply>((resolve, reject) => {
      state.pending.set(id, { resolve, reject });
      state.process.child.stdin?.write(frame);
    });
  };

  return {
    request(header, data) {
      return send(header, data).catch((error: unknown) => {
        if (disposed || !lost.has(error as object) || !REPEATABLE.has(String(header.op)))
          throw error;
        return send(header, data);
      });
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      const state = running;
      running = undefined;
      if (state === undefined) return;
      for (const entry of state.pending.values())
        entry.reject(stopped("the container was destroyed"));
      state.pending.clear();
      state.process.child.stdin?.end();
      state.process.kill("SIGKILL");
    },
  };
}
