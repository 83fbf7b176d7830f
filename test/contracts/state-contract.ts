// The contract every implementation of the state port (src/state/state-port.ts) runs. It drives the
// real stores built on the port (session store, inbox, outbox: ./state-stores.ts) and proves what
// the core relies on: no lost update under 1,000 concurrent read-modify-writes, exactly one winner
// of a dedupe claim, an outbox chunk claimed once, the writes of one commit all there or none (also
// across 20 SIGKILLs), and no acknowledged write lost or duplicated across 20 SIGKILLs of a writing
// process.
// The local implementation runs it in test/state/local-state.contract.test.ts; another
// implementation (PostgreSQL) calls `runStateContract` the same way with its own `open` and opener.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { StatePort } from "../../src/state/state-port.js";
import {
  commitSessionKey,
  crashSessionKey,
  dedupeKeyOf,
  inboundMessage,
  openContractStores,
  outboundItem,
} from "./state-stores.js";
import { compiledScript } from "../support/compiled-script.js";

/** An implementation of the state port, as the contract needs it. */
export interface StateContractSubject {
  /** names the implementation in the suite's title ("local files") */
  name: string;
  /**
   * Opens a port on the state kept for `dir`: an empty temporary folder the suite made for one
   * test, opened again (after the previous port was closed, or its process killed) to reopen the
   * same state. The local implementation keeps its files under `dir`; another implementation maps
   * `dir` to its own place (a schema or database named after it) and must start empty for a new one.
   */
  open(dir: string): Promise<StatePort>;
  /** the crash tests' child process; an implementation with nothing to crash (memory) leaves it out and skips them */
  crashChild?: {
    /**
     * Absolute path of a module exporting `openState(dir: string): Promise<StatePort>` that does
     * what `open` does; `test/fakes/state-writer.ts` loads it (run with `node --import tsx`) to
     * write through the port in a process the suite kills.
     */
    opener: string;
    /**
     * Settles once nothing the killed child sent can still change the state: a server may finish a
     * statement of a client it has not yet noticed is dead, after the kill (PostgreSQL does: a
     * commit landing while the test reads the tables one by one would look torn). The child's
     * connections carry `application_name` (PGAPPNAME) `appName`. Default: at once.
     */
    settled?(appName: string): Promise<void>;
  };
}

const WRITER = path.resolve(import.meta.dirname, "../fakes/state-writer.ts");

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-state-contract-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs the writer child on `dir` from write number `start`, kills it with SIGKILL `killAfterMs`
 * after it is ready, and returns the write numbers it began and those it saw acknowledged.
 */
async function runWriterAndKill(
  { opener, settled }: NonNullable<StateContractSubject["crashChild"]>,
  dir: string,
  start: number,
  killAfterMs: number,
  mode?: "commit",
): Promise<{ begun: number[]; acked: number[] }> {
  const appName = `sb-state-writer-${process.pid}-${start}`;
  const args = [
    await compiledScript(WRITER),
    await compiledScript(opener),
    dir,
    String(start),
    ...(mode ? [mode] : []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PGAPPNAME: appName },
  });
  const begun: number[] = [];
  const acked: number[] = [];
  let buffer = "";
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split("\n");
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === "ready") ready();
      else if (line.startsWith("begin ")) begun.push(Number(line.slice(6)));
      else if (line.startsWith("ack ")) acked.push(Number(line.slice(4)));
    }
  });
  // "close", not "exit": every line the child wrote is read before the round is checked.
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, signal) => resolve(signal)));
  await Promise.race([isReady, exited]);
  await new Promise((resolve) => setTimeout(resolve, killAfterMs));
  child.kill("SIGKILL");
  // A writer that stopped by itself failed a write or a check of its own (its stderr is above).
  if ((await exited) !== "SIGKILL") throw new Error("the writer process exited before it was killed");
  await settled?.(appName);
  return { begun, acked };
}

/** Defines the state port contract's tests for `subject`. */
export function runStateContract(subject: StateContractSubject): void {
  const reopen = async (dir: string) => openContractStores(await subject.open(dir), dir);

  describe(`state port contract: ${subject.name}`, () => {
    it("loses no update when 1,000 read-modify-writes of one session run at once", async () => {
      const dir = await tempDir();
      const stores = await reopen(dir);
      const key = "agent:main:telegram:dm:42";
      await Promise.all(
        Array.from({ length: 1_000 }, (_, i) =>
          stores.sessions.patch(key, (current) => ({
            sessionId: "s1",
            updatedAt: i,
            totalTokens: (current?.totalTokens ?? 0) + 1,
          })),
        ),
      );
      expect(stores.sessions.get(key)?.totalTokens).toBe(1_000);
      await stores.close();
      const reopened = await reopen(dir);
      expect(reopened.sessions.get(key)?.totalTokens).toBe(1_000);
      await reopened.close();
    });

    it("gives a dedupe key to exactly one of 1,000 concurrent claims, and knows it after a reopen", async () => {
      const dir = await tempDir();
      const stores = await reopen(dir);
      const claims = await Promise.all(
        Array.from({ length: 1_000 }, () => stores.inbox.claim(dedupeKeyOf("7"), inboundMessage("7"))),
      );
      expect(claims.filter((claim) => claim.status === "new")).toHaveLength(1);
      // Every other copy is the same stored entry, answered once: never a second turn.
      const runIds = new Set(claims.map((claim) => ("entry" in claim ? claim.entry.runId : claim.status)));
      expect(runIds.size).toBe(1);
      const [runId] = runIds;
      await stores.close();

      const reopened = await reopen(dir);
      const again = await reopened.inbox.claim(dedupeKeyOf("7"), inboundMessage("7"));
      expect(again).toMatchObject({ status: "pending", entry: { runId } });
      await reopened.inbox.complete(dedupeKeyOf("7"));
      await reopened.close();
      const afterDone = await reopen(dir);
      expect((await afterDone.inbox.claim(dedupeKeyOf("7"), inboundMessage("7"))).status).toBe("done");
      await afterDone.close();
    });

    it("gives an outbox chunk to exactly one of many concurrent claimers, and keeps the claim across a reopen", async () => {
      const dir = await tempDir();
      const stores = await reopen(dir);
      await stores.outbox.enqueue(outboundItem("reply:1"));
      const claims = await Promise.all(Array.from({ length: 200 }, (_, i) => stores.outbox.claim("reply:1", 0, i)));
      const winners = claims.filter((claim) => claim !== undefined);
      expect(winners).toHaveLength(1);
      const at = winners[0]!.sending!.at;
      await stores.close();

      const reopened = await reopen(dir);
      // Found after a restart: the send it marked may have been interrupted, so one sender may take it again.
      expect(reopened.outbox.get("reply:1")?.sending).toEqual({ index: 0, at });
      const again = await Promise.all(Array.from({ length: 200 }, () => reopened.outbox.claim("reply:1", 0, 1)));
      expect(again.filter((claim) => claim !== undefined)).toHaveLength(1);
      await reopened.outbox.update("reply:1", { sent: 1, sending: undefined, messageIds: ["m1"] });
      expect(await reopened.outbox.claim("reply:1", 0, 2)).toBeUndefined();
      await reopened.close();
    });

    // Whether a commit is all or nothing when the process dies halfway is proven by the SIGKILL
    // test below; this one proves the writes of one commit, across three tables, are all durable
    // once the commit settles.
    it("makes the writes of one commit across tables durable together", async () => {
      const dir = await tempDir();
      const state = await subject.open(dir);
      const stores = await openContractStores(state, dir);
      const writes: Promise<unknown>[] = [];
      await state.commit(() => {
        writes.push(
          stores.sessions.patch("agent:main:main", () => ({ sessionId: "s1", updatedAt: 1, totalTokens: 5 })),
          stores.inbox.claim(dedupeKeyOf("9"), inboundMessage("9")),
          stores.outbox.enqueue(outboundItem("reply:9")),
        );
      });
      await Promise.all(writes);
      await stores.close();

      const reopened = await reopen(dir);
      expect(reopened.sessions.get("agent:main:main")).toMatchObject({ sessionId: "s1", totalTokens: 5 });
      expect(reopened.inbox.pending().map((entry) => entry.dedupeKey)).toEqual([dedupeKeyOf("9")]);
      expect(reopened.outbox.get("reply:9")).toMatchObject({ status: "pending", sent: 0 });
      await reopened.close();
    });

    it("rejects a commit whose function throws, with the function's error, and keeps what it wrote before", async () => {
      const dir = await tempDir();
      const state = await subject.open(dir);
      await expect(
        state.commit(() => {
          throw new Error("the turn failed before it wrote");
        }),
      ).rejects.toThrow("the turn failed before it wrote");
      const stores = await openContractStores(state, dir);
      await expect(
        state.commit(() => {
          void stores.outbox.enqueue(outboundItem("reply:half"));
          throw new Error("the turn failed after one write");
        }),
      ).rejects.toThrow("the turn failed after one write");
      // The write is in memory, so it is on disk too: the two never disagree.
      expect(stores.outbox.get("reply:half")).toBeDefined();
      await stores.close();
      const reopened = await reopen(dir);
      expect(reopened.outbox.get("reply:half")).toMatchObject({ status: "pending" });
      await reopened.close();
    });

    const crashChild = subject.crashChild;
    if (!crashChild) return;

    it("keeps each commit whole across 20 SIGKILLs: its three writes are all there or none", async () => {
      const dir = await tempDir();
      const begun = new Set<number>();
      const acked = new Set<number>();
      for (let round = 0; round < 20; round++) {
        const got = await runWriterAndKill(crashChild, dir, round * 1_000_000, 20 + Math.random() * 120, "commit");
        for (const n of got.begun) begun.add(n);
        for (const n of got.acked) acked.add(n);
        const label = `after kill ${round + 1}`;
        const stores = await reopen(dir);
        const inboxPending = new Set(stores.inbox.pending().map((entry) => entry.message.messageId));
        for (const n of begun) {
          const parts = {
            session: stores.sessions.get(commitSessionKey(n)) !== undefined,
            inbound: inboxPending.has(`c${n}`),
            outbound: stores.outbox.get(`commit:${n}`) !== undefined,
          };
          const expected = acked.has(n) ? true : parts.session;
          expect(parts, `${label}: commit ${n}${acked.has(n) ? " (acknowledged)" : ""}`).toEqual({
            session: expected,
            inbound: expected,
            outbound: expected,
          });
        }
        await stores.close();
      }
      expect(acked.size).toBeGreaterThan(0);
    }, 300_000);

    it("loses no acknowledged write and duplicates none across 20 SIGKILLs of a writing process", async () => {
      const dir = await tempDir();
      const begun = new Set<number>();
      const acked: number[] = [];
      for (let round = 0; round < 20; round++) {
        const got = await runWriterAndKill(crashChild, dir, round * 1_000_000, 20 + Math.random() * 120);
        for (const n of got.begun) begun.add(n);
        acked.push(...got.acked);
        const label = `after kill ${round + 1}`;
        const stores = await reopen(dir);

        // Sessions: each acknowledged patch is there or superseded by a later one, and each
        // session's counter counts every acknowledged patch and no more patches than were begun.
        for (let k = 0; k < 10; k++) {
          const ackedHere = acked.filter((n) => n % 10 === k);
          const begunHere = [...begun].filter((n) => n % 10 === k);
          const row = stores.sessions.get(crashSessionKey(k));
          if (ackedHere.length === 0) continue;
          expect(row, `${label}: session ${k} lost`).toBeDefined();
          expect(row!.updatedAt, `${label}: session ${k} went back`).toBeGreaterThanOrEqual(Math.max(...ackedHere));
          expect(row!.totalTokens, `${label}: session ${k} lost an increment`).toBeGreaterThanOrEqual(ackedHere.length);
          expect(row!.totalTokens, `${label}: session ${k} counted a patch twice`).toBeLessThanOrEqual(
            begunHere.length,
          );
        }
        expect(stores.sessions.size()).toBeLessThanOrEqual(10);

        // Outbox: each acknowledged item has its first chunk recorded once, with no claim left on it.
        const items = acked.map((n) => ({ n, item: stores.outbox.get(`reply:${n}`) }));
        for (const { n, item } of items) {
          expect(item, `${label}: outbox item ${n} lost`).toBeDefined();
          expect(item, `${label}: outbox item ${n}`).toMatchObject({
            status: "pending",
            sent: 1,
            messageIds: [`m${n}`],
          });
          expect(item!.sending, `${label}: outbox item ${n} still claimed`).toBeUndefined();
        }
        const pending = stores.outbox.pending();
        expect(new Set(pending.map((item) => item.seq)).size, `${label}: two outbox items share a seq`).toBe(
          pending.length,
        );
        for (const item of pending) {
          expect(begun.has(Number(item.id.slice("reply:".length))), `${label}: ${item.id} never begun`).toBe(true);
          expect(item.messageIds.length, `${label}: ${item.id} recorded twice`).toBeLessThanOrEqual(1);
        }

        // Inbox: each acknowledged message is known (done for even numbers, still pending for odd),
        // never new again; pending entries are ones that were begun, each with its own seq.
        const inboxPending = stores.inbox.pending();
        expect(new Set(inboxPending.map((entry) => entry.seq)).size, `${label}: two inbox entries share a seq`).toBe(
          inboxPending.length,
        );
        for (const entry of inboxPending)
          expect(begun.has(Number(entry.message.messageId)), `${label}: ${entry.id} never begun`).toBe(true);
        for (const n of acked) {
          const claim = await stores.inbox.claim(dedupeKeyOf(String(n)), inboundMessage(String(n)));
          expect(claim.status, `${label}: inbound message ${n}`).toBe(n % 2 === 0 ? "done" : "pending");
        }
        await stores.close();
      }
      expect(acked.length).toBeGreaterThan(0);
    }, 300_000);
  });
}
