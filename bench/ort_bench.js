#!/usr/bin/env node
// ort_bench.js: times one ONNX model with onnxruntime-node (CPU EP).
//
//   node bench/ort_bench.js --model=M.onnx --input=@x.npy [--threads=1,2]
//        [--runs=20] [--min-runs=3] [--warmup=2] [--budget=5]
//        [--save-output=y.npy]
//   node bench/ort_bench.js --version
//
// For each thread count: a session with intraOpNumThreads=N,
// interOpNumThreads=1, graphOptimizationLevel 'all', sequential execution;
// `warmup` untimed runs, then timed runs until `runs` are done or `budget`
// seconds of timed runs have passed (never fewer than `min-runs`). Prints one
// JSON object on stdout:
//   {"ort_version": "...", "results": {"1": {"median_ms":..,"min_ms":..,
//    "max_ms":..,"mean_ms":..,"runs":..}, "2": {...}}}
// --save-output writes the first output of the last run as a float32 .npy
// (to compare outputs across runtimes, e.g. Tessel's int8 with ORT's).
// A failure prints {"error": "first line of the message"} and exits 1.
'use strict';

const fs = require('fs');
const path = require('path');

function fail(msg) {
  const line = String(msg).split('\n').find((l) => l.trim() !== '') || String(msg);
  process.stdout.write(JSON.stringify({ error: line.trim() }) + '\n');
  process.exit(1);
}

function parseArgs(argv) {
  const opts = { threads: '1', runs: '20', 'min-runs': '3', warmup: '2', budget: '5' };
  for (const a of argv) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) fail(`ort_bench.js: unexpected argument '${a}'`);
    opts[m[1]] = m[2] === undefined ? true : m[2];
  }
  return opts;
}

// Minimal .npy reader (format versions 1-3, C order, little-endian).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(`'${file}': not a .npy file`);
  }
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', headerStart, headerStart + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shapeM = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeM) throw new Error(`'${file}': bad .npy header`);
  if (fortran[1] === 'True') throw new Error(`'${file}': Fortran-order .npy not supported`);
  const dims = shapeM[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  const types = {
    '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
    '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
    '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
  };
  const t = types[descr[1]];
  if (!t) throw new Error(`'${file}': dtype ${descr[1]} not supported`);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = headerStart + headerLen;
  const bytes = count * t[1].BYTES_PER_ELEMENT;
  if (buf.length - offset < bytes) throw new Error(`'${file}': truncated data`);
  // copy into a fresh (aligned) ArrayBuffer
  const ab = new ArrayBuffer(bytes);
  new Uint8Array(ab).set(buf.subarray(offset, offset + bytes));
  let data = new t[1](ab);
  if (t[0] === 'bool') data = Array.from(data, (v) => v !== 0);
  return { type: t[0], data, dims };
}

// Writes a float32 C-order .npy (format 1.0).
function writeNpyF32(file, data, dims) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.writeUInt8(0x93, 0);
  head.write('NUMPY', 1, 'latin1');
  head.writeUInt8(1, 6);
  head.writeUInt8(0, 7);
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(Float32Array.from(data).buffer);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

function stats(times) {
  const s = [...times].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return {
    median_ms: median, min_ms: s[0], max_ms: s[n - 1],
    mean_ms: s.reduce((a, b) => a + b, 0) / n, runs: n,
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    fail(`cannot load onnxruntime-node: ${e.message}`);
  }
  const version = (ort.env && ort.env.versions && ort.env.versions.node) ||
    require(path.join(__dirname, 'node_modules', 'onnxruntime-node', 'package.json')).version;
  if (opts.version) {
    process.stdout.write(JSON.stringify({ ort_version: version }) + '\n');
    return;
  }
  if (!opts.model || typeof opts.input !== 'string') fail('usage: ort_bench.js --model=M.onnx --input=@x.npy');
  const inputs = String(opts.input).split(',').map((s) => s.replace(/^@/, ''));
  const threads = String(opts.threads).split(',').map(Number);
  const runs = Number(opts.runs), minRuns = Number(opts['min-runs']);
  const warmup = Number(opts.warmup), budgetMs = Number(opts.budget) * 1000;

  const results = {};
  for (const n of threads) {
    const session = await ort.InferenceSession.create(opts.model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: n,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
    if (inputs.length !== session.inputNames.length) {
      throw new Error(`model has ${session.inputNames.length} inputs, got ${inputs.length} .npy files`);
    }
    const feeds = {};
    session.inputNames.forEach((name, i) => {
      const a = readNpy(inputs[i]);
      feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
    });
    for (let i = 0; i < warmup; ++i) await session.run(feeds);
    const times = [];
    const start = process.hrtime.bigint();
    let last = null;
    while (times.length < runs) {
      const t0 = process.hrtime.bigint();
      last = await session.run(feeds);
      const t1 = process.hrtime.bigint();
      times.push(Number(t1 - t0) / 1e6);
      if (times.length >= minRuns && Number(t1 - start) / 1e6 > budgetMs) break;
    }
    results[String(n)] = stats(times);
    if (typeof opts['save-output'] === 'string' && last) {
      const y = last[session.outputNames[0]];
      writeNpyF32(opts['save-output'], y.data, y.dims);
    }
    if (session.release) await session.release();
  }
  process.stdout.write(JSON.stringify({ ort_version: version, results }) + '\n');
}

main().catch((e) => fail(e && e.message ? e.message : e));
