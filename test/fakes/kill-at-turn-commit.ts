// A failpoint for crash tests on PostgreSQL (test/e2e/postgres-turn-commit.test.ts). Given
// `{"n": 2, "at": "send"}` it SIGKILLs the process at the n-th batch that commits a turn's reply to
// its transcript (the batch holding an assistant message; its outbox item should be in it too):
//   "send"   before the statement leaves the process (nothing of it reaches the server)
//   "sent"   once it was handed to the socket (the server may or may not commit it)
//   "acked"  once the server answered (committed, and nobody in the process heard)
// With `"text"` only the batches whose assistant message holds that text count (one session's reply).
import pg from "pg";

/** Arms the failpoint `spec` (JSON, see above); nothing when undefined. */
export function killAtTurnCommit(spec: string | undefined): void {
  if (!spec) return;
  const { n, at, text } = JSON.parse(spec) as { n: number; at: "send" | "sent" | "acked"; text?: string };
  const die = () => process.kill(process.pid, "SIGKILL");
  let seen = 0;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: string[][] };
    const turnCommit =
      config?.name === "switchboard_batch" &&
      config.values![7]!.some(
        (json) => json.includes('"role":"assistant"') && (text === undefined || json.includes(text)),
      );
    if (!turnCommit || ++seen !== n) return query.apply(this, args);
    if (at === "send") die();
    const result = query.apply(this, args) as Promise<unknown>;
    if (at === "sent") setImmediate(die);
    return result.then((answer) => {
      die();
      return answer;
    });
  };
}
