/** Shared flag helpers: integer parsing with messages that name the flag, the value and the rule. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export function intFlag(
  name: string,
  raw: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(v))
    throw new UsageError(`--${name} = ${JSON.stringify(raw)}: must be an integer`);
  if (v < min || v > max) throw new UsageError(`--${name} = ${v}: must be in [${min}, ${max}]`);
  return v;
}

export function requireFlag<T>(name: string, v: T | undefined): T {
  if (v === undefined) throw new UsageError(`--${name} is required (see --help)`);
  return v;
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
