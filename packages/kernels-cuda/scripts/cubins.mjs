#!/usr/bin/env node
// The machine code of the shipped kernels, for before/after comparisons of a refactor (no GPU needed).
//   node scripts/cubins.mjs build <dir>     every .cu the shipped (default, non-bench) CMake target compiles, as one
//                                           cubin per SASS architecture and one PTX per virtual one, into <dir>
//   node scripts/cubins.mjs compare <a> <b> whole-file sha256 per cubin/PTX; where bytes differ, the SASS of every
//                                           function (cuobjdump -sass, encodings included) and the PTX without its
//                                           line records; exit 1 when any shipped function's code differs
// The flags are the CMake build's own (compile_commands.json of a fresh configure with the platform package's
// defaults: DSV4KV_BENCH=OFF, DSV4KV_BENCH_VARIANTS=OFF, Release, DSV4KV_CUDA_ARCH or the default architecture
// list); only -c/-o/--generate-code/--compress-mode are replaced. Sources and include paths are given relative to
// the package, so the line tables (-lineinfo) do not depend on where the checkout lives.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const platformDir = resolve(pkgDir, "../kernels-cuda-linux-x64");
const require = createRequire(join(pkgDir, "package.json"));

function fail(message) {
  console.error(`cubins: ${message}`);
  process.exit(2);
}

function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Split a compile_commands "command" string (CMake quotes only arguments with spaces or brackets). */
function words(command) {
  return [...command.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

async function configure(nvcc, arch) {
  const dir = mkdtempSync(join(tmpdir(), "dsv4kv-cubins-"));
  const { bin } = require("cmake-js/package.json");
  const cmakeJs = join(dirname(require.resolve("cmake-js/package.json")), bin["cmake-js"]);
  const napi = require("node-addon-api").include.replace(/"/g, "");
  const defines = [
    `NODE_ADDON_API_DIR=${napi}`,
    "DSV4KV_BENCH=OFF",
    "DSV4KV_BENCH_VARIANTS=OFF",
    "CMAKE_BUILD_TYPE=Release",
    "DSV4KV_CUDA=ON",
    `CMAKE_CUDA_COMPILER=${nvcc}`,
    "CMAKE_EXPORT_COMPILE_COMMANDS=ON",
  ];
  const args = [cmakeJs, "configure", "-d", pkgDir, "-O", dir, ...defines.map((d) => `--CD${d}`)];
  const r = spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, DSV4KV_CUDA_ARCH: arch } });
  if (r.status !== 0) fail(`cmake-js configure failed:\n${r.stdout}\n${r.stderr}`);
  const commands = JSON.parse(readFileSync(join(dir, "compile_commands.json"), "utf8"));
  rmSync(dir, { recursive: true, force: true });
  return commands.filter((c) => c.file.endsWith(".cu"));
}

/** The CMake nvcc command with its output and target flags removed and absolute package paths made relative. */
function baseFlags(entry) {
  const out = [];
  const argv = words(entry.command);
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-o" || a === "-c" || a === "-x") {
      if (a !== "-c") i++;
      continue;
    }
    if (a.startsWith("--generate-code=") || a.startsWith("--compress-mode") || a === entry.file) continue;
    out.push(a.startsWith("-I/") ? `-I${relative(pkgDir, a.slice(2)) || "."}` : a);
  }
  return { nvcc: argv[0], flags: out };
}

function archList(arch) {
  const sass = [];
  const ptx = [];
  for (const e of arch.split(/[;,]/).map((s) => s.trim()).filter(Boolean)) {
    const [sm, what] = e.split("-");
    if (what !== "virtual") sass.push(sm);
    if (what !== "real") ptx.push(sm);
  }
  return { sass, ptx };
}

async function build(outDir) {
  const { detectToolchain } = await import(join(platformDir, "scripts", "toolchain.mjs"));
  const toolchain = detectToolchain();
  if (!toolchain.nvcc) fail("no nvcc found (CUDACXX, PATH, CUDA_HOME, CUDA_PATH)");
  const entries = await configure(toolchain.nvcc, toolchain.arch);
  const { sass, ptx } = archList(toolchain.arch);
  mkdirSync(outDir, { recursive: true });
  const files = {};
  for (const entry of entries.sort((a, b) => a.file.localeCompare(b.file))) {
    const src = relative(pkgDir, entry.file);
    const { nvcc, flags } = baseFlags(entry);
    const stem = src.replace(/^native\//, "").replace(/\.cu$/, "").replace(/\//g, "__");
    const jobs = [
      ...sass.map((sm) => ({ name: `${stem}.sm_${sm}.cubin`, args: ["-cubin", `-arch=sm_${sm}`] })),
      ...ptx.map((sm) => ({ name: `${stem}.compute_${sm}.ptx`, args: ["-ptx", `-arch=compute_${sm}`] })),
    ];
    for (const job of jobs) {
      const out = join(outDir, job.name);
      console.error(`cubins: ${src} -> ${job.name}`);
      execFileSync(nvcc, [...flags, ...job.args, "-x", "cu", src, "-o", out], { cwd: pkgDir, stdio: "inherit" });
      files[job.name] = { source: src, sha256: sha256(readFileSync(out)) };
    }
  }
  const manifest = { toolchain: toolchain.release, arch: toolchain.arch, command: baseFlags(entries[0]).flags, files };
  writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`cubins: ${Object.keys(files).length} files from ${entries.length} sources in ${outDir}`);
}

/** Function name -> its SASS lines (address comments dropped; encodings kept). */
function sassByFunction(file) {
  const text = execFileSync("cuobjdump", ["-sass", file], { encoding: "utf8", maxBuffer: 256 << 20 });
  const out = new Map();
  let current = null;
  for (const line of text.split("\n")) {
    const fn = line.match(/^\s*Function : (\S+)/);
    if (fn) {
      current = [];
      out.set(fn[1], current);
    } else if (current && /\/\*[0-9a-f]{4,}\*\/|\/\* 0x[0-9a-f]+ \*\//.test(line)) {
      current.push(line.replace(/\/\*[0-9a-f]{4,}\*\//, "").trim());
    }
  }
  return out;
}

/** The PTX with line records, file table and the compiler's header comments removed. */
function ptxCode(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => !/^\s*(\.loc|\.file|\/\/)/.test(l))
    .join("\n");
}

function compareOne(name, a, b) {
  if (name.endsWith(".ptx")) {
    return ptxCode(a) === ptxCode(b) ? { same: "code", note: "PTX equal without line records" } : { same: false };
  }
  const sa = sassByFunction(a);
  const sb = sassByFunction(b);
  const changed = [];
  const removed = [];
  for (const [fn, code] of sa) {
    if (!sb.has(fn)) removed.push(fn);
    else if (sb.get(fn).join("\n") !== code.join("\n")) changed.push(fn);
  }
  const added = [...sb.keys()].filter((fn) => !sa.has(fn));
  const same = changed.length === 0 && added.length === 0 ? "code" : false;
  return { same, functions: sa.size, changed, removed, added };
}

function compare(dirA, dirB) {
  const ma = JSON.parse(readFileSync(join(dirA, "manifest.json"), "utf8"));
  const mb = JSON.parse(readFileSync(join(dirB, "manifest.json"), "utf8"));
  let bad = 0;
  const names = [...new Set([...Object.keys(ma.files), ...Object.keys(mb.files)])].sort();
  for (const name of names) {
    const a = ma.files[name];
    const b = mb.files[name];
    if (!a || !b) {
      console.log(`${a ? "only before" : "only after "}  ${name}`);
      continue;
    }
    if (a.sha256 === b.sha256) {
      console.log(`identical    ${name}  ${a.sha256.slice(0, 16)}`);
      continue;
    }
    const r = compareOne(name, join(dirA, name), join(dirB, name));
    const detail = [
      r.note,
      r.removed?.length ? `removed: ${r.removed.join(", ")}` : "",
      r.changed?.length ? `changed: ${r.changed.join(", ")}` : "",
      r.added?.length ? `added: ${r.added.join(", ")}` : "",
    ].filter(Boolean);
    if (r.functions !== undefined) detail.unshift(`${r.functions - r.removed.length} functions same SASS`);
    if (!r.same) bad++;
    const tag = r.same ? "same code   " : "DIFFERENT   ";
    console.log(`${tag} ${name}  ${a.sha256.slice(0, 16)} -> ${b.sha256.slice(0, 16)}  ${detail.join("; ")}`);
  }
  console.log(bad === 0 ? "cubins: every shipped function's machine code is unchanged" : `cubins: ${bad} differ`);
  return bad === 0 ? 0 : 1;
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === "build" && rest.length === 1) await build(resolve(rest[0]));
else if (cmd === "compare" && rest.length === 2 && rest.every((d) => existsSync(join(d, "manifest.json")))) {
  process.exitCode = compare(resolve(rest[0]), resolve(rest[1]));
} else fail("usage: node scripts/cubins.mjs build <dir> | compare <before-dir> <after-dir>");
