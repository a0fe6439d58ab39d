#!/usr/bin/env python3
"""Keeps the figures the docs quote from `fitspeed` output equal to that output.

A figure or a table in a Markdown file is tied to the command that prints it
by an HTML comment (invisible when the Markdown is rendered):

  A fenced block, replaced by the command's output (or the part selected):

      <!-- fitspeed validate --kernels | from "Device efficiency" | to "median" -->
      ```
      ...the lines the command prints...
      ```

  An inline figure, replaced by what a regular expression finds in the output
  (its first group, or the whole match without groups):

      a median of <!-- fitspeed validate mlperf | match /over \\d+ publishers: ([0-9.]+%)/ -->34.7%<!-- end -->

Selections, applied left to right after the command (each quoted text is
matched as a plain substring of a line):
  from "T"     start at the first line containing T
  after "T"    start at the line after the first line containing T
  to "T"       end at the first line at or after the start containing T (kept)
  before "T"   end before the first line at or after the start containing T
  grep "T"     keep only the lines containing T
  match /RE/   (inline figures) the first match of RE in the selected text

Commands run as `FITSPEED ARGS` from the repository root (the data the
`validate` modes read lives there), each once, with LC_ALL=C; the root's
absolute path is removed from their output, so paths print relative to it.

  scripts/docs_figures.py --fitspeed build/fitspeed --check README.md docs/*.md
      exits 1 and prints each stale figure (file, line, expected and found)
  scripts/docs_figures.py --fitspeed build/fitspeed --write README.md docs/*.md
      rewrites the stale figures in place

Exit codes: 0 all current (or written), 1 stale figures (--check), 2 a marker
that cannot be read or a command that fails (named with file and line).
"""

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys

MARKER = re.compile(r"<!-- fitspeed (?P<spec>.*?) -->")
INLINE_END = "<!-- end -->"
FENCE = re.compile(r"^(```+|~~~+)")


class MarkerError(Exception):
    pass


SELECTION = re.compile(r'\s*\|\s*(?:(from|after|to|before|grep)\s+"((?:[^"\\]|\\.)*)"'
                       r'|match\s+/((?:[^/\\]|\\.)*)/)\s*')


def parse_spec(spec, where):
    """Splits 'ARGS | from "x" | match /y/' into (args, [(op, value)])."""
    first = re.search(r"\s\|\s", spec)
    head = spec if first is None else spec[:first.start()]
    args = shlex.split(head)
    if not args:
        raise MarkerError(f"{where}: no fitspeed arguments in the marker")
    selections = []
    pos = len(head)
    while pos < len(spec):
        m = SELECTION.match(spec, pos)
        if not m or m.end() == pos:
            raise MarkerError(f'{where}: cannot read the selection "{spec[pos:].strip()}" (from, '
                              'after, to, before, grep with "text", or match /regex/)')
        if m.group(1):
            selections.append((m.group(1), m.group(2).replace('\\"', '"')))
        else:
            pattern = m.group(3).replace("\\/", "/")
            try:
                selections.append(("match", re.compile(pattern)))
            except re.error as e:
                raise MarkerError(f"{where}: bad regular expression /{pattern}/: {e}")
        pos = m.end()
    return args, selections


def select(text, selections, where):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for op, value in selections:
        if op == "match":
            m = value.search("\n".join(lines))
            if not m:
                raise MarkerError(f"{where}: /{value.pattern}/ matches nothing in the output")
            return m.group(1) if m.groups() else m.group(0)
        found = next((i for i, line in enumerate(lines) if value in line), None)
        if op == "grep":
            lines = [line for line in lines if value in line]
            if not lines:
                raise MarkerError(f'{where}: no output line contains "{value}"')
            continue
        if found is None:
            raise MarkerError(f'{where}: no output line contains "{value}" ({op})')
        if op == "from":
            lines = lines[found:]
        elif op == "after":
            lines = lines[found + 1:]
        elif op == "to":
            lines = lines[:found + 1]
        elif op == "before":
            lines = lines[:found]
    while lines and not lines[-1].strip():  # a section's trailing blank lines
        lines.pop()
    return "\n".join(lines) + "\n"


class Runner:
    def __init__(self, fitspeed, root):
        self.fitspeed = fitspeed
        self.root = root
        self.cache = {}

    def output(self, args, where):
        key = tuple(args)
        if key not in self.cache:
            env = dict(os.environ, LC_ALL="C")
            env.pop("FITSPEED_PROGRESS", None)
            proc = subprocess.run([self.fitspeed] + args, cwd=self.root, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                raise MarkerError(f"{where}: `fitspeed {shlex.join(args)}` exited with "
                                  f"{proc.returncode}: {proc.stderr.strip()[-500:]}")
            # Paths under the repository print as relative ones (data/kernels,
            # not /home/me/fitspeed/data/kernels): the docs hold for any checkout.
            self.cache[key] = proc.stdout.replace(self.root + "/", "")
        return self.cache[key]


def process(path, text, runner):
    """Returns (new text, [(line, expected, found)]) for one Markdown file."""
    lines = text.split("\n")
    out = []
    stale = []
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{path}:{i + 1}"
        markers = list(MARKER.finditer(line))
        block_marker = len(markers) == 1 and line.strip() == markers[0].group(0)
        if block_marker:
            args, selections = parse_spec(markers[0].group("spec"), where)
            if any(op == "match" for op, _ in selections):
                raise MarkerError(f"{where}: a block marker cannot use match (inline figures do)")
            if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
                raise MarkerError(f"{where}: a block marker must be followed by a ``` fence")
            fence = FENCE.match(lines[i + 1]).group(1)
            end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith(fence)), None)
            if end is None:
                raise MarkerError(f"{where}: the fenced block after the marker never closes")
            expected = select(runner.output(args, where), selections, where)
            found = "\n".join(lines[i + 2:end]) + "\n"
            if found != expected:
                stale.append((i + 1, expected, found))
            out.extend([line, lines[i + 1]])
            out.extend(expected.rstrip("\n").split("\n"))
            out.append(lines[end])
            i = end + 1
            continue
        # Inline figures: <!-- fitspeed ... -->VALUE<!-- end -->
        new_line = []
        pos = 0
        for m in markers:
            end = line.find(INLINE_END, m.end())
            if end < 0:
                raise MarkerError(f"{where}: an inline marker needs {INLINE_END} after its figure "
                                  "(or a block marker stands alone on its line)")
            args, selections = parse_spec(m.group("spec"), where)
            if not selections or selections[-1][0] != "match":
                raise MarkerError(f"{where}: an inline figure ends with match /regex/")
            expected = select(runner.output(args, where), selections, where)
            found = line[m.end():end]
            if found != expected:
                stale.append((i + 1, expected, found))
            new_line.append(line[pos:m.end()])
            new_line.append(expected)
            pos = end
        new_line.append(line[pos:])
        out.append("".join(new_line))
        i += 1
    return "\n".join(out), stale


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fitspeed", required=True, help="the fitspeed binary")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the repository root (commands run there)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="report stale figures, exit 1")
    mode.add_argument("--write", action="store_true", help="rewrite stale figures")
    parser.add_argument("files", nargs="+", help="Markdown files")
    options = parser.parse_args()
    runner = Runner(os.path.abspath(options.fitspeed), os.path.abspath(options.root))
    total_markers = 0
    total_stale = 0
    try:
        for path in options.files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            total_markers += len(MARKER.findall(text))
            new_text, stale = process(path, text, runner)
            total_stale += len(stale)
            for line, expected, found in stale:
                if options.check:
                    print(f"{path}:{line}: stale (- the docs, + fitspeed's output now):")
                    diff = list(difflib.unified_diff(found.splitlines(), expected.splitlines(),
                                                     lineterm="", n=0))[2:]
                    for d in diff[:40]:
                        print("  " + d)
                    if len(diff) > 40:
                        print(f"  ... {len(diff) - 40} more diff lines")
            if options.write and stale:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new_text)
                print(f"{path}: {len(stale)} figure(s) rewritten")
    except (MarkerError, OSError) as e:
        print(f"docs_figures: {e}", file=sys.stderr)
        return 2
    print(f"docs_figures: {total_markers} marker(s) in {len(options.files)} file(s), "
          f"{total_stale} stale" + (" (rewritten)" if options.write and total_stale else ""))
    if options.check and total_stale:
        print("Regenerate with: scripts/docs_figures.py --fitspeed build/fitspeed --write "
              "README.md docs/*.md (then read the diff: the prose around a figure may need "
              "changing too)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
