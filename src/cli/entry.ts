/**
 * Process entry point: runs `main` with the real process streams and sets the exit code
 * (without process.exit, so pending output is flushed).
 */
import { main } from "./main.js";

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`nanobot: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
