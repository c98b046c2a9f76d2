import { StringDecoder } from "node:string_decoder";

/** Collects one output stream as text, keeping at most `maxBytes` bytes. */
export interface OutputBuffer {
  /** Adds raw bytes; returns the decoded text of this chunk (possibly empty at a split character). */
  append(chunk: Buffer): string;
  /** Decodes what is left of a split character at the end of the stream. */
  finish(): string;
  /** Everything kept so far. */
  text(): string;
  /** True once bytes were dropped. */
  readonly truncated: boolean;
}

/** Creates a bounded UTF-8 output buffer. */
export function createOutputBuffer(maxBytes: number): OutputBuffer {
  const decoder = new StringDecoder("utf8");
  const parts: string[] = [];
  let kept = 0;
  let truncated = false;
  const keep = (text: string): void => {
    if (text.length === 0 || truncated) return;
    const size = Buffer.byteLength(text);
    if (kept + size <= maxBytes) {
      parts.push(text);
      kept += size;
      return;
    }
    truncated = true;
    const room = Buffer.from(text).subarray(0, maxBytes - kept);
    // Cut on a character boundary so the kept text stays valid UTF-8.
    parts.push(new StringDecoder("utf8").write(room));
    kept = maxBytes;
  };
  return {
    append(chunk) {
      const text = decoder.write(chunk);
      keep(text);
      return text;
    },
    finish() {
      const text = decoder.end();
      keep(text);
      return text;
    },
    text() {
      return parts.join("");
    },
    get truncated() {
      return truncated;
    },
  };
}
