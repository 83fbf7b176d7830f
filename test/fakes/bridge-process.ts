// A gateway's event hub bridged to the others (src/cluster/event-bridge.ts) in a process of its own,
// for tests that SIGSTOP or SIGKILL one. Commands on stdin:
//   emit <from> <to> <sessionKey>   -> emits chat.delivery events with texts <from>..<to>-1, then "emitted <to>"
//   stream <sessionKey>             -> emits one event a millisecond (texts 0, 1, ...) until killed
// It prints "ready <nodeId>" once listening and "event <frame JSON>" for each event of another gateway.
// Env: SB_PG_URL, SB_SCHEMA, SB_NODE_ID.
import { createInterface } from "node:readline";
import pg from "pg";
import { bridgeEvents } from "../../src/cluster/event-bridge.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import { createLogger } from "../../src/logger.js";

const say = (line: string) => process.stdout.write(`${line}\n`);
const nodeId = process.env.SB_NODE_ID!;
const pool = new pg.Pool({ connectionString: process.env.SB_PG_URL!, application_name: nodeId });
pool.on("error", () => undefined);
const hub = createEventHub();
let emitting = false;
hub.subscribe((frame) => {
  if (!emitting) say(`event ${JSON.stringify(frame)}`);
});
const bridge = bridgeEvents({ pool, schema: process.env.SB_SCHEMA!, nodeId, hub, logger: createLogger("warn") });
await bridge.listening;

/** Emits on the hub: what it emits itself is not printed. */
const emit = (text: number, sessionKey: string) => {
  emitting = true;
  hub.emit("chat.delivery", { sessionKey, text: String(text), messageId: `m${text}`, kind: "reply" });
  emitting = false;
};

const commands: Record<string, (args: string[]) => void> = {
  emit([from, to, key]) {
    for (let i = Number(from); i < Number(to); i++) emit(i, key!);
    say(`emitted ${to}`);
  },
  stream([key]) {
    let next = 0;
    setInterval(() => emit(next++, key!), 1);
  },
};

createInterface({ input: process.stdin }).on("line", (line) => {
  const [name, ...args] = line.trim().split(" ");
  commands[name!]?.(args);
});
say(`ready ${nodeId}`);
