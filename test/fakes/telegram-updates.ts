// The fake Bot API's updates (./fake-telegram-server.ts): a queue per bot, long polls held until an
// update comes, and one poll at a time per bot: a second getUpdates while one is open is refused
// with 409 and counted, as Telegram refuses two bot instances.
import type http from "node:http";
import type { Update } from "grammy/types";

type Body = Record<string, unknown>;
/** Telegram's answer to a second bot instance polling at once. */
const CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

/** A bot's pending updates, the polls waiting for them, and how many polls are open now. */
interface Queue {
  updates: Update[];
  nextId: number;
  wake: Set<() => void>;
  polling: number;
  conflicts: number;
}

/** Holds an idle poll at most `maxHoldMs` or its `timeout`; `forgetConfirmed` false keeps confirmed updates. */
interface UpdateOptions {
  maxHoldMs?: number;
  forgetConfirmed?: boolean;
}

/** Answers one poll of `queue`: the updates from its offset, at once or once one is pushed. */
async function pollOnce(queue: Queue, body: Body, res: http.ServerResponse, options: UpdateOptions) {
  const offset = Number(body.offset ?? 0);
  if (offset > 0 && options.forgetConfirmed !== false)
    queue.updates = queue.updates.filter((u) => u.update_id >= offset);
  const ready = () => queue.updates.filter((u) => u.update_id >= offset).slice(0, Number(body.limit ?? 100));
  if (ready().length === 0) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        queue.wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(Number(body.timeout ?? 0) * 1000, options.maxHoldMs ?? 150));
      queue.wake.add(done);
      // The client gave up (bot stopped, process killed): res closes with the connection.
      res.once("close", done);
    });
  }
  return { ok: true, result: ready() };
}

/** The update queues of the bots whose tokens are `tokens`. */
export function createUpdateQueues(tokens: string[], options: UpdateOptions) {
  const queues = new Map<string, Queue>(
    tokens.map((token) => [token, { updates: [], nextId: 1, wake: new Set(), polling: 0, conflicts: 0 }]),
  );
  return {
    /** getUpdates' answer for the bot of `token`; 409 while another poll of it is open. */
    async getUpdates(token: string, body: Body, res: http.ServerResponse) {
      const queue = queues.get(token)!;
      if (queue.polling > 0) {
        queue.conflicts++;
        return { ok: false, error_code: 409, description: CONFLICT };
      }
      queue.polling++;
      try {
        return await pollOnce(queue, body, res, options);
      } finally {
        queue.polling--;
      }
    },
    /** Queues an update for the bot of `token` and wakes its open poll; returns its update_id. */
    push(token: string, update: Omit<Update, "update_id">): number {
      const queue = queues.get(token)!;
      const full = { ...update, update_id: queue.nextId++ } as Update;
      queue.updates.push(full);
      for (const wake of [...queue.wake]) wake();
      return full.update_id;
    },
    /** The update_id last pushed for the bot of `token`. */
    lastId: (token: string) => queues.get(token)!.nextId - 1,
    /** Polls refused as concurrent, for one bot or all. */
    conflicts: (token?: string) =>
      [...queues].filter(([t]) => token === undefined || t === token).reduce((n, [, q]) => n + q.conflicts, 0),
    /** Ends every open poll (the fake closes). */
    wakeAll() {
      for (const queue of queues.values()) for (const wake of [...queue.wake]) wake();
    },
  };
}
