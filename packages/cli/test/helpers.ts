// Shared by the CLI's end-to-end tests: a command line from an object of flags.

/** `{ ratio: 4, json: true, seed: undefined }` → `["--ratio", "4", "--json"]`: a switch when true, omitted when
 * false or undefined, `--name value` otherwise (the value as typed, so strings reach the parser unchanged). */
export function flagArgs(flags: Readonly<Record<string, string | number | boolean | undefined>>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(flags)) {
    if (value === true) out.push(`--${name}`);
    else if (value !== false && value !== undefined) out.push(`--${name}`, String(value));
  }
  return out;
}

/** The flags of a c4 ring 16 (SWA page 256) residency run at `draftTokens`. */
export function c4Ring16(
  draftTokens: number,
  more: Readonly<Record<string, string | number | boolean>> = {},
): string[] {
  return [
    "simulate",
    "residency",
    ...flagArgs({ ratio: 4, ring: 16, "swa-page": 256, "draft-tokens": draftTokens, ...more }),
  ];
}
