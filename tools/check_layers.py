#!/usr/bin/env python3
"""Checks the shape of the source tree (docs/architecture.md, "Layers"):

1. the dependency order: a folder's files include only their own folder's and earlier folders' headers,
       common -> registry -> results -> emu -> report -> targets -> probe -> run -> model -> commands -> cli
   (tests, benchmarks and tools may include anything);
2. one definition per class name: no class or struct of namespace scope is defined in two files (outside anonymous
   namespaces), which the linker would not always catch;
3. no library source file, and no Python file under tools/, over 700 lines;
4. no library function over 150 lines, counted from the first line of its signature (a `template <...>` line
   included) to its closing brace, both included. Functions are those at namespace scope and the member functions
   defined in a class; lambdas and local classes count toward the function that holds them. A flag table, a
   function of cli/ or commands/ that mostly declares command-line flags (CLI11's add_option, add_flag), is exempt
   when the line right before its signature is `// layers: flag table`; that marker anywhere else, before a function
   that declares no flag, or before no function, is a finding;
5. no two files of one folder include each other's headers: x.cc or x.h includes y.h while y.cc or y.h includes x.h;
6. no target (or a target's name) compared with a target's name ("mps-emu") outside targets/: a target is a typed
   value (common/target.h) that targets/ makes from --target, and everything else asks it;
7. every "Note [Name] in path/file" in the sources, tests, benchmarks and docs points to a file that holds
   "// Note [Name]", so that a Note that moves takes its references along.

    tools/check_layers.py [ROOT]        exit 0 when all hold, else 1 with one line per finding
"""
import os
import re
import sys

ORDER = ["common", "recorder", "registry", "results", "emu", "report", "targets", "probe", "run", "model", "commands", "cli"]
MAX_LINES = 700
MAX_FUNCTION_LINES = 150
FLAG_TABLE = "// layers: flag table"
FLAG_TABLE_FOLDERS = ("cli", "commands")
FLAG_CALL = re.compile(r"->\s*add_(?:option|flag)\w*\s*\(")

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
    findings += function_lengths(root)
    findings += include_pairs(root)
    findings += python_lengths(root)
    findings += target_name_comparisons(root)
    findings += note_references(root)
    for name, places in sorted(defined.items()):
        files = {p.split(":")[0] for p in places}
        if len(files) > 1:
            findings.append("{} is defined in {} files: {}".format(name, len(files), ", ".join(places)))
    return findings


def code_only(text):
    """The text with comments, string and character literals and preprocessor lines blanked out, each character
    of them a space (newlines kept), so that braces are code and line numbers stay."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == '"' and re.search(r'(?:^|[^\w])(?:u8|u|U|L)?R$', text[max(0, i - 3):i]):
            m = re.compile(r'"([^()\\\s]{0,16})\(').match(text, i)
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c == '"' or (c == "'" and not re.search(r"(?:^|[^\w.])\d[\w.']*$", text[max(0, i - 40):i])):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    lines = "".join(out).split("\n")
    continued = False
    for k, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[k] = ""
    return lines


def strip_template(head):
    """The head without its leading `template <...>` clauses and attributes."""
    while True:
        head = re.sub(r"^\s*\[\[.*?\]\]\s*", "", head)
        m = re.match(r"\s*template\s*<", head)
        if not m:
            return head.strip()
        depth, k = 1, m.end()
        while k < len(head) and depth:
            depth += {"<": 1, ">": -1}.get(head[k], 0)
            k += 1
        head = head[k:]


def opens(head):
    """What a brace after `head` (the code since the last ;, { or } of a namespace or class) opens."""
    h = " ".join(strip_template(head).split())
    if re.match(r"(?:inline\s+)?namespace\b|extern\b", h) and "(" not in h:
        return "namespace"
    if re.match(r"(?:class|struct|union|enum)\b", h):
        return "class"
    bare = re.sub(r"operator\s*(?:\(\s*\)|[^\w\s(]+)", "operator", h)
    depth = 0
    for c in bare:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
        if c == "=" and depth == 0:
            return "data"
    return "function" if "(" in bare else "data"


def function_name(head):
    h = " ".join(strip_template(head).split())
    m = re.search(r"operator\s*\(\s*\)", h)
    paren = h.find("(", m.end() if m else 0)
    name = re.search(r"((?:[\w~]+\s*(?:<[^()]*>)?\s*::\s*)*(?:operator\s*\S[^(]*|~?\w+))\s*$", h[:paren])
    return re.sub(r"\s*::\s*", "::", name.group(1).strip()) if name else "?"


def functions(text):
    """(first line, last line, name, line before the signature) of each function of a C++ source's text."""
    lines = code_only(text)
    found = []
    stack = []  # one entry per open brace: [kind, first line, name, head to restore]
    head, head_line = "", 0
    for number, line in enumerate(lines, 1):
        for c in line + "\n":
            inside = any(e[0] == "function" for e in stack)
            if c in "{}" and not inside and head.count("(") > head.count(")"):
                head += c  # a default argument's braces: f(Ref x = {}) {
            elif c == "{":
                if inside:
                    stack.append(["block", 0, "", ""])
                    continue
                kind = opens(head)
                if kind == "function" and re.search(r"\)[^()]*[^:]:[^:]", head + " ") and \
                        re.search(r"[\w>]\s*$", head):
                    stack.append(["member initializer", 0, "", head])  # Foo() : x_{1} {: a member's braces
                    continue
                stack.append([kind, head_line, function_name(head) if kind == "function" else "", ""])
                head = ""
            elif c == "}":
                entry = stack.pop() if stack else ["block", 0, "", ""]
                if entry[0] == "function":
                    found.append((entry[1], number, entry[2]))
                if not inside:
                    head = entry[3]
            elif inside:
                continue
            elif c == ";" or (c == ":" and head.strip() in ("public", "private", "protected")):
                head = ""
            else:
                if not head.strip() and not c.isspace():
                    head_line = number
                head += c
    return found


def function_lengths(root):
    """Library functions over MAX_FUNCTION_LINES that no flag table marker exempts, and misplaced markers."""
    findings = []
    for folder, rel in library_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        raw = text.split("\n")
        markers = {k for k, line in enumerate(raw, 1) if line.strip() == FLAG_TABLE}
        for first, last, name in functions(text):
            count = last - first + 1
            marked = first - 1 in markers
            markers.discard(first - 1)
            declares_flags = FLAG_CALL.search("\n".join(raw[first - 1:last]))
            if marked and folder in FLAG_TABLE_FOLDERS and declares_flags:
                continue
            if marked and folder not in FLAG_TABLE_FOLDERS:
                findings.append("{}:{}: a flag table is exempt only in {}/".format(
                    rel, first - 1, "/ and ".join(FLAG_TABLE_FOLDERS)))
            elif marked:
                findings.append("{}:{}: a flag table declares flags (add_option, add_flag)".format(rel, first - 1))
            if count > MAX_FUNCTION_LINES:
                findings.append("{}:{}: function {} is {} lines, over {}".format(
                    rel, first, name, count, MAX_FUNCTION_LINES))
        for k in sorted(markers):
            findings.append("{}:{}: \"{}\" is not right before a function".format(rel, k, FLAG_TABLE))
    return findings


def include_pairs(root):
    """Pairs of files of one folder that include each other's headers (x.cc or x.h, and y.cc or y.h)."""
    includes = {}  # (folder, x) -> {y: "path:line" of the first include of y.h by x.cc or x.h}
    for folder, rel in library_files(root):
        unit = os.path.splitext(os.path.basename(rel))[0]
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = re.match(r'^\s*#\s*include\s+"([a-z_]+)/(\w+)\.h"', line)
                if m and m.group(1) == folder and m.group(2) != unit:
                    includes.setdefault((folder, unit), {}).setdefault(m.group(2), "{}:{}".format(rel, number))
    findings = []
    for (folder, x), targets in sorted(includes.items()):
        for y, place in sorted(targets.items()):
            back = includes.get((folder, y), {}).get(x)
            if back and x < y:
                findings.append("{}: includes {}/{}.h, and {}: includes {}/{}.h; files of one folder must not "
                                "include each other".format(place, folder, y, back, folder, x))
    return findings


def python_lengths(root):
    findings = []
    for dirpath, dirnames, names in os.walk(os.path.join(root, "tools")):
        dirnames.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    count = f.read().count("\n")
                if count > MAX_LINES:
                    findings.append("{}: {} lines, over {}".format(os.path.relpath(path, root), count, MAX_LINES))
    return sorted(findings)


TARGET_NAMES = r'"(?:mps|mps-emu|cuda|cpu|meta|auto)"'
TARGET_VALUE = r"[\w.>-]*(?:target|name|kind)\w*(?:\(\))?"
TARGET_COMPARISON = re.compile(r"\b{v}\s*[!=]=\s*{n}|{n}\s*[!=]=\s*{v}".format(v=TARGET_VALUE, n=TARGET_NAMES))


def target_name_comparisons(root):
    """A target is a typed value (common/target.h) that targets/ makes from --target: elsewhere a target (or its name)
    compared with a target's name is a finding."""
    findings = []
    for folder, rel in library_files(root):
        if folder == "targets" or rel == "common/target.cc":
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                code = re.sub(r"//.*$", "", line)
                if TARGET_COMPARISON.search(code):
                    findings.append("{}:{}: compares a target with a target's name; ask its Target (common/target.h)"
                                    .format(rel, number))
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
