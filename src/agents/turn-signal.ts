/** A running turn's signal, and whether its deadline is what ended it. */
export interface TurnSignal {
  signal: AbortSignal;
  /** true once the deadline passed (the turn ends as "timeout", not "aborted") */
  timedOut(): boolean;
  /** stops the timer and the listener on the run's signal; call when the turn ends */
  dispose(): void;
}

/** The longest delay a Node timer takes (about 24.8 days); a longer one would fire after 1 ms. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * The running turn's signal: aborted by the run's own (a /stop) or after `timeoutMs`, with the
 * reason `AbortSignal.timeout` gives. One controller and one timer, ended by `dispose`: on the hot
 * path this costs a fraction of `AbortSignal.any` over `AbortSignal.timeout` (weak references and
 * a finalization registry per turn, kept until the collector comes around).
 */
export function turnSignal(stop: AbortSignal, timeoutMs: number): TurnSignal {
  const controller = new AbortController();
  let timedOut = false;
  const onStop = () => controller.abort(stop.reason);
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    },
    Math.min(timeoutMs, LONGEST_TIMER_MS),
  );
  timer.unref(); // as AbortSignal.timeout's: a turn's deadline alone does not keep the process up
  if (stop.aborted) onStop();
  else stop.addEventListener("abort", onStop, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    },
  };
}
