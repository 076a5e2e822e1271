/**
 * A reader that stops early (`dsv4-kv plan | head -c 100`) closes the pipe: the rest of the output has nowhere
 * to go, which is not an error of the command. Such writes are dropped, quietly, and the command's own exit code
 * stands.
 */
export function isClosedPipe(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/** Wraps `stream.write` so a closed pipe drops writes, in the 'error' event and in write callbacks alike. */
export function dropWritesOnClosedPipe(stream: NodeJS.WriteStream, onOtherError: (err: Error) => void): void {
  let closed = false;
  stream.on("error", (err: Error) => {
    if (isClosedPipe(err)) closed = true;
    else onOtherError(err);
  });
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (closed) return false;
    const callback = rest.find((r): r is (err?: Error | null) => void => typeof r === "function");
    const others = rest.filter((r) => typeof r !== "function");
    return write(chunk, ...others, (err?: Error | null) => {
      if (err && isClosedPipe(err)) closed = true;
      callback?.(err && isClosedPipe(err) ? null : err);
    });
  }) as typeof stream.write;
}
