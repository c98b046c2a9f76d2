import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP server on a free loopback port that answers S3 requests with broken wire data: a HEAD
 * without Content-Length or ETag, a GET without ETag, a list body that is not XML, and a 500 with
 * an HTML body. It stands in for a faulty S3-compatible endpoint.
 */
export async function startMalformedS3Server(): Promise<{
  endpoint: string;
  close(): Promise<void>;
}> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    const url = request.url ?? "";
    if (url.includes("list-type=2")) {
      response.writeHead(200, { "content-type": "application/xml" });
      response.end("this is <<< not xml");
    } else if (request.method === "HEAD") {
      response.writeHead(200, { "last-modified": new Date().toUTCString() });
      response.end();
    } else if (request.method === "GET") {
      response.writeHead(200, {
        "content-type": "text/plain",
        "content-length": "4",
        "last-modified": new Date().toUTCString(),
      });
      response.end("body");
    } else {
      response.writeHead(500, { "content-type": "text/html" });
      response.end("<html><body>gateway exploded</body></html>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
