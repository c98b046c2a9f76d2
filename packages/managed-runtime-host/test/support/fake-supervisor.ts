import {
  type HarnessSupervisorCommand,
  type HarnessSupervisorEvent,
  type HarnessSupervisorTransportPort,
  createNdjsonSupervisorChannel,
} from "@open-managed-agents/runtime-resource-contract";

/** The supervisor side of one conversation: it reads commands and writes events as NDJSON bytes. */
export interface SupervisorSide {
  /** The next command the host wrote, parsed from its line. */
  command(): Promise<HarnessSupervisorCommand>;
  emit(event: HarnessSupervisorEvent): Promise<void>;
  /** Writes raw text (for malformed lines). */
  raw(text: string): Promise<void>;
  /** Ends stdout. */
  end(): Promise<void>;
}

/** A transport whose supervisor is a script running in this process, speaking real NDJSON over web streams. */
export function createScriptedSupervisorTransport(
  script: (side: SupervisorSide) => Promise<void>,
): HarnessSupervisorTransportPort & {
  /** Every byte the host wrote to the supervisor's stdin, as text. */
  readonly stdin: () => string;
  readonly closed: () => number;
} {
  let written = "";
  let closes = 0;
  return {
    stdin: () => written,
    closed: () => closes,
    async open() {
      // Roomy readable queues behave like pipe buffers: a write does not wait for the other side to read.
      const toSupervisor = new TransformStream<Uint8Array, Uint8Array>({}, undefined, {
        highWaterMark: 1024,
      });
      const toHost = new TransformStream<Uint8Array, Uint8Array>({}, undefined, {
        highWaterMark: 1024,
      });
      const encoder = new TextEncoder();
      const decoder = new TextDecoder();
      const reader = toSupervisor.readable.getReader();
      const writer = toHost.writable.getWriter();
      let buffer = "";
      const side: SupervisorSide = {
        async command() {
          for (;;) {
            const newline = buffer.indexOf("\n");
            if (newline !== -1) {
              const line = buffer.slice(0, newline);
              buffer = buffer.slice(newline + 1);
              return JSON.parse(line) as HarnessSupervisorCommand;
            }
            const { done, value } = await reader.read();
            if (done) throw new Error("stdin closed");
            const text = decoder.decode(value);
            written += text;
            buffer += text;
          }
        },
        emit: (event) => writer.write(encoder.encode(`${JSON.stringify(event)}\n`)),
        raw: (text) => writer.write(encoder.encode(text)),
        end: () => writer.close(),
      };
      void script(side).catch(() => undefined);
      return createNdjsonSupervisorChannel({
        stdin: toSupervisor.writable,
        stdout: toHost.readable,
        close: async () => {
          closes += 1;
          // Collect whatever the host wrote that the script did not read.
          for (;;) {
            const { done, value } = await reader
              .read()
              .catch(() => ({ done: true as const, value: undefined }));
            if (done) break;
            written += decoder.decode(value);
          }
        },
      });
    },
  };
}
