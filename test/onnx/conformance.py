#!/usr/bin/env python3
"""ONNX backend conformance runner for Tessel.

Runs every case of the ONNX backend test data (node, pytorch-converted,
pytorch-operator, simple; 1,072 cases) through tessel-compile and tessel-run,
classifies each case, and compares the result with the expected-failure list
test/onnx/expected_failures.txt.

  /usr/bin/python3 test/onnx/conformance.py [--jobs N] [--dirs node,simple]
      [--filter REGEX] [--update-expected] [--write-docs docs/onnx-support.md]

Exit status: 0 when every case behaved as the list says; 1 when a case not on
the list failed, a listed case passed, a listed case does not exist, or any
case crashed (a crash is never an accepted failure); 2 on bad usage.
See test/onnx/README.md.
"""
import argparse
import collections
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402
from onnx_case import (PASS, COMPILE_FAIL, RUN_FAIL, MISMATCH, TIMEOUT,  # noqa: E402
                       CRASH, ERROR, Result)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
DEFAULT_DIRS = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_LIST = os.path.join(HERE, "expected_failures.txt")
TOL_RE = re.compile(r"^(rtol|atol)=([0-9.eE+-]+)$")
OP_RE = re.compile(r"\(([A-Za-z_][\w.]*), opset \d+\)|\(op_type:([A-Za-z_][\w.]*)\)")
NODE_PREFIX_RE = re.compile(r"^node '[^']*' \(([\w.]+), opset \d+\):\s*")


# --------------------------------------------------------------------------
# Expected-failure / tolerance list
# --------------------------------------------------------------------------

class ListEntry:
    def __init__(self, case, reason, lineno, rtol=None, atol=None):
        self.case, self.reason, self.lineno = case, reason, lineno
        self.rtol, self.atol = rtol, atol


def parse_list(path):
    """Returns (xfail: {case: ListEntry}, tol: {case: ListEntry}, errors).

    Lines (blank lines and '#' comments are ignored):
      DIR/CASE  <reason>                                 expected failure
      tolerance DIR/CASE rtol=X [atol=Y]  <reason>       tolerance override
    The reason is required on both."""
    xfail, tol, errors = {}, {}, []
    if not os.path.exists(path):
        return xfail, tol, errors
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            toks = line.split()
            where = "%s:%d" % (os.path.basename(path), n)
            if toks[0] == "tolerance":
                if len(toks) < 2:
                    errors.append("%s: 'tolerance' needs DIR/CASE" % where)
                    continue
                case, vals, i = toks[1], {}, 2
                while i < len(toks) and TOL_RE.match(toks[i]):
                    m = TOL_RE.match(toks[i])
                    try:
                        vals[m.group(1)] = float(m.group(2))
                    except ValueError:
                        errors.append("%s: bad number in %s" % (where, toks[i]))
                    i += 1
                reason = " ".join(toks[i:])
                if not vals:
                    errors.append("%s: tolerance line for %s sets neither rtol= "
                                  "nor atol=" % (where, case))
                if not reason:
                    errors.append("%s: tolerance override for %s has no reason; "
                                  "write why the looser tolerance is right" % (where, case))
                if case in tol:
                    errors.append("%s: %s has two tolerance lines" % (where, case))
                tol[case] = ListEntry(case, reason, n, vals.get("rtol"), vals.get("atol"))
                continue
            case, reason = toks[0], " ".join(toks[1:])
            if "/" not in case:
                errors.append("%s: '%s' is not DIR/CASE" % (where, case))
                continue
            if not reason:
                errors.append("%s: expected failure %s has no reason" % (where, case))
            if case in xfail:
                errors.append("%s: %s is listed twice" % (where, case))
            xfail[case] = ListEntry(case, reason, n)
    return xfail, tol, errors


LIST_HEADER = """\
# Expected failures of the ONNX backend conformance run
# (test/onnx/conformance.py; see test/onnx/README.md).
#
#   DIR/CASE  <reason>                                  expected to fail
#   tolerance DIR/CASE rtol=X [atol=Y]  <reason>        run with a looser
#                                                       tolerance; expected to pass
#
# A reason is required on every line. The run fails when a case not listed
# here fails, when a listed case passes (delete its line), or when a listed
# case does not exist. Crashes are never accepted. Regenerate the expected
# failures with:  /usr/bin/python3 test/onnx/conformance.py --update-expected
# (tolerance lines and their reasons are kept as written, and so are reasons
# that start with "test data:", hand-written for defects of the data itself,
# or with "out of scope:", hand-written where a case needs what Tessel does
# not compile).
"""


HAND_WRITTEN = ("test data:", "out of scope:")


def write_list(path, results, old_xfail, old_tol, selected):
    """Rewrites the list from results. Entries of cases that were not run
    (other --dirs / --filter) are kept as they were."""
    lines = [LIST_HEADER]
    tol_lines = []
    for case in sorted(old_tol):
        e = old_tol[case]
        vals = " ".join("%s=%g" % (k, v) for k, v in (("rtol", e.rtol), ("atol", e.atol))
                        if v is not None)
        tol_lines.append("tolerance %s %s  %s" % (case, vals, e.reason))
    if tol_lines:
        lines.append("\n# Tolerance overrides\n")
        lines += [l + "\n" for l in tol_lines]
    entries = {}
    for case, e in old_xfail.items():
        if not selected(case):
            entries[case] = e.reason
    crashes = []
    for case, r in results.items():
        if r.kind in (CRASH, ERROR):
            crashes.append(case)
        elif r.kind != PASS:
            # A reason that explains a defect of the test data itself
            # ("test data: ...") or why a case is outside what Tessel
            # compiles ("out of scope: ...") is written by hand and kept.
            old = old_xfail.get(case)
            keep = old is not None and old.reason.startswith(HAND_WRITTEN)
            entries[case] = old.reason if keep else short_reason(r)
    lines.append("\n# Expected failures\n")
    width = max([len(c) for c in entries] + [0]) + 2
    for case in sorted(entries):
        lines.append("%-*s%s\n" % (width, case, entries[case]))
    with open(path, "w") as f:
        f.writelines(lines)
    return crashes


# --------------------------------------------------------------------------
# Reasons
# --------------------------------------------------------------------------

def op_of(reason):
    """The op an error names ('node ... (Conv, opset 11): ...'), else None."""
    m = OP_RE.search(reason or "")
    return (m.group(1) or m.group(2)) if m else None


def shorten(s, n=110):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 3] + "..."


def short_reason(r):
    """One short, stable line for the expected-failure list and the docs."""
    reason = re.sub(r"'/[^']*/([^/']+)'", r"'\1'", r.reason)  # paths -> base names
    if r.kind == COMPILE_FAIL:
        m = NODE_PREFIX_RE.match(reason)
        if m:
            op, rest = m.group(1), reason[m.end():]
            reason = rest if re.search(r"\b%s\b" % re.escape(op), rest) \
                else "%s: %s" % (op, rest)
        return shorten(reason)
    if r.kind == MISMATCH:
        s = reason.split(" | ")[0]
        s = re.sub(r"^\[FAILED\]\s*", "", s)
        s = re.sub(r"\s*\(atol=[^)]*\)", "", s)
        s = re.sub(r"\s*\(\+\d+ more outputs\)", "", s)
        return shorten("mismatch: " + s)
    if r.kind == RUN_FAIL:
        return shorten("run: " + reason)
    if r.kind == TIMEOUT:
        return shorten("timeout: " + reason)
    if r.kind == CRASH:
        return shorten("CRASH: " + reason)
    if r.kind == ERROR:
        return shorten("runner error: " + reason)
    return ""


def generic_reason(r):
    """short_reason with case-specific numbers and names removed, to group
    failures in the summary and the docs."""
    s = short_reason(r)
    s = re.sub(r"'[^']*'", lambda m: m.group(0) if r.kind == COMPILE_FAIL else "'…'", s)
    if r.kind == MISMATCH:
        s = re.sub(r"output \d+ \('[^']*'\)|output \d+ \('…'\)", "output", s)
        s = re.sub(r"\d+ of \d+ elements differ", "elements differ", s)
        s = re.sub(r"type mismatch: got .*", "type/shape mismatch", s)
    if r.kind == COMPILE_FAIL:
        s = re.sub(r"input '[^']*'", "input", s)
        s = re.sub(r"dimension '[^']*'", "dimension", s)
        s = re.sub(r"--shape=\S+", "--shape", s)
    s = re.sub(r"\bon test_data_set_\d+", "", s)
    s = re.sub(r"\[[\d, ]*\]", "[...]", s)     # shapes
    return s


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def model_ops(model_path):
    """[(op, domain, opset)] of every node in the model, subgraphs included."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    opsets = {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
    seen = set()

    def walk(g):
        for n in g.node:
            dom = n.domain or "ai.onnx"
            seen.add((n.op_type, dom, opsets.get(dom, 0)))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    return sorted(seen)


def worker(job):
    (case_id, case_dir, bindir, work, rtol, atol, ctimeout, rtimeout, mem_mb,
     want_ops, keep) = job
    t0 = time.time()
    tag = case_id.replace("/", "__")
    try:
        r = onnx_case.run_case(case_dir, bindir, os.path.join(work, "so"), rtol, atol,
                               npy_dir=os.path.join(work, "npy", case_id),
                               compile_timeout=ctimeout, run_timeout=rtimeout,
                               mem_mb=mem_mb, keep=keep, tag=tag)
    except Exception as e:  # a bug of this runner, not of Tessel
        r = Result(ERROR, "conformance runner error: %s: %s" % (type(e).__name__, e))
    ops = []
    if want_ops:
        try:
            ops = model_ops(os.path.join(case_dir, "model.onnx"))
        except Exception as e:
            ops = [("<unreadable model: %s>" % type(e).__name__, "", 0)]
    return case_id, r.to_dict(), ops, time.time() - t0


def snapshot_tools(bindir, dest):
    """Copies tessel-compile and tessel-run to DEST so that a rebuild while
    the run is going (ninja rewriting build/bin) cannot disturb it; retries
    while a tool is missing or changes during the copy."""
    import shutil
    os.makedirs(dest, exist_ok=True)
    for tool in ("tessel-compile", "tessel-run"):
        src = os.path.join(bindir, tool)
        for attempt in range(120):
            try:
                before = os.stat(src)
                tmp = os.path.join(dest, ".%s.%d" % (tool, os.getpid()))
                shutil.copy2(src, tmp)
                after = os.stat(src)
                if (before.st_size, before.st_mtime) != (after.st_size, after.st_mtime) \
                        or os.path.getsize(tmp) != after.st_size:
                    raise OSError("changed while copying")
                os.replace(tmp, os.path.join(dest, tool))
                break
            except OSError:
                time.sleep(1)
        else:
            raise SystemExit("conformance.py: could not copy %s" % src)
    return dest


def discover(data, dirs, filt):
    cases = {}
    for d in dirs:
        root = os.path.join(data, d)
        if not os.path.isdir(root):
            raise SystemExit("conformance.py: no test directory %s" % root)
        for c in sorted(os.listdir(root)):
            p = os.path.join(root, c)
            if os.path.isfile(os.path.join(p, "model.onnx")):
                cid = "%s/%s" % (d, c)
                if filt is None or filt.search(cid):
                    cases[cid] = p
    return cases


def case_cost(p):
    """Rough cost for scheduling: big models first so the tail is short."""
    try:
        return os.path.getsize(os.path.join(p, "model.onnx"))
    except OSError:
        return 0


# --------------------------------------------------------------------------
# Docs
# --------------------------------------------------------------------------

def write_docs(path, cmdline, results, ops_by_case, dirs_summary, totals, subset):
    op_cases = collections.defaultdict(set)       # op -> cases using it
    op_opsets = collections.defaultdict(set)
    op_domain = {}
    for case, ops in ops_by_case.items():
        for op, dom, ver in ops:
            key = op if dom == "ai.onnx" else "%s (%s)" % (op, dom)
            op_cases[key].add(case)
            op_opsets[key].add(ver)
            op_domain[key] = dom
    rows = []
    for key in sorted(op_cases, key=lambda k: (op_domain[k] != "ai.onnx", k.lower())):
        passed = total = blocked = 0
        limits = collections.Counter()
        for case in op_cases[key]:
            r = results[case]
            if r.kind == PASS:
                passed += 1
                total += 1
                continue
            named = op_of(r.reason) if r.kind in (COMPILE_FAIL, CRASH) else None
            plain = key.split(" (")[0]
            if named and named != plain:
                blocked += 1      # the case fails on another op
                continue
            total += 1
            limits[generic_reason(r)] += 1
        if total == 0:
            status = "untested"
        elif passed == total:
            status = "supported"
        elif passed == 0:
            status = "unsupported"
        else:
            status = "partial"
        lim = ["%s (%d)" % (shorten(k, 90), v) for k, v in
               sorted(limits.items(), key=lambda kv: (-kv[1], kv[0]))]
        if len(lim) > 4:
            lim = lim[:4] + ["+%d more" % (len(lim) - 4)]
        if blocked:
            lim.append("%d case(s) fail on another op first" % blocked)
        rows.append((key, ", ".join(str(v) for v in sorted(op_opsets[key])),
                     "%d/%d" % (passed, total), status, "; ".join(lim)))

    def cell(s):
        return s.replace("|", "\\|").replace("\n", " ")

    counts = collections.Counter(r[3] for r in rows)
    out = []
    out.append("<!-- GENERATED FILE - DO NOT EDIT BY HAND. -->\n")
    out.append("<!-- Regenerate with: %s -->\n\n" % cmdline)
    out.append("# ONNX operator support\n\n")
    out.append("**This page is generated** by `test/onnx/conformance.py` from a "
               "run of the ONNX backend test data; do not edit it by hand. "
               "It was generated with:\n\n```\n%s\n```\n\n" % cmdline)
    if subset:
        out.append("> Note: generated from a subset of the cases (%s).\n\n" % subset)
    out.append("Cases: **%d of %d pass (%.1f%%)**. " %
               (totals["passed"], totals["cases"],
                100.0 * totals["passed"] / max(totals["cases"], 1)))
    nbound = sum(1 for r in results.values() if r.kind == PASS and r.bound)
    out.append("Of the passing cases, %d feed operands such as Reshape's "
               "`shape` or Slice's `starts` as graph inputs; Tessel compiles "
               "static shapes, so the runner binds those inputs to each data "
               "set's values with `tessel-compile --bind-input`, the way a user "
               "specializes such a model. " % nbound)
    out.append("Per directory: %s.\n\n" % "; ".join(
        "%s %d/%d" % (d, s["passed"], s["cases"]) for d, s in dirs_summary.items()))
    out.append("Ops: %s.\n\n" % ", ".join(
        "%d %s" % (counts[k], k) for k in ("supported", "partial", "unsupported", "untested")
        if counts[k]))
    out.append(
        "How to read the table: *op* is every ONNX op type found in the test "
        "models (subgraphs included); *opsets* are the model opset versions "
        "it was seen with; *cases* counts the cases using the op that pass, "
        "over the cases whose result is attributed to it: a passing case "
        "counts for every op in it, a failure whose error names a node's op "
        "counts only for that op, and any other failure (run failure, "
        "mismatch, errors naming no op) counts for every op in the case. "
        "*status*: supported = all attributed cases pass, partial = some do, "
        "unsupported = none do, untested = every case using the op fails "
        "on another op first. *limits* are the distinct failure reasons "
        "(with case counts). A tolerance of rtol %g, atol %g is used unless "
        "test/onnx/expected_failures.txt overrides it with a reason.\n\n"
        % (onnx_case.DEFAULT_RTOL, onnx_case.DEFAULT_ATOL))
    out.append("| op | opsets | cases | status | limits |\n")
    out.append("|---|---|---|---|---|\n")
    for r in rows:
        out.append("| %s |\n" % " | ".join(cell(c) for c in r))
    out.append("\n## Failing cases\n\n")
    fails = sorted(c for c, r in results.items() if r.kind != PASS)
    out.append("%d failing case(s).\n\n" % len(fails))
    out.append("| case | result | reason |\n|---|---|---|\n")
    for c in fails:
        r = results[c]
        out.append("| %s | %s | %s |\n" % (cell(c), r.kind, cell(short_reason(r))))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.writelines(out)


def display_cmdline(argv):
    """The command as someone would type it from the repository root."""
    script = os.path.relpath(os.path.abspath(__file__), REPO)
    args = []
    for a in argv[1:]:
        if os.path.isabs(a) and a.startswith(REPO + os.sep):
            a = os.path.relpath(a, REPO)
        args.append(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else "'%s'" % a.replace("'", "'\\''"))
    return " ".join(["/usr/bin/python3", script] + args)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def main(argv=None):
    argv = argv or sys.argv
    ap = argparse.ArgumentParser(
        description="Run the ONNX backend test cases through Tessel.")
    ap.add_argument("--data", default=DEFAULT_DATA,
                    help="ONNX backend test data root (default %(default)s)")
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS),
                    help="comma-separated directories under --data (default %(default)s)")
    ap.add_argument("--filter", default=None,
                    help="only cases whose DIR/CASE matches this regex (re.search)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                    help="folder with tessel-compile and tessel-run (default %(default)s)")
    ap.add_argument("--work", default=None,
                    help="scratch folder; converted .npy files are cached here "
                         "between runs (default: BIN/../onnx-conformance)")
    ap.add_argument("--expected", default=DEFAULT_LIST,
                    help="expected-failure list (default %(default)s)")
    ap.add_argument("--update-expected", action="store_true",
                    help="rewrite the expected-failure list from this run")
    ap.add_argument("--write-docs", metavar="FILE", default=None,
                    help="write the op support page (docs/onnx-support.md)")
    ap.add_argument("--json", metavar="FILE", default=None,
                    help="write every case's result as JSON")
    ap.add_argument("--compile-timeout", type=int, default=onnx_case.COMPILE_TIMEOUT)
    ap.add_argument("--run-timeout", type=int, default=onnx_case.RUN_TIMEOUT,
                    help="seconds per tessel-run (one test_data_set)")
    ap.add_argument("--mem-limit-mb", type=int, default=8192,
                    help="address-space limit of each tool process, 0: none")
    ap.add_argument("--keep-artifacts", action="store_true",
                    help="keep the compiled .so files under WORK/so")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="do not list expected failures, only unexpected results")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each case as it finishes")
    a = ap.parse_args(argv[1:])

    dirs = [d for d in a.dirs.split(",") if d]
    try:
        filt = re.compile(a.filter) if a.filter else None
    except re.error as e:
        ap.error("bad --filter: %s" % e)
    for tool in ("tessel-compile", "tessel-run"):
        if not os.access(os.path.join(a.bin, tool), os.X_OK):
            ap.error("no %s in %s (build it: ninja -C build tessel-compile tessel-run)"
                     % (tool, a.bin))
    work = a.work or os.path.join(a.bin, "..", "onnx-conformance")
    work = os.path.abspath(work)
    os.makedirs(work, exist_ok=True)

    xfail, tol, list_errors = parse_list(a.expected)
    cases = discover(a.data, dirs, filt)
    all_known = discover(a.data, dirs, None) if filt else cases

    def selected(cid):
        return cid.split("/")[0] in dirs and (filt is None or bool(filt.search(cid)))

    # Listed cases that do not exist (in the selected part of the data).
    problems = list(list_errors)
    for lst, what in ((xfail, "expected failure"), (tol, "tolerance override")):
        for cid, e in sorted(lst.items()):
            d = cid.split("/")[0]
            if d not in DEFAULT_DIRS and d not in dirs:
                problems.append("%s:%d: %s %s: no such test directory '%s'"
                                % (os.path.basename(a.expected), e.lineno, what, cid, d))
            elif selected(cid) and cid not in all_known:
                problems.append("%s:%d: %s %s does not exist in %s"
                                % (os.path.basename(a.expected), e.lineno, what, cid, a.data))

    want_ops = a.write_docs is not None
    bindir = snapshot_tools(os.path.abspath(a.bin), os.path.join(work, "bin"))
    jobs = []
    for cid in sorted(cases, key=lambda c: -case_cost(cases[c])):
        t = tol.get(cid)
        rtol = t.rtol if t and t.rtol is not None else onnx_case.DEFAULT_RTOL
        atol = t.atol if t and t.atol is not None else onnx_case.DEFAULT_ATOL
        jobs.append((cid, cases[cid], bindir, work, rtol, atol,
                     a.compile_timeout, a.run_timeout, a.mem_limit_mb, want_ops,
                     a.keep_artifacts))

    t0 = time.time()
    results, ops_by_case, times = {}, {}, {}
    if jobs:
        with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = [ex.submit(worker, j) for j in jobs]
            for n, f in enumerate(as_completed(futs), 1):
                cid, rd, ops, dt = f.result()
                r = Result(rd["kind"], rd["reason"], rd["detail"], rd["stage"])
                r.bound = rd.get("bound", [])
                results[cid], ops_by_case[cid], times[cid] = r, ops, dt
                if a.verbose:
                    print("[%d/%d] %-12s %s %s" % (n, len(jobs), r.kind, cid,
                                                   r.reason), file=sys.stderr, flush=True)
    wall = time.time() - t0

    # Classify against the list.
    unexpected_fail, unexpected_pass, crashes, xfails = [], [], [], []
    for cid in sorted(results):
        r = results[cid]
        listed = cid in xfail
        if r.kind in (CRASH, ERROR):
            crashes.append(cid)
        elif r.kind != PASS and not listed:
            unexpected_fail.append(cid)
        elif r.kind == PASS and listed:
            unexpected_pass.append(cid)
        elif r.kind != PASS:
            xfails.append(cid)

    # One line per failing case.
    for cid in sorted(results):
        r = results[cid]
        if r.kind == PASS:
            if cid in unexpected_pass:
                print("XPASS    %s  (listed as expected failure: %s)"
                      % (cid, xfail[cid].reason))
            continue
        if r.kind in (CRASH, ERROR):
            tag = "CRASH" if r.kind == CRASH else "ERROR"
        elif cid in xfail:
            if a.quiet:
                continue
            tag = "XFAIL"
        else:
            tag = "FAIL"
        print("%-8s %s  [%s] %s" % (tag, cid, r.kind, r.reason))
    for cid in crashes:
        r = results[cid]
        if r.kind != CRASH:
            continue
        print("\n" + "!" * 78)
        print("!!! CRASH: %s (%s)" % (cid, r.reason))
        print("!!! User input must never crash the compiler or the runtime. "
              "Output:")
        for l in (r.detail or "").splitlines()[:12]:
            print("!!!   " + l)
        print("!" * 78)

    # Summary.
    print()
    by_kind = collections.Counter(r.kind for r in results.values())
    reasons = collections.Counter(generic_reason(r) for r in results.values()
                                  if r.kind != PASS)
    if reasons:
        print("Top failure reasons:")
        for k, v in reasons.most_common(15):
            print("  %5d  %s" % (v, k))
        print()
    print("Results: " + ", ".join("%s %d" % (k, by_kind[k]) for k in onnx_case.KINDS
                                  if by_kind[k]))
    for p in problems:
        print("LIST ERROR: " + p)
    if unexpected_fail or unexpected_pass:
        print("%d unexpected failure(s) (FAIL lines above: fix them or add them to %s "
              "with a reason), %d unexpected pass(es) (XPASS lines: delete them from "
              "the list); --update-expected rewrites the list from this run" % (len(unexpected_fail), os.path.relpath(a.expected),
                             len(unexpected_pass)))
    for cid in crashes:
        print("%s: %s: %s%s" % ("CRASH" if results[cid].kind == CRASH else
                                "RUNNER ERROR", cid, results[cid].reason,
                                   " (listed as an expected failure, but a crash is "
                                   "never accepted)" if cid in xfail else ""))
    print("(%d passing cases have graph inputs bound at compile time with "
          "--bind-input)" % sum(1 for r in results.values()
                                if r.kind == PASS and r.bound))
    dirs_summary = collections.OrderedDict()
    for d in dirs:
        ids = [c for c in results if c.split("/")[0] == d]
        p = sum(results[c].kind == PASS for c in ids)
        f = len(ids) - p
        x = sum(1 for c in ids if results[c].kind not in (PASS, CRASH, ERROR) and c in xfail)
        dirs_summary[d] = {"cases": len(ids), "passed": p, "failed": f, "expected": x}
        print("%s: %d passed, %d failed (%d expected)" % (d, p, f, x))
    npass = by_kind[PASS]
    print("pass rate: %d of %d cases (%.1f%%), wall time %.0f s with --jobs %d"
          % (npass, len(results), 100.0 * npass / max(len(results), 1), wall, a.jobs))
    nfailed = len(unexpected_fail) + len(unexpected_pass) + len(crashes)
    print("onnx conformance: %d passed, %d failed" % (npass, nfailed))

    totals = {"cases": len(results), "passed": npass}
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"wall_s": wall, "jobs": a.jobs,
                       "cases": {c: dict(results[c].to_dict(), seconds=round(times[c], 3),
                                         short_reason=short_reason(results[c]))
                                 for c in sorted(results)}}, f, indent=1)
    if a.write_docs:
        subset = None
        if filt or set(dirs) != set(DEFAULT_DIRS):
            subset = "--dirs %s%s" % (",".join(dirs),
                                      " --filter %s" % a.filter if a.filter else "")
        write_docs(a.write_docs, display_cmdline(argv), results, ops_by_case,
                   dirs_summary, totals, subset)
        print("wrote %s" % a.write_docs)
    if a.update_expected:
        # Entries of cases outside this run are kept; missing ones dropped.
        keep_x = {c: e for c, e in xfail.items() if c in all_known or not selected(c)}
        keep_t = {c: e for c, e in tol.items() if c in all_known or not selected(c)}
        crashed = write_list(a.expected, results, keep_x, keep_t, selected)
        print("updated %s (%d expected failures)%s" % (
            a.expected, sum(1 for r in results.values() if r.kind not in (PASS, CRASH, ERROR)),
            "; crashes (and runner errors) are never written as expected failures: "
            + ", ".join(crashed)
            if crashed else ""))
        # After an update the list matches; only crashes (and list errors
        # the update could not fix) still fail the run.
        left = parse_list(a.expected)[2]
        for p in left:
            print("LIST ERROR: " + p)
        return 1 if crashed or left else 0
    return 1 if (nfailed or problems) else 0


if __name__ == "__main__":
    sys.exit(main())
