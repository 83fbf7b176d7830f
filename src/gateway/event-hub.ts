import type { EventFrame } from "./protocol.js";

/** Fans events out to listeners with a growing sequence number. */
export function createEventHub() {
  let seq = 0;
  const listeners = new Set<(frame: EventFrame) => void>();
  return {
    emit(event: string, payload: unknown): void {
      const frame: EventFrame = { type: "event", event, payload, seq: ++seq };
      for (const listener of listeners) listener(frame);
    },
    /** Adds a listener; returns the function that removes it. */
    subscribe(listener: (frame: EventFrame) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The gateway's event hub. */
export type EventHub = ReturnType<typeof createEventHub>;
