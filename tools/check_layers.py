#!/usr/bin/env python3
"""Checks the shape of the source tree (docs/architecture.md, "Layers"):

1. the dependency order: a folder's files include only their own folder's and earlier folders' headers,
       common -> registry -> results -> emu -> report -> targets -> probe -> run -> model -> commands -> cli
   (tests, benchmarks and tools may include anything);
2. one definition per class name: no class or struct of namespace scope is defined in two files (outside anonymous
   namespaces), which the linker would not always catch;
3. no library source file over 700 lines;
4. every "Note [Name] in path/file" in the sources, tests, benchmarks and docs points to a file that holds
   "// Note [Name]", so that a Note that moves takes its references along.

    tools/check_layers.py [ROOT]        exit 0 when all hold, else 1 with one line per finding
"""
import os
import re
import sys

ORDER = ["common", "registry", "results", "emu", "report", "targets", "probe", "run", "model", "commands", "cli"]
MAX_LINES = 700

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')
DEFINITION = re.compile(r"^\s*(?:class|struct)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^{;]*)?\{")
ANON_OPEN = re.compile(r"^\s*namespace\s*\{")
NAMED_OPEN = re.compile(r"^\s*namespace\s+[\w:]+\s*\{")
NAMESPACE_CLOSE = re.compile(r"^\}\s*//\s*namespace")
NOTE_REFERENCE = re.compile(r"Note \[([^\]]+)\]\s+in\s+`?([A-Za-z_][\w/]*\.(?:cc|h|py))")
NOTE_FOLDERS = ORDER + ["tests", "bench", "tools", "python", "docs"]


def library_files(root):
    for folder in ORDER:
        base = os.path.join(root, folder)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            if name.endswith((".cc", ".h")) and not name.endswith("_test.cc"):
                yield folder, os.path.join(folder, name)


def check(root):
    findings = []
    rank = {f: i for i, f in enumerate(ORDER)}
    defined = {}
    for folder, rel in library_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if rel.endswith(".cc") and len(lines) - 1 > MAX_LINES:
            findings.append("{}: {} lines, over {}".format(rel, len(lines) - 1, MAX_LINES))
        stack = []  # True for an anonymous namespace
        depth = 0  # braces of classes and functions: only namespace-scope definitions count
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m and m.group(1) in rank and rank[m.group(1)] > rank[folder]:
                findings.append("{}:{}: {} includes {}/, which comes after it in the dependency order".format(
                    rel, number, folder, m.group(1)))
            if ANON_OPEN.match(line):
                stack.append(True)
                continue
            if NAMED_OPEN.match(line):
                stack.append(False)
                continue
            if NAMESPACE_CLOSE.match(line) and depth == 0:
                if stack:
                    stack.pop()
                continue
            d = DEFINITION.match(line)
            if d and depth == 0 and not any(stack):
                defined.setdefault(d.group(1), []).append("{}:{}".format(rel, number))
            code = re.sub(r'"(?:\\.|[^"\\])*"|//.*$', "", line)
            depth += code.count("{") - code.count("}")
            depth = max(depth, 0)
    findings += note_references(root)
    for name, places in sorted(defined.items()):
        files = {p.split(":")[0] for p in places}
        if len(files) > 1:
            findings.append("{} is defined in {} files: {}".format(name, len(files), ", ".join(places)))
    return findings


def note_references(root):
    """References "Note [X] in FILE" (a reference may wrap its line after "in") whose FILE holds no "Note [X]"."""
    findings = []
    for folder in NOTE_FOLDERS:
        base = os.path.join(root, folder)
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if not name.endswith((".cc", ".h", ".py", ".md", ".mjs", ".sh")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                # Comments wrap anywhere, a Note's name too: read the text as one line, comment markers dropped.
                joined = re.sub(r"\s*\n\s*(?://+|#+|>)?\s*", " ", text)
                for m in NOTE_REFERENCE.finditer(joined):
                    note, target = m.group(1), m.group(2)
                    target_path = os.path.join(root, target)
                    if "/" not in target:  # "in data_home.cc": beside the file that says it
                        target_path = os.path.join(dirpath, target)
                    if not os.path.exists(target_path):
                        findings.append("{}: Note [{}] in {}: no such file".format(rel, note, target))
                        continue
                    with open(target_path, encoding="utf-8", errors="replace") as f:
                        if "Note [{}]".format(note) not in f.read():
                            findings.append("{}: Note [{}] is not in {}".format(rel, note, target))
    return findings


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    findings = check(root)
    for line in findings:
        print(line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
