import { randomInt } from "node:crypto";

/** Letters and digits that cannot be mistaken for each other when read aloud or retyped (no 0/O, 1/I). */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const LENGTH = 8;

/** A new random pairing code (8 characters of {@link ALPHABET}) that `taken` does not hold yet. */
export function newPairingCode(taken: (code: string) => boolean): string {
  for (;;) {
    let code = "";
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    if (!taken(code)) return code;
  }
}
