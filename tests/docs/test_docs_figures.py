"""scripts/docs_figures.py on Markdown written here and a stand-in for fitspeed
whose output is fixed, so that every expected figure below is read off
FAKE_OUTPUT by eye. Run with plain python3 (unittest, no pytest)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "docs_figures.py")

# What the stand-in prints for `validate`; `fail` exits 3.
FAKE_OUTPUT = textwrap.dedent("""\
    Header line
    device  cases  median_%
    a100       12       9.8
    t4         24      21.6
    all        36      15.0

    Intervals: x[0.482, 2.13]
    """)


class DocsFiguresTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.fake = os.path.join(self.dir, "fake_fitspeed")
        with open(self.fake, "w") as f:
            f.write("#!%s\nimport sys\n" % sys.executable)
            f.write("if sys.argv[1:] == ['fail']:\n    sys.stderr.write('boom')\n    sys.exit(3)\n")
            f.write("sys.stdout.write(%r)\n" % FAKE_OUTPUT)
        os.chmod(self.fake, 0o755)

    def run_script(self, text, mode="--check"):
        path = os.path.join(self.dir, "doc.md")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([sys.executable, SCRIPT, "--fitspeed", self.fake, "--root", self.dir,
                               mode, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        with open(path) as f:
            return proc.returncode, proc.stdout + proc.stderr, f.read()

    def test_current_block_and_inline_figures_pass(self):
        doc = textwrap.dedent("""\
            <!-- fitspeed validate | from "device" | to "t4" -->
            ```
            device  cases  median_%
            a100       12       9.8
            t4         24      21.6
            ```
            The T4 is <!-- fitspeed validate | grep "t4 " | match /([0-9.]+)$/ -->21.6<!-- end -->% off,
            the interval x<!-- fitspeed validate | match /x(\\[[0-9., ]+\\])/ -->[0.482, 2.13]<!-- end -->.
            """)
        rc, out, _ = self.run_script(doc)
        self.assertEqual(rc, 0, out)
        self.assertIn("3 marker(s)", out)

    def test_stale_figures_are_named_and_rewritten(self):
        doc = textwrap.dedent("""\
            intro
            <!-- fitspeed validate | after "median_%" | before "all" -->
            ```
            a100       12       9.9
            ```
            all: <!-- fitspeed validate | grep "all " | match /all\\s+(\\d+)/ -->35<!-- end --> cases
            """)
        rc, out, text = self.run_script(doc)
        self.assertEqual(rc, 1)
        self.assertIn("doc.md:2: stale", out)  # the block marker's line
        self.assertIn("doc.md:6: stale", out)  # the inline figure's line
        self.assertIn("-a100       12       9.9", out)
        self.assertIn("+t4         24      21.6", out)
        self.assertEqual(text, doc)  # --check writes nothing
        rc, out, text = self.run_script(doc, "--write")
        self.assertEqual(rc, 0, out)
        # The block's lines: after "median_%" and before "all" (the blank line
        # that ends a section is dropped).
        self.assertIn("```\na100       12       9.8\nt4         24      21.6\n```", text)
        self.assertIn("-->36<!-- end --> cases", text)
        rc, out, _ = self.run_script(text)
        self.assertEqual(rc, 0, out)

    def test_bad_markers_and_failing_commands_exit_2_naming_the_line(self):
        cases = {
            'x\n<!-- fitspeed validate | match /zzz(\\d)/ -->1<!-- end -->\n': "doc.md:2",
            '<!-- fitspeed validate | from "nowhere" -->\n```\n```\n': 'no output line contains "nowhere"',
            '<!-- fitspeed validate | sideways "x" -->\n```\n```\n': "cannot read the selection",
            '<!-- fitspeed validate -->\nno fence\n': "must be followed by a ``` fence",
            '<!-- fitspeed validate -->\n```\nnever closed\n': "never closes",
            'a <!-- fitspeed validate | match /(\\d+)/ -->12 and no end\n': "needs <!-- end -->",
            'a <!-- fitspeed validate | grep "t4" -->12<!-- end -->\n': "ends with match",
            '<!-- fitspeed fail -->\n```\n```\n': "exited with 3: boom",
        }
        for doc, message in cases.items():
            rc, out, _ = self.run_script(doc)
            self.assertEqual(rc, 2, (doc, out))
            self.assertIn(message, out, doc)


if __name__ == "__main__":
    unittest.main()
