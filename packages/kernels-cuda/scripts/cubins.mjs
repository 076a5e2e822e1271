#!/usr/bin/env node
// The machine code of the shipped kernels, for before/after comparisons of a refactor (no GPU needed).
//   node scripts/cubins.mjs build <dir> [--only <text>]
//                                           every .cu the shipped (default, non-bench) CMake target compiles, as one
//                                           cubin per SASS architecture and one PTX per virtual one, into <dir>;
//                                           --only keeps the sources whose path contains <text> (one kernel's files)
//   node scripts/cubins.mjs compare <a> <b> whole-file sha256 per cubin/PTX; where bytes differ, every function's
//                                           machine code (its .text section, relocations by symbol name, .nv.info,
//                                           parameter and shared sizes, registers and stack) and every PTX function
//                                           without its line records; exit 1 when a function kept differs or appears
//                                           (a function only before is listed: moved to the bench build)
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

/** CMake CUDA_ARCHITECTURES entries ("90-real", "90-virtual", "100") as SASS and PTX architecture numbers. */
function cmakeArchitectures(list) {
  const entries = list.split(/[;,]/).map((e) => e.trim().split("-"));
  return {
    sass: entries.filter(([sm, what]) => sm && what !== "virtual").map(([sm]) => sm),
    ptx: entries.filter(([sm, what]) => sm && what !== "real").map(([sm]) => sm),
  };
}

async function build(outDir, only) {
  const { detectToolchain } = await import(join(platformDir, "scripts", "toolchain.mjs"));
  const toolchain = detectToolchain();
  if (!toolchain.nvcc) fail("no nvcc found (CUDACXX, PATH, CUDA_HOME, CUDA_PATH)");
  const entries = await configure(toolchain.nvcc, toolchain.arch);
  const { sass, ptx } = cmakeArchitectures(toolchain.arch);
  mkdirSync(outDir, { recursive: true });
  const files = {};
  const kept = entries.filter((e) => only === undefined || relative(pkgDir, e.file).includes(only));
  if (kept.length === 0) fail(`no shipped source's path contains ${JSON.stringify(only)}`);
  for (const entry of kept.sort((a, b) => a.file.localeCompare(b.file))) {
    const src = relative(pkgDir, entry.file);
    const { nvcc, flags } = baseFlags(entry);
    const stem = src
      .replace(/^native\//, "")
      .replace(/\.cu$/, "")
      .replace(/\//g, "__");
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
  console.log(`cubins: ${Object.keys(files).length} files from ${kept.length} sources in ${outDir}`);
}

/** The sections of an ELF64 little-endian file (a cubin): name, type, link, entry size and bytes. */
function elfSections(buf) {
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const shstrndx = buf.readUInt16LE(0x3e);
  const raw = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    const off = Number(buf.readBigUInt64LE(o + 0x18));
    const size = Number(buf.readBigUInt64LE(o + 0x20));
    const type = buf.readUInt32LE(o + 4);
    raw.push({
      nameOff: buf.readUInt32LE(o),
      type,
      link: buf.readUInt32LE(o + 0x28),
      entsize: Number(buf.readBigUInt64LE(o + 0x38)),
      bytes: type === 8 ? Buffer.alloc(0) : buf.subarray(off, off + size), // SHT_NOBITS: no bytes in the file
      size,
    });
  }
  const names = raw[shstrndx].bytes;
  const cstr = (b, at) => b.toString("latin1", at, b.indexOf(0, at));
  return raw.map((sec) => ({ ...sec, name: cstr(names, sec.nameOff) }));
}

/**
 * A mangled name without its anonymous namespace's per-file tag (`55_GLOBAL__N__92509347_16_prefill_small_cu_c6c3e039_20391`
 * -> `_GLOBAL__N_`): nvcc derives the tag from the file's contents, so any edit of a file renames its kernels.
 */
export function stableName(name) {
  let out = "";
  let i = 0;
  for (;;) {
    const m = /(\d+)_GLOBAL__N_/.exec(name.slice(i));
    if (!m) return out + name.slice(i);
    const at = i + m.index;
    out += `${name.slice(i, at)}_GLOBAL__N_`;
    i = at + m[1].length + Number(m[1]);
  }
}

/** Symbol index -> name of the cubin's symbol table. */
function symbolNames(sections) {
  const symtab = sections.find((s) => s.type === 2);
  if (!symtab) return [];
  const strtab = sections[symtab.link].bytes;
  const out = [];
  for (let o = 0; o + 24 <= symtab.bytes.length; o += 24) {
    const at = symtab.bytes.readUInt32LE(o);
    out.push(stableName(strtab.toString("latin1", at, strtab.indexOf(0, at))));
  }
  return out;
}

/** Relocations of one section as "offset type symbol addend" lines (symbols by name: indices shift with others). */
function relocations(sec, syms) {
  const rela = sec.type === 4;
  const step = rela ? 24 : 16;
  const out = [];
  for (let o = 0; o + step <= sec.bytes.length; o += step) {
    const info = sec.bytes.readBigUInt64LE(o + 8);
    const addend = rela ? sec.bytes.readBigInt64LE(o + 16) : 0n;
    out.push(`${sec.bytes.readBigUInt64LE(o)} ${info & 0xffffffffn} ${syms[Number(info >> 32n)]} ${addend}`);
  }
  return out;
}

/** A per-function .nv.info as attribute lines, symbol indices (EIATTR_PARAM_CBANK, EIATTR_EXTERNS) by name. */
function infoAttributes(bytes, syms) {
  const out = [];
  for (let o = 0; o + 4 <= bytes.length; ) {
    const fmt = bytes[o];
    const attr = bytes[o + 1];
    const size = fmt === 4 ? bytes.readUInt16LE(o + 2) : 0;
    const data = bytes.subarray(o + 4, o + 4 + size);
    let shown = fmt === 4 ? data.toString("hex") : bytes.readUInt16LE(o + 2).toString(16);
    if (attr === 0x0a && size >= 4) shown = `${syms[data.readUInt32LE(0)]} ${data.subarray(4).toString("hex")}`;
    if (attr === 0x0f) shown = [...Array(size >> 2).keys()].map((k) => syms[data.readUInt32LE(4 * k)]).join(",");
    out.push(`${fmt}:${attr.toString(16)} ${shown}`);
    o += 4 + size;
  }
  return out.join("\n");
}

/** The global .nv.info's per-function resource attributes (registers, frame, stack), by function name. */
function resources(sections, syms) {
  const names = { 47: "regs", 17: "frame", 18: "minStack", 35: "maxStack" };
  const out = {};
  for (const sec of sections.filter((s) => s.name === ".nv.info")) {
    const b = sec.bytes;
    for (let o = 0; o + 4 <= b.length; ) {
      const fmt = b[o];
      const attr = b[o + 1];
      const size = fmt === 4 ? b.readUInt16LE(o + 2) : 0;
      if (fmt === 4 && names[attr] && size === 8) {
        const fn = syms[b.readUInt32LE(o + 4)];
        out[fn] = { ...out[fn], [names[attr]]: b.readUInt32LE(o + 8) };
      }
      o += 4 + size;
    }
  }
  return out;
}

/**
 * Function name -> what its code is: the machine code (.text.<fn> bytes), its relocations by symbol name, its
 * per-function .nv.info attributes, the sizes of its parameter bank and shared memory, and its register, frame and
 * stack counts. The line tables (-lineinfo) are left out: they move with the source lines, not with the code.
 */
function functionsOf(file) {
  const sections = elfSections(readFileSync(file));
  const syms = symbolNames(sections);
  const res = resources(sections, syms);
  const out = new Map();
  for (const sec of sections.filter((s) => s.name.startsWith(".text."))) {
    const fn = sec.name.slice(".text.".length);
    const part = (name) => sections.find((s) => s.name === name);
    const rel = sections.filter((s) => s.name === `.rel.text.${fn}` || s.name === `.rela.text.${fn}`);
    const info = part(`.nv.info.${fn}`);
    out.set(stableName(fn), {
      code: sha256(sec.bytes),
      codeBytes: sec.bytes.length,
      relocations: rel.flatMap((r) => relocations(r, syms)).join("\n"),
      info: info ? infoAttributes(info.bytes, syms) : "",
      params: part(`.nv.constant0.${fn}`)?.size ?? 0,
      shared: part(`.nv.shared.${fn}`)?.size ?? 0,
      resources: JSON.stringify(res[fn] ?? {}),
    });
  }
  return out;
}

/** The PTX's functions (.entry and .func) without line records and the file table, by name. */
function ptxFunctions(file) {
  const text = stableName(readFileSync(file, "utf8"))
    .split("\n")
    .filter((l) => !/^\s*(\.loc|\.file)\b/.test(l))
    .join("\n")
    .replace(/\$L__BB\d+_/g, "$L__BB_"); // block labels carry the function's index in the file
  const out = new Map();
  for (const m of text.matchAll(/^(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)[\s\S]*?^\}$/gm)) {
    out.set(m[1], m[0]);
  }
  return out;
}

/** Functions of `a` missing from `b`, in `b` only, and those whose code (or a part of it) differs. */
function compareOne(name, a, b) {
  const fa = name.endsWith(".ptx") ? ptxFunctions(a) : functionsOf(a);
  const fb = name.endsWith(".ptx") ? ptxFunctions(b) : functionsOf(b);
  const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);
  const removed = [...fa.keys()].filter((fn) => !fb.has(fn));
  const added = [...fb.keys()].filter((fn) => !fa.has(fn));
  const changed = [...fa.keys()]
    .filter((fn) => fb.has(fn) && !same(fa.get(fn), fb.get(fn)))
    .map((fn) => {
      const [x, y] = [fa.get(fn), fb.get(fn)];
      const parts = typeof x === "string" ? [] : Object.keys(x).filter((k) => x[k] !== y[k]);
      return parts.length ? `${fn} (${parts.join(", ")})` : fn;
    });
  return {
    same: changed.length === 0 && added.length === 0 ? "code" : false,
    functions: fa.size,
    removed,
    changed,
    added,
  };
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
      r.removed?.length ? `removed: ${r.removed.join(", ")}` : "",
      r.changed?.length ? `changed: ${r.changed.join(", ")}` : "",
      r.added?.length ? `added: ${r.added.join(", ")}` : "",
    ].filter(Boolean);
    const kind = name.endsWith(".ptx") ? "PTX" : "machine code";
    detail.unshift(`${r.functions - r.removed.length - r.changed.length} functions: same ${kind}`);
    if (!r.same) bad++;
    const tag = r.same ? "same code   " : "DIFFERENT   ";
    console.log(`${tag} ${name}  ${a.sha256.slice(0, 16)} -> ${b.sha256.slice(0, 16)}  ${detail.join("; ")}`);
  }
  console.log(bad === 0 ? "cubins: every shipped function's machine code is unchanged" : `cubins: ${bad} differ`);
  return bad === 0 ? 0 : 1;
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === "build" && rest.length === 1) await build(resolve(rest[0]));
else if (cmd === "build" && rest.length === 3 && rest[1] === "--only") await build(resolve(rest[0]), rest[2]);
else if (cmd === "compare" && rest.length === 2 && rest.every((d) => existsSync(join(d, "manifest.json")))) {
  process.exitCode = compare(resolve(rest[0]), resolve(rest[1]));
} else fail("usage: node scripts/cubins.mjs build <dir> [--only <text>] | compare <before-dir> <after-dir>");
