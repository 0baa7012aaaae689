#!/usr/bin/env python3
"""Every parplan command that README.md and docs/*.md show runs (issue 12:
"every command that a doc shows runs in a test").

Commands are the lines of fenced code blocks that start with `parplan ` (or
`$ parplan `), joined over trailing backslashes, with a trailing `# comment`
removed. Synopsis lines (placeholders such as FILE, [--opt], A|B, ...) are
not commands and are skipped. Each doc's commands run in order in one
scratch folder (so a file one command writes can be read by the next), with
the repository's fixtures copied in under the names the docs use. A command
must exit 0 or 1 (1: nothing fits, a result), unless its line ends with
`# exit N`. Usage: doc_commands.py PARPLAN SOURCE_DIR [DOC...]"""
import glob, os, re, shlex, shutil, subprocess, sys, tempfile

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DOCS = sys.argv[3:] or [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))
# files the docs name, from the repository's fixtures
FIXTURES = {"config.json": "tests/data/hf/Llama-3.1-8B.json"}
PLACEHOLDER = re.compile(r"(^|\s)(\[|[A-Z][A-Z0-9_]*(\.\.\.)?($|\s|,|/|:))|\.\.\.|\|")


def commands(path):
    out, fence, cur = [], False, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        s = line.rstrip("\n")
        if s.lstrip().startswith("```"):
            fence, cur = not fence, None
            continue
        if not fence:
            continue
        t = s.strip()
        if cur is not None:
            cur[1] += " " + t.rstrip("\\").strip()
            if not t.endswith("\\"):
                out.append(cur)
                cur = None
            continue
        if t.startswith("$ "):
            t = t[2:]
        if t.startswith("parplan ") or t == "parplan":
            if t.endswith("\\"):
                cur = [n, t.rstrip("\\").strip()]
            else:
                out.append([n, t])
    return out


def split_comment(cmd):
    """The command and the exit code its `# exit N` comment asks for."""
    want = None
    m = re.search(r"\s#\s*exit\s+(\d+)\s*$", cmd)
    if m:
        want = int(m.group(1))
    i = cmd.find(" #")
    return (cmd[:i] if i >= 0 else cmd).strip(), want


def main():
    failed = ran = skipped = 0
    for doc in DOCS:
        work = tempfile.mkdtemp(prefix="pp-doc-")
        for name, rel in FIXTURES.items():
            shutil.copy(os.path.join(SRC, rel), os.path.join(work, name))
        rel = os.path.relpath(doc, SRC)
        for line, raw in commands(doc):
            cmd, want = split_comment(raw)
            for part in cmd.split(";"):  # "parplan clusters; parplan cluster show ..."
                part = part.strip()
                if not part.startswith("parplan"):
                    continue
                if PLACEHOLDER.search(part[len("parplan"):]):
                    skipped += 1
                    continue
                argv = [BIN] + shlex.split(part)[1:]
                try:
                    r = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=300)
                except subprocess.TimeoutExpired:
                    print("%s:%d: timed out: %s" % (rel, line, part)); failed += 1; continue
                ran += 1
                ok = r.returncode == want if want is not None else r.returncode in (0, 1)
                if not ok:
                    failed += 1
                    print("%s:%d: exit %d%s: %s\n    %s" % (rel, line, r.returncode,
                          "" if want is None else " (want %d)" % want, part, r.stderr.strip()[-300:]))
        shutil.rmtree(work, ignore_errors=True)
    print("doc commands: %d ran, %d failed, %d synopsis lines skipped" % (ran, failed, skipped))
    return 1 if failed or ran == 0 else 0


sys.exit(main())
