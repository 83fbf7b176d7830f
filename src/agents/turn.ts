import type { DeliveryContext } from "../sessions/session-entry.js";
import type { TurnRequest } from "./turn-request.js";

/** One running turn as its steps see it: the request, its run id, its reply target (worked out once) and its abort signal. */
export interface Turn {
  request: TurnRequest;
  runId: string;
  /** where the reply and the run's notices go; undefined: an internal turn */
  target: DeliveryContext | undefined;
  signal: AbortSignal;
}
