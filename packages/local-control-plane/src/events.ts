/**
 * What the control plane did, for logs and demos. Carries ids and states only: never a key, secret or token.
 */
export type ControlPlaneEvent =
  | {
      readonly type: "work_queued";
      readonly workId: string;
      readonly environmentId: string;
      readonly sessionId: string | null;
      readonly reason: "new" | "lease_expired";
    }
  | {
      readonly type: "work_claimed";
      readonly workId: string;
      readonly environmentId: string;
      readonly deliveries: number;
    }
  | { readonly type: "work_acknowledged"; readonly workId: string; readonly environmentId: string }
  | { readonly type: "work_stopping"; readonly workId: string; readonly environmentId: string }
  | { readonly type: "work_stopped"; readonly workId: string; readonly environmentId: string }
  | {
      readonly type: "heartbeat_refused";
      readonly workId: string;
      readonly environmentId: string;
      readonly state: string;
    }
  | {
      readonly type: "turn_started";
      readonly sessionId: string;
      readonly turnId: string;
      readonly workId: string;
    }
  | {
      readonly type: "tool_use";
      readonly sessionId: string;
      readonly turnId: string;
      readonly toolUseId: string;
      readonly name: string;
    }
  | {
      readonly type: "tool_result";
      readonly sessionId: string;
      readonly toolUseId: string;
      readonly isError: boolean;
    }
  | { readonly type: "turn_ended"; readonly sessionId: string; readonly turnId: string };

/** Receives {@link ControlPlaneEvent}s. A throwing observer is ignored: it cannot break the server. */
export type ControlPlaneObserver = (event: ControlPlaneEvent) => void;

/** Wraps an observer so that its failures stay with it. */
export function safeObserver(observer: ControlPlaneObserver | undefined): ControlPlaneObserver {
  return (event) => {
    try {
      observer?.(event);
    } catch {
      // The observer's failure is its own; the control plane carries on.
    }
  };
}
