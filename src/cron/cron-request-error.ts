import { SwitchboardError } from "../errors.js";

/** Thrown for requests the scheduler refuses (unknown job, a one-shot time in the past, a job already running). */
export class CronRequestError extends SwitchboardError {
  declare readonly code: "NOT_FOUND" | "INVALID_REQUEST" | "BUSY";

  constructor(code: "NOT_FOUND" | "INVALID_REQUEST" | "BUSY", message: string) {
    super(code, message);
    this.name = "CronRequestError";
  }
}
