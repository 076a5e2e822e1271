// The files a check looks at: git's tracked and untracked-but-not-ignored files when `root` is the top of a git
// work tree (so a new file counts before it is committed, and build outputs never do), else a plain walk that
// skips the usual output folders (the fixture trees of the checkers' tests are not git repositories).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";

const SKIPPED_DIRS = new Set([".git", "node_modules", "dist", "build", ".turbo", ".vitest", ".device"]);

/** @param {string} root @returns {string[]} repository-relative paths with `/` separators, sorted */
export function listFiles(root) {
  const fromGit = gitFiles(root);
  const files = fromGit ?? walk(root, root);
  return files.filter((f) => existsSync(join(root, f))).sort();
}

function gitFiles(root) {
  try {
    const top = execFileSync("git", ["rev-parse", "--show-toplevel"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    if (realpathSync(top) !== realpathSync(root)) return null;
    const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    return [...new Set(out.split("\0").filter(Boolean))];
  } catch {
    return null;
  }
}

function walk(root, dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...walk(root, join(dir, entry.name)));
    } else if (entry.isFile()) {
      out.push(relative(root, join(dir, entry.name)).split(sep).join("/"));
    }
  }
  return out;
}
