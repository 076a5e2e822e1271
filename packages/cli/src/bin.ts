#!/usr/bin/env node
import { describeError, main } from "./main.js";
import { dropWritesOnClosedPipe } from "./pipe.js";

const failStream = (err: Error): void => {
  process.exitCode = 2;
  process.stderr.write(`dsv4-kv: cannot write the output (${(err as NodeJS.ErrnoException).code ?? err.name})\n`);
};
dropWritesOnClosedPipe(process.stdout, failStream);
dropWritesOnClosedPipe(process.stderr, () => {
  process.exitCode = 2;
});

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
}).then(
  (code) => {
    process.exitCode ??= code;
  },
  (err: unknown) => {
    process.stderr.write(`dsv4-kv: ${describeError(err, process.env)}\n`);
    process.exitCode = 2;
  },
);
