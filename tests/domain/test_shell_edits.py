"""The files a shell command writes or removes, read from its text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain.tools import UNKNOWN_PATH, shell_file_changes
from forge_domain.tools._shell_edits import _lexed_changes, _Lexer, _may_change_files

U, R = "file_update", "file_remove"

CHANGES = [
    ("sed-in-place", "sed -i 's/a/b/' x.py", [(U, "x.py")]),
    ("quoted-program-name", "s'e'd -i 's/a/b/' x.py", [(U, "x.py")]),
    ("escaped-program-name", 'r\\m "a b.py" c\\ d.py', [(R, "a b.py"), (R, "c d.py")]),
    (
        "program-name-in-double-quotes",
        '"/bin/t"ouch "$HOME"/x plain.txt',
        [(U, UNKNOWN_PATH), (U, "plain.txt")],
    ),
    ("substitution-inside-a-program-name", "r$(true)m -f old.py", [(R, "old.py")]),
    ("silent-redirections", "python -m pytest -x 2>&1 >/dev/null | tail -5", []),
    ("dev-null-then-a-file", "make 2>/dev/null >build.log", [(U, "build.log")]),
    ("dev-with-a-variable", "echo x >/dev/$TTY", [(U, UNKNOWN_PATH)]),
    ("dev-null-then-more", "echo x >/dev/null$X", [(U, UNKNOWN_PATH)]),
    ("duplicated-then-a-file", "make 2>&1>out.txt", [(U, "out.txt")]),
    (
        "python-path-write",
        """python3 -c "from pathlib import Path; Path('x.txt').write_text('1')" """,
        [(U, "x.txt")],
    ),
    ("in-place-in-a-cluster", "cd /w && sed -ni.bak 1p a.py", [(U, "/w/a.py")]),
    ("program-by-its-path", "/usr/bin/perl -pi -e 's/a/b/' x.pl", [(U, "x.pl")]),
    ("printing-sed-and-a-patch-file", "sed -n '1,5p' a.py; cat fix.patch", []),
    ("no-writer", "grep -rn 'open(' src | head -20 && ls -la", []),
    (
        "sed-cluster-and-scripts",
        "cd /testbed && sed -i.bak -e 's/a/b/' -e 's/c/d/' src/a.py src/b.py",
        [(U, "/testbed/src/a.py"), (U, "/testbed/src/b.py")],
    ),
    ("sed-long-options", "sed --in-place --expression='s/a/b/' a.txt", [(U, "a.txt")]),
    ("sed-long-option-value", "sed --in-place --expression 's/a/b/' a.txt", [(U, "a.txt")]),
    ("here-string", "git apply <<< '--- a/h.py'", [(U, UNKNOWN_PATH)]),
    ("sed-script-file", "sed -i -f fix.sed a.txt", [(U, "a.txt")]),
    ("sed-print-only", "FOO=1 sed -n 1,10p x.py", []),
    ("perl-in-place", "perl -pi -e 's/a/b/' f.txt", [(U, "f.txt")]),
    (
        "heredoc-body-is-not-parsed",
        "cat > test.py << 'EOF'\nprint('x > y')\nwith open('z', 'w'): pass\nEOF\npython test.py",
        [(U, "test.py"), (U, "z")],
    ),
    ("heredoc-before-target", "cat <<-EOF > out.txt\n\thello\n\tEOF", [(U, "out.txt")]),
    (
        "redirects-and-tee",
        "echo hi >> log.txt 2>/dev/null && tee -a a.txt b.txt < in",
        [(U, "log.txt"), (U, "a.txt"), (U, "b.txt")],
    ),
    ("stderr-and-both", "make 2> err.log &> all.log 2>&1", [(U, "err.log"), (U, "all.log")]),
    (
        "python-heredoc",
        "python3 - <<'EOF'\nwith open('/t/f.py', 'w') as fh:\n    fh.write('x')\n"
        "open(p, mode='a')\nopen('r.txt')\nPath('n.md').write_text('x')\nEOF",
        [(U, "/t/f.py"), (U, UNKNOWN_PATH), (U, "n.md")],
    ),
    ("python-c", "python -c \"open('a.py','w').write('x')\"", [(U, "a.py")]),
    ("python-script", "python run.py > out.txt", [(U, "out.txt")]),
    (
        "python-script-written-inline",
        "cat > /tmp/p.py <<'EOF'\nopen('a.new', 'w')\nEOF\npython /tmp/p.py && cp a.new a",
        [(U, "/tmp/p.py"), (U, "a.new"), (U, "a")],
    ),
    (
        "mv-and-cp",
        "mv old.py new.py && cp -r a.py backup/a.py",
        [(U, "new.py"), (R, "old.py"), (U, "backup/a.py")],
    ),
    ("rm-and-touch", "rm -rf build; touch -d now stamp", [(R, "build"), (U, "stamp")]),
    (
        "git-apply-heredoc",
        "git apply <<'EOF'\n--- a/src/x.py\n+++ b/src/x.py\n@@\n-a\n+b\n"
        "--- a/gone.py\n+++ /dev/null\nEOF",
        [(U, "src/x.py"), (R, "gone.py")],
    ),
    ("git-apply-file", "git apply fix.patch", [(U, UNKNOWN_PATH)]),
    ("git-apply-check", "git apply --check fix.patch", []),
    ("patch-from-file", "patch -p1 < fix.patch", [(U, UNKNOWN_PATH)]),
    (
        "patch-written-inline",
        "cat > fix.patch <<'EOF'\n--- a/q.py\n+++ b/q.py\nEOF\npatch -p1 < fix.patch",
        [(U, "fix.patch"), (U, "q.py")],
    ),
    (
        "piped-diff",
        "printf '%s' '--- a/p.py\n+++ b/p.py\n' | git apply",
        [(U, "p.py")],
    ),
    ("variable", "echo x > $OUT", [(U, UNKNOWN_PATH)]),
    ("glob", "sed -i 's/x/y/' *.py", [(U, UNKNOWN_PATH)]),
    ("command-substitution", "printf '%s' \"$(cat x)\" > y.txt", [(U, "y.txt")]),
    ("dev-null", "ls > /dev/null", []),
    ("quoted-operators", "grep -n 'foo > bar; rm x' x.py | head", []),
    ("cd-relative", "cd src; echo x > a.py", [(U, "src/a.py")]),
    ("cd-unknown", "cd $DIR && echo x > a.py", [(U, "a.py")]),
    ("cd-back", "cd - && echo x > a.py", [(U, "a.py")]),
    ("comment", "ls # > not-a-file", []),
    ("line-continuation", "echo x \\\n  > a.txt", [(U, "a.txt")]),
    ("sudo-and-env", "sudo tee /etc/hosts", [(U, "/etc/hosts")]),
    ("unclosed-quote", "sed -i 'instance's attribute' a.py > b.py", []),
    ("unclosed-double-quote", 'echo "a > b.txt', []),
    ("arithmetic", "echo $((1 + 2)) > n.txt", [(U, "n.txt")]),
    ("backticks", "echo `date` > `name`", [(U, UNKNOWN_PATH)]),
    ("redirect-without-target", "echo >", []),
    ("double-dash", "rm -- -odd-name", [(R, "-odd-name")]),
]


@pytest.mark.parametrize(
    ("command", "expected"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES]
)
def test_shell_file_changes(command, expected):
    actual = [(tool.kind, tool.path) for tool in shell_file_changes(command)]
    assert actual == expected


def test_shell_file_changes_joins_the_calls_working_directory():
    actual = [tool.path for tool in shell_file_changes("echo x > a.py", cwd="/w")]
    assert actual == ["/w/a.py"]


@given(st.text(alphabet="ab >|&;'\"$()<`\\\n-EOF", max_size=60))
def test_shell_file_changes_never_fails_and_names_each_change_once(command):
    changes = shell_file_changes(command)
    assert len(changes) == len(set(changes))


_PIECES = (
    *("s", "e", "d", "r", "m", "c", "p", "v", "t", "o", "u", "h", "g", "i", "y", "n"),
    *("sed", "rm", "mv", "tee", "python3", "git apply", "patch", "perl", "touch", "cp"),
    *(" ", "\t", "\n", "'", '"', "\\", "$", "$(", ")", "`", "*", ";", "&&", "|", "<", "<<"),
    *("EOF", "\nEOF\n", "/", "=", "X=1 ", "sudo ", "cd a ", "-i", "-c", "a.py", "#"),
    *(">", "2>&1", ">&", "&>", " >/dev/null", ">> /dev/null", "/dev/null", "/dev/", "$X"),
    *("open(", "'w')", ".write_text(", "Path(", "-m pytest", "/usr/bin/", "-ni", "-n", ".patch"),
    *("\r", "x;", "--in-place"),
)


@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_a_command_the_pre_check_passes_over_changes_no_file(command):
    """``_may_change_files`` is False only where reading the words finds no change."""
    assert _may_change_files(command) or _lexed_changes(command, "/w") == ()


HEREDOCS = [
    ("body-then-delimiter", "cat > a <<EOF\none\ntwo\nEOF\necho x", ["one\ntwo"]),
    ("empty-body", "cat > a <<EOF\nEOF\n", [""]),
    ("delimiter-at-the-end-without-newline", "cat > a <<EOF\none\nEOF", ["one"]),
    ("no-delimiter-reads-to-the-end", "cat > a <<EOF\none\ntwo\n", ["one\ntwo"]),
    ("no-delimiter-keeps-an-empty-last-line", "cat > a <<EOF\none\n\n", ["one\n"]),
    ("delimiter-inside-a-line-is-not-one", "cat > a <<EOF\nEOF x\n EOF\nEOF\n", ["EOF x\n EOF"]),
    ("tabs-stripped-with-a-dash", "cat > a <<-EOF\n\tone\n\t\tEOF\nls", ["\tone"]),
    ("tabs-not-stripped-without-a-dash", "cat > a <<EOF\n\tEOF\nEOF\n", ["\tEOF"]),
    ("two-here-documents", "cat <<A > a; cat <<B > b\n1\nA\n2\nB\n", ["1", "2"]),
    ("quoted-delimiter", "cat > a << 'E.F'\nEOF\nExF\nE.F\n", ["EOF\nExF"]),
    ("empty-delimiter", "cat > a << ''\none\n\ntwo\n", ["one"]),
    ("empty-delimiter-never-after-the-last-line", "cat > a << ''\none\n", ["one"]),
    ("delimiter-with-a-newline-never-ends", "cat > a << 'E\nF'\nE\nF\n", ["E\nF"]),
    ("dash-delimiter-with-a-leading-tab-never-ends", "cat > a <<-'\tE'\n\tE\nE\n", ["\tE\nE"]),
]


@pytest.mark.parametrize(
    ("command", "bodies"), [c[1:] for c in HEREDOCS], ids=[c[0] for c in HEREDOCS]
)
def test_a_here_document_is_the_lines_before_its_delimiter(command, bodies):
    simples = _Lexer(command).run()
    assert [body for simple in simples for body in simple.inputs] == bodies


PROGRAM_WORDS = [
    ("a-word", "rm a.py", True),
    ("a-path", "/bin/rm a.py", True),
    ("after-a-separator", "ls;rm a.py", True),
    ("inside-a-word", "farm a.py", False),
    ("a-prefix-of-a-word", "git-log x", False),
    ("a-later-word", "ls x && cp a b", True),
    ("after-a-rejected-name", "xgit git x", True),
    ("sed-without-in-place", "sed -n 1p a.py", False),
    ("sed-in-place", "sed -i 1d a.py", True),
]


@pytest.mark.parametrize(
    ("command", "may_change"), [c[1:] for c in PROGRAM_WORDS], ids=[c[0] for c in PROGRAM_WORDS]
)
def test_the_pre_check_finds_writing_programs_as_words_only(command, may_change):
    assert _may_change_files(command) is may_change
