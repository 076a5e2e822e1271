import type { Options } from "tsup";

export function defineLibraryConfig(options: { entry: string[]; shims?: boolean }): Options | Options[];
