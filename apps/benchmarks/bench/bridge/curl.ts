import { spawn } from "node:child_process";

/** One finished curl transfer. */
export interface CurlTransfer {
  readonly status: number;
  readonly downloadedBytes: number;
  readonly uploadedBytes: number;
  /** curl's own `time_total`: connect to last byte, without process start-up. */
  readonly seconds: number;
  /** Exit code of curl (28: the time limit passed). */
  readonly exitCode: number;
  readonly stderr: string;
}

/** A request for {@link curl}. */
export interface CurlRequest {
  readonly url: string;
  readonly apiKey: string;
  readonly method?: "GET" | "POST";
  /** A host file sent as the raw body. */
  readonly bodyFile?: string;
  readonly contentType?: string;
  readonly maxSeconds?: number;
}

const quote = (value: string) => `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/**
 * Runs one `curl` transfer; the response body goes to /dev/null. The configuration (the API key
 * included) is passed on stdin with `-K -`, so it never appears in a process listing.
 */
export function curl(request: CurlRequest): Promise<CurlTransfer> {
  const config = [
    `url = ${quote(request.url)}`,
    `header = ${quote(`Authorization: Bearer ${request.apiKey}`)}`,
    `request = ${quote(request.method ?? "GET")}`,
    `output = "/dev/null"`,
    "silent",
    "show-error",
    `write-out = "%{http_code} %{size_download} %{size_upload} %{time_total}"`,
    ...(request.bodyFile ? [`data-binary = ${quote(`@${request.bodyFile}`)}`] : []),
    ...(request.contentType ? [`header = ${quote(`Content-Type: ${request.contentType}`)}`] : []),
    // Without this, curl waits up to a second for a `100 Continue` before sending a large body.
    ...(request.bodyFile ? [`header = "Expect:"`] : []),
    ...(request.maxSeconds ? [`max-time = ${request.maxSeconds}`] : []),
  ].join("\n");
  const child = spawn("curl", ["-K", "-"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(`${config}\n`);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      const [status = "0", downloaded = "0", uploaded = "0", seconds = "0"] = stdout
        .trim()
        .split(" ");
      resolve({
        status: Number(status),
        downloadedBytes: Number(downloaded),
        uploadedBytes: Number(uploaded),
        seconds: Number(seconds),
        exitCode: code ?? -1,
        stderr: stderr.trim().replaceAll(request.apiKey, "[redacted]"),
      });
    });
  });
}
