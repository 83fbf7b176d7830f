/** Messages and turns counted in one minute. */
export interface ActivityMinute {
  /** ms; the start of the minute */
  at: number;
  messages: number;
  turns: number;
}

const MINUTE_MS = 60_000;
/** One hour of minutes: what the control UI's Health chart shows. */
const MINUTES = 60;

/**
 * A fixed ring of per-minute counts for the last hour, in memory only (a restart starts it
 * empty): cheap enough to bump on every message, and what the Health view draws.
 */
export function createActivityRing(now: () => number) {
  const minutes = new Array<number>(MINUTES).fill(-1);
  const messages = new Array<number>(MINUTES).fill(0);
  const turns = new Array<number>(MINUTES).fill(0);

  /** The slot of the current minute, emptied first when it last held an older minute. */
  function slot(): number {
    const minute = Math.floor(now() / MINUTE_MS);
    const index = minute % MINUTES;
    if (minutes[index] !== minute) {
      minutes[index] = minute;
      messages[index] = 0;
      turns[index] = 0;
    }
    return index;
  }

  return {
    message(): void {
      messages[slot()]!++;
    },
    turn(): void {
      turns[slot()]!++;
    },
    /** The last 60 minutes, oldest first, the current one last; minutes without activity are zeros. */
    series(): ActivityMinute[] {
      const current = Math.floor(now() / MINUTE_MS);
      const out: ActivityMinute[] = [];
      for (let minute = current - MINUTES + 1; minute <= current; minute++) {
        const index = minute % MINUTES;
        const kept = minutes[index] === minute;
        out.push({ at: minute * MINUTE_MS, messages: kept ? messages[index]! : 0, turns: kept ? turns[index]! : 0 });
      }
      return out;
    },
  };
}
