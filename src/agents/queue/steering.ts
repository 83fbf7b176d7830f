import type { ModelMessage } from "ai";
import type { TranscriptMessage } from "../../sessions/transcripts/index.js";

/** A steered message and where it goes: before the SDK message at index `at` of the round's list. */
interface Injected {
  at: number;
  message: ModelMessage;
}

/**
 * Steering of one running turn (`session.queue.mode: "steer"`): messages that arrived during the
 * turn are taken between its model steps and read by the next step as user messages, where they
 * arrived. The AI SDK rebuilds each step's messages from the round's start, so every steered
 * message is put back in its place at each later step. When the model has ended its answer and
 * messages wait, `next` opens another round of the same turn that answers them too.
 */
export function createSteering(steer: () => Promise<string[]>, now: () => number, lines: TranscriptMessage[]) {
  let injected: Injected[] = [];

  /** Takes what arrived, recording it for the transcript; the model messages to add. */
  async function take(): Promise<ModelMessage[]> {
    const texts = await steer();
    for (const text of texts) lines.push({ role: "user", content: text, timestamp: now() });
    return texts.map((text) => ({ role: "user" as const, content: text }));
  }

  /** `messages` with every steered message in its place. */
  function placed(messages: readonly ModelMessage[]): ModelMessage[] {
    const out: ModelMessage[] = [];
    let next = 0;
    messages.forEach((message, index) => {
      while (next < injected.length && injected[next]!.at <= index) out.push(injected[next++]!.message);
      out.push(message);
    });
    while (next < injected.length) out.push(injected[next++]!.message);
    return out;
  }

  return {
    /** For `prepareStep`: after the first step, takes what arrived; the step's messages with every steered one placed. */
    async before(messages: ModelMessage[], stepNumber: number): Promise<ModelMessage[]> {
      if (stepNumber > 0) for (const message of await take()) injected.push({ at: messages.length, message });
      return placed(messages);
    },
    /** After a round (`messages`: its whole list): the next round's messages, or undefined when nothing waits. */
    async next(messages: ModelMessage[]): Promise<ModelMessage[] | undefined> {
      const arrived = await take();
      if (arrived.length === 0) return undefined;
      const base = placed(messages);
      injected = [];
      return [...base, ...arrived];
    },
  };
}
