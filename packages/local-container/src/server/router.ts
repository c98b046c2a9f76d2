import { handleExecute, handleExecuteStream } from "./exec-routes.js";
import {
  handleDelete,
  handleExists,
  handleMkdir,
  handleMove,
  handleRead,
  handleRename,
  handleWrite,
} from "./file-routes.js";
import { handleListFiles } from "./list-files-route.js";
import {
  handleProcessGet,
  handleProcessKill,
  handleProcessKillAll,
  handleProcessList,
  handleProcessLogs,
  handleProcessStart,
  handleProcessStream,
} from "./process-routes.js";
import { handlePortWatch } from "./port-watch-route.js";
import { handleReadStream } from "./read-stream-route.js";
import type { RouteContext, RouteHandler } from "./route-context.js";
import { handleSessionCreate, handleSessionDelete, handleSessionList } from "./session-routes.js";

/** Container-scoped routes with a fixed path, keyed `METHOD path`. */
const FIXED_ROUTES: Readonly<Record<string, RouteHandler>> = {
  "POST /api/execute": handleExecute,
  "POST /api/execute/stream": handleExecuteStream,
  "POST /api/read": handleRead,
  "POST /api/read/stream": handleReadStream,
  "POST /api/write": handleWrite,
  "POST /api/mkdir": handleMkdir,
  "POST /api/list-files": handleListFiles,
  "POST /api/exists": handleExists,
  "POST /api/delete": handleDelete,
  "POST /api/rename": handleRename,
  "POST /api/move": handleMove,
  "POST /api/session/create": handleSessionCreate,
  "POST /api/session/delete": handleSessionDelete,
  "GET /api/session/list": handleSessionList,
  "POST /api/process/start": handleProcessStart,
  "GET /api/process/list": handleProcessList,
  "DELETE /api/process/kill-all": handleProcessKillAll,
  "POST /api/port-watch": handlePortWatch,
};

const PROCESS_ROUTE = /^\/api\/process\/([^/]+)(?:\/(logs|stream))?$/;

/** Finds the handler of a container-scoped route, or undefined for an unknown route. */
export function findRoute(method: string, pathname: string): RouteHandler | undefined {
  const fixed = FIXED_ROUTES[`${method} ${pathname}`];
  if (fixed !== undefined) return fixed;
  const match = PROCESS_ROUTE.exec(pathname);
  if (match === null) return undefined;
  const id = decodeURIComponent(match[1] as string);
  const action = match[2];
  if (method === "GET" && action === undefined)
    return (context: RouteContext) => handleProcessGet(context, id);
  if (method === "DELETE" && action === undefined)
    return (context: RouteContext) => handleProcessKill(context, id);
  if (method === "GET" && action === "logs")
    return (context: RouteContext) => handleProcessLogs(context, id);
  if (method === "GET" && action === "stream")
    return (context: RouteContext) => handleProcessStream(context, id);
  return undefined;
}
